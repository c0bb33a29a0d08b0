"""`kafkalog dump` through its command line, against kafka-dump-log's golden output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafkalog_spark.cli import main
from tests.helpers.corpus import SAMPLES

OTHER_KINDS = [
    "broker/tiny-index-interval-0/00000000000000000000.index",
    "broker/tiny-index-interval-0/00000000000000000000.timeindex",
    "broker/txn-mixed-0/00000000000000000000.txnindex",
    "broker/txn-mixed-0/00000000000000000018.snapshot",
    "live-copy/live-copy-0/00000000000000000072.index",
]


def run(capsys, monkeypatch, *args: str) -> str:
    monkeypatch.chdir(SAMPLES)
    assert main(list(args)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("rel", OTHER_KINDS)
def test_text_dump_equals_golden(capsys, monkeypatch, rel: str) -> None:
    golden = (SAMPLES / "golden" / f"{rel}.deep.txt").read_bytes().decode()
    assert run(capsys, monkeypatch, "dump", "--kafka-version", "3.9", "--deep-iteration", "--print-data-log",
               rel) == golden


def _golden_batches(golden: str) -> list[tuple]:
    """Per batch (or legacy entry) line of kafka-dump-log's deep dump: its first offset (a legacy wrapper's is its
    first inner record's, the first `| offset:` line under it), last offset, position, size, magic, codec, crc and
    isvalid."""
    out = []
    for block in re.split(r"(?m)^(?=baseOffset: |offset: )", golden)[1:]:
        head = block.split("\n", 1)[0]
        last = int(re.match(r"(?:baseOffset: \d+ lastOffset: |offset: )(\d+) ", head)[1])
        base = re.match(r"baseOffset: (\d+) ", head) or re.search(r"(?m)^\| offset: (\d+) ", block)
        pos, size, magic, codec, crc, valid = re.search(
            r" position: (\d+) .*size: (\d+) magic: (\d) compresscodec: (\w+) crc: (\d+) isvalid: (\w+)", head).groups()
        out.append((int(base[1]), last, int(pos), int(size), int(magic), codec, int(crc), valid == "true"))
    return out


@pytest.mark.parametrize("rel", ["broker/codec-gzip-0/00000000000000000000.log",
                                 "legacy/legacy-v1-0/00000000000000000000.log",
                                 "broker/txn-mixed-0/00000000000000000000.log"])
def test_json_lines_carry_dump_log_fields(capsys, monkeypatch, rel: str) -> None:
    golden = (SAMPLES / "golden" / f"{rel}.deep.txt").read_bytes().decode()
    out = run(capsys, monkeypatch, "dump", "--json", "--deep-iteration", rel)
    docs = [json.loads(line) for line in out.splitlines()]
    batches = [d for d in docs if d["kind"] == "batch"]
    records = [d for d in docs if d["kind"] == "record"]
    assert [b["lastOffset"] for b in batches] == [int(m) for m in re.findall(
        r"(?m)^(?:baseOffset: \d+ lastOffset: |offset: )(\d+) ", golden)]
    assert [r["offset"] for r in records] == [int(m) for m in re.findall(r"(?m)^\| offset: (\d+) ", golden)]
    key_sizes = re.findall(r"(?m)^\| offset: .*? keySize: (-?\d+)", golden)
    assert [r["keySize"] for r in records] == [int(m) for m in key_sizes]
    expected = _golden_batches(golden)
    assert [(b["baseOffset"], b["lastOffset"], b["position"], b["size"], b["magic"], b["compresscodec"], b["crc"],
             b["isvalid"]) for b in batches] == expected
    # every batch line of the dump was parsed (counted another way: the lines carrying a batch's isvalid)
    assert len(expected) == sum(" isvalid: " in line and not line.startswith("|") for line in golden.split("\n")) > 1


def test_json_for_index_entries(capsys, monkeypatch) -> None:
    rel = OTHER_KINDS[0]
    golden = (SAMPLES / "golden" / f"{rel}.deep.txt").read_bytes().decode()
    docs = [json.loads(line) for line in run(capsys, monkeypatch, "dump", "--json", rel).splitlines()]
    assert [(d["offset"], d["position"]) for d in docs] == [
        (int(o), int(p)) for o, p in re.findall(r"(?m)^offset: (\d+) position: (\d+)$", golden)]


def test_partial_tail_is_reported_like_dump_log(capsys, monkeypatch, tmp_path: Path) -> None:
    src = SAMPLES / "broker" / "tutorial-segments-0" / "00000000000000000000.log"
    part = tmp_path / "t-0"
    part.mkdir()
    log = part / src.name
    log.write_bytes(src.read_bytes()[:-10])
    # the last batch's size, as kafka-dump-log printed it
    golden = (SAMPLES / "golden" / "broker" / "tutorial-segments-0" / f"{src.name}.deep.txt").read_bytes().decode()
    last_size = int(re.findall(r"(?m)^baseOffset: .* size: (\d+) magic: ", golden)[-1])
    out = run(capsys, monkeypatch, "dump", str(log))
    assert out.splitlines()[-1] == f"Found {last_size - 10} invalid bytes at the end of {log.name}"


def test_usage_error_exits_2(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["dump"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: kafkalog dump ")
    assert err.splitlines()[-1] == "kafkalog dump: error: the following arguments are required: FILE"


@pytest.mark.parametrize("flags", [["--max-bytes", "-1"], ["--max-bytes", "x"], ["--kafka-version", "5"]])
def test_bad_flag_values_exit_2(capsys, flags: list[str]) -> None:
    rel = str(SAMPLES / "broker" / "tutorial-segments-0" / "00000000000000000000.log")
    try:  # argparse exits on a bad choice, our own checks return the code
        code = main(["dump", *flags, rel])
    except SystemExit as e:
        code = e.code
    last = capsys.readouterr().err.splitlines()[-1]
    # one error line naming the flag and the value refused
    assert code == 2 and last.startswith("kafkalog dump: error: ") and flags[0] in last and flags[1] in last


def test_head_mode_through_the_cli_equals_4x_golden(capsys, monkeypatch) -> None:
    """The default version (4.x) with the record flags, against kafka-dump-log 4.4.0's golden."""
    rel = "broker/txn-mixed-0/00000000000000000018.log"
    golden = (SAMPLES / "golden-4.4.0" / f"{rel}.head.txt").read_bytes().decode()
    monkeypatch.chdir(SAMPLES)
    assert main(["dump", "--print-data-log", "--skip-record-metadata", "--max-bytes", "1024", rel]) == 0
    out, err = capsys.readouterr()
    assert out == golden
    assert err == (SAMPLES / "golden-4.4.0" / f"{rel}.head.stderr.txt").read_text().replace(
        "broker/", f"{SAMPLES}/broker/", 1)
