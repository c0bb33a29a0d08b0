"""Per-segment statistics: what is in each segment, from the segments, batches and record_stats views.

A function of DataFrames (the views read by the `kafkalog` source for the same paths), so it can be
tested alone and run on any session. Why a segment rolled is inferred the way the broker decides to
roll (LogSegment.shouldRoll): from sizes, the next segment's first batch, timestamps and the topic's
segment.bytes / segment.ms / segment.index.bytes.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..config.topic_configs import ConfigSource, TopicConfigs
from ..format.compression import CODEC_LABELS
from ..schemas import KEY_SKETCH_SIZE as DISTINCT_KEYS_K
from .grouping_keys import PARTITION
from .grouping_keys import SEGMENT as KEYS  # the views' names; the output says baseOffset
from .topic_config_table import topic_configs, topics_of

INT32_MAX = 2**31 - 1


def _ok(df: DataFrame) -> DataFrame:
    return df.where(F.col("problem").isNull())


def _approx_distinct(c: Column) -> Column:
    """Distinct non-null values, estimated with an Apache DataSketches HLL sketch: Spark (DataSketches' Java library)
    and the local engine (Sail, its Rust port) give the same number, where their ``approx_count_distinct`` (each its
    own HyperLogLog) differ (Spark's said 24 of the 23 distinct keys of segments of the sample corpus)."""
    return F.hll_sketch_estimate(F.hll_sketch_agg(c))


# Batches per compression codec: the codec is one of the eight labels of its three attribute bits, so counting per
# label is part of the one aggregation over the batches (no second pass); codecs without a batch are left out.
_CODEC_COUNTS = [(label, f"_codec{i}") for i, label in enumerate(CODEC_LABELS)]


def _codec_mix() -> Column:
    # the counts coalesced: a map of non-null values, the type the tables have always had (map<string,bigint> with
    # valueContainsNull false), so appends to an existing table keep its schema
    return F.map_from_entries(F.array_compact(F.array(*[
        F.when(F.col(name) > 0, F.struct(F.lit(label).alias("compresscodec"),
                                         F.coalesce(F.col(name), F.lit(0).cast("long")).alias("count")))
        for label, name in _CODEC_COUNTS])))


def _batch_stats(batches: DataFrame) -> DataFrame:
    """Per segment, its batches' aggregates, in one pass over the batches view (a pass decodes it again when it is
    not cached): the first batch is the one at the smallest position."""
    first = F.min(F.struct(F.col("position"), F.col("size").alias("firstBatchSize"),
                           F.col("maxTimestamp").alias("firstBatchMaxTimestamp"),
                           F.col("lastOffset").alias("firstBatchLastOffset")))
    agg = _ok(batches).groupBy(*KEYS).agg(
        F.count("*").alias("batches"),
        F.sum("count").alias("declaredRecords"),
        F.min(F.coalesce("baseOffset", "lastOffset")).alias("firstOffset"),
        F.max("lastOffset").alias("lastOffset"),
        F.max("maxTimestamp").alias("maxTimestamp"),
        F.array_sort(F.collect_set("timestampType")).alias("timestampTypes"),
        F.sum("size").alias("batchBytes"),
        F.avg("size").alias("avgBatchSize"),
        F.max("size").alias("maxBatchSize"),
        F.sum(F.col("isTransactional").cast("int")).alias("transactionalBatches"),
        F.sum(F.col("isControl").cast("int")).alias("controlBatches"),
        F.sum((~F.col("isValid")).cast("int")).alias("invalidBatches"),
        F.sum((F.col("count") == 0).cast("int")).alias("emptyBatches"),
        F.sum(F.col("deleteHorizonMs").isNotNull().cast("int")).alias("deleteHorizonBatches"),
        _approx_distinct(F.when(F.col("producerId") >= 0, F.col("producerId"))).alias("producerIds"),
        *[F.sum((F.col("compresscodec") == label).cast("long")).alias(name) for label, name in _CODEC_COUNTS],
        first.alias("_first"),
    )
    return agg.select("*", _codec_mix().alias("codecMix"), "_first.firstBatchSize", "_first.firstBatchMaxTimestamp",
                      "_first.firstBatchLastOffset").drop("_first", *[name for _, name in _CODEC_COUNTS])


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


def segment_stats(segments: DataFrame, batches: DataFrame, record_stats: DataFrame,
                  configs: ConfigSource = None) -> DataFrame:
    """One row per live segment of each log dir, from the segments, batches and record_stats views of the same
    paths. ``configs``:
    the topics' effective configs (a :class:`~kafkalog_spark.config.TopicConfigs`, or what
    :meth:`~kafkalog_spark.config.TopicConfigs.of` takes; None: Kafka's defaults), for the roll limits
    segment.bytes, segment.ms and segment.index.bytes."""
    seg = (_ok(segments).where("status = 'live'").withColumnRenamed("baseOffset", "segmentBaseOffset")
           .select(*KEYS, "isActive", "nextBaseOffset", "logFile", "logSize", "indexSize", "timeIndexSize",
                   "txnIndexSize", "indexEntries", "timeIndexEntries", "logModified"))
    stats = seg.join(_batch_stats(batches), KEYS, "left").join(_record_stats(record_stats), KEYS, "left")
    limits = (topic_configs(segments.sparkSession, TopicConfigs.of(configs), topics_of(segments))
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
        *PARTITION, F.col("segmentBaseOffset").alias("baseOffset"), "isActive", "logFile", "logSize",
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
