"""Keys and payloads of internal topics' records as kafka-dump-log's decoders print them (--offsets-decoder,
--transaction-log-decoder, --cluster-metadata-decoder, --remote-log-metadata-decoder, --share-group-state-decoder),
for the Kafka version chosen.

The records are decoded by :mod:`kafkalog_spark.format.internal_topics` (the schemas as data); this module only
writes them as each version's DumpLogSegments does, errors included.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from ..format.internal_topics import (
    CLUSTER_METADATA,
    REMOTE_LOG_METADATA,
    REMOTE_PARTITION_DELETE_STATES,
    REMOTE_SEGMENT_STATES,
    TRANSACTION_STATE,
    TXN_STATES,
    CoordinatorRecord,
    JavaException,
    MetadataError,
    RecordError,
    UnknownRecordType,
    decode_metadata,
    decode_record,
    decode_remote_log_metadata,
    schema,
    transaction_text_v3,
)
from ..format.message_json import UnsupportedVersionError, jackson_string, kafka_uuid, message_json, struct_json
from ..format.messages import MessageError, Struct, read_message
from ..kafka_versions import KafkaVersion
from .tool_errors import ToolCrash


def _fields_json(s: Struct, values: dict, version: int, replaced: dict[str, str]) -> str:
    """struct_json with some fields' JSON given: one field at a time keeps the schema's order."""
    parts = [replaced[f.name] if f.name in replaced else struct_json(Struct(s.name, (f,)), values, version)[1:-1]
             for f in s.fields]
    return "{" + ",".join(p for p in parts if p) + "}"


def _consumer_protocol(data: bytes, name: str, version: KafkaVersion) -> str | None:
    """A member's embedded ConsumerProtocol bytes as JSON (an int16 version, then the message); None where
    they do not read, and the tool keeps the bytes."""
    s = schema(name, version)
    if s is None or len(data) < 2:
        return None
    v = int.from_bytes(data[:2], "big", signed=True)
    try:
        return message_json(s, read_message(s, data[2:], v), v)
    except (MessageError, UnsupportedVersionError):
        return None


def _group_metadata_json(c: CoordinatorRecord, version: KafkaVersion) -> str:
    """GroupMetadataValue with each consumer member's subscription and assignment decoded, as both tools do."""
    assert c.value_schema is not None and c.value is not None and c.value_version is not None
    root, v = c.value_schema.root, c.value_version
    if c.value["protocolType"] != "consumer":
        return message_json(c.value_schema, c.value, v)
    members_field = next(f for f in root.fields if f.name == "members")
    assert members_field.struct is not None
    members = []
    for m in c.value["members"]:
        replaced = {}
        for field, name in (("subscription", "ConsumerProtocolSubscription"), ("assignment",
                                                                               "ConsumerProtocolAssignment")):
            decoded = _consumer_protocol(m[field], name, version)
            if decoded is not None:
                replaced[field] = f"{jackson_string(field)}:{decoded}"
        members.append(_fields_json(members_field.struct, m, v, replaced))
    return _fields_json(root, c.value, v, {"members": '"members":[' + ",".join(members) + "]"})


def _value_json(c: CoordinatorRecord, version: KafkaVersion) -> str:
    assert c.value_schema is not None and c.value is not None and c.value_version is not None
    if c.value_schema.name == "GroupMetadataValue":
        return _group_metadata_json(c, version)
    if c.value_schema.name == "TransactionLogValue":  # 4.x prints the state's name, not its id
        status = c.value["TransactionStatus"]
        name = TXN_STATES[status] if 0 <= status < len(TXN_STATES) else str(status)
        return _fields_json(c.value_schema.root, c.value, c.value_version,
                            {"TransactionStatus": f'"transactionStatus":{jackson_string(name)}'})
    return message_json(c.value_schema, c.value, c.value_version)


def java_double(d: float) -> str:
    """Double.toString (Jackson prints a DoubleNode so): the shortest digits, plain from 10^-3 to 10^7, else
    d.dddE<n>. Java before 19 sometimes printed one more digit than the shortest."""
    if d != d:
        return "NaN"
    if d in (float("inf"), float("-inf")):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "-0.0" if str(d).startswith("-") else "0.0"
    sign, digits, exponent = Decimal(repr(d)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + int(exponent)  # the decimal point's place after the first digit of `digits`
    head = "-" if sign else ""
    if 1e-3 <= abs(d) < 1e7:
        if point <= 0:
            return f"{head}0.{'0' * -point}{text}"
        whole, frac = text[:point].ljust(point, "0"), text[point:]
        return f"{head}{whole}.{frac or '0'}"
    return f"{head}{text[0]}.{text[1:] or '0'}E{point - 1}"


def _metadata_text(value: bytes | None, offset: int, version: KafkaVersion) -> str:
    """ClusterMetadataLogMessageParser: the record as {"type","version","data"}, or its error (no key)."""
    try:
        m = decode_metadata(b"" if value is None else value, version)  # null fails as empty: at the frame version
    except MetadataError as e:
        return f"Error at {offset}, skipping. {e}"
    floats = {f.name: f"{jackson_string(f.json_name)}:{java_double(m.message[f.name])}"
              for f in m.schema.root.fields if f.type == "float64" and m.version in f.versions}
    data = _fields_json(m.schema.root, m.message, m.version, floats)
    return f'{{"type":"{m.type_name}","version":{m.version},"data":{data}}}'


class _JavaError(Exception):
    """An exception of the remote log metadata objects' constructors; the text is its getMessage() ("null" for
    Objects.requireNonNull(x) without a message)."""


# What the remote log metadata parser's `record.value().remaining()` throws on a null value: a helpful
# NullPointerException naming the Record interface, which 4.4 moved to ...common.record.internal
_NULL_VALUE = ('Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of '
               '"org.apache.kafka.common.{}Record.value()" is null')


def _topic_id_partition(t: dict) -> str:
    """TopicIdPartition.toString: <topic id>:<topic>-<partition>."""
    return f"{kafka_uuid(t['Id'])}:{t['Name']}-{t['Partition']}"


def _segment_id(s: dict) -> str:
    tip = _topic_id_partition(s["TopicIdPartition"])
    return f"RemoteLogSegmentId{{topicIdPartition={tip}, id={kafka_uuid(s['Id'])}}}"


def _custom_metadata(b: bytes | None) -> str:
    """Optional<CustomMetadata>.toString (a null field is Optional.empty)."""
    return "Optional.empty" if b is None else f"Optional[CustomMetadata{{{len(b)} bytes}}]"


def _leader_epochs(entries: list[dict]) -> str:
    """The transforms put the entries into a HashMap (a repeated epoch keeps its last offset), the objects into a
    TreeMap: AbstractMap.toString in epoch order."""
    epochs = {e["LeaderEpoch"]: e["Offset"] for e in entries}
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _state(names: dict[int, str], state_id: int, null_message: str = "state can not be null") -> str:
    """forId: an unknown id is null, which Objects.requireNonNull refuses."""
    if state_id not in names:
        raise _JavaError(null_message)
    return names[state_id]


def _segment_text(m: dict, v4: bool) -> str:
    """RemoteLogSegmentMetadataTransform: the metadata object's checks first (offsets, epochs), then its update's
    state, then RemoteLogSegmentMetadata.toString (4.x ends it with txnIdxEmpty)."""
    start, end = m["StartOffset"], m["EndOffset"]
    if start < 0:
        raise _JavaError(f"Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative")
    if end < start:
        raise _JavaError(f"Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than "
                         f"startOffset = {start}")
    if not m["SegmentLeaderEpochs"]:
        raise _JavaError("segmentLeaderEpochs can not be null or empty")
    state = _state(REMOTE_SEGMENT_STATES, m["RemoteLogSegmentState"])
    txn = f", txnIdxEmpty={_java_bool(m['TxnIndexEmpty'])}" if v4 else ""
    return (f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(m['RemoteLogSegmentId'])}, "
            f"startOffset={start}, endOffset={end}, brokerId={m['BrokerId']}, maxTimestampMs={m['MaxTimestampMs']}, "
            f"eventTimestampMs={m['EventTimestampMs']}, "
            f"segmentLeaderEpochs={_leader_epochs(m['SegmentLeaderEpochs'])}, "
            f"segmentSizeInBytes={m['SegmentSizeInBytes']}, customMetadata={_custom_metadata(m['CustomMetadata'])}, "
            f"state={state}{txn}}}")


def _update_text(m: dict, v4: bool) -> str:
    state = _state(REMOTE_SEGMENT_STATES, m["RemoteLogSegmentState"])
    return (f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_segment_id(m['RemoteLogSegmentId'])}, "
            f"customMetadata={_custom_metadata(m['CustomMetadata'])}, state={state}, "
            f"eventTimestampMs={m['EventTimestampMs']}, brokerId={m['BrokerId']}}}")


def _partition_delete_text(m: dict, v4: bool) -> str:
    state = _state(REMOTE_PARTITION_DELETE_STATES, m["RemotePartitionDeleteState"], null_message="null")
    return (f"RemotePartitionDeleteMetadata{{topicPartition={_topic_id_partition(m['TopicIdPartition'])}, "
            f"state={state}, eventTimestampMs={m['EventTimestampMs']}, brokerId={m['BrokerId']}}}")


def _snapshot_text(m: dict, v4: bool) -> str:
    """RemoteLogSegmentMetadataSnapshot: the state is checked before the epochs, and no offset is."""
    state = _state(REMOTE_SEGMENT_STATES, m["RemoteLogSegmentState"])
    if not m["SegmentLeaderEpochs"]:
        raise _JavaError("segmentLeaderEpochs can not be null or empty")
    txn = f", txnIdxEmpty={_java_bool(m['TxnIndexEmpty'])}" if v4 else ""
    return (f"RemoteLogSegmentMetadataSnapshot{{segmentId={kafka_uuid(m['SegmentId'])}, "
            f"startOffset={m['StartOffset']}, endOffset={m['EndOffset']}, maxTimestampMs={m['MaxTimestampMs']}, "
            f"segmentLeaderEpochs={_leader_epochs(m['SegmentLeaderEpochs'])}, "
            f"segmentSizeInBytes={m['SegmentSizeInBytes']}, customMetadata={_custom_metadata(m['CustomMetadata'])}, "
            f"state={state}{txn}}}")


def _java_bool(b: bool) -> str:
    return "true" if b else "false"


# RemoteLogMetadataSerde: each record type's transform into its Java object (v4: the 4.x toString)
_REMOTE_TEXTS: dict[str, Callable[[dict, bool], str]] = {
    "RemoteLogSegmentMetadataRecord": _segment_text, "RemoteLogSegmentMetadataUpdateRecord": _update_text,
    "RemotePartitionDeleteMetadataRecord": _partition_delete_text,
    "RemoteLogSegmentMetadataSnapshotRecord": _snapshot_text}


def remote_log_metadata_text(value: bytes | None, offset: int, version: KafkaVersion) -> str:
    """RemoteMetadataLogMessageParser: the value through RemoteLogMetadataSerde, printed as the Java object's
    toString; whatever it throws becomes `Error at offset <offset>, skipping. <message>` (the key is never read)."""
    v4 = version != KafkaVersion.V3_9
    try:
        if value is None:
            raise _JavaError(_NULL_VALUE.format("record.internal." if v4 else "record."))
        m = decode_remote_log_metadata(value, version)
        return _REMOTE_TEXTS[m.schema.name](m.message, v4)
    except (MetadataError, _JavaError) as e:
        return f"Error at offset {offset}, skipping. {e}"


def decoded(r: dict, decoder: str, version: KafkaVersion) -> tuple[str | None, str | None]:
    """(key, payload) text of a record through ``decoder`` (an internal topic's name), as DumpLogSegments' message
    parsers of ``version`` print them; raises RecordCrash where the tool dies on the record."""
    v3 = version == KafkaVersion.V3_9
    if decoder == CLUSTER_METADATA:
        return None, _metadata_text(r["value"], r["offset"], version)
    if decoder == REMOTE_LOG_METADATA:
        return None, remote_log_metadata_text(r["value"], r["offset"], version)
    if v3 and decoder == TRANSACTION_STATE:
        return _transaction_text_v3(r)
    if r["key"] is None:
        how = "offset topic decoder" if v3 else "the specified decoder"
        raise ToolCrash("java.lang.RuntimeException",
                        f"Failed to decode message at offset {r['offset']} using {how} (message had a missing key)")
    try:
        c = decode_record(decoder, version, r["key"], r["value"])
        key = f'{{"type":"{c.record_type}","data":{message_json(c.key_schema, c.key, c.key_version)}}}'
        if c.value is None:
            return key, "<DELETE>"
        return key, f'{{"version":"{c.value_version}","data":{_value_json(c, version)}}}'
    except UnknownRecordType as e:
        return f"Unknown record type {e.record_type} at offset {r['offset']}, skipping.", None
    except (RecordError, UnsupportedVersionError) as e:
        return f"Error at offset {r['offset']}, skipping. {e}", None


class RecordCrash(ToolCrash):
    """A decoder's exception that ends the run in the middle of a record line: the tool has printed the
    record's metadata (without a newline) when it dies, and so do we (with one)."""

    def __init__(self, crash: ToolCrash) -> None:
        super().__init__(crash.java_class, crash.message)


def _transaction_text_v3(r: dict) -> tuple[str, str | None]:
    # 3.9's TransactionLogMessageParser lets every exception through: each one ends the run
    if r["key"] is None:
        raise ToolCrash("java.lang.NullPointerException",
                        'Cannot invoke "java.nio.ByteBuffer.getShort()" because "buffer" is null')
    try:
        return transaction_text_v3(r["key"], r["value"])
    except JavaException as e:
        raise ToolCrash(e.java_class, e.message) from e
