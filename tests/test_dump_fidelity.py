"""`kafkalog dump` equals kafka-dump-log byte for byte, stdout and stderr, for every golden run on disk.

Oracle: `<corpus>/golden*/<path>.<mode>.txt` (stdout) and `.stderr.txt` (stderr, only when not empty),
written by tests/harness/golden.py with the real DumpLogSegments of one Kafka version per golden dir:
`golden/` is the corpus's own broker version, `golden-<version>/` another tool on the same files. Every
(corpus, tool version) pair found on disk is checked, so a new corpus is picked up when it lands. The
`decoded` mode (internal-topic decoders) is not implemented yet and is left out.

Where the tool died with an exception, its stderr holds the JVM's stack trace; we print only the
exception's first line, so only that line is compared.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalog_spark.kafka_versions import KafkaVersion, parse_kafka_version
from tests.harness.golden import GOLDEN_DIR, dumpable_files, modes_for
from tests.helpers.corpus import DATA
from tests.helpers.dump_tool import MODES, options, ours, theirs_stderr

# The broker version that wrote each corpus (its golden/ is that version's tool)
CORPORA = {"samples": "3.9.2", "samples-kafka4": "4.4.0"}


def golden_dirs() -> list[tuple[str, str, KafkaVersion]]:
    out = []
    for corpus, own in CORPORA.items():
        for d in sorted((DATA / corpus).glob(f"{GOLDEN_DIR}*")) if (DATA / corpus).is_dir() else []:
            tool = own if d.name == GOLDEN_DIR else d.name.removeprefix(f"{GOLDEN_DIR}-")
            out.append((corpus, d.name, parse_kafka_version(tool)))
    return out


GOLDEN_DIRS = golden_dirs()


def golden_runs() -> list[tuple[str, str, str, str, KafkaVersion]]:
    runs = []
    for corpus, gdir, version in GOLDEN_DIRS:
        base = DATA / corpus / gdir
        for p in sorted(base.rglob("*.txt")):
            name = p.relative_to(base).as_posix()
            if name.endswith(".stderr.txt"):
                continue
            rel, _, mode = name.removesuffix(".txt").rpartition(".")
            if mode in MODES:
                runs.append((corpus, gdir, rel, mode, version))
    return runs


RUNS = golden_runs()


@pytest.mark.parametrize(("corpus", "gdir", "rel", "mode", "version"), RUNS,
                         ids=[f"{c}/{g}/{r}.{m}" for c, g, r, m, _ in RUNS])
def test_dump_equals_kafka_dump_log(corpus: str, gdir: str, rel: str, mode: str, version: KafkaVersion) -> None:
    root = DATA / corpus
    out, err, code = ours(root, [rel], options(rel, mode, version))
    # bytes, not text: printed payloads hold carriage returns that universal newlines would change
    assert out == (root / gdir / f"{rel}.{mode}.txt").read_bytes()
    expected_err = theirs_stderr(root / gdir / f"{rel}.{mode}.stderr.txt")
    assert err == expected_err
    assert code == (1 if expected_err.startswith("Exception") else 0)


def test_both_tool_versions_on_the_3_9_corpus() -> None:
    versions = {v for c, _, v in GOLDEN_DIRS if c == "samples"}
    assert versions == {KafkaVersion.V3_9, KafkaVersion.V4}
    kinds = {Path(r).suffix for c, _, r, _, v in RUNS if c == "samples" and v == KafkaVersion.V4}
    assert kinds == {".log", ".checkpoint", ".index", ".timeindex", ".txnindex", ".snapshot"}
    modes = {m for c, _, _, m, _ in RUNS if c == "samples"}
    assert modes == set(MODES)
    # every golden run the harness made is compared: each dumpable corpus file in each of its modes, per golden dir
    # (found from the corpus files here, not from the golden files RUNS was listed from)
    expected = {(corpus, gdir, rel.as_posix(), mode) for corpus, gdir, _ in GOLDEN_DIRS
                for rel in dumpable_files(DATA / corpus) for mode in modes_for(rel) if mode in MODES}
    assert {(c, g, r, m) for c, g, r, m, _ in RUNS} == expected
    # and as many as the corpora's READMEs say each golden dir holds (858 and 912 runs), less the `decoded` ones
    readme_runs = {"samples": 858, "samples-kafka4": 912}
    decoded = {c: sum("decoded" in modes_for(rel) for rel in dumpable_files(DATA / c)) for c in readme_runs}
    assert len(RUNS) == sum(readme_runs[c] - decoded[c] for c, _, _ in GOLDEN_DIRS)


def test_4x_prints_leader_change_and_gaps_from_minus_one() -> None:
    """What differs between the versions is really in the goldens (so the comparison above covers it)."""
    g4, g3 = DATA / "samples" / "golden-4.4.0" / "broker", DATA / "samples" / "golden" / "broker"
    meta = "__cluster_metadata-0/00000000000000000000.log.deep.txt"
    assert b" LeaderChange: {" in (g4 / meta).read_bytes()
    assert b" controlType: LEADER_CHANGE(2)" in (g3 / meta).read_bytes()
    gap = "codec-gzip-0/00000000000000000080.log.deep.stderr.txt"
    assert (g4 / gap).read_text().endswith("  -1 is followed by 80\n") and not (g3 / gap).exists()
