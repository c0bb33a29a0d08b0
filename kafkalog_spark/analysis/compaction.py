"""Compaction preview: what Kafka's log cleaner would do to each compacted partition now, offline.

    preview = compaction_preview(records, batches, segments, partition_files, configs, now_ms)
    preview.partitions   # one row per compacted partition: offsets, dirty ratio, whether/why it is cleaned
    preview.segments     # one row per live segment: what the pass removes and keeps, its cleaned group
    preview.records      # one row per record: kept or removed, and why (keys only as MD5 hashes)

A function of DataFrames (the `kafkalog` views read for the same paths), so it runs on any session and
can be tested alone; :func:`preview_log_dirs` reads the views itself. The cleaner's decisions are
modelled on Apache Kafka's (3.9 or 4.x, ``kafka_version``) in :mod:`kafkalog_spark.analysis.cleaner`, which
runs once per partition (``applyInArrow``) on the partition's batches and records.

Keys never leave Spark's first projection: they are hashed with MD5 there, as the cleaner's offset map
(SkimpyOffsetMap) hashes them, and neither key nor value bytes reach any output.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from ..config.topic_configs import ConfigSource, TopicConfigs
from ..kafka_versions import KafkaVersion
from .cleaner import CleanerSettings
from .grouping_keys import LOG_DIR, PARTITION
from .partition_input import (
    PartitionContext,
    batch_rows,
    context_of,
    partition_input,
    partition_markers,
    problem_rows,
    record_rows,
    segment_listing,
)

_L, _I, _S, _B, _D = LongType(), IntegerType(), StringType(), BooleanType(), DoubleType()


def _fields(*spec: tuple[str, Any]) -> list[StructField]:
    return [StructField(name, dtype) for name, dtype in spec]


GROUP = StructType(_fields(
    ("baseOffset", _L),  # the cleaned segment's base offset (its first source segment's)
    ("lastSegmentBaseOffset", _L),
    ("segments", _I),  # source segments merged into it
    ("logBytesBefore", _L),
    ("logBytesAfter", _L),  # estimated (exact for uncompressed v2 batches)
    ("indexBytesBefore", _L),
    ("timeIndexBytesBefore", _L),
))

PARTITIONS = StructType(_fields(
    ("logDir", _S), ("topic", _S), ("partition", _I),
    ("cleanupPolicy", _S),
    ("nowMs", _L),  # the clean time the preview assumes
    ("kafkaVersion", _S),  # whose cleaner rules: 3.9 or 4.x (analysis.cleaner.versions)
    ("logStartOffset", _L), ("logEndOffset", _L),
    ("highWatermark", _L), ("highWatermarkSource", _S),  # checkpoint (replication-offset-checkpoint) or logEndOffset
    ("lastStableOffset", _L),  # high watermark lowered to the first open (or unreplicated) transaction
    ("activeSegmentBaseOffset", _L),
    ("checkpointDirtyOffset", _L),  # cleaner-offset-checkpoint entry, null when absent
    ("firstDirtyOffset", _L),
    ("firstDirtyOffsetReset", _B),  # the checkpoint was out of [logStartOffset, logEndOffset]
    ("uncleanableOffset", _L),  # min(LSO, active base, min-lag segment), at least firstDirtyOffset
    ("uncleanableReason", _S),  # which bound: lastStableOffset, activeSegment, minCompactionLag, firstDirtyOffset
    ("firstUncleanableOffset", _L),  # uncleanableOffset rounded down to a segment base
    ("cleanBytes", _L), ("cleanableBytes", _L), ("totalBytes", _L),
    ("dirtyRatio", _D), ("minCleanableDirtyRatio", _D),
    ("maxCompactionDelayMs", _L),  # > 0: max.compaction.lag.ms forces a clean
    ("wouldClean", _B),
    ("cleanReason", _S),  # dirtyRatio, maxCompactionLag; or why not: belowMinCleanableDirtyRatio, ...
    ("cleanOrder", _I),  # 1 = the log the cleaner picks first (highest dirty ratio); null if not cleaned
    ("passSimulated", _B),
    ("endOffset", _L),  # the pass's next dirty offset: the new cleaner-offset-checkpoint
    ("offsetMapSlots", _L), ("offsetMapCapacity", _L), ("offsetMapEntries", _L),
    ("offsetMapFull", _B),  # the dedupe buffer cut the pass short
    ("offsetMapFullAtOffset", _L),  # the first keyed record that did not fit
    ("dirtyDistinctKeys", _L),  # distinct keys of the cleanable range (map entries a full pass needs)
    ("segmentsInPass", _I), ("segmentsAfterPass", _I),
    ("bytesInPass", _L), ("bytesRemoved", _L), ("bytesAfterPass", _L),
    ("recordsInPass", _L), ("recordsKept", _L), ("recordsRemoved", _L),
    ("batchesRemoved", _L), ("emptyBatchesRetained", _L),
    ("supersededRemoved", _L), ("keylessRemoved", _L), ("abortedRemoved", _L),
    ("tombstonesRemoved", _L), ("tombstonesKept", _L),
    ("markersRemoved", _L), ("markersKept", _L),
    ("deleteHorizonsSet", _L),  # batches that get deleteHorizonMs in this pass
    ("deleteRetentionMs", _L),
    ("newDeleteHorizonMs", _L),  # nowMs + delete.retention.ms, when any batch gets it
    ("activeProducers", _I), ("openTransactions", _I),
    ("cleanedGroups", ArrayType(GROUP)),
    ("problems", _L),  # problem rows of the inputs for this partition: the preview may be off
))

SEGMENTS = StructType(_fields(
    ("logDir", _S), ("topic", _S), ("partition", _I),
    ("baseOffset", _L), ("nextBaseOffset", _L), ("isActive", _B),
    ("section", _S),  # clean, cleanable, uncleanable, active
    ("inPass", _B),  # rewritten by the pass (every segment below endOffset)
    ("cleanedGroupBaseOffset", _L), ("cleanedGroupIndex", _I),
    ("logSize", _L), ("bytesAfter", _L), ("bytesRemoved", _L),  # bytes estimated from record sizes
    ("batches", _L), ("batchesRemoved", _L), ("emptyBatchesRetained", _L),
    ("records", _L), ("recordsKept", _L), ("recordsRemoved", _L),
    ("supersededRemoved", _L), ("keylessRemoved", _L), ("abortedRemoved", _L),
    ("tombstones", _L), ("tombstonesRemoved", _L), ("tombstonesKept", _L),
    ("markers", _L), ("markersRemoved", _L), ("markersKept", _L),
    ("deleteHorizonsSet", _L),
))

RECORDS = StructType(_fields(
    ("logDir", _S), ("topic", _S), ("partition", _I),
    ("segmentBaseOffset", _L), ("batchBaseOffset", _L), ("offset", _L),
    ("keyHash", _S),  # hex MD5 of the key (what the offset map stores), null for no key
    ("isTombstone", _B), ("isControl", _B), ("controlType", _S),
    ("retained", _B),
    ("reason", _S),  # see cleaner.results: latest, superseded, tombstoneRetained, aborted, ...
    ("deleteHorizonMs", _L),  # the delete horizon its batch carries after the pass
))


def _union_schema(*schemas: StructType) -> StructType:
    fields: dict[str, StructField] = {"rowType": StructField("rowType", _S)}
    for schema in schemas:
        for f in schema.fields:
            if f.name in fields and fields[f.name].dataType != f.dataType:
                raise AssertionError(f"column {f.name} differs between outputs")
            fields.setdefault(f.name, f)
    return StructType(list(fields.values()))


_OUT = _union_schema(PARTITIONS, SEGMENTS, RECORDS)


@dataclass(frozen=True)
class CompactionPreview:
    """The three outputs; they share one cached computation (``unpersist()`` frees it). Unpacks as
    ``partitions, segments, records = preview``."""

    partitions: DataFrame
    segments: DataFrame
    records: DataFrame
    cached: DataFrame | None = field(default=None, repr=False)

    def __iter__(self) -> Iterator[DataFrame]:
        return iter((self.partitions, self.segments, self.records))

    def unpersist(self) -> None:
        if self.cached is not None:
            self.cached.unpersist()


def resolve_settings(configs: ConfigSource, topics: Iterable[str], kafka_version: KafkaVersion | str | None = None,
                     **overrides: Any) -> dict[str, CleanerSettings]:
    """The cleaner's settings per topic, from the one resolver of effective configs (a TopicConfigs, or what
    ``TopicConfigs.of`` takes; None: Kafka's defaults, so only the internal topics are compacted).
    ``kafka_version``: whose configs and cleaner; None: the version of ``configs`` (TopicConfigs, TopicConfig
    values), else the newest."""
    resolved = TopicConfigs.of(configs, kafka_version)
    return {topic: CleanerSettings.of(resolved[topic], kafka_version, **overrides) for topic in topics}


def compacted_topics(configs: ConfigSource, topics: Iterable[str],
                     kafka_version: KafkaVersion | str | None = None) -> list[str]:
    """The ``topics`` the cleaner compacts (cleanup.policy contains compact), sorted."""
    settings = resolve_settings(configs, topics, kafka_version)
    return sorted(t for t, s in settings.items() if s.compact)


# --------------------------------------------------------------------------------------------------
# The per-partition function (runs in the Python workers)


def _partition_row(res) -> dict:
    in_pass = [s for s in res.segments if s.in_pass]

    def total(name: str) -> int:
        return sum(getattr(s, name) for s in in_pass)

    untouched = sum(1 for s in res.segments if not s.in_pass)
    return {
        "topic": res.topic, "partition": res.partition, "cleanupPolicy": res.cleanup_policy, "nowMs": res.now_ms,
        "kafkaVersion": res.kafka_version,
        "logStartOffset": res.log_start_offset, "logEndOffset": res.log_end_offset,
        "highWatermark": res.high_watermark, "highWatermarkSource": res.high_watermark_source,
        "lastStableOffset": res.last_stable_offset, "activeSegmentBaseOffset": res.active_segment_base_offset,
        "checkpointDirtyOffset": res.checkpoint_dirty_offset, "firstDirtyOffset": res.first_dirty_offset,
        "firstDirtyOffsetReset": res.first_dirty_reset, "uncleanableOffset": res.uncleanable_offset,
        "uncleanableReason": res.uncleanable_reason, "firstUncleanableOffset": res.first_uncleanable_offset,
        "cleanBytes": res.clean_bytes, "cleanableBytes": res.cleanable_bytes, "totalBytes": res.total_bytes,
        "dirtyRatio": res.dirty_ratio, "minCleanableDirtyRatio": res.min_cleanable_dirty_ratio,
        "maxCompactionDelayMs": res.max_compaction_delay_ms, "wouldClean": res.would_clean,
        "cleanReason": res.clean_reason, "passSimulated": res.pass_simulated, "endOffset": res.end_offset,
        "offsetMapSlots": res.offset_map_slots, "offsetMapCapacity": res.offset_map_capacity,
        "offsetMapEntries": res.offset_map_entries, "offsetMapFull": res.offset_map_full,
        "offsetMapFullAtOffset": res.offset_map_full_at_offset, "dirtyDistinctKeys": res.dirty_distinct_keys,
        "segmentsInPass": len(in_pass), "segmentsAfterPass": len(res.groups) + untouched,
        "bytesInPass": total("log_size"), "bytesRemoved": total("bytes_removed"),
        "bytesAfterPass": total("bytes_after"),
        "recordsInPass": total("records"), "recordsKept": total("records_kept"),
        "recordsRemoved": total("records_removed"), "batchesRemoved": total("batches_removed"),
        "emptyBatchesRetained": total("empty_batches_retained"), "supersededRemoved": total("superseded_removed"),
        "keylessRemoved": total("keyless_removed"), "abortedRemoved": total("aborted_removed"),
        "tombstonesRemoved": total("tombstones_removed"), "tombstonesKept": total("tombstones_kept"),
        "markersRemoved": total("markers_removed"), "markersKept": total("markers_kept"),
        "deleteHorizonsSet": total("delete_horizons_set"), "deleteRetentionMs": res.delete_retention_ms,
        "newDeleteHorizonMs": res.new_delete_horizon_ms, "activeProducers": res.active_producers,
        "openTransactions": res.open_transactions,
        "cleanedGroups": [{"baseOffset": g.base_offset, "lastSegmentBaseOffset": g.last_segment_base_offset,
                           "segments": g.segments, "logBytesBefore": g.log_bytes_before,
                           "logBytesAfter": g.log_bytes_after, "indexBytesBefore": g.index_bytes_before,
                           "timeIndexBytesBefore": g.time_index_bytes_before} for g in res.groups],
        "problems": res.problems,
    }


def _segment_row(res, s) -> dict:
    return {
        "topic": res.topic, "partition": res.partition, "baseOffset": s.base_offset,
        "nextBaseOffset": s.next_base_offset, "isActive": s.is_active, "section": s.section, "inPass": s.in_pass,
        "cleanedGroupBaseOffset": s.group_base_offset, "cleanedGroupIndex": s.group_index,
        "logSize": s.log_size, "bytesAfter": s.bytes_after, "bytesRemoved": s.bytes_removed,
        "batches": s.batches, "batchesRemoved": s.batches_removed, "emptyBatchesRetained": s.empty_batches_retained,
        "records": s.records, "recordsKept": s.records_kept, "recordsRemoved": s.records_removed,
        "supersededRemoved": s.superseded_removed, "keylessRemoved": s.keyless_removed,
        "abortedRemoved": s.aborted_removed, "tombstones": s.tombstones, "tombstonesRemoved": s.tombstones_removed,
        "tombstonesKept": s.tombstones_kept, "markers": s.markers, "markersRemoved": s.markers_removed,
        "markersKept": s.markers_kept, "deleteHorizonsSet": s.delete_horizons_set,
    }


def _preview_function(context: PartitionContext, settings: dict[str, CleanerSettings], now_ms: int, simulate_all: bool,
                      include_records: bool):
    def run(key, table):
        import pyarrow as pa

        from ..schemas import arrow_schema
        from .cleaner import preview_partition

        log_dir, topic, partition = (k.as_py() for k in key)
        c = context.partitions.get((log_dir, topic, partition))
        if c is None or not c["segments"]:
            return pa.Table.from_pylist([], schema=arrow_schema(_OUT))
        inp = partition_input(table, (log_dir, topic, partition), c, settings[topic])
        res = preview_partition(inp, now_ms, simulate_all=simulate_all, keep_fates=include_records)
        rows = [{"rowType": "partition", LOG_DIR: log_dir} | _partition_row(res)]
        rows += [{"rowType": "segment", LOG_DIR: log_dir} | _segment_row(res, s) for s in res.segments]
        if include_records:
            rows += [{"rowType": "record", LOG_DIR: log_dir, "topic": topic, "partition": partition,
                      "segmentBaseOffset": f.segment, "batchBaseOffset": f.batch_base_offset, "offset": f.offset,
                      "keyHash": f.key_hash,
                      "isTombstone": f.is_tombstone, "isControl": f.is_control, "controlType": f.control_type,
                      "retained": f.retained, "reason": f.reason, "deleteHorizonMs": f.delete_horizon_ms}
                     for f in res.fates]
        return pa.Table.from_pylist(rows, schema=arrow_schema(_OUT))

    return run


# --------------------------------------------------------------------------------------------------
# Public API


def compaction_preview(records: DataFrame, batches: DataFrame, segments: DataFrame, partition_files: DataFrame,
                       configs: ConfigSource, now_ms: int, *, simulate_all: bool = False,
                       include_records: bool = True, topics: Iterable[str] | None = None,
                       producer_id_expiration_ms: int | None = None,
                       kafka_version: KafkaVersion | str | None = None,
                       context: PartitionContext | None = None) -> CompactionPreview:
    """Preview the log cleaner's next pass over every compacted partition in the views.

    ``records``, ``batches``, ``segments``, ``partition_files``: the `kafkalog` views of the same log dirs
    (read with ``includeInternal`` for the internal topics). ``configs``: the topics' effective configs, a
    :class:`~kafkalog_spark.config.TopicConfigs` (or what ``TopicConfigs.of`` takes: topic -> TopicConfig,
    topic -> {Kafka key: value}, a callable topic -> TopicConfig, None); a topic is previewed when its
    cleanup.policy contains compact. ``now_ms``: the clean time to assume (epoch milliseconds).

    ``simulate_all``: also simulate the pass for compacted partitions the cleaner would not pick now
    (``wouldClean`` stays false, ``passSimulated`` says the numbers are hypothetical). ``include_records``:
    fill :attr:`CompactionPreview.records` (one row per record). ``topics``: limit to these topics.
    ``producer_id_expiration_ms``: replaces the configs' producer.id.expiration.ms (a broker setting).
    ``kafka_version``: whose cleaner to model, ``3.9`` or ``4.x`` (a :class:`KafkaVersion` or what
    ``parse_kafka_version`` takes), and whose config rules resolve ``configs`` given as plain mappings; None:
    the version ``configs`` were resolved for (a TopicConfigs, TopicConfig values), else the newest. The
    cleaner rules that differ are in :mod:`kafkalog_spark.analysis.cleaner.versions`. ``context``: the partitions'
    context a job already collected from the same views (:func:`.partition_input.collect_partition_context`, for
    every topic); None: collected here.
    """
    if context is not None:
        names = [t for t in context.topics if topics is None or t in set(topics)]
    else:
        if topics is not None:
            segments = segments.where(F.col("topic").isin(list(topics)))
        listing = segment_listing(segments)
        names = sorted({r.topic for r in listing if r.topic is not None})
    settings = resolve_settings(configs, names, kafka_version, producer_id_expiration_ms=producer_id_expiration_ms)
    compacted = [t for t in names if settings[t].compact]
    spark = segments.sparkSession
    empty = [spark.createDataFrame([], s) for s in (PARTITIONS, SEGMENTS, RECORDS)]
    if not compacted:
        return CompactionPreview(*empty)
    context = (context.of_topics(compacted) if context is not None
               else context_of(listing, partition_files, compacted))
    wanted = F.col("topic").isin(compacted)
    rows = (batch_rows(batches.where(wanted))
            .unionByName(record_rows(records.where(wanted)), allowMissingColumns=True)
            .unionByName(problem_rows(batches.where(wanted)), allowMissingColumns=True)
            .unionByName(problem_rows(records.where(wanted)), allowMissingColumns=True))
    rows = rows.unionByName(partition_markers(spark, context), allowMissingColumns=True)
    fn = _preview_function(context, {t: settings[t] for t in compacted}, int(now_ms), simulate_all, include_records)
    out = rows.groupBy(*PARTITION).applyInArrow(fn, _OUT).persist()

    # The order the cleaner would take them in, dirtiest first, within each log dir: one broker's cleaner picks
    # among its own logs only.
    by_ratio = Window.partitionBy(LOG_DIR, "wouldClean").orderBy(F.col("dirtyRatio").desc(), "topic", "partition")
    parts = out.where(F.col("rowType") == "partition").select(*PARTITIONS.fieldNames())
    parts = parts.withColumn("cleanOrder", F.when(F.col("wouldClean"), F.row_number().over(by_ratio)).cast("int"))
    parts = parts.select(*PARTITIONS.fieldNames())
    segs = out.where(F.col("rowType") == "segment").select(*SEGMENTS.fieldNames())
    recs = out.where(F.col("rowType") == "record").select(*RECORDS.fieldNames())
    return CompactionPreview(parts, segs, recs, out)


def read_compaction_views(spark, paths: list[str], topics: Iterable[str] | None = None) -> dict[str, DataFrame]:
    """The four views :func:`compaction_preview` needs, for log dirs or partition dirs."""
    from ..source import read_views as source_views

    return source_views(spark, paths, ("records", "batches", "segments", "partition_files"),
                        topics=",".join(topics) if topics else None)


def preview_log_dirs(spark, paths: list[str], configs: ConfigSource, now_ms: int, **kwargs: Any) -> CompactionPreview:
    """:func:`compaction_preview` on the views of ``paths`` (log dirs or partition dirs)."""
    v = read_compaction_views(spark, paths, kwargs.get("topics"))
    return compaction_preview(v["records"], v["batches"], v["segments"], v["partition_files"], configs, now_ms,
                              **kwargs)
