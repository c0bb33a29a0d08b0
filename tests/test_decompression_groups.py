"""Compressed batches are decoded a group of GROUP_BYTES decompressed bytes at a time (what bounds a decoding
worker's memory): with a group far smaller than the segments, the records are the same as decoded with the
default group, only cut into more Arrow batches, each cut at a Kafka batch's end once the group is full."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

BROKER = Path(__file__).resolve().parent.parent / "data" / "samples" / "broker"
CODEC_DIRS = ["codec-gzip-0", "codec-lz4-0", "codec-zstd-0", "codec-snappy-java-0", "codec-snappy-librdkafka-0"]
SMALL_GROUP = 2048


def _records(partition_dir: Path) -> list[pa.RecordBatch]:
    from kafkalog_spark.log.reader import iter_segment

    findings: list = []
    out = [b for log in sorted(partition_dir.glob("*.log")) for b in iter_segment(str(log), "records", findings)]
    assert findings == []
    return out


def _payload_bytes(batch: pa.RecordBatch) -> int:
    sizes = [pc.sum(pc.binary_length(batch.column(name))).as_py() or 0 for name in ("key", "value")]
    return sum(sizes)


@pytest.mark.parametrize("codec_dir", CODEC_DIRS)
def test_small_groups_decode_the_same_records_in_more_batches(codec_dir: str, monkeypatch) -> None:
    from kafkalog_spark.format import records

    default = _records(BROKER / codec_dir)
    monkeypatch.setattr(records, "GROUP_BYTES", SMALL_GROUP)
    grouped = _records(BROKER / codec_dir)

    assert pa.Table.from_batches(grouped).equals(pa.Table.from_batches(default))
    assert len(grouped) > 2 * len(default)
    for batch in grouped:
        # the group is cut after the Kafka batch that fills it: what comes before that batch is under the limit
        last_base = pc.max(batch.column("baseOffset")).as_py()
        before_last = batch.filter(pc.less(batch.column("baseOffset"), last_base))
        assert _payload_bytes(before_last) < SMALL_GROUP
