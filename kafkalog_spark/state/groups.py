"""What `__consumer_offsets` says about consumer groups, replayed as the group coordinator loads a partition.

- :func:`offset_commit_rows`: every version of every committed offset (OffsetCommit keys; a tombstone is the
  offset's deletion), with ``isLatest`` on the version the coordinator would hold: the effective record (see
  :func:`~.records.effective`) with the highest offset for its key, as a compacted log keeps it.
- :func:`group_rows`: each group's state after the replay: classic groups (GroupMetadata; on load a group
  with members is Stable, one without is Empty, a tombstone deletes it) and the groups of the new protocols
  (KIP-848 consumer, KIP-932 share, KIP-1071 streams: the group's epoch, its members' metadata and current
  assignments, one record type each).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..format.internal_topics import schema
from ..format.message_json import kafka_uuid
from ..format.messages import MessageError, read_message
from ..kafka_versions import LATEST
from .internal_records import InternalRecord, effective

OFFSET_COMMIT_TYPES = ("OffsetCommit", "LegacyOffsetCommit")
# The new protocols' group types by record name prefix, and their member states (modern/MemberState.java)
MODERN_GROUPS = {"ConsumerGroup": "consumer", "ShareGroup": "share", "StreamsGroup": "streams"}
MEMBER_STATES = {0: "STABLE", 1: "UNREVOKED_PARTITIONS", 2: "UNRELEASED_PARTITIONS", 127: "UNKNOWN"}


def millis_or_none(v: int | None) -> int | None:
    """Kafka's -1 (no time) as None."""
    return None if v is None or v < 0 else v


def _location(r: InternalRecord) -> dict[str, Any]:
    return {"recordOffset": r.offset, "recordTimestamp": r.timestamp_ms, "segmentBaseOffset": r.segment_base_offset}


def latest_by_key(records: list[InternalRecord], key_types: tuple[str, ...]) -> dict[tuple, InternalRecord]:
    """key -> the effective record with the highest offset among those of ``key_types`` (what compaction and
    the coordinator's replay keep; a tombstone included)."""
    out: dict[tuple, InternalRecord] = {}
    for r in effective(records):
        if r.decoded.key_type in key_types:
            k = (r.decoded.key_type.removeprefix("Legacy"), *r.decoded.key.values())
            if k not in out or out[k].offset < r.offset:
                out[k] = r
    return out


def offset_commit_rows(records: list[InternalRecord]) -> list[dict[str, Any]]:
    """One row per version of a committed offset (schema ``CONSUMER_OFFSETS``)."""
    latest = {id(r) for r in latest_by_key(records, OFFSET_COMMIT_TYPES).values()}
    rows = []
    for r in records:
        d = r.decoded
        if d.key_type not in OFFSET_COMMIT_TYPES or d.error is not None or r.control_type is not None:
            continue
        v = d.value or {}
        rows.append({
            "group": d.key["group"], "topic": d.key["topic"], "partition": d.key["partition"],
            "committedOffset": v.get("offset"),
            "leaderEpoch": None if v.get("leaderEpoch", -1) < 0 else v["leaderEpoch"],
            "metadata": v.get("metadata"), "commitTimestamp": millis_or_none(v.get("commitTimestamp")),
            "expireTimestamp": millis_or_none(v.get("expireTimestamp")),
            "topicId": kafka_uuid(v["topicId"]) if v.get("topicId") and any(v["topicId"]) else None,
            "isTombstone": d.value is None, "txnStatus": r.txn_status, "isLatest": id(r) in latest,
            **_location(r)})
    return rows


@dataclass
class _Group:
    group: str
    group_type: str
    record: InternalRecord
    value: dict[str, Any] | None = None
    members: dict[str, dict[str, Any]] = field(default_factory=dict)
    assignments: dict[str, dict[str, Any]] = field(default_factory=dict)
    target_epoch: int | None = None


def _consumer_assignment(data: bytes | None) -> list[dict[str, Any]]:
    """A classic consumer's assignment (ConsumerProtocolAssignment: an int16 version, then the message)."""
    s = schema("ConsumerProtocolAssignment", LATEST)
    if not data or len(data) < 2 or s is None:
        return []
    try:
        m = read_message(s, data[2:], min(int.from_bytes(data[:2], "big", signed=True), s.valid.high))
    except MessageError:
        return []
    return [{"topic": tp["Topic"], "topicId": None, "partition": p}
            for tp in m["AssignedPartitions"] or [] for p in tp["Partitions"]]


def _classic_row(g: _Group) -> dict[str, Any]:
    v = g.value
    if v is None:
        return {"group": g.group, "groupType": "classic", "state": "Dead", "isDeleted": True, "members": []}
    consumer = v["protocolType"] == "consumer"
    members = [{"memberId": m["memberId"], "groupInstanceId": m.get("groupInstanceId"), "clientId": m["clientId"],
                "clientHost": m["clientHost"], "sessionTimeoutMs": m.get("sessionTimeout"),
                "rebalanceTimeoutMs": m.get("rebalanceTimeout"), "memberEpoch": v["generation"],
                "memberState": None,
                "assignment": _consumer_assignment(m.get("assignment")) if consumer else []}
               for m in v["members"] or []]
    return {"group": g.group, "groupType": "classic", "protocolType": v["protocolType"], "protocol": v["protocol"],
            "state": "Stable" if members else "Empty", "generation": v["generation"], "leader": v["leader"],
            "stateTimestamp": millis_or_none(v.get("currentStateTimestamp")), "members": members, "isDeleted": False}


def _modern_state(g: _Group, epoch: int, members: list[dict[str, Any]]) -> str:
    """ConsumerGroup.maybeUpdateGroupState (the share and streams groups follow the same rule)."""
    if not members:
        return "Empty"
    if g.target_epoch is not None and epoch > g.target_epoch:
        return "Assigning"
    if any(m["memberState"] not in (None, "STABLE") for m in members):
        return "Reconciling"
    return "Stable"


def _modern_row(g: _Group) -> dict[str, Any]:
    if g.value is None:
        return {"group": g.group, "groupType": g.group_type, "state": "Dead", "isDeleted": True, "members": []}
    epoch = g.value["Epoch"]
    members = []
    for member_id, m in sorted(g.members.items()):
        a = g.assignments.get(member_id, {})
        members.append({
            "memberId": member_id, "groupInstanceId": m.get("InstanceId"), "clientId": m.get("ClientId"),
            "clientHost": m.get("ClientHost"), "sessionTimeoutMs": None,
            "rebalanceTimeoutMs": m.get("RebalanceTimeoutMs"), "memberEpoch": a.get("MemberEpoch"),
            "memberState": MEMBER_STATES.get(a["State"]) if "State" in a else None,
            "assignment": [{"topic": None, "topicId": kafka_uuid(tp["TopicId"]), "partition": p}
                           for tp in a.get("AssignedPartitions") or [] for p in tp["Partitions"]]})
    return {"group": g.group, "groupType": g.group_type, "protocolType": g.group_type, "protocol": None,
            "state": _modern_state(g, epoch, members), "generation": epoch, "leader": None, "stateTimestamp": None,
            "members": members, "isDeleted": False}


def _fold(groups: dict[str, _Group], r: InternalRecord) -> None:
    d = r.decoded
    name = d.key_type
    group_id = d.key.get("group", d.key.get("GroupId"))
    if name == "GroupMetadata":
        groups[group_id] = _Group(group_id, "classic", r, d.value)
        return
    prefix = next((p for p in MODERN_GROUPS if name.startswith(p)), None)
    if prefix is None:
        return
    part = name.removeprefix(prefix)
    g = groups.get(group_id)
    if g is None or g.group_type != MODERN_GROUPS[prefix]:
        g = groups[group_id] = _Group(group_id, MODERN_GROUPS[prefix], r)
    g.record = r
    member = d.key.get("MemberId")
    if part == "Metadata":
        g.value = d.value
    elif part == "MemberMetadata":
        _put(g.members, member, d.value)
    elif part == "CurrentMemberAssignment":
        _put(g.assignments, member, d.value)
    elif part == "TargetAssignmentMetadata":
        g.target_epoch = None if d.value is None else d.value["AssignmentEpoch"]


def _put(into: dict[str, dict[str, Any]], key: str, value: dict[str, Any] | None) -> None:
    if value is None:
        into.pop(key, None)
    else:
        into[key] = value


def group_rows(records: list[InternalRecord]) -> list[dict[str, Any]]:
    """One row per group the partition holds, as of its last record (schema ``GROUP_METADATA``)."""
    groups: dict[str, _Group] = {}
    for r in effective(records):
        _fold(groups, r)
    rows = []
    for g in groups.values():
        row = _classic_row(g) if g.group_type == "classic" else _modern_row(g)
        rows.append(row | _location(g.record))
    # A group that only committed offsets (a simple consumer, the admin API) has no group record: the coordinator
    # loads it as an empty classic group with no protocol type.
    for (_, group, *_), r in latest_by_key(records, OFFSET_COMMIT_TYPES).items():
        if group not in groups and r.decoded.value is not None:
            groups[group] = _Group(group, "classic", r)
            rows.append({"group": group, "groupType": "classic", "protocolType": "", "state": "Empty",
                         "generation": 0, "members": [], "isDeleted": False} | _location(r))
    return sorted(rows, key=lambda row: row["group"])
