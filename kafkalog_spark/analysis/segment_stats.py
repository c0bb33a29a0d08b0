"""Per-segment statistics: what is in each segment, from the segments, batches and record_stats views.

A function of DataFrames (the views read by the `kafkalog` source for the same paths), so it can be tested alone and
run on any session. The per-segment facts are small (a row per segment), so they are joined and the rules applied on
the driver, and the table is local data: a Spark job to collect each of the batches' and the records' aggregates,
none for the joins and the window of a query plan, nor for the per-partition tables built on it
(:mod:`.partition_stats`). Why a segment rolled is inferred the way the broker decides to roll
(LogSegment.shouldRoll): from sizes, the next segment's first batch, timestamps and the topic's segment.bytes /
segment.ms / segment.index.bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import groupby
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ..config.topic_configs import ConfigSource, TopicConfigs
from ..schemas import KEY_SKETCH_SIZE as DISTINCT_KEYS_K
from .batch_summary import batch_summary
from .grouping_keys import PARTITION
from .grouping_keys import SEGMENT as KEYS  # the views' names; the output says baseOffset
from .local_rows import grouped, local_rows
from .topic_config_table import topics_of

INT32_MAX = 2**31 - 1

_LONG, _INT, _DOUBLE, _STRING, _BOOL = LongType(), IntegerType(), DoubleType(), StringType(), BooleanType()
# The table's columns after the partition's keys, baseOffset and (where the remote tier is read) tier
_COLUMNS = (
    ("isActive", _BOOL), ("logFile", _STRING), ("logSize", _LONG), ("indexSize", _LONG), ("timeIndexSize", _LONG),
    ("txnIndexSize", _LONG), ("logModified", TimestampType()), ("batches", _LONG), ("records", _LONG),
    ("firstOffset", _LONG), ("lastOffset", _LONG), ("offsetGaps", _LONG), ("minTimestamp", _LONG),
    ("maxTimestamp", _LONG), ("timestampTypes", ArrayType(_STRING, False)),
    ("codecMix", MapType(_STRING, _LONG, False)),
    ("bytesOnDisk", _LONG), ("bytesBeforeCompression", _LONG), ("payloadBytes", _LONG), ("avgBatchSize", _DOUBLE),
    ("maxBatchSize", _INT), ("avgRecordSize", _DOUBLE), ("maxRecordSize", _LONG), ("transactionalBatches", _LONG),
    ("controlBatches", _LONG), ("controlRecords", _LONG), ("abortedRecords", _LONG), ("producerIds", _LONG),
    ("tombstones", _LONG), ("keylessRecords", _LONG), ("approxDistinctKeys", _LONG), ("emptyBatches", _LONG),
    ("deleteHorizonBatches", _LONG), ("invalidBatches", _LONG), ("indexEntries", _INT), ("timeIndexEntries", _INT),
    ("rollReason", _STRING),
)


def segment_stats_schema(tier: bool = False) -> StructType:
    """The table's rows: the partition's keys, ``baseOffset``, ``tier`` when the remote tier is read, then the
    statistics."""
    keys = [StructField("logDir", _STRING), StructField("topic", _STRING), StructField("partition", _INT),
            StructField("baseOffset", _LONG)] + ([StructField("tier", _STRING)] if tier else [])
    return StructType(keys + [StructField(name, kind) for name, kind in _COLUMNS])


def _ok(df: DataFrame) -> DataFrame:
    return df.where(F.col("problem").isNull())


_BATCH_COLUMNS = ("batches", "declaredRecords", "firstOffset", "lastOffset", "maxTimestamp", "timestampTypes",
                  "batchBytes", "avgBatchSize", "maxBatchSize", "transactionalBatches", "controlBatches",
                  "invalidBatches", "emptyBatches", "deleteHorizonBatches", "producerIds", "codecMix", "firstBatchSize",
                  "firstBatchMaxTimestamp", "firstBatchLastOffset")
_SEGMENT_COLUMNS = ("isActive", "nextBaseOffset", "logFile", "logSize", "indexSize", "timeIndexSize", "txnIndexSize",
                    "indexEntries", "timeIndexEntries")


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
    one without batches a null bytesBeforeCompression. Aggregated by Spark: a piece's key sketch is thousands of
    hashes, which stay on the executors."""
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


def _by_segment(df: DataFrame) -> dict[tuple, list[dict[str, Any]]]:
    """``df``'s rows (one Arrow collect) by their segment's :data:`KEYS`."""
    return grouped(df.toArrow().to_pylist(), KEYS)


def _true(*conditions: bool | None) -> bool:
    return all(c is True for c in conditions)


def _gt(a: float | None, b: float | None) -> bool | None:
    return None if a is None or b is None else a > b


def _ge(a: float | None, b: float | None) -> bool | None:
    return None if a is None or b is None else a >= b


def _minus(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a - b


def roll_reason(segment: dict[str, Any], limits: dict[str, Any], next_first_size: int | None,
                next_first_timestamp: int | None, next_last_offset: int | None) -> str | None:
    """LogSegment.shouldRoll, in Kafka's order, evaluated for the append that opened the next segment (its first
    batch's size, max timestamp and last offset); None for the active segment. ``segment``: its files' and its
    batches' facts; ``limits``: its topic's segmentBytes, segmentMs and segmentIndexBytes. A fact unknown (null)
    makes its condition false."""
    if segment.get("isActive"):
        return None
    index_bytes, first_ts = limits.get("segmentIndexBytes"), segment.get("firstBatchMaxTimestamp")
    if _true(_gt(segment.get("logSize"), _minus(limits.get("segmentBytes"), next_first_size))):
        return "size"
    if _true(_gt(segment.get("logSize"), 0), _ge(first_ts, 0),
             _gt(_minus(next_first_timestamp, first_ts), limits.get("segmentMs"))):
        return "time"
    if index_bytes is not None and (_true(_ge(segment.get("indexEntries"), math.floor(index_bytes / 8)))
                                    or _true(_ge(segment.get("timeIndexEntries"), math.floor(index_bytes / 12) - 1))):
        return "index_full"
    if _true(_gt(_minus(next_last_offset, segment.get("segmentBaseOffset")), INT32_MAX)):
        return "offset_overflow"
    return "unknown"


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
    segments view's (:func:`~.topic_config_table.topics_of`) when the caller has them. The result is local data
    (:func:`~.local_rows.local_rows`): reading it again costs no Spark job."""
    spark, tier = segments.sparkSession, _tier(segments)
    # a view collected on the driver (the nightly job's) is selected without a Spark job; the time as microseconds,
    # the same instant whatever the driver's time zone
    live = [r.asDict() for r in _ok(segments).where("status = 'live'").select(
        *PARTITION, F.col("baseOffset").alias("segmentBaseOffset"), *_SEGMENT_COLUMNS,
        F.unix_micros("logModified").alias("logModified"), *tier).collect()]
    per_segment = _by_segment((batch_summary(batches) if summary is None else summary).select(*KEYS, *_BATCH_COLUMNS))
    records = _by_segment(_record_stats(record_stats))
    topics = topics_of(segments) if topics is None else topics
    limits = {row["topic"]: row for row in TopicConfigs.of(configs).rows(topics)}
    # each segment with its batches' facts (the remote tier's copy of a segment too, as a join by its keys) and its
    # records', then in offset order per partition: why each rolled follows from the next one's first batch
    joined = [s | batch | next(iter(records.get(key, [])), {"records": None})
              for s in live for key in [tuple(s[k] for k in KEYS)] for batch in per_segment.get(key) or [{}]]
    rows = []
    for _, partition in groupby(sorted(joined, key=_partition_order), key=lambda s: tuple(s[k] for k in PARTITION)):
        ordered = list(partition)
        for s, following in zip(ordered, [*ordered[1:], {}], strict=True):
            reason = roll_reason(s, limits.get(s["topic"], {}), following.get("firstBatchSize"),
                                 following.get("firstBatchMaxTimestamp"), following.get("firstBatchLastOffset"))
            rows.append(_row(s, reason, tier))
    schema = segment_stats_schema(bool(tier))
    micros = StructType([StructField(f.name, _LONG) if f.name == "logModified" else f for f in schema.fields])
    return local_rows(spark, rows, micros).withColumn("logModified", F.timestamp_micros("logModified"))


def _partition_order(s: dict[str, Any]) -> tuple:
    # the partition's keys, then its segments by base offset (nulls first, as Spark orders); None sorts first
    return (*((v is not None, v) for v in (s[k] for k in PARTITION)), s["segmentBaseOffset"] is not None,
            s["segmentBaseOffset"] or 0)


def _row(s: dict[str, Any], reason: str | None, tier: list[str]) -> dict[str, Any]:
    get = s.get
    first, last, records = get("firstOffset"), get("lastOffset"), get("records")
    span = None if first is None or last is None else last - first + 1
    return {
        "logDir": s["logDir"], "topic": s["topic"], "partition": s["partition"], "baseOffset": s["segmentBaseOffset"],
        **{t: s[t] for t in tier},
        **{c: s[c] for c in ("isActive", "logFile", "logSize", "indexSize", "timeIndexSize", "txnIndexSize",
                             "logModified")},
        "batches": get("batches") or 0, "records": records or 0, "firstOffset": first, "lastOffset": last,
        "offsetGaps": None if span is None or records is None else span - records,
        "minTimestamp": get("minTimestamp"), "maxTimestamp": get("maxTimestamp"),
        "timestampTypes": get("timestampTypes"), "codecMix": get("codecMix"), "bytesOnDisk": get("batchBytes"),
        **{c: get(c) for c in ("bytesBeforeCompression", "payloadBytes", "avgBatchSize", "maxBatchSize",
                               "avgRecordSize", "maxRecordSize", "transactionalBatches", "controlBatches",
                               "controlRecords", "abortedRecords", "producerIds", "tombstones", "keylessRecords",
                               "approxDistinctKeys", "emptyBatches", "deleteHorizonBatches", "invalidBatches")},
        "indexEntries": s["indexEntries"], "timeIndexEntries": s["timeIndexEntries"], "rollReason": reason,
    }
