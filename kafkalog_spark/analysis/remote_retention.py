"""Which remote segments of a tiered partition the broker's retention deletes: RemoteLogManager's expiration task
(``RLMExpirationTask.cleanupExpiredRemoteLogSegments`` and its RemoteLogRetentionHandler, Kafka 3.9.2 and 4.x),
offline.

The partition's leader lists its remote segments epoch by epoch of its leader epoch lineage (the
leader-epoch-checkpoint, epochs without records left out: ``buildFilteredLeaderEpochMap``), oldest first, and for
each segment not already deleted:

- it goes if it ends below the log start offset and was written in epochs up to the lineage's first (no log start
  offset change);
- else, if it fits the lineage (:func:`within_leader_epochs`), it goes if its max timestamp is at or before
  as of - ``retention.ms`` (4.x: before; off when ``retention.ms`` < 0 or as of - retention.ms < 0), or if it fits
  in what the log exceeds ``retention.bytes`` by (the size of the remote segments in the lineage, COPY_FINISHED
  and, in 3.9, DELETE_STARTED ones, plus ``onlyLocalLogSegmentsSize``, the local segments whose base offset is at
  or above the highest offset in remote storage); a time deletion takes its size off that excess too;
- the walk stops at the first segment that fits the lineage and is kept (one outside it is passed over).

4.x deletes again a segment whose deletion started and did not finish. The log start offset rises to the largest
end offset + 1 of the time and size deletions. Then the segments written only in epochs before the lineage's
earliest go too (after an unclean election). ``local.retention.*`` plays no part: :mod:`.retention` applies it to
the local segments. Offline, no copy is taken to be in progress at the time (the broker stops the walk at a segment
its copy task is uploading at that moment).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ..kafka_versions import KafkaVersion
from ..log.checkpoints import LEADER_EPOCH_CHECKPOINT


@dataclass(frozen=True)
class RemoteSegmentInput:
    segment_id: str
    start_offset: int
    end_offset: int
    size: int
    max_timestamp: int
    state: str  # RemoteLogSegmentState's name
    leader_epochs: Mapping[int, int]  # epoch -> its first offset in the segment


def filtered_epochs(epochs: Mapping[int, int]) -> dict[int, int]:
    """buildFilteredLeaderEpochMap: the epochs with records (an epoch starting where the next one starts has none)."""
    ordered = sorted(epochs.items())
    return {e: o for i, (e, o) in enumerate(ordered) if i + 1 == len(ordered) or ordered[i + 1][1] != o}


def within_leader_epochs(segment: RemoteSegmentInput, log_end_offset: int, lineage: Mapping[int, int]) -> bool:
    """RemoteLogManager.isRemoteSegmentWithinLeaderEpochs: the segment's epochs (from the lineage's first on) are a
    stretch of ``lineage`` (filtered, epoch -> start offset), and it ends below the log end offset."""
    own = filtered_epochs(segment.leader_epochs)
    if not own or not lineage:
        return False
    known = sorted(lineage)
    last = max(own)
    if last < known[0] or last > known[-1]:
        return False
    first = min((e for e in own if e >= known[0]), default=None)
    if first is None:
        return False

    def higher(m: Mapping[int, int], epoch: int) -> tuple[int, int] | None:
        later = [e for e in sorted(m) if e > epoch]
        return (later[0], m[later[0]]) if later else None

    for epoch, offset in sorted(own.items()):
        if epoch < first:
            continue
        if epoch not in lineage:
            return False
        if epoch == first and any(e < epoch for e in known) and offset < lineage[epoch]:
            return False
        if epoch == last:
            nxt = higher(lineage, epoch)
            if nxt is not None and segment.end_offset > nxt[1] - 1:
                return False
        if epoch != last and higher(lineage, epoch) != higher(own, epoch):
            return False
    return segment.end_offset < log_end_offset


def remote_eligible_at(max_timestamp: int, retention_ms: int, kafka_version: KafkaVersion) -> int | None:
    """The first time at which the time rule deletes a remote segment of ``max_timestamp``: RLMExpirationTask's
    ``maxTimestamp <= now - retention.ms`` in 3.9, ``<`` in 4.x (None: no time rule)."""
    if retention_ms < 0:
        return None
    return max_timestamp + retention_ms + (1 if kafka_version is KafkaVersion.V4 else 0)


def plan_remote_partition(segments: Sequence[RemoteSegmentInput], retention_ms: int, retention_bytes: int,
                          log_start_offset: int, only_local_size: int, lineage: Mapping[int, int],
                          log_end_offset: int, as_of_ms: int,
                          kafka_version: KafkaVersion = KafkaVersion.V4) -> list[dict[str, Any]]:
    """The plan for one partition's remote segments: one dict per segment (``remoteLogSegmentId``, ``deletable``,
    ``rule``: ``remote_log_start_offset``, ``remote_time``, ``remote_size``, ``remote_delete_retry`` (4.x) or
    ``remote_earlier_epochs``; ``reason`` when kept; ``newLogStartOffset``). ``lineage``: the leader epoch
    checkpoint's epoch -> start offset; ``only_local_size``: the local segments' bytes not in remote storage."""
    v4 = kafka_version is KafkaVersion.V4
    epochs = filtered_epochs(lineage)
    ordered = sorted(segments, key=lambda s: (s.start_offset, s.end_offset))
    live = [s for s in ordered if s.state != "DELETE_SEGMENT_FINISHED"]
    valid = {s.segment_id: within_leader_epochs(s, log_end_offset, epochs) for s in live}
    breach = None
    if retention_bytes >= 0:
        counted = ("COPY_SEGMENT_FINISHED",) if v4 else ("COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED")
        total = only_local_size + sum(s.size for s in live if s.state in counted and valid[s.segment_id])
        estimate = only_local_size + sum(s.size for s in live if s.state == "COPY_SEGMENT_FINISHED")
        if total > retention_bytes and not (v4 and estimate <= retention_bytes):
            breach = total - retention_bytes
    time_rule = retention_ms > -1 and as_of_ms - retention_ms >= 0  # cleanupUntilMs, off while negative
    first_epoch = min(epochs) if epochs else None
    decided: dict[str, tuple[bool, str | None, str | None]] = {}
    new_start = log_start_offset
    walking = True
    for s in live:
        if not walking:
            decided[s.segment_id] = (False, None, "prefix_rule")
            continue
        if v4 and s.state == "DELETE_SEGMENT_STARTED":
            decided[s.segment_id] = (True, "remote_delete_retry", None)
            continue
        rule = None
        if first_epoch is not None and all(e <= first_epoch for e in s.leader_epochs) \
                and s.end_offset < log_start_offset:
            rule = "remote_log_start_offset"
        elif valid[s.segment_id]:
            expired = time_rule and as_of_ms >= remote_eligible_at(s.max_timestamp, retention_ms, kafka_version)
            if expired:
                rule = "remote_time"
                if breach is not None:
                    breach = max(0, breach - s.size)
            elif breach is not None and breach > 0 and breach - s.size >= 0:
                breach -= s.size
                rule = "remote_size"
            if rule is not None:
                new_start = max(new_start, s.end_offset + 1)
        if rule is not None:
            decided[s.segment_id] = (True, rule, None)
        else:
            valid_kept = valid[s.segment_id]
            decided[s.segment_id] = (False, None, "within_retention" if valid_kept else "outside_leader_epoch_lineage")
            walking = not valid_kept
    earliest = min(lineage) if lineage else None
    for s in live:  # the epochs before the lineage's earliest (an unclean election): their segments go
        if not decided[s.segment_id][0] and earliest is not None and s.leader_epochs \
                and all(e < earliest for e in s.leader_epochs):
            decided[s.segment_id] = (True, "remote_earlier_epochs", None)
    return [{"remoteLogSegmentId": s.segment_id, "startOffset": s.start_offset, "endOffset": s.end_offset,
             "size": s.size, "maxTimestamp": s.max_timestamp, "deletable": decided[s.segment_id][0],
             "rule": decided[s.segment_id][1], "reason": decided[s.segment_id][2], "newLogStartOffset": new_start}
            for s in live]


REMOTE_UNCONFIGURED = ("remote segments exist but the topic's configs do not enable remote storage: planned with "
                       "its retention.ms/bytes all the same")


def _row(s: dict[str, Any], first: dict[str, Any], planned: dict[str, Any], p, as_of_ms: int,
         notes: list[str]) -> dict[str, Any]:
    """A plan row (the local plan's columns) of a remote segment, under the retention parameters ``p``."""
    retention_ms, retention_bytes = p.remote_retention_ms, p.remote_retention_bytes
    expired = planned["rule"] == "remote_time" if retention_ms > -1 else None
    eligible_at = remote_eligible_at(s["maxTimestamp"], retention_ms, p.kafka_version)
    return {"logDir": first["logDir"], "topic": first["topic"], "partition": first["partition"],
            "baseOffset": s["startOffset"], "nextBaseOffset": s["endOffset"] + 1, "size": s["segmentSizeInBytes"],
            "largestTimestamp": s["maxTimestamp"], "largestTimestampSource": "remote_metadata", "isActive": False,
            "deletable": planned["deletable"], "rule": planned["rule"], "reason": planned["reason"],
            "requiresRemoteCopy": False, "timeExpired": expired,
            "eligibleAtMs": eligible_at, "filesGoneByMs": p.files_gone_by(eligible_at, "remote"),
            "bytesReclaimed": s["segmentSizeInBytes"] if planned["deletable"] else 0,
            "logStartOffset": first["logStartOffset"], "logStartOffsetSource": first["logStartOffsetSource"],
            "highWatermark": first["highWatermark"], "highWatermarkSource": first["highWatermarkSource"],
            "logEndOffset": first["logEndOffset"], "newLogStartOffset": planned["newLogStartOffset"],
            "rollsActiveSegment": False, "cleanupPolicy": first["cleanupPolicy"], "retentionMs": retention_ms,
            "retentionBytes": retention_bytes, "remoteStorage": True, "asOfMs": as_of_ms, "tier": "remote",
            "remoteLogSegmentId": s["remoteLogSegmentId"], "assumptions": notes}


def remote_inputs(local_plan: DataFrame, remote_segments: DataFrame, segments: DataFrame,
                  partition_files: DataFrame) -> DataFrame:
    """The remote segments of the partitions of ``local_plan`` (the local rows of a retention plan) that the
    ``remote_log_segments`` view names, one row each, with their partition's log start and end offsets,
    ``_onlyLocal`` (onlyLocalLogSegmentsSize: the local segments not in remote storage, base offset >= its highest
    offset) and ``_lineage`` (the leader-epoch-checkpoint's entries): what :func:`remote_planner` plans from."""
    from .grouping_keys import PARTITION
    from .tiered_storage import highest_copied_offsets, matched_remote, one_replica, remote_partitions

    live = segments.where(F.col("problem").isNull() & (F.col("status") == "live"))
    matched = (matched_remote(live, partition_files, remote_partitions(remote_segments))
               .where(F.col("_remoteTopicId").isNotNull()).select(*PARTITION, F.col("_remoteTopicId").alias("topicId")))
    remote = one_replica(remote_segments).drop("logDir").join(matched, ["topicId", "topic", "partition"])
    copied = highest_copied_offsets(segments, partition_files, remote_segments)
    not_copied = F.col("baseOffset") >= F.coalesce(F.col("highestCopiedOffset"), F.lit(-1))
    info = (local_plan.join(copied, PARTITION, "left").groupBy(*PARTITION).agg(
        *[F.first(c).alias(c) for c in ("logStartOffset", "logStartOffsetSource", "highWatermark",
                                         "highWatermarkSource", "logEndOffset", "cleanupPolicy")],
        F.coalesce(F.sum(F.when(not_copied, F.col("size"))), F.lit(0)).alias("_onlyLocal")))
    lineage = (partition_files.where(F.col("problem").isNull() & (F.col("fileType") == LEADER_EPOCH_CHECKPOINT))
               .groupBy(*PARTITION).agg(F.collect_list(F.struct("epoch", "startOffset")).alias("_lineage")))
    return remote.join(info, PARTITION).join(lineage, PARTITION, "left")


def remote_planner(records: list[dict[str, Any]]):
    """For one partition's rows of :func:`remote_inputs`: ``plan(params, as_of_ms)``, its plan rows (the local
    plan's columns) under one topic's retention parameters."""
    first = records[0]
    epochs = {e["epoch"]: e["startOffset"] for e in first["_lineage"] or []}
    segs = [RemoteSegmentInput(r["remoteLogSegmentId"], r["startOffset"], r["endOffset"], r["segmentSizeInBytes"],
                               r["maxTimestamp"], r["state"],
                               {e["leaderEpoch"]: e["offset"] for e in r["segmentLeaderEpochs"] or []})
            for r in records]
    by_id = {r["remoteLogSegmentId"]: r for r in records}

    def plan(p, as_of_ms: int) -> list[dict[str, Any]]:
        notes = [] if p.remote_log else [REMOTE_UNCONFIGURED]
        rows = plan_remote_partition(segs, p.remote_retention_ms, p.remote_retention_bytes, first["logStartOffset"],
                                     first["_onlyLocal"], epochs, first["logEndOffset"], as_of_ms, p.kafka_version)
        return [_row(by_id[x["remoteLogSegmentId"]], first, x, p, as_of_ms, notes) for x in rows]
    return plan


def remote_plan(local_plan: DataFrame, remote_segments: DataFrame, segments: DataFrame, partition_files: DataFrame,
                params: Mapping[bool, Mapping[str, Any]], as_of_ms: int, schema: StructType) -> DataFrame:
    """The remote tier's rows of the retention plan (``schema``: the local plan's, what-if columns included when
    ``params`` has the what-if's, under ``True``): each remote segment of a partition of ``local_plan`` that the
    ``remote_log_segments`` view names. ``params``: topic -> its retention parameters (``remote_retention_ms``,
    ``remote_retention_bytes``, ``remote_log``, ``kafka_version``), current (``False``) and what-if (``True``)."""
    from .grouping_keys import PARTITION

    what_if = True in params
    what_if_columns = [f.name for f in schema.fields if f.name.startswith("whatIf")]

    def plan_group(table):
        import pyarrow as pa

        from ..schemas import arrow_schema

        records = table.to_pylist()
        plan, topic = remote_planner(records), records[0]["topic"]
        rows = plan(params[False][topic], as_of_ms)
        if what_if:
            for row, alt in zip(rows, plan(params[True][topic], as_of_ms), strict=True):
                for name in what_if_columns:
                    row[name] = alt[name[6].lower() + name[7:]]
        return pa.Table.from_pylist(rows, schema=arrow_schema(schema))

    inputs = remote_inputs(local_plan, remote_segments, segments, partition_files)
    return inputs.groupBy(*PARTITION).applyInArrow(plan_group, schema=schema)
