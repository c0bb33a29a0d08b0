"""Per-segment statistics: what is in each segment, from the segments, batches and record_stats views.

A function of DataFrames (the views read by the `kafkalog` source for the same paths), so it can be
tested alone and run on any session. Why a segment rolled is inferred the way the broker decides to
roll (LogSegment.shouldRoll): from sizes, the next segment's first batch, timestamps and the topic's
segment.bytes / segment.ms / segment.index.bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..config.topic_configs import ConfigSource, TopicConfigs
from ..schemas import KEY_SKETCH_SIZE as DISTINCT_KEYS_K
from .batch_summary import batch_summary
from .grouping_keys import PARTITION
from .grouping_keys import SEGMENT as KEYS  # the views' names; the output says baseOffset
from .topic_config_table import topic_configs, topics_of

INT32_MAX = 2**31 - 1


def _ok(df: DataFrame) -> DataFrame:
    return df.where(F.col("problem").isNull())


_BATCH_COLUMNS = ("batches", "declaredRecords", "firstOffset", "lastOffset", "maxTimestamp", "timestampTypes",
                  "batchBytes", "avgBatchSize", "maxBatchSize", "transactionalBatches", "controlBatches",
                  "invalidBatches", "emptyBatches", "deleteHorizonBatches", "producerIds", "codecMix", "firstBatchSize",
                  "firstBatchMaxTimestamp", "firstBatchLastOffset")


def _batch_stats(summary: DataFrame) -> DataFrame:
    """Per segment, what the statistics take of its batches' summary."""
    return summary.select(*KEYS, *_BATCH_COLUMNS)


def _distinct_keys(hashes: Column) -> Column:
    """The data records' distinct keys, from the pieces' sketches (the k smallest distinct hashes of their keys,
    :mod:`kafkalog_spark.log.record_stats`): the k smallest of their union is the segment's sketch; fewer than
    k is the exact count, else the K-minimum-values estimate (k - 1) / (the k-th smallest as a fraction of 2^63).
    Plain array functions: Spark and the local engine compute the same number."""
    k = DISTINCT_KEYS_K
    smallest = F.slice(F.array_sort(F.array_distinct(F.flatten(F.collect_list(hashes)))), 1, k)
    return (F.when(F.size(smallest) < k, F.size(smallest).cast("long"))
            .otherwise(F.round(F.lit(float(k - 1) * 2.0**63) / F.element_at(smallest, k)).cast("long")))


def _record_stats(record_stats: DataFrame) -> DataFrame:
    """Per segment, its records' aggregates: the sums (min, max) of its pieces' rows in the record_stats view,
    which the source's tasks computed next to the decode. A segment without records has null record columns,
    one without batches a null bytesBeforeCompression."""
    r = _ok(record_stats)
    has_records, has_data = F.sum("records") > 0, F.sum("dataRecords") > 0
    return r.groupBy(*KEYS).agg(
        F.sum("records").alias("records"),
        F.min("minTimestamp").alias("minTimestamp"),
        F.sum("controlRecords").alias("controlRecords"),
        F.sum("tombstones").alias("tombstones"),
        F.sum("keylessRecords").alias("keylessRecords"),
        F.when(has_records, _distinct_keys(F.col("keyHashes"))).alias("approxDistinctKeys"),
        F.sum("payloadBytes").alias("payloadBytes"),
        F.when(has_data, F.sum("payloadBytes") / F.sum("dataRecords")).alias("avgRecordSize"),
        F.max("maxRecordSize").alias("maxRecordSize"),
        F.sum("abortedRecords").alias("abortedRecords"),
        F.when(F.sum("batchBytes") > 0, F.sum("bytesBeforeCompression")).alias("bytesBeforeCompression"),
    )


def _roll_reason(next_first_size: Column, next_first_ts: Column, next_last_offset: Column) -> Column:
    """LogSegment.shouldRoll, in Kafka's order, evaluated for the append that opened the next segment."""
    size = F.col("logSize") > F.col("segmentBytes") - next_first_size
    waited = next_first_ts - F.col("firstBatchMaxTimestamp")
    time = (F.col("logSize") > 0) & (F.col("firstBatchMaxTimestamp") >= 0) & (waited > F.col("segmentMs"))
    index_full = ((F.col("indexEntries") >= F.floor(F.col("segmentIndexBytes") / 8))
                  | (F.col("timeIndexEntries") >= F.floor(F.col("segmentIndexBytes") / 12) - 1))
    overflow = (next_last_offset - F.col("segmentBaseOffset")) > INT32_MAX
    return (F.when(F.col("isActive"), F.lit(None))
            .when(size, "size").when(time, "time").when(index_full, "index_full")
            .when(overflow, "offset_overflow").otherwise("unknown"))


def _tier(segments: DataFrame) -> list[str]:
    """``tier`` when the views were read with a remote store (its remote segments are rows too)."""
    return ["tier"] if "tier" in segments.columns else []


def segment_stats(segments: DataFrame, batches: DataFrame | None, record_stats: DataFrame,
                  configs: ConfigSource = None, *, summary: DataFrame | None = None,
                  topics: Sequence[str] | None = None) -> DataFrame:
    """One row per live segment of each log dir, from the segments, batches and record_stats views of the same
    paths. ``configs``:
    the topics' effective configs (a :class:`~kafkalog_spark.config.TopicConfigs`, or what
    :meth:`~kafkalog_spark.config.TopicConfigs.of` takes; None: Kafka's defaults), for the roll limits
    segment.bytes, segment.ms and segment.index.bytes. ``summary``: the batches'
    :func:`~.batch_summary.batch_summary` when the caller has it (``batches`` is then not read). ``topics``: the
    segments view's (:func:`~.topic_config_table.topics_of`) when the caller has them."""
    seg = (_ok(segments).where("status = 'live'").withColumnRenamed("baseOffset", "segmentBaseOffset")
           .select(*KEYS, "isActive", "nextBaseOffset", "logFile", "logSize", "indexSize", "timeIndexSize",
                   "txnIndexSize", "indexEntries", "timeIndexEntries", "logModified", *_tier(segments)))
    per_segment = _batch_stats(batch_summary(batches) if summary is None else summary)
    stats = seg.join(per_segment, KEYS, "left").join(_record_stats(record_stats), KEYS, "left")
    topics = topics_of(segments) if topics is None else topics
    limits = (topic_configs(segments.sparkSession, TopicConfigs.of(configs), topics)
              .select("topic", "segmentBytes", "segmentMs", "segmentIndexBytes"))
    stats = stats.join(F.broadcast(limits), "topic", "left")
    nxt = Window.partitionBy(*PARTITION).orderBy("segmentBaseOffset")
    stats = stats.withColumn(
        "rollReason",
        _roll_reason(F.lead("firstBatchSize").over(nxt), F.lead("firstBatchMaxTimestamp").over(nxt),
                     F.lead("firstBatchLastOffset").over(nxt)),
    )
    span = F.col("lastOffset") - F.col("firstOffset") + 1
    return stats.select(
        *PARTITION, F.col("segmentBaseOffset").alias("baseOffset"), *_tier(segments), "isActive", "logFile", "logSize",
        "indexSize", "timeIndexSize", "txnIndexSize", "logModified",
        F.coalesce("batches", F.lit(0)).alias("batches"),
        F.coalesce("records", F.lit(0)).alias("records"),
        "firstOffset", "lastOffset",
        F.when(span.isNotNull(), span - F.col("records")).alias("offsetGaps"),
        "minTimestamp", "maxTimestamp", "timestampTypes", "codecMix",
        F.col("batchBytes").alias("bytesOnDisk"), "bytesBeforeCompression", "payloadBytes",
        "avgBatchSize", "maxBatchSize", "avgRecordSize", "maxRecordSize",
        "transactionalBatches", "controlBatches", "controlRecords", "abortedRecords", "producerIds",
        "tombstones", "keylessRecords", "approxDistinctKeys", "emptyBatches", "deleteHorizonBatches",
        "invalidBatches", "indexEntries", "timeIndexEntries", "rollReason",
    )
