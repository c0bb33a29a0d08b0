"""`kafkalog stats` and `kafkalog validate` as a CI gate: output fields, exit codes, JUnit XML."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from kafkalog_spark.cli import main
from kafkalog_spark.finding_kinds import KINDS
from tests.helpers.framing import batches


def run_json(capsys, *args: str) -> tuple[int, list[dict]]:
    code = main([*args, "--json"])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_stats_rows(spark, samples: Path, capsys) -> None:
    code, rows = run_json(capsys, "stats", str(samples / "broker" / "tutorial-segments-0"))
    assert code == 0
    assert [(r["topic"], r["partition"], r["baseOffset"], r["records"]) for r in rows] == [
        ("tutorial-segments", 0, base, 4 if base == 96 else 12) for base in range(0, 100, 12)]
    # README: one record per batch, uncompressed; every byte of each segment file is a whole batch
    sizes = [(samples / "broker" / "tutorial-segments-0" / f"{r['baseOffset']:020d}.log").stat().st_size for r in rows]
    assert [(r["batches"], r["logSize"], r["bytesOnDisk"], r["codecMix"]) for r in rows] == [
        (r["records"], size, size, {"none": r["records"]}) for r, size in zip(rows, sizes, strict=True)]


def test_stats_of_one_partition_in_two_log_dirs_keeps_the_copies_apart(spark, samples: Path, capsys) -> None:
    """live-copy-0 as the broker left it and as copied from it while running: read together, each copy's rows are
    those of its log dir read alone, and the table says whose they are."""
    copies = [samples / "broker" / "live-copy-0", samples / "live-copy" / "live-copy-0"]
    code, rows = run_json(capsys, "stats", *map(str, copies))
    alone = [run_json(capsys, "stats", str(c))[1] for c in copies]
    assert code == 0 and rows == alone[0] + alone[1]
    assert [len(a) for a in alone] == [5, 5]  # README: 5 segments in each copy
    assert [r["logDir"] for r in rows] == [str(c.parent) for c in copies for _ in alone[copies.index(c)]]
    assert main(["stats", *map(str, copies)]) == 0
    assert capsys.readouterr().out.split()[0] == "logDir"


def test_validate_passes_the_clean_corpus(spark, samples: Path, tmp_path: Path, capsys) -> None:
    junit = tmp_path / "report.xml"
    code, rows = run_json(capsys, "validate", str(samples / "broker"), "--junit", str(junit))
    assert code == 0
    assert not [r for r in rows if r["severity"] == "error"]
    # every check that ran is a passing test case: one per validation check and partition
    suite = ET.parse(junit).getroot()
    checks = {k.name for k in KINDS.values() if k.source == "validate"}
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases) and suite.get("failures") == "0" and not suite.findall(".//failure")
    per_partition = {(c.get("classname"), c.get("name")) for c in cases if c.get("name") in checks}
    assert ("tutorial-segments-0", "index_position_beyond_log") in per_partition
    # every check for each of the broker's 21 partition dirs (README: 18 topic partitions, 3 internal ones)
    partitions = [p.name for p in (samples / "broker").iterdir() if p.is_dir()]
    assert len(partitions) == 21
    # the validation checks as the README's catalogue lists them (source `validate`)
    readme = (Path(__file__).resolve().parents[1] / "docs" / "finding-kinds.md").read_text()
    assert checks == set(re.findall(r"(?m)^\| `(\w+)` \| \w+ \| validate \|", readme)) and len(checks) == 28
    assert per_partition == {(p, check) for p in partitions for check in checks}
    assert len(cases) == len(per_partition)


def test_validate_fails_on_a_damaged_copy_and_writes_junit(spark, samples: Path, tmp_path: Path, capsys) -> None:
    src = samples / "broker" / "tutorial-segments-0"
    dst = tmp_path / "logs" / src.name
    shutil.copytree(src, dst)
    log = dst / "00000000000000000024.log"
    data = log.read_bytes()
    victim = {"position": batches(data)[5].position}  # the sixth batch, walked by its framing
    assert data[victim["position"] + 65] == 0x01  # the record's key length varint: -1, a null key
    with open(log, "r+b") as f:
        f.seek(victim["position"] + 65)
        b = f.read(1)
        f.seek(victim["position"] + 65)
        f.write(bytes([b[0] ^ 0x01]))  # an empty key now: the record still decodes, only the CRC tells
    junit = tmp_path / "report.xml"
    code, rows = run_json(capsys, "validate", str(dst.parent), "--junit", str(junit))
    assert code == 1
    errors = [r for r in rows if r["severity"] == "error"]
    assert [(r["check"], r["file"], r["position"], r["baseOffset"]) for r in errors] == [
        ("batch_crc_invalid", str(log), victim["position"], 24)]
    assert all({"topic", "partition", "baseOffset", "check", "file", "position", "detail"} <= r.keys() for r in rows)
    suite = ET.parse(junit).getroot()
    failing = {(f"{r['topic']}-{r['partition']}", r["check"]) for r in errors}  # one test case per check, partition
    assert int(suite.get("failures")) == len(failing) == len(suite.findall(".//failure"))
    assert {(c.get("classname"), c.get("name")) for c in suite.findall("testcase") if c.find("failure") is not None
            } == failing
    assert int(suite.get("tests")) == len(suite.findall("testcase")) > len(failing)
    # the partition's test cases: every validation check, and the kind that failed
    checks = {k.name for k in KINDS.values() if k.source == "validate"}
    assert {(c.get("classname"), c.get("name")) for c in suite.findall("testcase")} == {
        (dst.name, check) for check in checks} | failing


def test_validate_gate(spark, samples: Path, capsys) -> None:
    """--fail-on warning makes the corpus's warnings (the segment files the cleaner replaced, pending deletion) fail
    the run."""
    code, rows = run_json(capsys, "validate", str(samples / "broker"), "--fail-on", "warning")
    # the corpus's warnings: the segment files the cleaner replaced, still pending deletion (README: compacted-cleaned)
    deleted = sorted(str(p) for p in (samples / "broker").glob("*/*.log.deleted"))
    assert len(deleted) == 8
    assert sorted((r["file"], r["check"]) for r in rows if r["severity"] == "warning") == [
        (f, "stray_temp_file") for f in deleted]
    assert code == 1


def test_validate_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["validate"])
    assert e.value.code == 2
