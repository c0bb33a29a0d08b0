"""Retention plan: which segments a Kafka 3.9 broker's retention would delete, and why the others stay.

:func:`retention_plan` takes the ``segments``, ``batches`` and ``partition_files`` views of the same log dirs
(read by the ``kafkalog`` source) and returns one row per live segment (:data:`PLAN_SCHEMA`).
:func:`retention_what_if` runs the plan for two configurations side by side. :func:`plan_partition` is the
per-partition core in plain Python.

Semantics, as ``UnifiedLog.deleteOldSegments`` / ``deletableSegments`` (core/src/main/scala/kafka/log/
UnifiedLog.scala, 3.9):

- Rules run in order, each on what the previous one left: log start offset, then (cleanup.policy contains
  ``delete``) size, then time. Compact-only topics get only the log-start-offset rule (run by the cleaner
  thread, as are the delete rules of ``compact,delete`` topics).
- Each rule deletes a prefix: the walk from the oldest segment stops at the first segment that fails. A
  segment qualifies only if the high watermark >= its upper bound (the next segment's base offset, or the log
  end offset for the last segment), the rule's predicate holds, and it is not the last segment while empty.
- Log-start-offset rule: the next segment exists and its base offset <= the log start offset. Size rule:
  skipped when retention.bytes < 0 or the log's size (all remaining segments) < retention.bytes; otherwise
  diff = size - retention.bytes and segments go while diff - segment.size >= 0. Time rule: skipped when
  retention.ms < 0; a segment goes while as_of - largestTimestamp > retention.ms (strict).
- When every segment goes, the broker first rolls a new empty active segment at the log end offset; the new
  log start offset is then the log end offset. Otherwise it is max(log start offset, first surviving base).
- Tiered storage (remote.storage.enable=true, not compacted, not internal, remote.log.copy.disable=false): the
  size and time rules use local.retention.bytes/ms (-2 = retention.bytes/ms) and a segment may only go once it
  is in remote storage: such rows say ``requiresRemoteCopy`` and rules ``local_size``/``local_time``. Given the
  remote tier (``__remote_log_metadata``'s ``remote_log_segments`` view, whose copied segments give the broker's
  highestOffsetInRemoteStorage), a segment not copied yet stops the rule there (``not_copied_to_remote``), as
  isSegmentEligibleForDeletion stops deletableSegments; without it, whether a segment is copied cannot be known
  and it is planned as if it were (an assumption says so). A segment below the log start offset goes without a
  copy. The active segment is never deleted directly: the broker rolls it, and it becomes eligible after its copy.

Inputs: the segment's largest timestamp is the greater of its last time index entry and its batches' max
``maxTimestamp`` (the broker's maxTimestampSoFar); when neither is >= 0 the ``.log`` mtime is used, as
``LogSegment.largestTimestamp`` does. The high watermark comes from replication-offset-checkpoint, clamped to
[log start offset, log end offset] as ``updateHighWatermark`` does; without an entry it is assumed to be the
log end offset (a leader that caught up). The log start offset is max(log-start-offset-checkpoint, first
segment base); the broker writes an entry only when the start is above the first segment's base, so no
entry means the first segment's base. The log end offset is the last batch's lastOffset + 1 (the active
segment's base when it is empty). ``__cluster_metadata`` is the KRaft log, trimmed by snapshots, not by log
retention: its rows are never deletable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from ..config import TopicConfig
from ..config.topic_configs import ConfigSource, TopicConfigs
from ..kafka_versions import LATEST, KafkaVersion
from ..log.checkpoints import LOG_START_OFFSET_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT
from .batch_summary import batch_summary
from .grouping_keys import LOG_DIR, PARTITION
from .loaded_offsets import OffsetSource, loaded_offsets, log_end_offset
from .local_rows import apply_in_arrow_on_driver
from .topic_config_table import topics_of

KRAFT_METADATA_TOPIC = "__cluster_metadata"

PLAN_FIELDS = [
    StructField("logDir", StringType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("baseOffset", LongType()),
    StructField("nextBaseOffset", LongType()),  # null for the last (active) segment
    StructField("size", LongType()),  # .log bytes (what the size rule counts)
    StructField("largestTimestamp", LongType()),  # ms; what the time rule compares
    StructField("largestTimestampSource", StringType()),  # batches | time_index | mtime | unknown
    StructField("isActive", BooleanType()),
    StructField("deletable", BooleanType()),
    StructField("rule", StringType()),  # log_start_offset | size | time | local_size | local_time; null if kept
    StructField("reason", StringType()),  # why it is kept; null if deletable
    StructField("requiresRemoteCopy", BooleanType()),  # tiered: deletable only once copied to remote storage
    StructField("timeExpired", BooleanType()),  # the segment's own time predicate; null if no time rule
    StructField("eligibleAtMs", LongType()),  # largestTimestamp + retention.ms + 1; null if no time rule
    # by when the broker has deleted the files of a segment the time rule deletes at eligibleAtMs: its next check
    # (log.retention.check.interval.ms; remote: remote.log.manager.task.interval.ms), then, local, the rename to
    # `.deleted` and file.delete.delay.ms; null if no time rule
    StructField("filesGoneByMs", LongType()),
    StructField("bytesReclaimed", LongType()),  # size if deletable, else 0
    # per partition, repeated on each of its rows
    StructField("logStartOffset", LongType()),  # as the broker loads it
    # checkpoint | first_segment (checkpoint file without an entry, as normal) | assumed_first_segment (no file)
    StructField("logStartOffsetSource", StringType()),
    StructField("highWatermark", LongType()),
    StructField("highWatermarkSource", StringType()),  # checkpoint | assumed_log_end_offset
    StructField("logEndOffset", LongType()),
    StructField("newLogStartOffset", LongType()),  # after the plan (tiered: the local log start offset)
    StructField("rollsActiveSegment", BooleanType()),  # the broker rolls a new empty segment first
    StructField("cleanupPolicy", StringType()),
    StructField("retentionMs", LongType()),  # the limit the time rule uses (local.retention.ms when tiered)
    StructField("retentionBytes", LongType()),  # the limit the size rule uses (local.retention.bytes when tiered)
    StructField("remoteStorage", BooleanType()),  # tiered storage active for this topic
    StructField("asOfMs", LongType()),
    # local: a segment of the log dir; remote: a remote log segment of a tiered partition (__remote_log_metadata),
    # planned by the topic's retention.ms/bytes over the whole log (:mod:`.remote_retention`)
    StructField("tier", StringType()),
    StructField("remoteLogSegmentId", StringType()),  # remote rows: the segment's id; null for local rows
    StructField("assumptions", ArrayType(StringType())),
]
PLAN_SCHEMA = StructType(PLAN_FIELDS)

# Columns that change with the configuration: the what-if run repeats them as whatIf<Name>.
WHAT_IF_COLUMNS = ["deletable", "rule", "reason", "requiresRemoteCopy", "timeExpired", "eligibleAtMs", "filesGoneByMs",
                   "bytesReclaimed", "newLogStartOffset", "rollsActiveSegment", "cleanupPolicy", "retentionMs",
                   "retentionBytes", "remoteStorage"]
WHAT_IF_SCHEMA = StructType(
    PLAN_FIELDS + [StructField("whatIf" + f.name[0].upper() + f.name[1:], f.dataType)
                   for f in PLAN_FIELDS if f.name in WHAT_IF_COLUMNS])

ASSUME_HW = "high watermark unknown (no replication-offset-checkpoint entry): assumed the log end offset"
ASSUME_HW_FILE = "high watermark unknown (no replication-offset-checkpoint file): assumed the log end offset"
ASSUME_LSO_FILE = ("log start offset unknown (no log-start-offset-checkpoint file): assumed the first segment's "
                   "base offset")
ASSUME_LEO = "active segment not in the batches given: log end offset estimated from the other segments"
ASSUME_MTIME = "no record timestamp in the segment: the time rule uses the .log file's mtime"
ASSUME_NO_TS = "no timestamp and no mtime: the time rule cannot apply to this segment"
ASSUME_REMOTE = "tiered storage: whether a segment is already in remote storage cannot be known offline"
ASSUME_COMPACT = "compact,delete: the cleaner may compact this log before applying retention; not simulated"
ASSUME_KRAFT = "__cluster_metadata is trimmed by KRaft snapshots, not by log retention"


@dataclass(frozen=True)
class RetentionParams:
    """What the plan needs from a TopicConfig (plain and picklable, shipped to the Python workers)."""

    delete: bool
    compact: bool
    retention_ms: int  # the time rule's limit (local when tiered with remote copy)
    retention_bytes: int  # the size rule's limit (local when tiered with remote copy)
    remote_log: bool  # UnifiedLog.remoteLogEnabled
    remote_copy: bool  # remoteLogEnabledAndRemoteCopyEnabled
    remote_retention_ms: int = -1  # the remote tier's limits: the topic's retention.ms/bytes
    remote_retention_bytes: int = -1
    kafka_version: KafkaVersion = LATEST  # whose remote retention rules (:mod:`.remote_retention`)
    # the timing of the deletions (filesGoneByMs): the broker's checks, and the topic's delay of a local delete
    check_interval_ms: int = 300_000  # log.retention.check.interval.ms
    remote_task_interval_ms: int = 30_000  # remote.log.manager.task.interval.ms
    file_delete_delay_ms: int = 60_000

    @classmethod
    def of(cls, config: TopicConfig, broker: TopicConfig | None = None) -> RetentionParams:
        """The parameters of a topic's ``config``; ``broker``: the broker's config (its check intervals)."""
        copy = config.remote_copy_enabled
        intervals = {} if broker is None else {
            "check_interval_ms": int(broker["log.retention.check.interval.ms"]),
            "remote_task_interval_ms": int(broker["remote.log.manager.task.interval.ms"])}
        return cls(
            delete=config.delete, compact=config.compact,
            retention_ms=config.local_retention_ms if copy else config.retention_ms,
            retention_bytes=config.local_retention_bytes if copy else config.retention_bytes,
            remote_log=config.remote_log_enabled, remote_copy=copy,
            remote_retention_ms=config.retention_ms, remote_retention_bytes=config.retention_bytes,
            kafka_version=config.kafka_version, file_delete_delay_ms=int(config["file.delete.delay.ms"]),
            **intervals)

    def files_gone_by(self, eligible_at_ms: int | None, tier: str = "local", active: bool = False) -> int | None:
        """By when the broker has deleted the files of a segment its time rule deletes from ``eligible_at_ms`` on:
        at its first check after that, a local segment's files renamed `.deleted` and deleted file.delete.delay.ms
        later (LocalLog.deleteSegmentFiles), a remote segment's deleted by the expiration task itself. A tiered
        partition's ``active`` segment is first rolled at that check, copied by the next copy task and deleted at
        the check after."""
        if eligible_at_ms is None:
            return None
        if tier == "remote":
            return eligible_at_ms + self.remote_task_interval_ms
        rolled = self.remote_task_interval_ms + self.check_interval_ms if active and self.remote_copy else 0
        return eligible_at_ms + self.check_interval_ms + rolled + self.file_delete_delay_ms

    @property
    def policy(self) -> str:
        return ",".join(p for p, on in (("compact", self.compact), ("delete", self.delete)) if on)


@dataclass(frozen=True)
class SegmentInput:
    base_offset: int
    size: int
    max_batch_timestamp: int | None = None  # max maxTimestamp of its batches
    max_indexed_timestamp: int | None = None  # last time index entry
    log_mtime_ms: int | None = None
    max_last_offset: int | None = None  # max lastOffset of its batches (None: no batches read)


def largest_timestamp(seg: SegmentInput) -> tuple[int | None, str]:
    """LogSegment.largestTimestamp offline: max timestamp so far if >= 0, else the .log mtime."""
    candidates = [(t, src) for t, src in ((seg.max_batch_timestamp, "batches"),
                                          (seg.max_indexed_timestamp, "time_index")) if t is not None and t >= 0]
    if candidates:
        return max(candidates, key=lambda c: c[0])
    if seg.log_mtime_ms is not None:
        return seg.log_mtime_ms, "mtime"
    return None, "unknown"


def plan_partition(topic: str, partition: int, segments: list[SegmentInput], params: RetentionParams,
                   as_of_ms: int, hw_checkpoint: int | None = None, lso_checkpoint: int | None = None, *,
                   hw_file: bool | None = None, lso_file: bool | None = None,
                   highest_copied: int | None = None) -> list[dict[str, Any]]:
    """The plan for one partition: one dict per segment, keys as :data:`PLAN_SCHEMA`.

    ``hw_checkpoint``/``lso_checkpoint``: the partition's entries in replication-offset-checkpoint and
    log-start-offset-checkpoint (None: no entry). ``hw_file``/``lso_file``: whether those files exist in the log
    dir (None: not known). A log-start-offset-checkpoint without an entry is normal (the broker writes entries
    only above the first segment's base); a missing file is stated as an assumption. ``highest_copied``: the
    partition's highest offset in remote storage (-1: nothing copied; None: its remote tier is not known).
    """
    from .tiered_storage import copied_to_remote

    segs = sorted(segments, key=lambda s: s.base_offset)
    n = len(segs)
    if n == 0:
        return []
    partition_notes: list[str] = []

    # Offsets as the broker loads them (LogLoader, UnifiedLog's constructor, updateHighWatermark).
    active = segs[-1]
    if active.max_last_offset is not None:
        leo = active.max_last_offset + 1
    else:
        leo = log_end_offset(active.base_offset, [s.max_last_offset for s in segs if s.max_last_offset is not None])
        if active.size > 0:
            partition_notes.append(ASSUME_LEO)
    loaded = loaded_offsets(segs[0].base_offset, leo, lso_checkpoint, hw_checkpoint, remote_log=params.remote_log,
                            log_start_file=lso_file)
    global_lso, local_lso, hw = loaded.log_start_offset, loaded.local_log_start_offset, loaded.high_watermark
    lso_source, hw_source = loaded.log_start_offset_source.retention_label, loaded.high_watermark_source.retention_label
    if loaded.log_start_offset_source is OffsetSource.ASSUMED_FIRST_SEGMENT:
        partition_notes.append(ASSUME_LSO_FILE)
    if loaded.high_watermark_source is OffsetSource.LOG_END_OFFSET:
        partition_notes.append(ASSUME_HW if hw_file else ASSUME_HW_FILE)
    if params.remote_log and highest_copied is None:
        partition_notes.append(ASSUME_REMOTE)
    if params.compact and params.delete:
        partition_notes.append(ASSUME_COMPACT)
    kraft = topic == KRAFT_METADATA_TOPIC
    if kraft:
        partition_notes.append(ASSUME_KRAFT)

    stamps = [largest_timestamp(s) for s in segs]

    def upper(j: int) -> int:
        return segs[j + 1].base_offset if j + 1 < n else leo

    deleted_by: list[str | None] = [None] * n
    remote_needed = [False] * n
    not_copied: set[int] = set()  # where a rule stopped: the segment is not in remote storage yet
    state = {"first": 0, "rolled": False, "should_roll": False}
    lso_rule_offset = local_lso if params.remote_log else global_lso

    def walk(rule: str, predicate: Callable[[int], bool], needs_copy: Callable[[int], bool]) -> None:
        """deletableSegments(predicate) then deleteSegments: mark the deleted prefix."""
        if state["rolled"]:
            return  # only the new, empty active segment is left: never deletable
        j = state["first"]
        while j < n:
            last = j == n - 1
            ok = hw >= upper(j) and predicate(j)
            if ok and params.remote_log and last and segs[j].size > 0:
                state["should_roll"] = True  # tiered: roll the active segment, eligible after its copy
            if not ok or (last and segs[j].size == 0):
                break
            copy = needs_copy(j)
            if copy and last:
                break  # the active segment is never in remote storage
            if copy and highest_copied is not None and not copied_to_remote(upper(j), highest_copied):
                not_copied.add(j)
                break  # isSegmentEligibleForDeletion: not in remote storage yet
            deleted_by[j], remote_needed[j] = rule, copy
            j += 1
        if j > state["first"]:
            state["first"] = j
            if j == n:
                state["rolled"] = True  # all gone: the broker rolls a new empty segment at the log end offset

    def no_copy(_j: int) -> bool:
        return False

    def copy_unless_below_start(j: int) -> bool:
        # isSegmentEligibleForDeletion: in remote storage, or the log start offset passed the next segment
        return params.remote_copy and not (j + 1 < n and global_lso >= segs[j + 1].base_offset)

    if not kraft:
        walk("log_start_offset", lambda j: j + 1 < n and segs[j + 1].base_offset <= lso_rule_offset,
             copy_unless_below_start)
        if params.delete:
            limit = params.retention_bytes
            size = sum(s.size for s in segs[state["first"]:]) if not state["rolled"] else 0
            if limit >= 0 and size >= limit:
                diff = [size - limit]

                def size_predicate(j: int) -> bool:
                    if diff[0] - segs[j].size >= 0:
                        diff[0] -= segs[j].size
                        return True
                    return False

                walk("local_size" if params.remote_copy else "size", size_predicate, copy_unless_below_start)
            if params.retention_ms >= 0:
                walk("local_time" if params.remote_copy else "time",
                     lambda j: stamps[j][0] is not None and as_of_ms - stamps[j][0] > params.retention_ms,
                     copy_unless_below_start)

    first_kept = state["first"]
    if state["rolled"]:
        new_lso = max(local_lso, leo)
    else:
        new_lso = max(local_lso, segs[first_kept].base_offset)
    time_rule = params.delete and params.retention_ms >= 0 and not kraft
    rows = []
    for j, seg in enumerate(segs):
        ts, ts_source = stamps[j]
        notes = list(partition_notes)
        if ts_source == "mtime":
            notes.append(ASSUME_MTIME)
        elif ts_source == "unknown":
            notes.append(ASSUME_NO_TS)
        expired = (ts is not None and as_of_ms - ts > params.retention_ms) if time_rule else None
        eligible_at = ts + params.retention_ms + 1 if time_rule and ts is not None else None
        deletable = deleted_by[j] is not None
        rows.append({
            "topic": topic, "partition": partition, "baseOffset": seg.base_offset,
            "nextBaseOffset": segs[j + 1].base_offset if j + 1 < n else None,
            "size": seg.size, "largestTimestamp": ts, "largestTimestampSource": ts_source,
            "isActive": j == n - 1, "deletable": deletable, "rule": deleted_by[j],
            "reason": None if deletable else "not_copied_to_remote" if j in not_copied else _kept_reason(
                j, n, segs, params, hw, upper(j), first_kept, kraft, expired, lso_rule_offset),
            "requiresRemoteCopy": remote_needed[j], "timeExpired": expired,
            "eligibleAtMs": eligible_at, "filesGoneByMs": params.files_gone_by(eligible_at, active=j == n - 1),
            "bytesReclaimed": seg.size if deletable else 0,
            "logStartOffset": global_lso, "logStartOffsetSource": lso_source,
            "highWatermark": hw, "highWatermarkSource": hw_source, "logEndOffset": leo,
            "newLogStartOffset": new_lso, "rollsActiveSegment": bool(state["rolled"] or state["should_roll"]),
            "cleanupPolicy": params.policy, "retentionMs": params.retention_ms,
            "retentionBytes": params.retention_bytes, "remoteStorage": params.remote_log, "asOfMs": as_of_ms,
            "tier": "local", "remoteLogSegmentId": None, "assumptions": notes,
        })
    return rows


def _kept_reason(j: int, n: int, segs: list[SegmentInput], params: RetentionParams, hw: int, upper: int,
                 first_kept: int, kraft: bool, expired: bool | None, lso_rule_offset: int) -> str:
    """Why segment j survives: the first condition of deletableSegments it fails, or an earlier kept one."""
    last = j == n - 1
    below_start = j + 1 < n and segs[j + 1].base_offset <= lso_rule_offset
    if kraft:
        return "kraft_metadata_log"
    if hw < upper:
        return "above_high_watermark"
    if last and segs[j].size == 0:
        return "last_empty_segment"
    if j > first_kept and (below_start or expired):
        return "prefix_rule"  # would qualify, but an earlier segment is kept
    if not params.delete:
        return "active_segment" if last else "policy_compact"
    if params.remote_log and last:
        return "active_segment"  # tiered: the broker rolls it; deletable after its copy to remote storage
    if params.retention_ms >= 0:
        return "within_retention"
    if params.retention_bytes >= 0:
        return "within_size"
    return "no_retention_limit"


# ------------------------------------------------------------------------------------------------ Spark


def _ok(df: DataFrame) -> DataFrame:
    return df.where(F.col("problem").isNull()) if "problem" in df.columns else df


def _plan_input(segments: DataFrame, batches: DataFrame | None, partition_files: DataFrame,
                summary: DataFrame | None, remote_segments: DataFrame | None) -> DataFrame:
    """The plan's input: each partition's rows of the views it reads, one struct column each (null on the other
    kinds' rows; :func:`plan_records` joins them in the task that plans the partition): its live segments
    (``segment``), their batches' aggregates (``summary``), its partition files' types and offsets (``file``: the
    checkpoints' entries, and whether the partition has any file) and, with a remote tier, its highest offset in
    remote storage (``copied``). Grouped by partition in one shuffle, where joining them in Spark took one per
    join."""
    seg = _ok(segments)
    if "status" in seg.columns:
        seg = seg.where(F.col("status") == "live")
    parts = [
        seg.select(*PARTITION, F.struct("baseOffset", F.col("logSize").alias("size"),
                                        F.unix_millis("logModified").alias("logMtimeMs"),
                                        "maxIndexedTimestamp").alias("segment")),
        (batch_summary(batches) if summary is None else summary).select(*PARTITION, F.struct(
            F.col("segmentBaseOffset").alias("baseOffset"), F.col("largestTimestamp").alias("maxBatchTimestamp"),
            F.col("lastOffset").alias("maxLastOffset")).alias("summary")),
        _ok(partition_files).select(*PARTITION, F.struct("fileType", "offset").alias("file")),
    ]
    if remote_segments is not None:
        from .tiered_storage import highest_copied_offsets

        # nullable in the struct (it is never null as computed, but is on the other kinds' rows): collected as
        # Arrow, a struct's field declared non-null cannot hold them
        copied = F.col("highestCopiedOffset")
        parts.append(highest_copied_offsets(segments, partition_files, remote_segments)
                     .select(*PARTITION, F.struct(F.when(copied.isNotNull(), copied).alias("highestCopiedOffset"))
                             .alias("copied")))
    out = parts[0]
    for part in parts[1:]:
        out = out.unionByName(part, allowMissingColumns=True)
    return out


def plan_records(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One partition's input rows (:func:`_plan_input`'s) joined: one record per live segment (with each of its
    batch summaries, as a left join on the base offset would give), with the partition's checkpoint entries
    (``hwCheckpoint``/``lsoCheckpoint``: replication-offset-checkpoint's and log-start-offset-checkpoint's offset for
    it, the largest; ``hwFile``/``lsoFile``: whether it has a row of that file, None when it has no partition file
    at all) and ``highestCopiedOffset``."""
    segments = [r["segment"] for r in rows if r.get("segment") is not None]
    if not segments:
        return []
    by_base: dict[int, list[dict]] = {}
    for r in rows:
        if r.get("summary") is not None:
            by_base.setdefault(r["summary"]["baseOffset"], []).append(r["summary"])
    files = [r["file"] for r in rows if r.get("file") is not None]
    copied = [r["copied"]["highestCopiedOffset"] for r in rows if r.get("copied") is not None] or [None]

    def checkpoint(file_type: str) -> tuple[int | None, bool | None]:
        offsets = [f["offset"] for f in files if f["fileType"] == file_type and f["offset"] is not None]
        present = any(f["fileType"] == file_type for f in files) if any(f["fileType"] is not None for f in files) \
            else None
        return (max(offsets) if offsets else None), present

    (hw, hw_file), (lso, lso_file) = checkpoint(REPLICATION_OFFSET_CHECKPOINT), checkpoint(LOG_START_OFFSET_CHECKPOINT)
    key = {LOG_DIR: rows[0][LOG_DIR], "topic": rows[0]["topic"], "partition": rows[0]["partition"]}
    empty = {"maxBatchTimestamp": None, "maxLastOffset": None}
    return [key | s | {c: (b or empty)[c] for c in empty} | {"hwCheckpoint": hw, "hwFile": hw_file,
                                                              "lsoCheckpoint": lso, "lsoFile": lso_file,
                                                              "highestCopiedOffset": c}
            for s in segments for b in by_base.get(s["baseOffset"], [None]) for c in copied]


def retention_params(configs: ConfigSource, topics: list[str]) -> dict[str, RetentionParams]:
    """The retention rules' parameters per topic, from the one resolver of effective configs."""
    resolved = TopicConfigs.of(configs)
    return {topic: RetentionParams.of(resolved[topic], resolved["-"]) for topic in topics}


PartitionPlanner = Callable[[list[dict[str, Any]], int, bool], list[dict[str, Any]]]


def partition_planner(segments: DataFrame, batches: DataFrame | None, partition_files: DataFrame,
                      configs: ConfigSource, what_if_configs: ConfigSource | None = None, *,
                      summary: DataFrame | None = None, remote_segments: DataFrame | None = None,
                      topics: Sequence[str] | None = None) -> tuple[DataFrame, PartitionPlanner]:
    """The plan's input rows (:func:`_plan_input`'s, to be grouped by log dir, topic and partition) and the function
    that plans one partition's group of them: ``planner(records, as_of_ms, what_if)``, given the group's rows joined
    by :func:`plan_records`, returns :func:`plan_partition`'s rows under the current configs, or under
    ``what_if_configs`` when ``what_if``. Configs are resolved here, on the driver, so a bad config fails by name
    before any task; the planner is plain data and picklable.
    ``summary``: the batches' :func:`~.batch_summary.batch_summary` when the caller has it (``batches`` is then
    not read). ``remote_segments``: the ``remote_log_segments`` view (a tiered partition's local segments are then
    deletable only once copied). ``topics``: the segments view's (:func:`~.topic_config_table.topics_of`) when the
    caller has them (else a query here)."""
    inputs = _plan_input(segments, batches, partition_files, summary, remote_segments)
    topics = topics_of(segments) if topics is None else topics
    params = {False: retention_params(configs, topics)}
    if what_if_configs is not None:
        params[True] = retention_params(what_if_configs, topics)

    def planner(records: list[dict[str, Any]], as_of_ms: int, what_if: bool) -> list[dict[str, Any]]:
        first = records[0]
        topic, partition = first["topic"], first["partition"]
        segs = [SegmentInput(r["baseOffset"], r["size"] or 0, r["maxBatchTimestamp"], r["maxIndexedTimestamp"],
                             r["logMtimeMs"], r["maxLastOffset"]) for r in records]
        rows = plan_partition(topic, partition, segs, params[what_if][topic], int(as_of_ms), first["hwCheckpoint"],
                              first["lsoCheckpoint"], hw_file=first["hwFile"], lso_file=first["lsoFile"],
                              highest_copied=first["highestCopiedOffset"])
        return [{LOG_DIR: first[LOG_DIR], **row} for row in rows]

    return inputs, planner


def _run(segments: DataFrame, batches: DataFrame | None, partition_files: DataFrame, configs, as_of_ms: int,
         what_if_configs=None, summary: DataFrame | None = None, remote_segments: DataFrame | None = None,
         topics: Sequence[str] | None = None) -> DataFrame:
    # without a remote segment, no partition has a highest copied offset: the plan's input leaves the remote tier out
    tiered = has_remote_tier(remote_segments)
    topics = topics_of(segments) if topics is None else topics
    inputs, planner = partition_planner(segments, batches, partition_files, configs, what_if_configs,
                                        summary=summary, remote_segments=remote_segments if tiered else None,
                                        topics=topics)
    what_if = what_if_configs is not None
    schema = WHAT_IF_SCHEMA if what_if else PLAN_SCHEMA

    def plan_group(table):
        # Arrow in and out (not pandas): nullable longs stay exact int64s.
        import pyarrow as pa

        from ..schemas import arrow_schema

        records = plan_records(table.to_pylist())
        if not records:  # a partition with files and no live segment
            return arrow_schema(schema).empty_table()
        rows = planner(records, as_of_ms, False)
        if what_if:
            for row, alt in zip(rows, planner(records, as_of_ms, True), strict=True):
                for c in WHAT_IF_COLUMNS:
                    row["whatIf" + c[0].upper() + c[1:]] = alt[c]
        return pa.Table.from_pylist(rows, schema=arrow_schema(schema))

    local = apply_in_arrow_on_driver(inputs, PARTITION, plan_group, schema)  # a few rows a segment: no shuffle
    if not tiered:
        return local
    from .remote_retention import remote_plan

    params = {False: retention_params(configs, topics)}
    if what_if:
        params[True] = retention_params(what_if_configs, topics)
    return local.unionByName(remote_plan(local, remote_segments, segments, partition_files, params, as_of_ms,
                                         schema))


def has_remote_tier(remote_segments: DataFrame | None) -> bool:
    """Whether a ``remote_log_segments`` view has a segment (one small query): then the plans have remote rows."""
    # take(1) of one column: what every engine answers (the local engine's Spark Connect too)
    return remote_segments is not None and bool(remote_segments.where(F.col("problem").isNull())
                                                .select("topic").take(1))


def retention_plan(segments: DataFrame, batches: DataFrame | None, partition_files: DataFrame,
                   configs: ConfigSource, as_of_ms: int, *, summary: DataFrame | None = None,
                   remote_segments: DataFrame | None = None, topics: Sequence[str] | None = None) -> DataFrame:
    """One row per live segment (:data:`PLAN_SCHEMA`): what the broker's retention deletes at ``as_of_ms``.

    ``configs``: the topics' effective configs, a :class:`~kafkalog_spark.config.TopicConfigs` (or what its
    ``of`` takes: a function topic -> TopicConfig, a dict whose missing topics get Kafka's defaults, None). The
    per-partition results (log start/end offsets, high watermark, new log start offset) are repeated on each
    of the partition's rows;
    :func:`partition_summary` gives one row per partition. ``batches`` may be restricted (e.g. to the active
    segments): largest timestamps then come from the time indexes. ``summary``: the batches'
    :func:`~.batch_summary.batch_summary` when the caller has it (``batches`` is then not read).
    ``remote_segments``: the ``remote_log_segments`` view, which says which local segments of a tiered partition
    are copied (without it, that is an assumption of the plan). ``topics``: the segments view's
    (:func:`~.topic_config_table.topics_of`) when the caller has them.
    """
    return _run(segments, batches, partition_files, configs, as_of_ms, summary=summary,
                remote_segments=remote_segments, topics=topics)


def retention_what_if(segments: DataFrame, batches: DataFrame, partition_files: DataFrame,
                      configs: ConfigSource, what_if_configs: ConfigSource, as_of_ms: int, *,
                      remote_segments: DataFrame | None = None) -> DataFrame:
    """The current plan and the plan under ``what_if_configs`` side by side (:data:`WHAT_IF_SCHEMA`): the plan's
    columns plus ``whatIfDeletable``, ``whatIfRule``, ``whatIfReason``, ... for the alternative configuration."""
    return _run(segments, batches, partition_files, configs, as_of_ms, what_if_configs,
                remote_segments=remote_segments)


def partition_summary(plan: DataFrame) -> DataFrame:
    """One row per partition of a plan (or a what-if plan): segment counts, bytes and the offsets."""
    aggs = [
        F.count("*").alias("segments"),
        F.sum(F.col("deletable").cast("int")).alias("deletableSegments"),
        F.sum("size").alias("bytes"),
        F.sum("bytesReclaimed").alias("bytesReclaimed"),
        F.first("logStartOffset").alias("logStartOffset"),
        F.first("highWatermark").alias("highWatermark"),
        F.first("logEndOffset").alias("logEndOffset"),
        F.first("newLogStartOffset").alias("newLogStartOffset"),
        F.first("rollsActiveSegment").alias("rollsActiveSegment"),
    ]
    if "whatIfDeletable" in plan.columns:
        aggs += [F.sum(F.col("whatIfDeletable").cast("int")).alias("whatIfDeletableSegments"),
                 F.sum("whatIfBytesReclaimed").alias("whatIfBytesReclaimed"),
                 F.first("whatIfNewLogStartOffset").alias("whatIfNewLogStartOffset")]
    return plan.groupBy(*PARTITION).agg(*aggs)
