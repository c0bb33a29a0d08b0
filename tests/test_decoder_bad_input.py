"""Bad input never crashes or hangs the decoder: each problem is a finding naming file and byte position,
and the rest of the file is still read where the framing allows. Inputs are corrupted COPIES of files
Kafka wrote (the corpus itself is never touched)."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from kafkalog_spark import KafkaLogError, read_log
from kafkalog_spark.findings import Finding

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples" / "broker"
NONE_LOG = SAMPLES / "tutorial-segments-0" / "00000000000000000000.log"
ZSTD_LOG = SAMPLES / "codec-zstd-0" / "00000000000000000000.log"


def copy(src: Path, tmp_path: Path, topic_dir: str = "copy-0") -> Path:
    d = tmp_path / topic_dir
    d.mkdir(exist_ok=True)
    dst = d / src.name
    shutil.copyfile(src, dst)
    return dst


def batches(path: Path, findings: list[Finding] | None = None) -> list[dict]:
    return read_log(str(path), "batches", findings=[] if findings is None else findings).to_pylist()


def kinds(findings: list[Finding]) -> list[str]:
    return [f.kind for f in findings]


def test_truncated_tail_is_a_warning_and_earlier_batches_survive(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    whole = batches(NONE_LOG)
    last = whole[-1]
    with open(log, "r+b") as f:
        f.truncate(last["position"] + last["size"] - 7)
    findings: list[Finding] = []
    got = batches(log, findings)
    assert [b["baseOffset"] for b in got] == [b["baseOffset"] for b in whole[:-1]]
    assert kinds(findings) == ["truncated_tail"]
    assert findings[0].position == last["position"]
    assert findings[0].detail == f"Found {last['size'] - 7} invalid bytes at the end of {log.name}"


def test_bad_crc_is_reported_and_batch_marked_invalid(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    target = batches(NONE_LOG)[1]
    with open(log, "r+b") as f:
        f.seek(target["position"] + 70)  # inside the records, covered by the CRC
        byte = f.read(1)
        f.seek(target["position"] + 70)
        f.write(bytes([byte[0] ^ 0xFF]))
    findings: list[Finding] = []
    got = batches(log, findings)
    assert [b["isValid"] for b in got].count(False) == 1
    assert not got[1]["isValid"]
    assert ("batch_crc_invalid", target["position"]) in [(f.kind, f.position) for f in findings]


def test_zero_filled_region_is_skipped_and_reading_resumes(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    whole = batches(NONE_LOG)
    b1, b2 = whole[1], whole[2]
    with open(log, "r+b") as f:
        f.seek(b1["position"])
        f.write(bytes(b1["size"]))  # zero the second batch entirely
    findings: list[Finding] = []
    got = batches(log, findings)
    assert [b["baseOffset"] for b in got] == [whole[0]["baseOffset"]] + [b["baseOffset"] for b in whole[2:]]
    assert kinds(findings)[:2] == ["corrupt_size", "skipped_region"]
    assert findings[0].position == b1["position"]
    assert f"{b1['size']} zero-filled bytes skipped from {b1['position']} to {b2['position']}" in findings[1].detail


def test_impossible_length_becomes_a_truncated_tail(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    b1 = batches(NONE_LOG)[1]
    with open(log, "r+b") as f:
        f.seek(b1["position"] + 8)
        f.write(struct.pack(">i", 2**31 - 1))
    findings: list[Finding] = []
    got = batches(log, findings)
    assert len(got) == 1
    assert kinds(findings) == ["truncated_tail"] and findings[0].position == b1["position"]


def test_unknown_magic_is_skipped_with_its_framing(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    whole = batches(NONE_LOG)
    with open(log, "r+b") as f:
        f.seek(whole[1]["position"] + 16)
        f.write(b"\x07")
    findings: list[Finding] = []
    got = batches(log, findings)
    assert len(got) == len(whole) - 1
    assert ("unknown_magic", whole[1]["position"]) in [(f.kind, f.position) for f in findings]


def test_unknown_codec_and_corrupt_stream_are_findings_not_crashes(tmp_path: Path) -> None:
    log = copy(ZSTD_LOG, tmp_path)
    whole = batches(ZSTD_LOG)
    first, second = whole[0], whole[1]
    with open(log, "r+b") as f:
        f.seek(first["position"] + 22)  # low byte of attributes: codec 7
        attr = f.read(1)[0]
        f.seek(first["position"] + 22)
        f.write(bytes([(attr & 0xF8) | 0x07]))
        f.seek(second["position"] + 61 + 8)  # inside the zstd frame
        f.write(b"\xff\xff\xff\xff")
    findings: list[Finding] = []
    records = read_log(str(log), "records", findings=findings)
    found = {(f.kind, f.position) for f in findings}
    assert ("unknown_codec", first["position"]) in found
    assert ("decompression_failed", first["position"]) in found
    assert any(f.position == second["position"] and f.kind in ("decompression_failed", "record_decode_failed")
               for f in findings)
    later = sum(b["count"] for b in whole[2:])
    assert records.num_rows >= later  # the batches after the damage are still decoded


def test_decompression_bomb_is_capped(tmp_path: Path) -> None:
    findings: list[Finding] = []
    table = read_log(str(ZSTD_LOG), "records", findings=findings, max_decompressed=64)
    assert table.num_rows < sum(b["count"] for b in batches(ZSTD_LOG))
    assert any(f.kind == "decompression_failed" and "exceeds the cap of 64 bytes" in f.detail for f in findings)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    d = tmp_path / "empty-0"
    d.mkdir()
    empty = d / "00000000000000000000.log"
    empty.write_bytes(b"")
    findings: list[Finding] = []
    assert read_log(str(empty), "records", findings=findings).num_rows == 0
    assert findings == []  # an empty active segment is normal
    read_log(str(d / "00000000000000000042.log"), "records", findings=findings)
    assert kinds(findings) == ["missing_file"]


def test_a_directory_named_like_a_segment_is_unreadable(tmp_path: Path) -> None:
    d = tmp_path / "odd-0" / "00000000000000000000.log"
    d.mkdir(parents=True)
    findings: list[Finding] = []
    assert read_log(str(d), "records", findings=findings).num_rows == 0
    assert kinds(findings) == ["unreadable_file"]


@pytest.mark.skipif(__import__("os").geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    log.chmod(0)
    findings: list[Finding] = []
    read_log(str(log), "records", findings=findings)
    assert kinds(findings) == ["unreadable_file"]


def test_failfast_names_file_and_position(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    b1 = batches(NONE_LOG)[1]
    with open(log, "r+b") as f:
        f.seek(b1["position"])
        f.write(bytes(b1["size"]))
    with pytest.raises(KafkaLogError) as e:
        read_log(str(log), "records", mode="FAILFAST")
    assert str(log) in str(e.value) and f"at byte {b1['position']}" in str(e.value)


def test_garbage_never_crashes(tmp_path: Path) -> None:
    import random

    rng = random.Random(7)
    src = NONE_LOG.read_bytes()
    d = tmp_path / "fuzz-0"
    d.mkdir()
    for i in range(40):
        data = bytearray(src)
        for _ in range(rng.randint(1, 30)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if i % 4 == 0:
            data = data[: rng.randrange(len(data))]
        path = d / f"{i:020d}.log"
        path.write_bytes(bytes(data))
        findings: list[Finding] = []
        read_log(str(path), "records", findings=findings)
        read_log(str(path), "batches", findings=findings)
        assert all(isinstance(f.position, int) for f in findings)
