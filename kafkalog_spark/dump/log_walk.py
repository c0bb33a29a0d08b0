"""The `.log` next to an index, read the way kafka-dump-log checks an index against it:
`FileRecords.slice(position, size).batches()` (clients/.../record/internal/FileLogInputStream.java),
header by header from an index entry's position, which need not be a batch boundary."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from ..format.batches import SegmentContext
from ..format.records import records_view
from ..log.file_records import Chunk
from ..log.files import open_read
from .tool_errors import ToolCrash

HEADER_SIZE_UP_TO_MAGIC = 17  # Records.HEADER_SIZE_UP_TO_MAGIC
LOG_OVERHEAD = 12
RECORD_OVERHEAD_V0 = 14  # LegacyRecord.RECORD_OVERHEAD_V0: the smallest legal size field
INT_MAX = 2**31 - 1


class BatchHead(NamedTuple):
    position: int
    size: int
    last_offset: int
    magic: int


def record_timestamps(batches: Iterator[pa.RecordBatch]) -> list[dict]:
    """Record rows with Kafka's millisecond timestamps (-1 for none) instead of Spark timestamps."""
    rows = []
    for batch in batches:
        i = batch.schema.get_field_index("timestamp")
        ms = pc.fill_null(pc.divide(batch.column(i).cast(pa.int64()), 1000), -1)
        rows.extend(batch.set_column(i, "timestamp", ms).to_pylist())
    return rows


class LogWalk:
    """Batch headers of one `.log`, read from any position (`path` is the absolute path Kafka names in
    its exceptions). A missing file fails like FileRecords.open: NoSuchFileException."""

    def __init__(self, path: str, filesystem: pafs.FileSystem | None = None) -> None:
        self.path, self.filesystem = path, filesystem
        try:
            with open_read(path, filesystem) as f:
                self.size = f.size()
        except (FileNotFoundError, OSError) as e:
            raise ToolCrash("java.nio.file.NoSuchFileException", path) from e

    def batches_from(self, position: int, limit: int = INT_MAX) -> Iterator[BatchHead]:
        """FileRecords.slice(position, limit).batches(): headers until fewer than 18 bytes or a partial
        batch remain in the slice; a size field below 14 or a magic above 2 throws CorruptRecordException."""
        if position < 0:
            raise ToolCrash("java.lang.IllegalArgumentException", f"Invalid position: {position} in read from "
                            f"FileRecords(size={self.size}, file={self.path}, start=0, end={self.size})")
        if position > self.size:
            raise ToolCrash("java.lang.IllegalArgumentException", f"Slice from position {position} exceeds end "
                            f"position of FileRecords(size={self.size}, file={self.path}, start=0, end={self.size})")
        end = min(self.size, position + limit)
        pos = position
        with open_read(self.path, self.filesystem) as f:
            while pos + HEADER_SIZE_UP_TO_MAGIC < end:
                head = f.read_at(27, pos)
                size = struct.unpack_from(">i", head, 8)[0]
                if size < RECORD_OVERHEAD_V0:
                    raise ToolCrash("org.apache.kafka.common.errors.CorruptRecordException",
                                    f"Found record size {size} smaller than minimum record overhead "
                                    f"({RECORD_OVERHEAD_V0}) in file {self.path}.")
                if pos + LOG_OVERHEAD + size > end:
                    return
                magic = struct.unpack_from(">b", head, 16)[0]
                if magic < 0 or magic > 2:
                    raise ToolCrash("org.apache.kafka.common.errors.CorruptRecordException",
                                    f"Invalid magic found in record: {magic}")
                offset = struct.unpack_from(">q", head, 0)[0]
                last = offset + struct.unpack_from(">i", head, 23)[0] if magic == 2 else offset
                yield BatchHead(pos, LOG_OVERHEAD + size, last, magic)
                pos += LOG_OVERHEAD + size

    def max_record_timestamp(self, batch: BatchHead) -> int:
        """The largest `record.timestamp()` over the batch's records (deep: a legacy wrapper's inner
        records), -1 (NO_TIMESTAMP) for none."""
        with open_read(self.path, self.filesystem) as f:
            raw = f.read_at(batch.size, batch.position)
        chunk = Chunk(raw, batch.position, np.zeros(1, np.int64), np.array([batch.size], np.int64),
                      np.array([batch.magic], np.int8))
        rows = record_timestamps(records_view(chunk, SegmentContext(self.path, "", -1, None), []))
        return max((r["timestamp"] for r in rows), default=-1)


__all__ = ["INT_MAX", "BatchHead", "LogWalk", "record_timestamps"]
