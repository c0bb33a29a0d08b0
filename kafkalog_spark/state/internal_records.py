"""The records of an internal topic's partition, decoded with Kafka's own schemas, in log order.

One decoder for every place that needs an internal record's meaning: the records view's decoded form
(``decodeInternal``) and the state views (consumer offsets, groups, transactions, cluster metadata). Records
are read with the records view of the decoder core, so damage in a file is a finding there, and a record
whose bytes do not fit its schema (or whose type this version does not know) is a finding here; the raw key
and value stay in the records view.

Transactions: offsets committed inside a transaction (TxnOffsetCommit) count only once their COMMIT marker
is in the log, as the group coordinator replays them; the outcome of each transactional record is read from
the markers that follow it (``txn_status``), not from the ``.txnindex`` files.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ..findings import Finding
from ..format.control_records import decode_control_message
from ..format.internal_topics import (
    CLUSTER_METADATA,
    CONSUMER_OFFSETS,
    REMOTE_LOG_METADATA,
    SHARE_GROUP_STATE,
    TRANSACTION_STATE,
    MetadataError,
    RecordError,
    UnknownRecordType,
    decode_metadata,
    decode_record,
    decode_remote_log_metadata,
)
from ..format.message_json import UnsupportedVersionError, message_json
from ..format.messages import MessageError, MessageSchema
from ..kafka_versions import LATEST

DECODED_TOPICS = (CONSUMER_OFFSETS, TRANSACTION_STATE, SHARE_GROUP_STATE, CLUSTER_METADATA, REMOTE_LOG_METADATA)


@dataclass(frozen=True, slots=True)
class Decoded:
    """A record's meaning: ``key_type`` is the schema's name without ``Key`` for the coordinators' topics
    (``OffsetCommit``, ``GroupMetadata``, ``TransactionLog``...), the record type for the metadata log
    (``TOPIC_RECORD``) and the control type for control records (``LEADER_CHANGE``). ``error`` says why a
    record could not be decoded (``unknown`` tells a type or version this Kafka version does not know from
    bytes that do not fit)."""

    key_type: str | None = None
    key: dict[str, Any] | None = None
    key_schema: MessageSchema | None = None
    key_version: int | None = None
    value: dict[str, Any] | None = None
    value_schema: MessageSchema | None = None
    value_version: int | None = None
    error: str | None = None
    unknown: bool = False

    def key_json(self) -> str | None:
        return _json(self.key_schema, self.key, self.key_version)

    def value_json(self) -> str | None:
        return _json(self.value_schema, self.value, self.value_version)


def _json(schema: MessageSchema | None, message: dict | None, version: int | None) -> str | None:
    if schema is None or message is None or version is None:
        return None
    try:
        return message_json(schema, message, version)
    except UnsupportedVersionError:
        return None


def decode(topic: str, key: bytes | None, value: bytes | None, control_type: str | None = None) -> Decoded:
    """The meaning of one record of an internal topic, read as the newest supported Kafka reads it (its schemas
    hold every older version). Never raises: what cannot be read is said in ``error``."""
    if control_type is not None:
        return _control(control_type, value)
    try:
        if topic in (CLUSTER_METADATA, REMOTE_LOG_METADATA):  # keyless, framed the same way
            read = decode_metadata if topic == CLUSTER_METADATA else decode_remote_log_metadata
            m = read(b"" if value is None else value, LATEST)
            return Decoded(m.type_name, value=m.message, value_schema=m.schema, value_version=m.version)
        if key is None:
            return Decoded(error="a record without a key", unknown=False)
        c = decode_record(topic, LATEST, key, value)
    except UnknownRecordType as e:
        return Decoded(error=str(e), unknown=True)
    except (RecordError, MetadataError) as e:
        text = str(e)
        return Decoded(error=text, unknown="unknown" in text.lower())
    return Decoded(c.key_schema.name.removesuffix("Key"), c.key, c.key_schema, c.key_version, c.value,
                   c.value_schema, c.value_version)


def _control(control_type: str, value: bytes | None) -> Decoded:
    try:
        m = decode_control_message(control_type, value)
    except MessageError as e:
        return Decoded(control_type, error=f"{control_type}: {e}")
    if m is None:
        return Decoded(control_type)
    return Decoded(control_type, value=m.message, value_schema=m.schema, value_version=m.version)


@dataclass(slots=True)
class InternalRecord:
    """One record of an internal topic with where it was read and what it means."""

    file: str
    position: int  # the batch's byte position in ``file``
    segment_base_offset: int | None  # None for a KRaft snapshot's record
    snapshot_end_offset: int | None
    offset: int
    timestamp_ms: int | None
    producer_id: int | None
    is_transactional: bool
    control_type: str | None
    key: bytes | None
    value: bytes | None
    decoded: Decoded
    txn_status: str | None = None  # transactional data: committed, aborted or open (no marker yet)


_COLUMNS = ("segmentBaseOffset", "position", "offset", "timestamp", "key", "value", "producerId", "isTransactional",
            "isControl", "controlType", "snapshotEndOffset")


def _files(log, snapshots: bool) -> list[str]:
    files = [s.log for s in log.segments if s.log]
    if snapshots:
        files += [s.path for s in log.kraft_snapshots if s.state == "snapshot"]
    return files


def read_internal(log, findings: list[Finding], *, snapshots: bool = False, files: list[str] | None = None,
                  filesystem=None) -> list[InternalRecord]:
    """Every record of one partition (a :class:`~kafkalog_spark.log.log_dir.PartitionLog`) of an internal topic,
    decoded, segments in offset order (then the KRaft snapshots if ``snapshots``, or the given ``files``), with the
    outcome of each transactional record. Reader findings and undecodable records go to ``findings``."""
    from ..log.reader import iter_segment

    out: list[InternalRecord] = []
    for path in files if files is not None else _files(log, snapshots):
        for batch in iter_segment(path, "records", findings, filesystem=filesystem, topic=log.topic,
                                  partition=log.partition):
            cols = {c: batch.column(c).to_pylist() for c in _COLUMNS if c != "timestamp"}
            micros = batch.column("timestamp").cast(pa.int64()).to_pylist()
            for i in range(batch.num_rows):
                control = cols["controlType"][i] if cols["isControl"][i] else None
                record = InternalRecord(
                    path, cols["position"][i], cols["segmentBaseOffset"][i], cols["snapshotEndOffset"][i],
                    cols["offset"][i], None if micros[i] is None else micros[i] // 1000,
                    cols["producerId"][i], bool(cols["isTransactional"][i]), control, cols["key"][i],
                    cols["value"][i], decode(log.topic, cols["key"][i], cols["value"][i], control))
                if record.decoded.error is not None:
                    findings.append(undecodable(record))
                out.append(record)
    _settle_transactions(out)
    return out


def undecodable(record: InternalRecord) -> Finding:
    """The finding of a record that cannot be decoded; its raw bytes stay in the records view at that offset."""
    kind = "internal_record_unknown" if record.decoded.unknown else "internal_record_undecodable"
    raw = (record.key or b"")[:16].hex()
    return Finding(record.file, record.position, kind,
                   f"offset {record.offset}: {record.decoded.error} (key starts {raw or 'null'})")


def _settle_transactions(records: list[InternalRecord]) -> None:
    """Mark each transactional data record with the outcome its producer's next marker gives it."""
    pending: dict[int | None, list[InternalRecord]] = {}
    for r in records:
        if not r.is_transactional or r.snapshot_end_offset is not None:
            continue
        if r.control_type in ("COMMIT", "ABORT"):
            for p in pending.pop(r.producer_id, []):
                p.txn_status = "committed" if r.control_type == "COMMIT" else "aborted"
        elif r.control_type is None:
            r.txn_status = "open"
            pending.setdefault(r.producer_id, []).append(r)


def effective(records: list[InternalRecord]) -> Iterator[InternalRecord]:
    """The data records whose effect is in the state: not control records, not in an aborted or open
    transaction, decoded."""
    for r in records:
        if r.control_type is None and r.txn_status in (None, "committed") and r.decoded.error is None:
            yield r
