"""What `__remote_log_metadata` says, as a broker's TopicBasedRemoteLogMetadataManager loads it: per tiered
partition, its remote log segments (RemoteLogSegmentMetadata) and their states.

The manager's consumer replays each metadata partition in offset order into a RemoteLogMetadataCache per user
partition (RemotePartitionMetadataStore):

- RemoteLogSegmentMetadataRecord (state COPY_SEGMENT_STARTED): a segment being copied; ``addCopyInProgressSegment``.
- RemoteLogSegmentMetadataUpdateRecord: the segment's next state, if it is a valid transition
  (RemoteLogSegmentState.isValidTransition: STARTED -> FINISHED or DELETE_SEGMENT_STARTED, FINISHED ->
  DELETE_SEGMENT_STARTED, DELETE_SEGMENT_STARTED -> DELETE_SEGMENT_FINISHED); DELETE_SEGMENT_FINISHED removes it
  from the cache (its remote files are gone). An update of an unknown segment, or an invalid transition, is ignored
  as the manager ignores it (it logs the error), and said here.
- RemotePartitionDeleteMetadataRecord: the partition's deletion (DELETE_PARTITION_MARKED, _STARTED, _FINISHED);
  FINISHED drops its cache.

Every segment the cache holds is a row, with its latest state; a COPY_SEGMENT_FINISHED segment is the one the
broker serves fetches from (``isCopied``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..format.internal_topics import REMOTE_PARTITION_DELETE_STATES as PARTITION_DELETE_STATES
from ..format.internal_topics import REMOTE_SEGMENT_STATES as SEGMENT_STATES
from ..format.message_json import kafka_uuid
from .internal_records import InternalRecord

_VALID = {0: {1, 2}, 1: {2}, 2: {3}, 3: set()}  # RemoteLogSegmentState.isValidTransition
COPY_SEGMENT_FINISHED = 1  # the state a broker serves fetches from


@dataclass
class RemoteLogSegmentMetadata:
    segment_id: str
    topic_id: str
    topic: str
    partition: int
    start_offset: int
    end_offset: int
    broker_id: int
    max_timestamp_ms: int
    event_timestamp_ms: int  # of the latest event (the state's)
    leader_epochs: dict[int, int]  # leader epoch -> its first offset in the segment
    size: int
    state: int
    copy_started_ms: int
    txn_index_empty: bool | None
    metadata_offset: int  # the offset in __remote_log_metadata of the latest event applied
    notes: list[str] = field(default_factory=list)


@dataclass
class RemoteLogMetadataCache:
    """One user partition's remote segments, by segment id, and its deletion state (None: not being deleted)."""

    segments: dict[str, RemoteLogSegmentMetadata] = field(default_factory=dict)
    delete_state: int | None = None


def _partition_key(v: dict[str, Any]) -> tuple[str, str, int]:
    tp = v["TopicIdPartition"]
    return kafka_uuid(tp["Id"]), tp["Name"], tp["Partition"]


def replay(records: list[InternalRecord]) -> tuple[dict[tuple[str, str, int], RemoteLogMetadataCache], list[str]]:
    """The caches of one metadata partition's records (in offset order), by (topic id, topic, partition); and what
    the manager would have logged as an error and ignored."""
    caches: dict[tuple[str, str, int], RemoteLogMetadataCache] = {}
    ignored: list[str] = []
    for r in records:
        if r.decoded.error is not None or r.control_type is not None:
            continue
        kind, v = r.decoded.key_type, r.decoded.value
        if kind == "REMOTE_LOG_SEGMENT_METADATA_RECORD":
            key = _partition_key(v["RemoteLogSegmentId"])
            seg_id = kafka_uuid(v["RemoteLogSegmentId"]["Id"])
            state = v["RemoteLogSegmentState"]
            if state != 0:  # addCopyInProgressSegment accepts COPY_SEGMENT_STARTED only
                ignored.append(f"offset {r.offset}: segment {seg_id} added in state {SEGMENT_STATES[state]}")
                continue
            caches.setdefault(key, RemoteLogMetadataCache()).segments[seg_id] = RemoteLogSegmentMetadata(
                seg_id, key[0], key[1], key[2], v["StartOffset"], v["EndOffset"], v["BrokerId"], v["MaxTimestampMs"],
                v["EventTimestampMs"], {e["LeaderEpoch"]: e["Offset"] for e in v["SegmentLeaderEpochs"]},
                v["SegmentSizeInBytes"], state, v["EventTimestampMs"], v.get("TxnIndexEmpty"), r.offset)
        elif kind == "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD":
            key = _partition_key(v["RemoteLogSegmentId"])
            seg_id = kafka_uuid(v["RemoteLogSegmentId"]["Id"])
            segment = caches.get(key, RemoteLogMetadataCache()).segments.get(seg_id)
            state = v["RemoteLogSegmentState"]
            if segment is None:
                ignored.append(f"offset {r.offset}: {SEGMENT_STATES[state]} of unknown segment {seg_id}")
                continue
            if state not in _VALID[segment.state]:
                ignored.append(f"offset {r.offset}: segment {seg_id} {SEGMENT_STATES[segment.state]} -> "
                               f"{SEGMENT_STATES[state]} is not a valid transition")
                continue
            if state == 3:
                del caches[key].segments[seg_id]
                continue
            segment.state, segment.event_timestamp_ms, segment.metadata_offset = state, v["EventTimestampMs"], r.offset
        elif kind == "REMOTE_PARTITION_DELETE_METADATA_RECORD":
            key = _partition_key(v)
            state = v["RemotePartitionDeleteState"]
            if state == 2:
                caches.pop(key, None)
            else:
                caches.setdefault(key, RemoteLogMetadataCache()).delete_state = state
    return caches, ignored


def remote_segment_rows(records: list[InternalRecord]) -> list[dict[str, Any]]:
    """One row per remote segment the caches hold (schema ``REMOTE_LOG_SEGMENTS``)."""
    caches, _ = replay(records)
    rows = []
    for (topic_id, topic, partition), cache in sorted(caches.items(), key=lambda kv: (kv[0][1], kv[0][2])):
        deleting = None if cache.delete_state is None else PARTITION_DELETE_STATES[cache.delete_state]
        for s in sorted(cache.segments.values(), key=lambda s: (s.start_offset, s.copy_started_ms)):
            rows.append({"topicId": topic_id, "topic": topic, "partition": partition,
                         "remoteLogSegmentId": s.segment_id,
                         "startOffset": s.start_offset, "endOffset": s.end_offset, "segmentSizeInBytes": s.size,
                         "maxTimestamp": s.max_timestamp_ms, "state": SEGMENT_STATES[s.state],
                         "isCopied": s.state == COPY_SEGMENT_FINISHED, "brokerId": s.broker_id,
                         "segmentLeaderEpochs": [{"leaderEpoch": e, "offset": o}
                                                 for e, o in sorted(s.leader_epochs.items())],
                         "copyStartedTime": s.copy_started_ms, "stateTime": s.event_timestamp_ms,
                         "txnIndexEmpty": s.txn_index_empty, "metadataOffset": s.metadata_offset,
                         "partitionDeleteState": deleting})
    return rows
