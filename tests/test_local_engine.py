"""The local engine (Sail, in-process, no JVM) against Spark: the same analyses give the same rows, table by table,
on both corpora and on the damaged copies the validate tests make; the commands print the same JSON and exit with
the same codes.

A process holds either a classic or a Spark Connect session, never both (pyspark switches its functions to
Connect for the whole process), so the local engine runs in a child process (``python -m
tests.helpers.engine_tables``) and Spark in this one, on the suite's session.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from kafkalog_spark.cli import main
from tests.helpers.child_process import run_python
from tests.helpers.corpus import INTERNAL, KAFKA4, SAMPLES
from tests.helpers.damaged import seg
from tests.helpers.engine_tables import AS_OF, engine_tables

CORPUS_DIRS = [SAMPLES / "broker", SAMPLES / "legacy", SAMPLES / "live-copy", KAFKA4 / "broker", KAFKA4 / "live-copy"]

pytestmark = pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("pysail") is None, reason="the local engine needs pysail ([local])")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], list[str]]:
    """The corpora's log dirs and the validate tests' damaged ones (a second dir holds a replica)."""
    from tests.helpers.damaged import damaged_log_dirs

    _, _, damaged = damaged_log_dirs(SAMPLES, tmp_path_factory.mktemp("damaged"))
    dirs = [str(d) for d in CORPUS_DIRS + damaged]
    return dirs, [str(d) for d in damaged]


@pytest.fixture(scope="module")
def local_tables(inputs, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    out = tmp_path_factory.mktemp("local") / "tables.json"
    dirs, together = inputs
    done = run_python("-m", "tests.helpers.engine_tables", str(out), json.dumps(dirs), json.dumps(together))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def differences(got: dict[str, list[str]], expected: dict[str, list[str]]) -> dict[str, object]:
    """Per table that differs: its row counts, or the columns whose values differ (rows taken in sorted order)."""
    out: dict[str, object] = {}
    for name in sorted(set(got) | set(expected)):
        a, b = got.get(name), expected.get(name)
        if a == b:
            continue
        if a is None or b is None or len(a) != len(b):
            out[name] = ("rows", None if a is None else len(a), None if b is None else len(b))
            continue
        columns = {c for x, y in zip(a, b, strict=True) for c, v in json.loads(y).items() if json.loads(x).get(c) != v}
        out[name] = sorted(columns)
    return out


@pytest.mark.engines  # minutes: make test-engines
def test_the_local_engine_gives_sparks_rows_table_by_table(spark, inputs, local_tables) -> None:
    dirs, together = inputs
    expected = engine_tables(spark, dirs, together)
    spark.catalog.clearCache()
    assert differences(local_tables, expected) == {}
    # the comparison compared something: every kind of table has rows, the damage and the replica show.
    # A segment_stats row per segment file of each dir's partition dirs (a deleted topic's -delete dir is not read)
    assert {d: len(expected[f"segment_stats {d}"]) for d in dirs} == {
        d: sum(1 for p in Path(d).glob("*/*.log") if not re.search(r"-(delete|future|stray)$", p.parent.name))
        for d in dirs}
    assert any(expected[f"compaction_preview.partitions {d}"] for d in dirs)
    checks = {json.loads(r)["check"] for r in expected["validate"]}
    assert {"batch_crc_invalid", "truncated_tail", "index_position_not_batch_boundary", "record_decode_failed",
            "stray_temp_file", "checkpoint_missing_partition"} <= checks
    # the replica damaged in one of the two log dirs read together: its error names that log dir
    replica = [json.loads(r) for r in expected["index_findings together"]]
    assert {r["logDir"] for r in replica if r["topic"] == "replica" and r["severity"] == "error"} == {together[-1]}


OWN_WARNINGS = ("the log dirs hold the metadata of ",)  # kafkalog_spark.source.cluster_configs


def _same_on_both_engines(args: list[str], capsys) -> str:
    local = run_python("-m", "kafkalog_spark.cli", *args, "--engine", "local")
    code = main([*args, "--engine", "spark"])
    out = capsys.readouterr().out
    assert (local.returncode, sorted(local.stdout.splitlines())) == (code, sorted(out.splitlines()))
    assert out.strip()
    # the engine's own logging stays off: the local run's stderr holds only the package's own warnings (the dirs of
    # several clusters read together: their metadata logs' dynamic configs are not applied)
    assert [line for line in local.stderr.splitlines() if not line.startswith(OWN_WARNINGS)] == []
    return out


# data/samples/README.md (from kafka-dump-log's goldens): the legacy dirs' batches (first, last offset), per segment
LEGACY_BATCHES = {
    ("legacy-v0", 0): [(0, 0), (1, 1), (2, 2), (3, 3), (4, 8), (9, 13), (14, 18)],
    ("legacy-v0", 19): [(19, 19), (20, 20), (21, 21), (22, 25)],
    ("legacy-v1", 0): [(0, 0), (1, 1), (2, 2), (3, 3), (4, 8), (9, 13), (14, 18)],
    ("legacy-v1", 19): [(19, 22), (23, 23), (24, 24), (25, 25), (26, 26), (27, 27), (28, 28)],
}


def legacy_stats(stdout: str) -> list[tuple]:
    """Per segment of the legacy dirs' `stats --json`: topic, base offset, active, batches, records, last offset."""
    rows = [json.loads(line) for line in stdout.splitlines()]
    return sorted((r["topic"], r["partition"], r["baseOffset"], r["isActive"], r["batches"], r["records"],
                   r["lastOffset"]) for r in rows)


EXPECTED_LEGACY_STATS = sorted((topic, 0, base, base == 19, len(b), sum(last - first + 1 for first, last in b),
                                b[-1][1]) for (topic, base), b in LEGACY_BATCHES.items())


def test_a_small_dir_prints_the_same_stats_on_both_engines(spark, capsys) -> None:
    """The part of make test: one small dir (make test-engines compares every corpus and the damaged dirs)."""
    out = _same_on_both_engines(["stats", str(SAMPLES / "legacy"), "--json"], capsys)
    assert legacy_stats(out) == EXPECTED_LEGACY_STATS


@pytest.mark.engines  # minutes: make test-engines
@pytest.mark.parametrize("extra", [[], ["--include-internal"]])
def test_the_report_from_log_dirs_is_the_same_page_on_both_engines(spark, extra: list[str], tmp_path: Path) -> None:
    """The report straight from a log dir: the same analyses, so the same page, byte for byte."""
    pages = {}
    for engine in ("local", "spark"):
        out = tmp_path / f"{engine}.html"
        args = ["report", str(SAMPLES / "broker"), *extra, "--as-of", str(AS_OF), "-o", str(out), "--engine", engine]
        if engine == "local":
            done = run_python("-m", "kafkalog_spark.cli", *args)
            assert done.returncode == 0, done.stderr[-3000:]
        else:
            assert main(args) == 0
        pages[engine] = out.read_bytes()
    assert pages["local"] == pages["spark"]
    assert b"tutorial-segments" in pages["spark"] and (b"__consumer_offsets" in pages["spark"]) == bool(extra)


@pytest.mark.engines  # minutes: make test-engines
@pytest.mark.parametrize("command", ["consumer-positions", "open-transactions", "catalog-checks"])
@pytest.mark.parametrize("version", ["3.9.2", "4.4.0"])
def test_the_internal_topic_commands_print_the_same_on_both_engines(spark, command: str, version: str,
                                                                     capsys) -> None:
    """What the internal topics say, from the internal corpus (real brokers' groups, transactions and metadata; a
    producer killed mid-transaction, so open-transactions finds and exits 1)."""
    broker = INTERNAL / version / "broker"
    _same_on_both_engines([command, str(broker), "--now", str(AS_OF), "--json"], capsys)


@pytest.mark.engines  # minutes: make test-engines
@pytest.mark.parametrize("command", [["stats"], ["validate"], ["validate", "--fail-on", "warning", "--all"]])
def test_the_commands_print_the_same_json_and_exit_the_same(spark, inputs, command: list[str], capsys) -> None:
    dirs, _ = inputs
    _same_on_both_engines([*command, *dirs[:5], "--json"], capsys)  # the corpora (the damaged dirs: above)


def test_auto_picks_the_local_engine_below_the_threshold(samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kafkalog_spark.commands import runtime

    done = run_python("-m", "kafkalog_spark.cli", "--verbose", "stats", str(samples / "legacy"), "--json")
    assert done.returncode == 0, done.stderr
    assert "with the local engine" in done.stderr and legacy_stats(done.stdout) == EXPECTED_LEGACY_STATS

    def args(**kw: object) -> argparse.Namespace:
        return argparse.Namespace(**({"engine": "auto", "log_dirs": [str(samples / "legacy")], "remote": None} | kw))

    import kafkalog_spark.session

    monkeypatch.setattr(kafkalog_spark.session, "classic_session_running", lambda: False)  # as in a CLI process
    legacy_bytes = runtime.input_bytes([str(samples / "legacy")])
    assert legacy_bytes == sum(f.stat().st_size for f in (samples / "legacy").rglob("*") if f.is_file())
    assert runtime.choose_engine(args()) == "local"
    assert runtime.choose_engine(args(remote="sc://127.0.0.1:15002")) == "spark"  # the server reads the files
    assert runtime.choose_engine(args(engine="spark")) == "spark"
    monkeypatch.setattr(runtime, "AUTO_LOCAL_BYTES", legacy_bytes)  # not below the threshold any more
    assert runtime.choose_engine(args()) == "spark"
    assert runtime.choose_engine(args(engine="local")) == "local"
    # a snapshot's Delta tables (the report's): a warehouse on this machine, whatever its size, is read by Sail;
    # a catalog's tables and an object store's warehouse by Spark
    from kafkalog_spark.delta import TableLocation

    for warehouse in ("/srv/warehouse", "file:///srv/warehouse", "dbfs:/Volumes/main/ops/warehouse"):
        assert runtime.choose_engine(args(log_dirs=[]), TableLocation(warehouse=warehouse)) == "local", warehouse
    for elsewhere in (TableLocation(warehouse="s3a://bucket/warehouse"), TableLocation(schema="kafkalog")):
        assert runtime.choose_engine(args(log_dirs=[]), elsewhere) == "spark"
        with pytest.raises(runtime.UsageError, match="--engine local reads the tables of a warehouse on this"):
            runtime.choose_engine(args(log_dirs=[], engine="local"), elsewhere)
    assert runtime.choose_engine(args(log_dirs=[], remote="sc://127.0.0.1:15002"),
                                 TableLocation(warehouse="/srv/warehouse")) == "spark"
    # a process that already runs a classic session (a notebook's, this suite's) keeps it: a process holds one kind
    monkeypatch.setattr(runtime, "AUTO_LOCAL_BYTES", 2**40)
    monkeypatch.setattr(kafkalog_spark.session, "classic_session_running", lambda: True)
    assert runtime.choose_engine(args()) == "spark"
    with pytest.raises(runtime.UsageError, match="already runs a classic Spark session"):
        runtime.choose_engine(args(engine="local"))


def test_a_view_too_large_to_persist_is_read_again_with_the_same_findings(samples: Path) -> None:
    """The local engine sends a persisted view back as a local relation (a temporary view), in one gRPC message of
    at most 128 MiB (on 1 GB of log, validate's plan was more, and it failed). A view past PERSIST_MAX_BYTES is not
    persisted: with the limit at one byte, every view is read again by each check, and validate prints the same
    findings."""
    command = ["validate", str(samples / "broker"), str(samples / "legacy"), "--engine", "local", "--json", "--all"]
    run = ("import sys; from kafkalog_spark.session import sail; sail.PERSIST_MAX_BYTES = int(sys.argv[1]); "
           "from kafkalog_spark.cli import main; raise SystemExit(main(sys.argv[2:]))")
    persisted, read_again = (run_python("-c", run, limit, *command) for limit in (str(2**40), "1"))
    # no error in the corpus (exit 0): the compaction leftovers of compacted-cleaned-0 (the cleaner's replaced
    # segments pending deletion; the cleaned segments start above their names and leave gaps: data/samples/README.md)
    assert persisted.returncode == read_again.returncode == 0, read_again.stderr
    findings = [json.loads(line) for line in persisted.stdout.splitlines()]
    part = samples / "broker" / "compacted-cleaned-0"
    assert sorted((f["check"], f["severity"], f["file"], f["position"]) for f in findings) == sorted(
        [("stray_temp_file", "warning", str(p), -1) for p in part.glob("*.log.deleted")]
        + [("segment_first_offset_above_name", "info", seg(part, b), 0) for b in (0, 343)]
        + [("segment_offset_gap", "info", seg(part, b), (part / f"{b:020d}.log").stat().st_size)
           for b in (0, 287, 343)])
    assert len(findings) == 8 + 2 + 3
    assert read_again.stdout == persisted.stdout


def test_local_engine_usage_mistakes_are_one_line_and_exit_2(samples: Path, capsys) -> None:
    assert main(["--remote", "sc://127.0.0.1:1", "stats", str(samples / "legacy"), "--engine", "local"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["kafkalog stats: error: --engine local runs in this process: it cannot be combined with --remote"]
    with pytest.raises(SystemExit) as e:
        main(["validate", str(samples / "legacy"), "--engine", "jvm"])
    assert e.value.code == 2
    assert "argument --engine: invalid choice: 'jvm'" in capsys.readouterr().err
    assert main(["report", "--schema", "main.kafkalog", "--engine", "local"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "kafkalog report: error: --engine local reads the tables of a warehouse on this machine's file system: "
        "main.kafkalog is read with Spark (--engine spark)"]
