"""The offsets of every partition as a broker loading its log would have them: log start, log end, high
watermark, last stable offset, and the transactions open in it (producer id and first offset).

The rules are the cleaner model's (:func:`.cleaner.load_offsets`: ``UnifiedLog`` and ``ProducerStateManager``,
the producer snapshot then the batches after it), applied here to every partition, compacted or not, from the
batches and the control records only (no keys): one home for what is open and where the last stable offset
is, shared with the compaction preview.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, IntegerType, LongType, ShortType, StringType, StructField, StructType

from ..config.topic_configs import ConfigSource
from .compaction import resolve_settings
from .grouping_keys import PARTITION
from .partition_input import (
    PartitionContext,
    batch_rows,
    collect_partition_context,
    partition_input,
    partition_markers,
    problem_rows,
    record_rows,
)

OPEN_TRANSACTION = StructType([
    StructField("producerId", LongType()),
    StructField("producerEpoch", ShortType()),
    StructField("firstOffset", LongType()),
    StructField("lastOffset", LongType()),  # of its last data batch
    StructField("firstBatchTimestamp", LongType()),  # its first batch's base timestamp (ms; null: none)
    StructField("segmentBaseOffset", LongType()),  # where its first batch is
    StructField("position", LongType()),
])

LOG_OFFSETS = StructType([
    StructField("logDir", StringType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("logStartOffset", LongType()),
    StructField("logEndOffset", LongType()),
    StructField("highWatermark", LongType()),
    StructField("highWatermarkSource", StringType()),  # checkpoint (replication-offset-checkpoint) or logEndOffset
    StructField("lastStableOffset", LongType()),
    StructField("activeProducers", IntegerType()),
    StructField("openTransactions", ArrayType(OPEN_TRANSACTION)),  # by first offset
    StructField("problems", LongType()),  # problem rows of the inputs for this partition: the offsets may be off
])


def log_offsets(records: DataFrame, batches: DataFrame, segments: DataFrame, partition_files: DataFrame,
                configs: ConfigSource, now_ms: int, context: PartitionContext | None = None, *,
                summary: DataFrame | None = None) -> DataFrame:
    """One row per partition with segments in each log dir (schema :data:`LOG_OFFSETS`), from the views of those
    log dirs. ``configs``: the topics' effective configs (producer.id.expiration.ms decides which producers a
    loading broker keeps); ``now_ms``: the load time to assume; ``context``: the partitions' context a job already
    collected from the same views, for every topic (None: collected here); ``summary``: the batches'
    :func:`~.batch_summary.batch_summary` when the caller has it (each partition's log end is then read from it)."""
    context = context if context is not None else collect_partition_context(segments, partition_files)
    names = context.topics
    spark = segments.sparkSession
    if not names:
        return spark.createDataFrame([], LOG_OFFSETS)
    settings = resolve_settings(configs, names)
    controls = records.where(F.col("isControl") & F.col("snapshotEndOffset").isNull())
    live = batches.where(F.col("snapshotEndOffset").isNull())
    replayed = replayed_batches(live, context, summary)
    rows = (batch_rows(replayed).unionByName(record_rows(controls), allowMissingColumns=True)
            .unionByName(problem_rows(live), allowMissingColumns=True))
    rows = rows.unionByName(partition_markers(spark, context), allowMissingColumns=True)
    return rows.groupBy(*PARTITION).applyInArrow(_offsets_function(context, settings, int(now_ms)), LOG_OFFSETS)


def replayed_batches(batches: DataFrame, context: PartitionContext, summary: DataFrame | None = None) -> DataFrame:
    """The batches of ``batches`` a loading broker reads, or more: a partition with producer snapshots is replayed
    from the newest usable one (:func:`.cleaner.producer_state.load_producer_state` decides which), so the batches
    that end before it are left out here, which on a broker's log is nearly all of them. The bound kept is safe
    whichever snapshot is used: ``S``, the newest snapshot at or below the log end as the live segments' batches
    give it (a newer usable one, or the log start, only replays from further on), lowered to the first offset of a
    transaction open in any snapshot from ``S`` on (its first batch is read for the open transactions' columns); the
    batch holding the log end is at or past it. ``summary``: the batches' per-segment
    :func:`~.batch_summary.batch_summary`, where the log end is read when given (not from every batch)."""
    snapshots: dict[tuple, list[tuple[int, int]]] = {}
    for key, c in context.partitions.items():
        if c["segments"]:
            for offset, entries in c["snapshots"].items():
                floor = min([e[4] for e in entries if e[4] is not None and e[4] >= 0], default=offset)
                snapshots.setdefault(key, []).append((offset, floor))
    if not snapshots:
        return batches
    bounds = []
    for key, log_end in _batch_log_ends(batches, context, summary).items():
        at_end = [offset for offset, _ in snapshots.get(key, ()) if offset <= log_end]
        if at_end:
            newest = max(at_end)
            bounds.append((*key, min(min(f for o, f in snapshots[key] if o >= newest), newest)))
    if not bounds:
        return batches
    bound = batches.sparkSession.createDataFrame(bounds, "logDir string, topic string, partition int, "
                                                         "replayBound long")
    kept = batches.join(F.broadcast(bound), PARTITION, "left")
    return (kept.where(F.col("replayBound").isNull() | (F.col("lastOffset") >= F.col("replayBound") - 1))
            .drop("replayBound"))


def _batch_log_ends(batches: DataFrame, context: PartitionContext,
                    summary: DataFrame | None) -> dict[tuple, int]:
    """Per partition of ``context`` with live segments: its log end as its live segments' batches give it (their
    largest last offset + 1), from ``summary`` (a row a segment) when given, else from ``batches``; collected on the
    driver, one small query (the bounds it gives prune the batches before any shuffle)."""
    live = {key: {s[0] for s in c["segments"]} for key, c in context.partitions.items() if c["segments"]}
    if summary is None:
        summary = (batches.where(F.col("problem").isNull()).groupBy(*PARTITION, "segmentBaseOffset")
                   .agg(F.max("lastOffset").alias("lastOffset")))
    ends: dict[tuple, int] = {}
    for r in summary.select(*PARTITION, "segmentBaseOffset", "lastOffset").collect():
        key = (r[0], r[1], r[2])
        if r[3] in live.get(key, ()) and r[4] is not None:
            ends[key] = max(ends.get(key, r[4] + 1), r[4] + 1)
    return ends


def _open_transactions(batches: list, open_txns: dict[int, int]) -> list[dict]:
    """Each open transaction with its first batch and last data offset (``batches`` in offset order)."""
    out = []
    for pid, first in sorted(open_txns.items(), key=lambda t: t[1]):
        own = [b for b in batches if b.producer_id == pid and b.is_transactional and not b.is_control
               and b.base_offset >= first]
        head = next((b for b in own if b.base_offset == first), None)
        out.append({"producerId": pid, "firstOffset": first,
                    "producerEpoch": head.producer_epoch if head else None,
                    "lastOffset": max((b.last_offset for b in own), default=None),
                    "firstBatchTimestamp": head.base_timestamp if head and head.base_timestamp >= 0 else None,
                    "segmentBaseOffset": head.segment if head else None, "position": head.position if head else None})
    return out


def _offsets_function(context: PartitionContext, settings: dict, now_ms: int):
    def run(key, table):
        import pyarrow as pa

        from ..schemas import arrow_schema
        from .cleaner import LogSegments, load_offsets, place_batches

        log_dir, topic, partition = (k.as_py() for k in key)
        c = context.partitions.get((log_dir, topic, partition))
        if c is None or not c["segments"]:
            return pa.Table.from_pylist([], schema=arrow_schema(LOG_OFFSETS))
        inp = partition_input(table, (log_dir, topic, partition), c, settings[topic])
        segs = LogSegments(inp.segments)
        ordered, _ = place_batches(inp.batches, segs)
        offsets, state = load_offsets(inp, segs, ordered, now_ms)
        row = {"logDir": log_dir, "topic": topic, "partition": partition,
               "logStartOffset": offsets.log_start,
               "logEndOffset": offsets.log_end, "highWatermark": offsets.high_watermark,
               "highWatermarkSource": offsets.high_watermark_source, "lastStableOffset": offsets.last_stable,
               "activeProducers": len(state.producers),
               "openTransactions": _open_transactions(ordered, state.open_txns),
               "problems": inp.problems}
        return pa.Table.from_pylist([row], schema=arrow_schema(LOG_OFFSETS))

    return run
