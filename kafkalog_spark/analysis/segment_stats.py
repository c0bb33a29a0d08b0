"""Per-segment statistics: what is in each segment, from the segments, batches and records views.

A function of DataFrames (the views read by the `kafkalog` source for the same paths), so it can be
tested alone and run on any session. Why a segment rolled is inferred the way the broker decides to
roll (LogSegment.shouldRoll): from sizes, the next segment's first batch, timestamps and the topic's
segment.bytes / segment.ms / segment.index.bytes.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from ..config.topic_configs import ConfigSource, TopicConfigs
from .record_sizes import V2_BATCH_OVERHEAD, legacy_entry_bytes, v2_record_bytes, without_payloads
from .topic_configs import topic_configs, topics_of

KEYS = ["topic", "partition", "segmentBaseOffset"]  # the views' names; the output says baseOffset
INT32_MAX = 2**31 - 1


def _ok(df: DataFrame) -> DataFrame:
    return df.where(F.col("problem").isNull())


def _approx_distinct(c: Column) -> Column:
    """Distinct non-null values, estimated with an Apache DataSketches HLL sketch: Spark (DataSketches' Java library)
    and the local engine (Sail, its Rust port) give the same number, where their ``approx_count_distinct`` (each its
    own HyperLogLog) differ (Spark's said 24 of the 23 distinct keys of segments of the sample corpus)."""
    return F.hll_sketch_estimate(F.hll_sketch_agg(c))


def _batch_stats(batches: DataFrame) -> DataFrame:
    b = _ok(batches)
    first = Window.partitionBy(*KEYS).orderBy("position")
    firsts = (b.withColumn("_n", F.row_number().over(first)).where("_n = 1")
              .select(*KEYS, F.col("size").alias("firstBatchSize"),
                      F.col("maxTimestamp").alias("firstBatchMaxTimestamp"),
                      F.col("lastOffset").alias("firstBatchLastOffset")))
    codec_mix = (b.groupBy(*KEYS, "compresscodec").count()
                 .groupBy(*KEYS).agg(F.map_from_entries(F.collect_list(F.struct("compresscodec", "count")))
                                     .alias("codecMix")))
    agg = b.groupBy(*KEYS).agg(
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
    )
    return agg.join(firsts, KEYS).join(codec_mix, KEYS)


ABORTED_COUNTS = StructType([StructField("topic", StringType()), StructField("partition", IntegerType()),
                             StructField("segmentBaseOffset", LongType()), StructField("abortedRecords", LongType())])


def _count_aborted(records: pa.Table, txns: pa.Table) -> pa.Table:
    """One partition's aborted records per segment (runs in the Python workers)."""
    import numpy as np

    from ..log.aborted_transactions import AbortedTransactions
    from ..schemas import arrow_schema

    schema = arrow_schema(ABORTED_COUNTS)
    if records.num_rows == 0 or txns.num_rows == 0:
        return schema.empty_table()
    aborted = AbortedTransactions(zip(txns["producerId"].to_pylist(), txns["firstOffset"].to_pylist(),
                                      txns["lastOffset"].to_pylist(), strict=True))
    mask = aborted.mask(records["producerId"].to_numpy(), records["offset"].to_numpy(),
                        np.ones(records.num_rows, dtype=bool))
    counts = (records.filter(pa.array(mask)).group_by(["topic", "partition", "segmentBaseOffset"])
              .aggregate([("offset", "count")]))
    return pa.table([counts["topic"], counts["partition"], counts["segmentBaseOffset"], counts["offset_count"]],
                    schema=schema)


def _aborted_records(records: DataFrame, partition_files: DataFrame) -> DataFrame:
    """Aborted records per segment: the transactional data records that Kafka's rule
    (:mod:`kafkalog_spark.log.aborted_transactions`) calls aborted, given the partition's `.txnindex` entries."""
    data = (records.where(F.col("isTransactional") & ~F.col("isControl"))
            .select("topic", "partition", "segmentBaseOffset", "producerId", "offset"))
    txns = (_ok(partition_files).where("fileType = 'txnindex'")
            .select("topic", "partition", "producerId", "firstOffset", "lastOffset"))
    return (data.groupBy("topic", "partition").cogroup(txns.groupBy("topic", "partition"))
            .applyInArrow(_count_aborted, ABORTED_COUNTS))


BATCH = ["topic", "partition", "segmentBaseOffset", "position"]


def uncompressed_batch_bytes(records: DataFrame, batches: DataFrame) -> DataFrame:
    """Per batch (``position``), the bytes it takes with its records uncompressed: header and records for v2,
    the entries for v0/v1. Timestamp deltas are from the batch's base timestamp, as written (after a clean it
    may be a removed record's, or the delete horizon); under LogAppendTime the records show the append time,
    so their written deltas are unknown and taken as 0. For an uncompressed batch this is its size on disk."""
    records = without_payloads(records)
    base = _ok(batches).select(*BATCH, F.col("baseTimestamp").alias("_base"),
                               (F.col("timestampType") == "LogAppendTime").alias("_appendTime"))
    delta = F.when(F.col("_appendTime"), F.lit(0)).otherwise(F.unix_millis("timestamp") - F.col("_base"))
    record = F.when(F.col("magic") >= 2, v2_record_bytes(delta)).otherwise(legacy_entry_bytes())
    overhead = F.when(F.first("magic") >= 2, F.lit(V2_BATCH_OVERHEAD)).otherwise(F.lit(0))
    return (_ok(records).join(base, BATCH).withColumn("_bytes", record).groupBy(*BATCH)
            .agg((F.sum("_bytes") + overhead).alias("uncompressedBytes")))


def _bytes_before_compression(batches: DataFrame, records: DataFrame) -> DataFrame:
    """Per segment, the bytes its batches would take uncompressed: an uncompressed batch as on disk, a compressed
    one from its records; a batch whose records were not decoded (a problem row) counts as on disk."""
    sized = uncompressed_batch_bytes(records.where(F.col("compresscodec") != "none"), batches)
    b = _ok(batches).join(sized, BATCH, "left")
    return b.groupBy(*KEYS).agg(F.sum(F.coalesce("uncompressedBytes", "size")).alias("bytesBeforeCompression"))


def _record_stats(records: DataFrame, partition_files: DataFrame | None) -> DataFrame:
    r = _ok(records)
    data = ~F.col("isControl")
    payload = (F.greatest(F.col("keySize"), F.lit(0)) + F.greatest(F.col("valueSize"), F.lit(0))
               + F.col("headerDataBytes"))
    ts_ms = (F.unix_micros("timestamp") / 1000).cast("long")
    stats = r.groupBy(*KEYS).agg(
        F.count("*").alias("records"),
        F.min(ts_ms).alias("minTimestamp"),
        F.sum(F.col("isControl").cast("int")).alias("controlRecords"),
        F.sum((data & (F.col("valueSize") < 0)).cast("int")).alias("tombstones"),  # a null value
        F.sum((data & F.col("key").isNull()).cast("int")).alias("keylessRecords"),
        _approx_distinct(F.when(data, F.col("key"))).alias("approxDistinctKeys"),
        F.sum(F.when(data, payload)).alias("payloadBytes"),
        F.avg(F.when(data, payload)).alias("avgRecordSize"),
        F.max(F.when(data, payload)).alias("maxRecordSize"),
    )
    if partition_files is None:
        return stats.withColumn("abortedRecords", F.lit(0).cast("long"))
    aborted = _aborted_records(r, partition_files)
    return (stats.join(aborted, KEYS, "left")
            .withColumn("abortedRecords", F.coalesce("abortedRecords", F.lit(0).cast("long"))))


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


def segment_stats(segments: DataFrame, batches: DataFrame, records: DataFrame,
                  partition_files: DataFrame | None = None, configs: ConfigSource = None) -> DataFrame:
    """One row per live segment. ``configs``: the topics' effective configs (a
    :class:`~kafkalog_spark.config.TopicConfigs`, or what :meth:`~kafkalog_spark.config.TopicConfigs.of` takes;
    None: Kafka's defaults), for the roll limits segment.bytes, segment.ms and segment.index.bytes."""
    records = without_payloads(records)
    seg = (_ok(segments).where("status = 'live'").withColumnRenamed("baseOffset", "segmentBaseOffset")
           .select(*KEYS, "isActive", "nextBaseOffset", "logFile", "logSize", "indexSize", "timeIndexSize",
                   "txnIndexSize", "indexEntries", "timeIndexEntries", "logModified"))
    stats = (seg.join(_batch_stats(batches), KEYS, "left").join(_record_stats(records, partition_files), KEYS, "left")
             .join(_bytes_before_compression(batches, records), KEYS, "left"))
    limits = (topic_configs(segments.sparkSession, TopicConfigs.of(configs), topics_of(segments))
              .select("topic", "segmentBytes", "segmentMs", "segmentIndexBytes"))
    stats = stats.join(F.broadcast(limits), "topic", "left")
    nxt = Window.partitionBy("topic", "partition").orderBy("segmentBaseOffset")
    stats = stats.withColumn(
        "rollReason",
        _roll_reason(F.lead("firstBatchSize").over(nxt), F.lead("firstBatchMaxTimestamp").over(nxt),
                     F.lead("firstBatchLastOffset").over(nxt)),
    )
    span = F.col("lastOffset") - F.col("firstOffset") + 1
    return stats.select(
        "topic", "partition", F.col("segmentBaseOffset").alias("baseOffset"), "isActive", "logFile", "logSize",
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
