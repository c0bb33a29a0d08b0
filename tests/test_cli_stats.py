"""`kafkalog stats` and `kafkalog validate` as a CI gate: output fields, exit codes, JUnit XML."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from kafkalog_spark import read_log
from kafkalog_spark.cli import main


def run_json(capsys, *args: str) -> tuple[int, list[dict]]:
    code = main([*args, "--json"])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_stats_rows(spark, samples: Path, capsys) -> None:
    code, rows = run_json(capsys, "stats", str(samples / "broker" / "tutorial-segments-0"))
    assert code == 0
    assert [(r["topic"], r["partition"], r["baseOffset"], r["records"]) for r in rows] == [
        ("tutorial-segments", 0, base, 4 if base == 96 else 12) for base in range(0, 100, 12)]
    assert all({"batches", "logSize", "bytesOnDisk", "codecMix"} <= r.keys() for r in rows)


def test_validate_passes_the_clean_corpus(spark, samples: Path, capsys) -> None:
    code, rows = run_json(capsys, "validate", str(samples / "broker"))
    assert code == 0
    assert not [r for r in rows if r["severity"] == "error"]


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
    assert int(suite.get("failures")) == len(errors) and suite.findall(".//failure")


def test_validate_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["validate"])
    assert e.value.code == 2
