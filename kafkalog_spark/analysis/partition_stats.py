"""Per-partition and per-log-dir statistics, from segment stats and the partition-level files.

Reduced on the driver from the segment statistics (a row per segment, local data: :mod:`.segment_stats`) and the
partitions' checkpoint entries (one collect): the tables are local data, written without a query plan of their own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from ..log.checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)
from .grouping_keys import LOG_DIR, PARTITION
from .loaded_offsets import log_start_offset
from .local_rows import grouped, local_rows

# The broker holds an open handle on every segment's .log and its mapped indexes, closed segments too.
FILES_PER_SEGMENT = 3

CHECKPOINT_COLUMNS = {
    RECOVERY_POINT_OFFSET_CHECKPOINT: "recoveryPoint",
    REPLICATION_OFFSET_CHECKPOINT: "highWatermark",
    LOG_START_OFFSET_CHECKPOINT: "logStartOffsetCheckpoint",
    CLEANER_OFFSET_CHECKPOINT: "cleanerCheckpoint",
}
_KEYS = [StructField(LOG_DIR, StringType()), StructField("topic", StringType()),
         StructField("partition", IntegerType())]
PARTITION_STATS = StructType(
    _KEYS
    + [StructField(name, LongType()) for name in (
        "segments", "logBytes", "indexBytes", "openFileHandles", "records", "batches", "firstSegmentBaseOffset",
        "activeSegmentBaseOffset", "logEndOffset", "minTimestamp", "maxTimestamp", "tombstones", "invalidBatches",
        *CHECKPOINT_COLUMNS.values())]
    + [StructField("topicId", StringType()), StructField("logStartOffset", LongType())]
)
LOG_DIR_STATS = StructType(
    [StructField(LOG_DIR, StringType())]
    + [StructField(name, LongType()) for name in (
        "topics", "partitions", "segments", "logBytes", "indexBytes", "openFileHandles", "records", "strayLogFiles")]
)


def _sum(values: Iterable[int | None]) -> int | None:
    """SQL's SUM: the nulls left out, null when no value is left."""
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _min(values: Iterable[Any]) -> Any:
    return min((v for v in values if v is not None), default=None)


def _max(values: Iterable[Any]) -> Any:
    return max((v for v in values if v is not None), default=None)


def _checkpoints(partition_files: DataFrame) -> dict[tuple, dict[str, Any]]:
    """Per partition with a checkpoint entry or a ``partition.metadata``: its entries' offsets (the largest of each
    checkpoint's) and its topic id. One collect."""
    wanted = ((F.col("problem").isNull() & F.col("fileType").isin(*CHECKPOINT_COLUMNS))
              | (F.col("fileType") == "partition.metadata"))
    out: dict[tuple, dict[str, Any]] = {}
    for r in partition_files.where(wanted).select(*PARTITION, "fileType", "offset", "topicId").collect():
        key = tuple(r[k] for k in PARTITION)
        if any(k is None for k in key):  # no segment's partition: a join by keys never meets a null
            continue
        found = out.setdefault(key, {})
        if r.fileType == "partition.metadata":
            found.setdefault("topicId", r.topicId)  # the first one's, as Spark's first()
        elif r.offset is not None:
            column = CHECKPOINT_COLUMNS[r.fileType]
            found[column] = max(found.get(column, r.offset), r.offset)
    return out


def partition_stats(segment_stats: DataFrame, partition_files: DataFrame) -> DataFrame:
    """One row per partition of each log dir: segment counts, bytes, the open-file estimate, and the log's offsets:
    log start (the checkpoint, or the first segment's base), log end, high watermark, recovery point. Local data."""
    segments = segment_stats.select(*PARTITION, "baseOffset", "isActive", "logSize", "indexSize", "timeIndexSize",
                                    "txnIndexSize", "records", "batches", "lastOffset", "minTimestamp",
                                    "maxTimestamp", "tombstones", "invalidBatches").collect()
    checkpoints = _checkpoints(partition_files)
    rows = []
    for key, group in grouped(segments, PARTITION).items():
        last = _max(s.lastOffset for s in group)
        files = checkpoints.get(key, {})
        row = dict(zip(PARTITION, key, strict=True)) | {
            "segments": len(group),
            "logBytes": _sum(s.logSize for s in group),
            "indexBytes": sum((s.indexSize or 0) + (s.timeIndexSize or 0) + (s.txnIndexSize or 0) for s in group),
            "openFileHandles": sum(FILES_PER_SEGMENT + (s.txnIndexSize is not None) for s in group),
            "records": _sum(s.records for s in group),
            "batches": _sum(s.batches for s in group),
            "firstSegmentBaseOffset": _min(s.baseOffset for s in group),
            "activeSegmentBaseOffset": _max(s.baseOffset for s in group if s.isActive),
            "logEndOffset": None if last is None else last + 1,
            "minTimestamp": _min(s.minTimestamp for s in group),
            "maxTimestamp": _max(s.maxTimestamp for s in group),
            "tombstones": _sum(s.tombstones for s in group),
            "invalidBatches": _sum(s.invalidBatches for s in group),
        } | {column: files.get(column) for column in CHECKPOINT_COLUMNS.values()} | {"topicId": files.get("topicId")}
        row["logStartOffset"] = _log_start_offset(row["firstSegmentBaseOffset"], row["logStartOffsetCheckpoint"])
        rows.append(row)
    return local_rows(segment_stats.sparkSession, rows, PARTITION_STATS)


def _log_start_offset(first_segment_base: int | None, checkpoint: int | None) -> int | None:
    if first_segment_base is None:
        return checkpoint
    return log_start_offset(first_segment_base, checkpoint)[0]


def log_dir_stats(partition_stats: DataFrame, segments: DataFrame) -> DataFrame:
    """One row per log dir (the parent of the partition dirs). Local data."""
    stray = grouped(segments.where("problem is null and status NOT IN ('live', 'snapshot')").select(LOG_DIR)
                     .collect(), [LOG_DIR])
    rows = []
    for (log_dir,), group in grouped(partition_stats.collect(), [LOG_DIR]).items():
        rows.append({
            LOG_DIR: log_dir,
            "topics": len({p.topic for p in group if p.topic is not None}),
            "partitions": len(group),
            **{c: _sum(p[c] for p in group) for c in ("segments", "logBytes", "indexBytes", "openFileHandles",
                                                       "records")},
            "strayLogFiles": len(stray.get((log_dir,), [])) if log_dir is not None else 0,
        })
    return local_rows(partition_stats.sparkSession, rows, LOG_DIR_STATS)
