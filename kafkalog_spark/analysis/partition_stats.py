"""Per-partition and per-log-dir statistics, from segment stats and the partition-level files."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import LongType

from ..log.checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)
from .grouping_keys import LOG_DIR, PARTITION
from .loaded_offsets import log_start_offset

# The broker holds an open handle on every segment's .log and its mapped indexes, closed segments too.
FILES_PER_SEGMENT = 3

CHECKPOINT_COLUMNS = {
    RECOVERY_POINT_OFFSET_CHECKPOINT: "recoveryPoint",
    REPLICATION_OFFSET_CHECKPOINT: "highWatermark",
    LOG_START_OFFSET_CHECKPOINT: "logStartOffsetCheckpoint",
    CLEANER_OFFSET_CHECKPOINT: "cleanerCheckpoint",
}


def _checkpoints(partition_files: DataFrame) -> DataFrame:
    offsets = (partition_files.where(F.col("problem").isNull() & F.col("fileType").isin(*CHECKPOINT_COLUMNS))
               .groupBy(*PARTITION).pivot("fileType", list(CHECKPOINT_COLUMNS)).agg(F.max("offset")))
    for name, column in CHECKPOINT_COLUMNS.items():
        offsets = offsets.withColumnRenamed(name, column)
    topic_ids = (partition_files.where("fileType = 'partition.metadata'")
                 .groupBy(*PARTITION).agg(F.first("topicId").alias("topicId")))
    return offsets.join(topic_ids, PARTITION, "full")


def partition_stats(segment_stats: DataFrame, partition_files: DataFrame) -> DataFrame:
    """One row per partition of each log dir: segment counts, bytes, the open-file estimate, and the log's offsets:
    log start (the checkpoint, or the first segment's base), log end, high watermark, recovery point."""
    agg = segment_stats.groupBy(*PARTITION).agg(
        F.count("*").alias("segments"),
        F.sum("logSize").alias("logBytes"),
        F.sum(F.coalesce("indexSize", F.lit(0)) + F.coalesce("timeIndexSize", F.lit(0))
              + F.coalesce("txnIndexSize", F.lit(0))).alias("indexBytes"),
        F.sum(F.lit(FILES_PER_SEGMENT) + F.col("txnIndexSize").isNotNull().cast("int")).alias("openFileHandles"),
        F.sum("records").alias("records"),
        F.sum("batches").alias("batches"),
        F.min("baseOffset").alias("firstSegmentBaseOffset"),
        F.max(F.when(F.col("isActive"), F.col("baseOffset"))).alias("activeSegmentBaseOffset"),
        (F.max("lastOffset") + 1).alias("logEndOffset"),
        F.min("minTimestamp").alias("minTimestamp"),
        F.max("maxTimestamp").alias("maxTimestamp"),
        F.sum("tombstones").alias("tombstones"),
        F.sum("invalidBatches").alias("invalidBatches"),
    )
    out = agg.join(_checkpoints(partition_files), PARTITION, "left")
    # one row per partition: the rule's one home in Python, not a copy of it in Spark expressions (the UDF is made
    # here, not at import: a Spark Connect session wants its own kind). A lambda, without type hints: given hints,
    # pyspark 4 tries to infer an Arrow UDF from them, and warns when it cannot.
    start = F.udf(lambda first, checkpoint: _log_start_offset(first, checkpoint), LongType())
    return out.withColumn("logStartOffset", start("firstSegmentBaseOffset", "logStartOffsetCheckpoint"))


def _log_start_offset(first_segment_base: int | None, checkpoint: int | None) -> int | None:
    if first_segment_base is None:
        return checkpoint
    return log_start_offset(first_segment_base, checkpoint)[0]


def log_dir_stats(partition_stats: DataFrame, segments: DataFrame) -> DataFrame:
    """One row per log dir (the parent of the partition dirs)."""
    files = segments.where("problem is null")
    stray = files.where("status NOT IN ('live', 'snapshot')").groupBy(LOG_DIR).agg(F.count("*").alias("strayLogFiles"))
    per_dir = partition_stats.groupBy(LOG_DIR).agg(
        F.countDistinct("topic").alias("topics"),
        F.count("*").alias("partitions"),
        F.sum("segments").alias("segments"),
        F.sum("logBytes").alias("logBytes"),
        F.sum("indexBytes").alias("indexBytes"),
        F.sum("openFileHandles").alias("openFileHandles"),
        F.sum("records").alias("records"),
    )
    return per_dir.join(stray, LOG_DIR, "left").fillna({"strayLogFiles": 0})
