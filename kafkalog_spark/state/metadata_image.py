"""What `__cluster_metadata` says, as a KRaft broker builds its MetadataImage: the newest snapshot, then the
records of the log after it, in order.

- :func:`metadata_rows`: every record of the metadata log and its snapshots (control records included).
- :func:`topic_catalog_rows`: the topics of the image (TopicRecord, PartitionRecord, PartitionChangeRecord,
  ConfigRecord of topics), and the topics the retained log saw deleted (RemoveTopicRecord), with their names.
- :func:`metadata_config_rows`: the dynamic configs of the image's topics and brokers (ConfigRecord, as the
  broker's ConfigurationsImage holds them), each with the offset of the record that set it.

Records between a BeginTransactionRecord and an AbortTransactionRecord are not applied (KIP-868: a metadata
transaction the controller aborted); the partition epoch counts every change of a partition and the leader
epoch every change of its leader, as PartitionRegistration.merge does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..format.message_json import kafka_uuid
from .internal_records import InternalRecord

TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
BROKER_RESOURCE = 4  # ConfigResource.Type.BROKER: resource name "" is the cluster-wide default, else a node id
RESOURCE_TYPES = {TOPIC_RESOURCE: "TOPIC", BROKER_RESOURCE: "BROKER"}
NO_LEADER_CHANGE = -2


def metadata_rows(records: list[InternalRecord]) -> list[dict[str, Any]]:
    """One row per record (schema ``CLUSTER_METADATA``); ``payload`` is the message as Kafka's JSON converter
    writes it."""
    return [{"offset": r.offset, "timestamp": r.timestamp_ms, "recordType": r.decoded.key_type,
             "version": r.decoded.value_version, "payload": r.decoded.value_json(),
             "isControl": r.control_type is not None,
             "segmentBaseOffset": r.segment_base_offset, "snapshotEndOffset": r.snapshot_end_offset}
            for r in records if r.decoded.error is None]


@dataclass
class _Partition:
    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int
    partition_epoch: int
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)
    elr: list[int] = field(default_factory=list)  # eligible leader replicas (KIP-966, Kafka 4.x)


@dataclass
class _Topic:
    topic_id: str
    name: str
    created_offset: int | None  # None: the topic came from the snapshot
    partitions: dict[int, _Partition] = field(default_factory=dict)
    deleted_offset: int | None = None


@dataclass(frozen=True)
class ConfigValue:
    """A dynamic config's value and the record that set it: its metadata log offset, or (None) the snapshot
    holding it (``snapshot_end_offset``)."""

    value: str
    offset: int | None
    snapshot_end_offset: int | None


@dataclass
class MetadataImage:
    """The topics and configs parts of Kafka's MetadataImage, plus what the log saw deleted."""

    topics: dict[str, _Topic] = field(default_factory=dict)  # by topic id
    # (resource type, resource name) -> config name -> value: the topics' and brokers' dynamic configs
    resources: dict[tuple[int, str], dict[str, ConfigValue]] = field(default_factory=dict)
    deleted: dict[str, _Topic] = field(default_factory=dict)
    last_offset: int | None = None

    def apply(self, r: InternalRecord) -> None:
        v = r.decoded.value
        kind = r.decoded.key_type
        log_offset = None if r.snapshot_end_offset is not None else r.offset
        if kind == "TOPIC_RECORD":
            self.topics[kafka_uuid(v["TopicId"])] = _Topic(kafka_uuid(v["TopicId"]), v["Name"], log_offset)
        elif kind == "PARTITION_RECORD" and (t := self.topics.get(kafka_uuid(v["TopicId"]))):
            t.partitions[v["PartitionId"]] = _Partition(list(v["Replicas"]), list(v["Isr"]), v["Leader"],
                                                        v["LeaderEpoch"], v["PartitionEpoch"],
                                                        list(v["AddingReplicas"]), list(v["RemovingReplicas"]),
                                                        list(v.get("EligibleLeaderReplicas") or []))
        elif kind == "PARTITION_CHANGE_RECORD" and (t := self.topics.get(kafka_uuid(v["TopicId"]))):
            p = t.partitions.get(v["PartitionId"])
            if p is not None:
                _merge(p, v)
        elif kind == "REMOVE_TOPIC_RECORD" and (t := self.topics.pop(kafka_uuid(v["TopicId"]), None)):
            t.deleted_offset = log_offset
            self.deleted[t.topic_id] = t
            self.resources.pop((TOPIC_RESOURCE, t.name), None)  # ConfigurationsDelta drops a deleted topic's
        elif kind == "CONFIG_RECORD" and v["ResourceType"] in RESOURCE_TYPES:
            configs = self.resources.setdefault((v["ResourceType"], v["ResourceName"]), {})
            if v["Value"] is None:  # a deletion: back to the next layer's value
                configs.pop(v["Name"], None)
            else:
                configs[v["Name"]] = ConfigValue(v["Value"], log_offset, r.snapshot_end_offset)
        self.last_offset = r.offset if log_offset is not None else r.snapshot_end_offset - 1


def _merge(p: _Partition, v: dict[str, Any]) -> None:
    """PartitionRegistration.merge: null (or -2 for the leader) means unchanged."""
    for name, attr in (("Isr", "isr"), ("Replicas", "replicas"), ("AddingReplicas", "adding"),
                       ("RemovingReplicas", "removing"), ("EligibleLeaderReplicas", "elr")):
        if v.get(name) is not None:
            setattr(p, attr, list(v[name]))
    if v["Leader"] != NO_LEADER_CHANGE:
        p.leader = v["Leader"]
        p.leader_epoch += 1
    p.partition_epoch += 1


def _applied(records: list[InternalRecord]) -> list[InternalRecord]:
    """The data records a broker applies: control records and aborted metadata transactions left out."""
    out: list[InternalRecord] = []
    open_txn: list[InternalRecord] | None = None
    for r in records:
        kind = r.decoded.key_type
        if r.control_type is not None or r.decoded.error is not None:
            continue
        if kind == "BEGIN_TRANSACTION_RECORD":
            open_txn = []
        elif kind in ("END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD"):
            if kind == "END_TRANSACTION_RECORD":
                out += open_txn or []
            open_txn = None
        elif open_txn is not None:
            open_txn.append(r)
        else:
            out.append(r)
    return out


def build_image(records: list[InternalRecord]) -> MetadataImage:
    """The image as of the newest snapshot and the log after it; deletions seen anywhere in the retained log or
    snapshots are kept with the names their TopicRecords gave."""
    snapshots = sorted({r.snapshot_end_offset for r in records if r.snapshot_end_offset is not None})
    newest = snapshots[-1] if snapshots else None
    image = MetadataImage()
    base = [r for r in records if r.snapshot_end_offset == newest] if newest is not None else []
    tail = [r for r in records if r.snapshot_end_offset is None and (newest is None or r.offset >= newest)]
    for r in _applied(base) + _applied(tail):
        image.apply(r)
    history = MetadataImage()  # every topic any file names, for the names of deleted topics
    for r in _applied([r for r in records if r.snapshot_end_offset is None]):
        history.apply(r)
    for topic_id, t in history.deleted.items():
        if topic_id not in image.topics:
            image.deleted.setdefault(topic_id, t)
    return image


def topic_catalog_rows(records: list[InternalRecord]) -> list[dict[str, Any]]:
    """One row per topic of the image and per deleted topic (schema ``TOPIC_CATALOG``)."""
    image = build_image(records)
    rows = []
    for t in [*image.topics.values(), *image.deleted.values()]:
        deleted = t.deleted_offset is not None or t.topic_id in image.deleted
        rows.append({
            "topicId": t.topic_id, "topic": t.name, "partitionCount": len(t.partitions),
            "partitions": [{"partition": n, "leader": p.leader, "leaderEpoch": p.leader_epoch,
                            "partitionEpoch": p.partition_epoch, "replicas": p.replicas, "isr": p.isr,
                            "addingReplicas": p.adding, "removingReplicas": p.removing,
                            "eligibleLeaderReplicas": p.elr}
                           for n, p in sorted(t.partitions.items())],
            "configs": None if deleted else sorted((name, c.value) for name, c in
                                                   image.resources.get((TOPIC_RESOURCE, t.name), {}).items()),
            "isDeleted": deleted, "createdOffset": t.created_offset, "deletedOffset": t.deleted_offset,
            "asOfOffset": image.last_offset})
    return sorted(rows, key=lambda row: (row["topic"], row["isDeleted"]))


def metadata_config_rows(records: list[InternalRecord]) -> list[dict[str, Any]]:
    """One row per dynamic config of the image's topics and brokers (schema ``METADATA_CONFIGS``)."""
    image = build_image(records)
    return [{"resourceType": RESOURCE_TYPES[kind], "resourceName": name, "name": key, "value": c.value,
             "offset": c.offset, "snapshotEndOffset": c.snapshot_end_offset, "asOfOffset": image.last_offset}
            for (kind, name), configs in sorted(image.resources.items()) for key, c in sorted(configs.items())]
