"""Offline consumer positions: where each group was when the broker stopped, against the partition's log.

A function of DataFrames: the ``consumer_offsets`` view (or table) and the partitions' offsets as the broker
loads the log (``compaction_preview``'s partitions: log start, log end, high watermark; one home for those rules,
:mod:`.cleaner.log_load`). The committed offset of each group and partition is the version the coordinator
holds (``isLatest``, not a tombstone); when several log dirs hold a replica of the same `__consumer_offsets`
partition the most advanced (highest record offset) wins, and when several hold the committed partition the
highest log end and log start count (the most advanced replica).

``position``: ``ok`` (within [log start, log end]; ``lag`` = high watermark - committed offset, as
kafka-consumer-groups shows it), ``below_log_start`` (retention or DeleteRecords passed it: the group resets
per auto.offset.reset), ``beyond_log_end`` (the group resets too), ``partition_not_on_disk`` (no log dir read
holds it).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType, TimestampType

from .finding_columns import INDEX_FINDINGS, candidate, emit, log_dir_of_segment_file, text

CONSUMER_POSITIONS = StructType([
    StructField("group", StringType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("committedOffset", LongType()),
    StructField("leaderEpoch", IntegerType()),
    StructField("metadata", StringType()),
    StructField("commitTimestamp", TimestampType()),
    StructField("logStartOffset", LongType()),
    StructField("logEndOffset", LongType()),
    StructField("highWatermark", LongType()),
    StructField("lag", LongType()),  # high watermark - committed offset, when the position is ok
    StructField("position", StringType()),  # ok, below_log_start, beyond_log_end, partition_not_on_disk
    StructField("offsetsFile", StringType()),  # the __consumer_offsets segment holding the commit
    StructField("recordOffset", LongType()),  # the commit's offset in it
])

_LOG_OFFSETS = ("logStartOffset", "logEndOffset", "highWatermark")


def _offsets_file() -> F.Column:
    return F.concat_ws("/", "logDir", F.concat(F.lit("__consumer_offsets-"), F.col("sourcePartition")),
                       F.concat(F.lpad(F.col("segmentBaseOffset").cast("string"), 20, "0"), F.lit(".log")))


def consumer_positions(consumer_offsets: DataFrame, log_offsets: DataFrame) -> DataFrame:
    """One row per group and committed partition (schema :data:`CONSUMER_POSITIONS`). ``log_offsets``: topic,
    partition and the :data:`_LOG_OFFSETS` columns (``compaction_preview``'s partitions)."""
    latest = (consumer_offsets.where(F.col("isLatest") & ~F.col("isTombstone") & F.col("problem").isNull())
              .withColumn("offsetsFile", _offsets_file())
              .groupBy("group", "topic", "partition")
              .agg(F.max_by(F.struct("committedOffset", "leaderEpoch", "metadata", "commitTimestamp", "offsetsFile",
                                     "recordOffset"), "recordOffset").alias("c"))
              .select("group", "topic", "partition", "c.*"))
    ends = log_offsets.groupBy("topic", "partition").agg(*[F.max(c).alias(c) for c in _LOG_OFFSETS])
    c = F.col("committedOffset")
    position = (F.when(F.col("logEndOffset").isNull(), "partition_not_on_disk")
                .when(c < F.col("logStartOffset"), "below_log_start")
                .when(c > F.col("logEndOffset"), "beyond_log_end").otherwise("ok"))
    out = (latest.join(ends, ["topic", "partition"], "left").withColumn("position", position)
           .withColumn("lag", F.when(F.col("position") == "ok", F.greatest(F.col("highWatermark") - c, F.lit(0)))))
    return out.select(*[F.col(f.name).cast(f.dataType) for f in CONSUMER_POSITIONS])


def position_findings(positions: DataFrame) -> DataFrame:
    """The positions that make a group reset, as findings (schema ``INDEX_FINDINGS``) naming the
    `__consumer_offsets` segment of the commit."""
    where = {"file": F.col("offsetsFile"), "log_dir": log_dir_of_segment_file(F.col("offsetsFile")),
             "found": text("committed offset ", F.col("committedOffset"))}
    expected = text("an offset in [", F.col("logStartOffset"), ", ", F.col("logEndOffset"), "]")
    out = emit(positions,
               candidate(F.col("position") == "below_log_start", "warning", "group_offset_below_log_start",
                         expected=expected, detail=text("group ", F.col("group"), " (commit at offset ",
                                                        F.col("recordOffset"), ") resets when it resumes"), **where),
               candidate(F.col("position") == "beyond_log_end", "warning", "group_offset_beyond_log_end",
                         expected=expected, detail=text("group ", F.col("group"), " (commit at offset ",
                                                        F.col("recordOffset"), ") resets when it resumes"), **where))
    return out.select(*INDEX_FINDINGS.fieldNames())
