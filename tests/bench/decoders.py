"""The decoders under test. Each returns (records, batches) so the work cannot be skipped and the caller can
check every decoder saw the same data.

Ours read the `.log` files themselves (page cache warm); the peers get the bytes in memory, as their
consumers do after a fetch. The peers check CRCs like their consumers do by default (check_crcs=True),
as our views do.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow.compute as pc
from aiokafka.record.memory_records import MemoryRecords as AioMemoryRecords
from kafka.record import MemoryRecords as KafkaPythonMemoryRecords

from kafkalog_spark import Finding
from kafkalog_spark.log.reader import iter_segment, segment_files


class DecodeError(AssertionError):
    """A decoder reported a problem on the benchmark files (which are all valid)."""


def ours(view: str, log_dir: Path, end: int | None = None) -> tuple[int, int]:
    """kafkalog_spark over a log dir: every Arrow batch of ``view`` consumed. The records view does not
    count batches (0); the batches view counts the records its batches declare."""
    findings: list[Finding] = []
    records = batches = 0
    for path in segment_files(str(log_dir)):
        for batch in iter_segment(path, view, findings, end=end):
            if view == "records":
                records += batch.num_rows
            else:
                batches += batch.num_rows
                records += pc.sum(batch.column("count")).as_py() or 0
    if findings:
        raise DecodeError(f"kafkalog_spark {view} view reported findings: {findings[:3]}")
    return records, batches


def _peer(memory_records: Callable[[bytes], object], data: bytes) -> tuple[int, int]:
    records = batches = 0
    recs = memory_records(data)
    while recs.has_next():  # type: ignore[attr-defined]
        batch = recs.next_batch()  # type: ignore[attr-defined]
        if not batch.validate_crc():
            raise DecodeError(f"CRC mismatch in batch at offset {batch.base_offset}")
        batches += 1
        for record in batch:
            record.key  # noqa: B018 - touch every field, as a consumer would
            record.value  # noqa: B018
            record.headers  # noqa: B018
            records += 1
    return records, batches


def kafka_python(data: bytes) -> tuple[int, int]:
    """kafka-python's decoder (pure Python; kafka.record.MemoryRecords)."""
    return _peer(KafkaPythonMemoryRecords, data)


def aiokafka(data: bytes) -> tuple[int, int]:
    """aiokafka's decoder (its Cython MemoryRecords / DefaultRecordBatch when built, as here)."""
    return _peer(AioMemoryRecords, data)


def aiokafka_is_cython() -> bool:
    return AioMemoryRecords.__module__.startswith("aiokafka.record._crecords")
