"""`kafkalog stats` and `kafkalog validate` as a CI gate: output fields, exit codes, JUnit XML."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from kafkalog_spark import read_log
from kafkalog_spark.cli import main
from kafkalog_spark.finding_kinds import KINDS


def run_json(capsys, *args: str) -> tuple[int, list[dict]]:
    code = main([*args, "--json"])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_stats_rows(spark, samples: Path, capsys) -> None:
    code, rows = run_json(capsys, "stats", str(samples / "broker" / "tutorial-segments-0"))
    assert code == 0
    assert [(r["topic"], r["partition"], r["baseOffset"], r["records"]) for r in rows] == [
        ("tutorial-segments", 0, base, 4 if base == 96 else 12) for base in range(0, 100, 12)]
    assert all({"batches", "logSize", "bytesOnDisk", "codecMix"} <= r.keys() for r in rows)


def test_stats_of_one_partition_in_two_log_dirs_keeps_the_copies_apart(spark, samples: Path, capsys) -> None:
    """live-copy-0 as the broker left it and as copied from it while running: read together, each copy's rows are
    those of its log dir read alone, and the table says whose they are."""
    copies = [samples / "broker" / "live-copy-0", samples / "live-copy" / "live-copy-0"]
    code, rows = run_json(capsys, "stats", *map(str, copies))
    alone = [run_json(capsys, "stats", str(c))[1] for c in copies]
    assert code == 0 and rows == alone[0] + alone[1]
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
    assert len(per_partition) >= len(checks) * 20


def test_validate_fails_on_a_damaged_copy_and_writes_junit(spark, samples: Path, tmp_path: Path, capsys) -> None:
    src = samples / "broker" / "tutorial-segments-0"
    dst = tmp_path / "logs" / src.name
    shutil.copytree(src, dst)
    log = dst / "00000000000000000024.log"
    victim = read_log(str(log), "batches", findings=[]).to_pylist()[5]
    with open(log, "r+b") as f:
        f.seek(victim["position"] + 65)
        b = f.read(1)
        f.seek(victim["position"] + 65)
        f.write(bytes([b[0] ^ 0x01]))
    junit = tmp_path / "report.xml"
    code, rows = run_json(capsys, "validate", str(dst.parent), "--junit", str(junit))
    assert code == 1
    errors = [r for r in rows if r["severity"] == "error"]
    assert any(r["file"] == str(log) and r["position"] == victim["position"] for r in errors)
    assert all({"topic", "partition", "baseOffset", "check", "file", "position", "detail"} <= r.keys() for r in rows)
    suite = ET.parse(junit).getroot()
    failing = {(f"{r['topic']}-{r['partition']}", r["check"]) for r in errors}  # one test case per check, partition
    assert int(suite.get("failures")) == len(failing) == len(suite.findall(".//failure"))
    assert {(c.get("classname"), c.get("name")) for c in suite.findall("testcase") if c.find("failure") is not None
            } == failing
    assert int(suite.get("tests")) == len(suite.findall("testcase")) > len(failing)


def test_validate_gate(spark, samples: Path, capsys) -> None:
    """--fail-on warning makes the corpus's warnings (truncated tails of live copies, ...) fail the run."""
    code, rows = run_json(capsys, "validate", str(samples / "broker"), "--fail-on", "warning")
    assert any(r["severity"] == "warning" for r in rows) and code == 1


def test_validate_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["validate"])
    assert e.value.code == 2
