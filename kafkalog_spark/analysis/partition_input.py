"""The per-partition input of the analyses that run Kafka's log model once per partition (the compaction preview and
``log_offsets``): the small context collected on the driver (:class:`PartitionContext`: live segments, checkpoint
entries, the newest producer snapshots, aborted transactions), the rows grouped per partition for the Python
workers, and the model's :class:`~.cleaner.PartitionInput` built from both.

A job that runs both collects the context once (:func:`collect_partition_context`) and passes it to each.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..log.checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)
from .grouping_keys import LOG_DIR, PARTITION
from .record_sizes import legacy_entry_bytes, v2_body_without_timestamp, without_payloads

if TYPE_CHECKING:
    import pyarrow as pa

    from .cleaner import CleanerSettings, PartitionInput


@dataclass(frozen=True)
class PartitionContext:
    """What the driver collected: ``topics``, every topic with segments (sorted); ``partitions``, by (log dir, topic,
    partition), the small inputs of the partitions of the topics it was collected for."""

    topics: list[str]
    partitions: dict[tuple[str, str, int], dict]

    def of_topics(self, topics: Iterable[str]) -> PartitionContext:
        """The partitions of ``topics`` only."""
        wanted = set(topics)
        return PartitionContext(self.topics, {k: c for k, c in self.partitions.items() if k[1] in wanted})



def record_rows(records: DataFrame) -> DataFrame:
    """Record rows with the key hashed and the value reduced to null-or-not: no bytes leave here."""
    r = without_payloads(records).where(F.col("problem").isNull())
    return r.select(
        *PARTITION, "segmentBaseOffset", "position", F.lit("record").alias("kind"),
        "offset",
        F.when(F.col("isControl"), F.lit(None)).otherwise(F.md5(F.col("key"))).alias("keyHash"),
        (F.col("valueSize") >= 0).alias("hasValue"),  # valueSize -1: a null value (a tombstone)
        F.coalesce(F.expr("unix_millis(timestamp)"), F.lit(-1).cast("long")).alias("tsMs"),
        F.when(F.col("magic") >= 2, v2_body_without_timestamp().cast("long")).alias("bodyWithoutTs"),
        F.when(F.col("magic") < 2, legacy_entry_bytes().cast("long")).alias("legacySize"),
        "controlType",
    )


BATCH_COLUMNS = ["size", "baseOffset", "lastOffset", "magic", "compresscodec", "isControl", "isTransactional",
                  "producerId", "producerEpoch", "deleteHorizonMs", "baseTimestamp", "maxTimestamp", "timestampType"]


def batch_rows(batches: DataFrame) -> DataFrame:
    b = batches.where(F.col("problem").isNull())
    return b.select(*PARTITION, "segmentBaseOffset", "position", F.lit("batch").alias("kind"),
                    *BATCH_COLUMNS)


def problem_rows(df: DataFrame) -> DataFrame:
    return df.where(F.col("problem").isNotNull()).select(*PARTITION, F.lit("problem").alias("kind"))


SEGMENT_COLUMNS = [*PARTITION, "status", "baseOffset", "logSize", "indexSize", "timeIndexSize", "isActive",
                    "maxIndexedTimestamp", "logFile"]
CHECKPOINTS = (CLEANER_OFFSET_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT)


def segment_listing(segments: DataFrame) -> list:
    """The segments view on the driver (one row per segment file, small)."""
    return segments.select(*SEGMENT_COLUMNS, F.expr("unix_millis(logModified)").alias("mtime"),
                           F.col("problem").isNotNull().alias("bad")).collect()


def collect_partition_context(segments: DataFrame, partition_files: DataFrame,
                              topics: Iterable[str] | None = None) -> PartitionContext:
    """The context of the partitions of ``topics`` (None: every topic with segments), collected on the driver."""
    listing = segment_listing(segments)
    names = sorted({r.topic for r in listing if r.topic is not None})
    return context_of(listing, partition_files, names if topics is None else list(topics))


def context_of(listing: list, partition_files: DataFrame, topics: list[str]) -> PartitionContext:
    """Small per-partition inputs, collected on the driver: live segments, checkpoints, the newest
    producer snapshots and the aborted transactions, by (log dir, topic, partition); ``listing``: from
    :func:`segment_listing`."""
    ctx: dict[tuple[str, str, int], dict] = {}
    wanted = set(topics)
    names = sorted({r.topic for r in listing if r.topic is not None})

    def entry(r) -> dict:
        return ctx.setdefault((r[LOG_DIR], r.topic, r.partition), {"segments": [], "checkpoints": {}, "snapshots": {},
                                                   "aborted": [], "problems": 0, "bad_files": set()})

    for r in listing:
        if r.topic not in wanted:
            continue
        if r.bad:
            entry(r)["problems"] += 1
        elif r.status == "live":
            entry(r)["segments"].append(
                (r.baseOffset, r.logSize or 0, r.indexSize, r.timeIndexSize, bool(r.isActive), r.mtime or 0,
                 r.maxIndexedTimestamp))

    pf = partition_files.where(F.col("topic").isin(topics))
    small = pf.where(F.col("problem").isNotNull() | F.col("fileType").isin(*CHECKPOINTS, "txnindex"))
    for r in small.select(*PARTITION, "fileType", "offset", "producerId", "firstOffset", "lastOffset",
                          F.col("problem.file").alias("badFile"), F.col("problem.severity").alias("severity"),
                          F.col("problem").isNotNull().alias("bad")).collect():
        e = entry(r)
        if r.bad:
            e["problems"] += 1
            if r.severity == "error" and r.badFile:
                e["bad_files"].add(r.badFile)
        elif r.fileType == "txnindex":
            e["aborted"].append((r.producerId, r.firstOffset, r.lastOffset))
        else:
            e["checkpoints"][r.fileType] = r.offset
    snaps = pf.where(F.col("problem").isNull() & (F.col("fileType") == "producer-snapshot"))
    newest = Window.partitionBy(*PARTITION).orderBy(F.col("offset").desc())
    snaps = snaps.withColumn("_rank", F.dense_rank().over(newest)).where(F.col("_rank") <= 3)
    for r in snaps.select(*PARTITION, "file", "offset", "producerId", "producerEpoch", "lastOffset",
                          "timestamp", "currentTxnFirstOffset").collect():
        e = entry(r)
        if r.file in e["bad_files"]:
            continue  # Kafka discards a snapshot it cannot read and falls back to an older one
        e["snapshots"].setdefault(r.offset, []).append(
            (r.producerId, r.producerEpoch, r.lastOffset, r.timestamp, r.currentTxnFirstOffset))
    return PartitionContext(names, ctx)



def partition_markers(spark: SparkSession, context: PartitionContext) -> DataFrame:
    """One row per partition with live segments (kind ``partition``), so that partitions without any batch get a
    group of their own too."""
    return spark.createDataFrame([key for key, c in context.partitions.items() if c["segments"]],
                                 "logDir string, topic string, partition int").withColumn("kind", F.lit("partition"))




def partition_input(table: pa.Table, key: tuple[str, str, int], c: dict, settings: CleanerSettings) -> PartitionInput:
    """The cleaner model's input for one partition: its group of rows (:func:`batch_rows`, :func:`record_rows`,
    :func:`problem_rows`; in the Python workers) and its entry of the context."""
    from .cleaner import AbortedTxn, Batch, PartitionInput, ProducerEntry, Record, Segment

    cols = table.to_pydict()
    kinds = cols["kind"]
    batches: dict[tuple[int, int], Batch] = {}
    records: dict[tuple[int, int], list[Record]] = {}
    control_types: dict[tuple[int, int], str] = {}
    problems = c["problems"]
    for i, kind in enumerate(kinds):
        if kind == "problem":
            problems += 1
        elif kind == "batch":
            bk = (cols["segmentBaseOffset"][i], cols["position"][i])
            base = cols["baseOffset"][i]
            batches[bk] = Batch(
                segment=bk[0], position=bk[1], size=cols["size"][i],
                base_offset=base if base is not None else -1, last_offset=cols["lastOffset"][i],
                magic=cols["magic"][i], compressed=cols["compresscodec"][i] not in (None, "none"),
                is_control=bool(cols["isControl"][i]), is_transactional=bool(cols["isTransactional"][i]),
                producer_id=cols["producerId"][i] if cols["producerId"][i] is not None else -1,
                producer_epoch=cols["producerEpoch"][i] if cols["producerEpoch"][i] is not None else -1,
                delete_horizon_ms=cols["deleteHorizonMs"][i],
                base_timestamp=cols["baseTimestamp"][i] if cols["baseTimestamp"][i] is not None else -1,
                max_timestamp=cols["maxTimestamp"][i] if cols["maxTimestamp"][i] is not None else -1,
                log_append_time=cols["timestampType"][i] == "LogAppendTime")
        elif kind == "record":
            bk = (cols["segmentBaseOffset"][i], cols["position"][i])
            records.setdefault(bk, []).append(Record(
                cols["offset"][i], cols["keyHash"][i], bool(cols["hasValue"][i]), cols["tsMs"][i],
                cols["bodyWithoutTs"][i], cols["legacySize"][i]))
            if cols["controlType"][i] is not None:
                control_types.setdefault(bk, cols["controlType"][i])
    for bk, b in batches.items():
        b.records = sorted(records.get(bk, []), key=lambda x: x.offset)
        if b.base_offset < 0:  # a legacy compressed wrapper: its first inner offset
            b.base_offset = b.records[0].offset if b.records else b.last_offset
        b.control_type = control_types.get(bk)
    cp = c["checkpoints"]
    return PartitionInput(
        topic=key[1], partition=key[2],
        segments=[Segment(*s) for s in c["segments"]],
        batches=list(batches.values()), settings=settings,
        cleaner_checkpoint=cp.get(CLEANER_OFFSET_CHECKPOINT),
        log_start_checkpoint=cp.get(LOG_START_OFFSET_CHECKPOINT),
        high_watermark_checkpoint=cp.get(REPLICATION_OFFSET_CHECKPOINT),
        snapshots={o: [ProducerEntry(pid, ep if ep is not None else -1, lo if lo is not None else -1,
                                     ts if ts is not None else -1, tx if tx is not None else -1)
                       for pid, ep, lo, ts, tx in entries]
                   for o, entries in c["snapshots"].items()},
        aborted_txns=[AbortedTxn(*t) for t in c["aborted"]],
        problems=problems)
