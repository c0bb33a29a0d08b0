"""Per segment, its batches' aggregates: the one pass over the batches view that the segment statistics, the
retention plans and the segment checks read.

One home for what those analyses take of the batches, computed once where they run together (the nightly job
caches it next to the views). A segment's batches never change once it rolled (the cleaner and retention replace or
delete whole files), so neither does its row here.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..format.compression import CODEC_LABELS
from .grouping_keys import SEGMENT as KEYS

# Batches per compression codec: the codec is one of the eight labels of its three attribute bits, so counting per
# label is part of the one aggregation over the batches (no second pass); codecs without a batch are left out.
_CODEC_COUNTS = [(label, f"_codec{i}") for i, label in enumerate(CODEC_LABELS)]


def _approx_distinct(c: Column) -> Column:
    """Distinct non-null values, estimated with an Apache DataSketches HLL sketch: Spark (DataSketches' Java library)
    and the local engine (Sail, its Rust port) give the same number, where their ``approx_count_distinct`` (each its
    own HyperLogLog) differ (Spark's said 24 of the 23 distinct keys of segments of the sample corpus)."""
    return F.hll_sketch_estimate(F.hll_sketch_agg(c))


def _codec_mix() -> Column:
    # the counts coalesced: a map of non-null values, the type the tables have always had (map<string,bigint> with
    # valueContainsNull false), so appends to an existing table keep its schema
    return F.map_from_entries(F.array_compact(F.array(*[
        F.when(F.col(name) > 0, F.struct(F.lit(label).alias("compresscodec"),
                                         F.coalesce(F.col(name), F.lit(0).cast("long")).alias("count")))
        for label, name in _CODEC_COUNTS])))


def batch_summary(batches: DataFrame) -> DataFrame:
    """One row per segment (``logDir``, ``topic``, ``partition``, ``segmentBaseOffset``) with batches in
    ``batches`` (the batches view, problem rows left out), in one pass:

    - counts: ``batches``, ``declaredRecords`` (the batches' record counts), ``transactionalBatches``,
      ``controlBatches``, ``invalidBatches`` (CRC), ``emptyBatches``, ``deleteHorizonBatches``, ``producerIds``
      (estimated distinct producer ids), ``codecMix`` (batches per codec), ``timestampTypes``;
    - sizes: ``batchBytes``, ``avgBatchSize``, ``maxBatchSize``;
    - offsets: ``firstOffset`` (the smallest, a legacy wrapper's last offset where its base is unknown),
      ``lastOffset`` (the largest);
    - times: ``maxTimestamp`` (the largest, -1 included), ``largestTimestamp`` (the largest at or above 0, as
      retention reads it: a batch without a timestamp does not count), ``maxTimestampPosition`` (the position of a
      batch holding ``maxTimestamp``);
    - the first batch (the smallest position): ``firstPosition``, ``firstBatchBaseOffset``,
      ``firstBatchLastOffset``, ``firstBatchSize``, ``firstBatchMaxTimestamp``."""
    ok = batches.where(F.col("problem").isNull())
    first = F.min(F.struct(F.col("position").alias("firstPosition"), F.col("size").alias("firstBatchSize"),
                           F.col("maxTimestamp").alias("firstBatchMaxTimestamp"),
                           F.col("lastOffset").alias("firstBatchLastOffset"),
                           F.col("baseOffset").alias("firstBatchBaseOffset")))
    # a view read with a remote store: each segment's tier too
    agg = ok.groupBy(*KEYS, *(["tier"] if "tier" in batches.columns else [])).agg(
        F.count("*").alias("batches"),
        F.sum("count").alias("declaredRecords"),
        F.min(F.coalesce("baseOffset", "lastOffset")).alias("firstOffset"),
        F.max("lastOffset").alias("lastOffset"),
        F.max("maxTimestamp").alias("maxTimestamp"),
        F.max(F.when(F.col("maxTimestamp") >= 0, F.col("maxTimestamp"))).alias("largestTimestamp"),
        F.max_by("position", "maxTimestamp").alias("maxTimestampPosition"),
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
    return (agg.select("*", _codec_mix().alias("codecMix"), "_first.*")
            .drop("_first", *[name for _, name in _CODEC_COUNTS]))
