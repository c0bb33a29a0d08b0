"""Bad input never crashes or hangs the decoder: each problem is a finding naming file and byte position,
and the rest of the file is still read where the framing allows. Inputs are corrupted COPIES of files
Kafka wrote (the corpus itself is never touched)."""

from __future__ import annotations

import re
import shutil
import struct
import zlib
from pathlib import Path

import crc32c as crc32c_lib
import pytest
import zstandard

from kafkalog_spark import KafkaLogError, read_log
from kafkalog_spark.findings import Finding
from tests.helpers.corpus import BROKER, SAMPLES
from tests.helpers.framing import frames

NONE_LOG = BROKER / "tutorial-segments-0" / "00000000000000000000.log"
ZSTD_LOG = BROKER / "codec-zstd-0" / "00000000000000000000.log"


def test_the_framing_walk_is_dump_logs() -> None:
    """The framing walk (tests/helpers/framing.py) gives what kafka-dump-log printed for these segments (golden/):
    the tests below take their expected positions from it."""
    for log in (NONE_LOG, ZSTD_LOG):
        golden = (SAMPLES / "golden" / f"{log.relative_to(SAMPLES)}.deep.txt").read_bytes().decode()
        dumped = [tuple(map(int, m)) for m in re.findall(
            r"(?m)^baseOffset: (\d+) lastOffset: (\d+) count: (\d+) .* position: (\d+) .* size: (\d+) ", golden)]
        assert [(f.base_offset, f.last_offset, f.count, f.position, f.size) for f in frames(log)] == dumped
        assert len(dumped) == {NONE_LOG: 12, ZSTD_LOG: 6}[log]


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


def at(findings: list[Finding]) -> list[tuple[str, int]]:
    return [(f.kind, f.position) for f in findings]


def test_truncated_tail_is_a_warning_and_earlier_batches_survive(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    whole = frames(NONE_LOG)
    last = whole[-1]
    with open(log, "r+b") as f:
        f.truncate(last.position + last.size - 7)
    findings: list[Finding] = []
    got = batches(log, findings)
    assert [b["baseOffset"] for b in got] == [b.base_offset for b in whole[:-1]] == list(range(11))
    assert kinds(findings) == ["truncated_tail"]
    assert findings[0].position == last.position
    assert findings[0].detail == f"Found {last.size - 7} invalid bytes at the end of {log.name}"


def test_bad_crc_is_reported_and_batch_marked_invalid(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    whole = frames(NONE_LOG)
    target = whole[1]
    with open(log, "r+b") as f:
        f.seek(target.position + 70)  # inside the records, covered by the CRC
        byte = f.read(1)
        f.seek(target.position + 70)
        f.write(bytes([byte[0] ^ 0xFF]))
    findings: list[Finding] = []
    got = batches(log, findings)
    assert [(b["position"], b["isValid"]) for b in got] == [(w.position, w is not target) for w in whole]
    assert at(findings) == [("batch_crc_invalid", target.position)]


def test_zero_filled_region_is_skipped_and_reading_resumes(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    whole = frames(NONE_LOG)
    b1, b2 = whole[1], whole[2]
    with open(log, "r+b") as f:
        f.seek(b1.position)
        f.write(bytes(b1.size))  # zero the second batch entirely
    findings: list[Finding] = []
    got = batches(log, findings)
    assert [b["baseOffset"] for b in got] == [whole[0].base_offset] + [b.base_offset for b in whole[2:]]
    assert at(findings) == [("corrupt_size", b1.position), ("skipped_region", b1.position)]
    assert f"{b1.size} zero-filled bytes skipped from {b1.position} to {b2.position}" in findings[1].detail


def test_impossible_length_becomes_a_truncated_tail(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    whole = frames(NONE_LOG)
    b1 = whole[1]
    with open(log, "r+b") as f:
        f.seek(b1.position + 8)
        f.write(struct.pack(">i", 2**31 - 1))
    findings: list[Finding] = []
    got = batches(log, findings)
    assert [b["baseOffset"] for b in got] == [whole[0].base_offset]
    assert at(findings) == [("truncated_tail", b1.position)]
    # dump-log counts every byte from the batch whose size runs past the end
    assert findings[0].detail == f"Found {NONE_LOG.stat().st_size - b1.position} invalid bytes at the end of {log.name}"


def test_unknown_magic_is_skipped_with_its_framing(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    whole = frames(NONE_LOG)
    with open(log, "r+b") as f:
        f.seek(whole[1].position + 16)
        f.write(b"\x07")
    findings: list[Finding] = []
    got = batches(log, findings)
    assert [b["position"] for b in got] == [w.position for i, w in enumerate(whole) if i != 1]
    assert at(findings) == [("unknown_magic", whole[1].position)]


def test_unknown_codec_and_corrupt_stream_are_findings_not_crashes(tmp_path: Path) -> None:
    log = copy(ZSTD_LOG, tmp_path)
    whole = frames(ZSTD_LOG)
    first, second = whole[0], whole[1]
    assert {w.codec for w in whole} == {4}  # zstd
    with open(log, "r+b") as f:
        f.seek(first.position + 22)  # low byte of attributes: codec 7
        attr = f.read(1)[0]
        f.seek(first.position + 22)
        f.write(bytes([(attr & 0xF8) | 0x07]))
        f.seek(second.position + 61 + 8)  # inside the zstd frame
        f.write(b"\xff\xff\xff\xff")
    # what the damaged frame is to another zstd implementation: a corrupt stream, or bytes that do not decode
    damaged = log.read_bytes()[second.position + 61:second.position + second.size]
    try:
        zstandard.ZstdDecompressor().decompressobj().decompress(damaged)
        second_kind = "record_decode_failed"
    except zstandard.ZstdError:
        second_kind = "decompression_failed"
    findings: list[Finding] = []
    records = read_log(str(log), "records", findings=findings)
    assert sorted(at(findings)) == sorted([("unknown_codec", first.position), ("decompression_failed", first.position),
                                           ("batch_crc_invalid", first.position),
                                           ("batch_crc_invalid", second.position), (second_kind, second.position)])
    # the batches after the damage are still decoded, every record of them and nothing of the damaged two
    later = [o for w in whole[2:] for o in range(w.base_offset, w.last_offset + 1)]
    assert records.column("offset").to_pylist() == later
    assert len(later) == sum(w.count for w in whole[2:])


def test_decompression_bomb_is_capped(tmp_path: Path) -> None:
    whole = frames(ZSTD_LOG)
    # each batch's records region as another zstd implementation inflates it; a batch within 64 bytes would stay
    sizes = [len(zstandard.ZstdDecompressor().decompressobj().decompress(w.payload)) for w in whole]
    findings: list[Finding] = []
    table = read_log(str(ZSTD_LOG), "records", findings=findings, max_decompressed=64)
    kept = [w for w, n in zip(whole, sizes, strict=True) if n <= 64]
    assert table.column("offset").to_pylist() == [o for w in kept for o in range(w.base_offset, w.last_offset + 1)]
    assert [(f.kind, f.position, f.detail) for f in findings] == [
        ("decompression_failed", w.position, f"batch at offset {w.base_offset}: decompressed size exceeds the cap of "
                                             "64 bytes") for w, n in zip(whole, sizes, strict=True) if n > 64]
    assert len(findings) == len(whole) == 6  # all of them inflate past 64 bytes


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
    assert findings[0].file == str(d / "00000000000000000042.log")


def test_a_directory_named_like_a_segment_is_unreadable(tmp_path: Path) -> None:
    d = tmp_path / "odd-0" / "00000000000000000000.log"
    d.mkdir(parents=True)
    findings: list[Finding] = []
    assert read_log(str(d), "records", findings=findings).num_rows == 0
    assert kinds(findings) == ["unreadable_file"]
    assert findings[0].file == str(d)


@pytest.mark.skipif(__import__("os").geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    log.chmod(0)
    findings: list[Finding] = []
    read_log(str(log), "records", findings=findings)
    assert kinds(findings) == ["unreadable_file"]
    assert findings[0].file == str(log)


def test_failfast_names_file_and_position(tmp_path: Path) -> None:
    log = copy(NONE_LOG, tmp_path)
    b1 = frames(NONE_LOG)[1]
    with open(log, "r+b") as f:
        f.seek(b1.position)
        f.write(bytes(b1.size))
    with pytest.raises(KafkaLogError) as e:
        read_log(str(log), "records", mode="FAILFAST")
    assert str(log) in str(e.value) and f"at byte {b1.position}" in str(e.value)


def _crc_ok(data: bytes, pos: int, end: int) -> bool:
    """The entry's stored CRC against its bytes: CRC-32C from the attributes (v2), CRC-32 from the magic (v0/v1)."""
    if data[pos + 16] == 2:
        return crc32c_lib.crc32c(data[pos + 21:end]) == struct.unpack_from(">I", data, pos + 17)[0]
    return zlib.crc32(data[pos + 16:end]) == struct.unpack_from(">I", data, pos + 12)[0]


def _framing(data: bytes) -> tuple[list[tuple[int, int, bool]], list[tuple[str, int]]]:
    """What the batches view must give for ``data``, walked here with struct and the CRC libraries: Kafka's
    FileLogInputStream framing (fewer than 17 bytes, or fewer than the size field announces, is a tail; a size
    field below 14 is corrupt), an entry of another magic skipped with its framing, a v2 entry smaller than its
    61-byte header too small, a codec id above 4 unknown, and after a corrupt size the next v2 batch whose CRC
    checks out (README: Python API). Returns the batches' (position, baseOffset, CRC valid) and the findings'
    (kind, position)."""
    rows: list[tuple[int, int, bool]] = []
    found: list[tuple[str, int]] = []
    pos, n = 0, len(data)
    while pos < n:
        size = struct.unpack_from(">i", data, pos + 8)[0] if n - pos >= 17 else 0
        if n - pos < 17 or pos + 12 + size > n:
            found.append(("truncated_tail", pos))
            break
        if size < 14:
            found += [("corrupt_size", pos), ("skipped_region", pos)]
            pos = next((q for q in range(pos + 1, n - 60) if data[q + 16] == 2
                        and 49 <= (s := struct.unpack_from(">i", data, q + 8)[0]) <= n - q - 12
                        and _crc_ok(data, q, q + 12 + s)), n)
            continue
        end, magic = pos + 12 + size, data[pos + 16]
        if magic > 2:
            found.append(("unknown_magic", pos))
        elif magic == 2 and size + 12 < 61:
            found.append(("batch_too_small", pos))
        else:
            valid = _crc_ok(data, pos, end)
            rows.append((pos, struct.unpack_from(">q", data, pos)[0], valid))
            found += [("batch_crc_invalid", pos)] * (not valid)
            found += [("unknown_codec", pos)] * ((data[pos + 22] if magic == 2 else data[pos + 17]) & 7 > 4)
        pos = end
    return rows, found


def test_garbage_never_crashes(tmp_path: Path) -> None:
    import random

    rng = random.Random(7)
    src = NONE_LOG.read_bytes()
    d = tmp_path / "fuzz-0"
    d.mkdir()
    seen: set[str] = set()
    for i in range(40):
        data = bytearray(src)
        for _ in range(rng.randint(1, 30)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if i % 4 == 0:
            data = data[: rng.randrange(len(data))]
        path = d / f"{i:020d}.log"
        path.write_bytes(bytes(data))
        rows, framing = _framing(bytes(data))
        findings: list[Finding] = []
        got = batches(path, findings)
        assert [(b["position"], b["baseOffset"], b["isValid"]) for b in got] == rows, i
        assert sorted(at(findings)) == sorted(framing), i
        # the records view reports the same framing, plus records that do not decode (or, where a mutation gave
        # the uncompressed batch a codec, do not decompress), each at a batch position the framing gives
        findings = []
        read_log(str(path), "records", findings=findings)
        positions = {p for p, _, _ in rows}
        compressed = {p for p, _, _ in rows if (data[p + 22] if data[p + 16] == 2 else data[p + 17]) & 7}
        record_level = ("record_decode_failed", "decompression_failed")
        assert sorted(x for x in at(findings) if x[0] not in record_level) == sorted(framing), i
        assert {p for k, p in at(findings) if k == "record_decode_failed"} <= positions, i
        assert {p for k, p in at(findings) if k == "decompression_failed"} <= compressed, i
        seen |= {k for k, _ in framing}
    # the 40 inputs reach every framing case
    assert seen == {"truncated_tail", "corrupt_size", "skipped_region", "unknown_magic", "batch_too_small",
                    "batch_crc_invalid", "unknown_codec"}
