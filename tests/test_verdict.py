"""The verdict counts every error of every view: damage only a full decode finds (a batch whose CRC is right
but whose compressed payload does not decompress, a record that does not decode) fails ``validate`` and
reaches ``index_findings``. The damaged segments are built here from real-broker segments: the payload is
changed, then the batch CRC-32C recomputed, so the batches view (headers and CRCs) sees nothing wrong."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

import kafkalog_spark
from kafkalog_spark.format.crc import crc32c
from tests.helpers import framing

GZIP_SEGMENT = ("codec-gzip-0", "00000000000000000263.log")
PLAIN_SEGMENT = ("codec-none-0", "00000000000000000000.log")
CRC_AT, CRC_FROM = 17, 21  # the CRC field, and where the bytes it covers start (attributes)


def first_batch(data: bytes) -> tuple[int, int]:
    """Position and size of a segment's first v2 batch (batchLength at byte 8 counts from byte 12)."""
    first = framing.batches(data)[0]
    return first.position, first.size


def damage(path: Path, change) -> int:
    """Apply ``change(buffer, batch position)`` to the first batch of ``path`` and recompute its CRC-32C, so
    only decoding can tell; returns the batch's position."""
    data = bytearray(path.read_bytes())
    pos, size = first_batch(data)
    change(data, pos)
    struct.pack_into(">I", data, pos + CRC_AT, crc32c(bytes(data[pos + CRC_FROM:pos + size])))
    path.write_bytes(bytes(data))
    return pos


def _flip_compressed_bytes(data: bytearray, pos: int) -> None:
    for i in range(pos + framing.RECORDS_OFFSET + 20, pos + framing.RECORDS_OFFSET + 60):  # inside the deflate stream
        data[i] ^= 0xFF


def _bad_record_length(data: bytearray, pos: int) -> None:
    data[pos + framing.RECORDS_OFFSET] = 0x7F  # the first record's length varint: zigzag -64, a negative length


@pytest.fixture(scope="module")
def crafted(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, int]]:
    """A log dir with a partition holding an undecompressable gzip batch and one holding an undecodable record;
    the kind each must produce -> (file, byte position)."""
    root = tmp_path_factory.mktemp("verdict") / "logs"
    out = {}
    for (part, name), change, kind in ((GZIP_SEGMENT, _flip_compressed_bytes, "decompression_failed"),
                                       (PLAIN_SEGMENT, _bad_record_length, "record_decode_failed")):
        shutil.copytree(samples / "broker" / part, root / part)
        out[kind] = (str(root / part / name), damage(root / part / name, change))
    return {"root": str(root), **out}


def test_damage_is_invisible_to_the_batches_view(crafted) -> None:
    for kind in ("decompression_failed", "record_decode_failed"):
        file, position = crafted[kind]
        found = []
        batches = kafkalog_spark.read_log(file, view="batches", findings=found)
        # CRCs right: headers look sound, every batch of the segment (walked by its framing) valid
        starts = [b.position for b in framing.batches(Path(file))]
        assert found == [] and batches.column("position").to_pylist() == starts
        assert batches.column("isValid").to_pylist() == [True] * len(starts)
        found = []
        kafkalog_spark.read_log(file, view="records", findings=found)
        assert [(f.kind, f.position) for f in found] == [(kind, position)]


def test_records_view_errors_fail_validate(spark, crafted, tmp_path: Path, capsys) -> None:
    from kafkalog_spark.cli import main

    junit = tmp_path / "report.xml"
    assert main(["--quiet", "validate", crafted["root"], "--json", "--junit", str(junit)]) == 1  # was 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    report = junit.read_text()
    for kind in ("decompression_failed", "record_decode_failed"):
        file, position = crafted[kind]
        assert [(r["severity"], r["file"], r["position"]) for r in rows if r["check"] == kind] == [
            ("error", file, position)]
        assert f'name="{kind}"><failure' in report
