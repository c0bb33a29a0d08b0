"""The records of Kafka's internal topics: the coordinators' __consumer_offsets, __transaction_state and
__share_group_state, the controller's __cluster_metadata (see decode_metadata) and tiered storage's
__remote_log_metadata (see decode_remote_log_metadata).

Each record's key starts with an int16 record type, its value (null for a tombstone) with an int16
version; the rest is one message of Kafka's schema language. The schemas are data
(`message_schemas/*.json`, copied from Kafka 4.4.0's JARs; `message_schemas/3.9/` holds Kafka 3.9.2's
where they differ). How the two tool versions map a type to its schemas (CoordinatorRecordSerde):

- 4.x: the schema whose `apiKey` is the type ("type": "coordinator-key"/"coordinator-value"); Kafka
  passes the type as the key's version and the generated key reader ignores it (we read at 0; errors
  name the type); a value version outside the schema's validVersions is an error.
- 3.9: group records are types 0 to 8, each the key schema whose validVersions hold the type (the key
  is read at that version, OffsetCommitKey covers 0 and 1); values are read at any version.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from ..kafka_versions import KafkaVersion
from .messages import MessageError, MessageSchema, Struct, parse_schema, read_message

CONSUMER_OFFSETS = "__consumer_offsets"
TRANSACTION_STATE = "__transaction_state"
SHARE_GROUP_STATE = "__share_group_state"
CLUSTER_METADATA = "__cluster_metadata"
REMOTE_LOG_METADATA = "__remote_log_metadata"
_OLDER_DIR = "3.9"
# Which schema files belong to which topic's coordinator (by name prefix)
_PREFIXES = {
    CONSUMER_OFFSETS: ("OffsetCommit", "LegacyOffsetCommit", "GroupMetadata", "ConsumerGroup", "ShareGroup",
                       "StreamsGroup"),
    TRANSACTION_STATE: ("TransactionLog",),
    SHARE_GROUP_STATE: ("ShareSnapshot", "ShareUpdate"),
    # KIP-405's records are "type": "metadata" like the controller's, with apiKeys 0 to 3 of their own
    REMOTE_LOG_METADATA: ("RemoteLogSegmentMetadata", "RemotePartitionDeleteMetadata"),
}
_V3_GROUP_TYPES = range(9)  # 3.9's GroupCoordinatorRecordSerde: OffsetCommit (0, 1) to ConsumerGroup* (8)


class UnknownRecordType(Exception):
    """A key whose type the coordinator does not know (Deserializer.UnknownRecordTypeException)."""

    def __init__(self, record_type: int) -> None:
        super().__init__(f"Found an unknown record type {record_type}")
        self.record_type = record_type


class RecordError(Exception):
    """A key or value the coordinator cannot read; the text is the Java exception's message."""


@dataclass(frozen=True)
class CoordinatorRecord:
    record_type: int
    key_schema: MessageSchema
    key: dict[str, Any]
    key_version: int  # the version the key is read and printed at
    value_schema: MessageSchema | None  # None: a tombstone
    value: dict[str, Any] | None
    value_version: int | None


def _tagged_only(spec: Any) -> Any:
    """Tagged fields as the generic reader wants them, spelled as Kafka's generator reads them: a field
    given only "taggedVersions" (TransactionLogValue's) exists in those versions, and a tag may be written
    as a string (3.9's RegisterBrokerRecord: "tag": "0")."""
    if isinstance(spec, list):
        return [_tagged_only(s) for s in spec]
    if not isinstance(spec, dict):
        return spec
    out = {k: _tagged_only(v) for k, v in spec.items()}
    if "taggedVersions" in out and "versions" not in out:
        out["versions"] = out["taggedVersions"]
    if isinstance(out.get("tag"), str):
        out["tag"] = int(out["tag"], 0)
    return out


def _load(name: str, older: bool = False) -> dict | None:
    base = files(__package__).joinpath("message_schemas")
    if older:
        base = base.joinpath(_OLDER_DIR)
    path = base.joinpath(f"{name}.json")
    return _tagged_only(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else None


def _names(older: bool) -> list[str]:
    base = files(__package__).joinpath("message_schemas")
    if older:
        base = base.joinpath(_OLDER_DIR)
    return sorted(p.name.removesuffix(".json") for p in base.iterdir() if p.name.endswith(".json"))


@cache
def schema(name: str, version: KafkaVersion) -> MessageSchema | None:
    """A schema as the given Kafka version's tool has it (3.9's own file where it differs)."""
    spec = _load(name, older=True) if version == KafkaVersion.V3_9 else None
    spec = spec or _load(name)
    return parse_schema(spec) if spec else None


@cache
def _types(topic: str, version: KafkaVersion) -> dict[int, tuple[str, str]]:
    """record type -> (key schema name, value schema name) for one topic's coordinator."""
    out: dict[int, tuple[str, str]] = {}
    prefixes = _PREFIXES[topic]
    if version == KafkaVersion.V3_9:
        if topic == TRANSACTION_STATE:
            return {0: ("TransactionLogKey", "TransactionLogValue")}
        if topic != CONSUMER_OFFSETS:
            return {}
        for name in _names(older=True):
            if name.endswith("Key") and name.startswith(prefixes):
                key = schema(name, version)
                assert key is not None
                for t in _V3_GROUP_TYPES:
                    if t in key.valid:
                        out[t] = (name, name.removesuffix("Key") + "Value")
        return out
    for name in _names(older=False):
        spec = _load(name)
        if spec and spec.get("type") == "coordinator-key" and name.startswith(prefixes):
            out[int(spec["apiKey"])] = (name, name.removesuffix("Key") + "Value")
    return out


def _int16(data: bytes, what: str) -> int:
    if len(data) < 2:
        raise RecordError(f"Could not read version from {what}'s buffer.")
    return int.from_bytes(data[:2], "big", signed=True)


_NEED = re.compile(r"need (\d+) bytes at \d+, (-?\d+) left")
_FIXED_WIDTHS = (1, 2, 4, 8, 16)  # int8 to int64, and a uuid (two longs)


def _underflow(e: MessageError) -> tuple[int, int] | None:
    m = _NEED.fullmatch(str(e))
    return (int(m[1]), int(m[2])) if m else None


def _java_message(e: MessageError) -> str:
    """The Java exception's message for bytes running out: a fixed-width read is a BufferUnderflowException
    (message null); a string or bytes longer than what is left is Kafka's own error. The reader's error does
    not say which, so a length of a fixed width is taken for one (a string of 1, 2, 4, 8 or 16 bytes cut
    short is then misnamed)."""
    need = _underflow(e)
    if need is None:
        return str(e)
    if need[0] in _FIXED_WIDTHS:
        return "null"
    return f"Error reading byte array of {need[0]} byte(s): only {need[1]} byte(s) available"


def _first_struct(struct: Struct, values: dict[str, Any], version: int) -> str | None:
    """The first nested struct the generated reader would construct (in read order: the fields, then the
    tagged ones), if any."""
    fields = [f for f in struct.fields if version in f.versions and version not in f.tagged]
    fields += [f for f in struct.fields if version in f.tagged]
    for f in fields:
        v = values.get(f.name)
        if f.struct is not None and v:
            return f.struct.name
    return None


def read_checked(s: MessageSchema, data: bytes, version: int) -> dict[str, Any]:
    """read_message, failing as Kafka's generated readers do on a version above the schema's: the message
    itself reads any version, but each nested struct throws UnsupportedVersionException ("Can't read
    version 4 of BrokerFeature") when it is constructed."""
    message = read_message(s, data, version)
    if version > s.valid.high and (name := _first_struct(s.root, message, version)):
        raise MessageError(f"Can't read version {version} of {name}", 0)
    return message


def _read(s: MessageSchema, data: bytes, version: int, what: str, shown: int | None = None) -> dict[str, Any]:
    """`shown`: the version the error names (4.x passes a key's type, which its key reader ignores)."""
    try:
        return read_checked(s, data, version)
    except MessageError as e:
        raise RecordError(f"Could not read record with version {version if shown is None else shown} from "
                          f"{what}'s buffer due to: {_java_message(e)}.") from e


def decode_record(topic: str, version: KafkaVersion, key: bytes, value: bytes | None) -> CoordinatorRecord:
    """One record of an internal topic, as the `version` tool's coordinator serde reads it.
    Raises UnknownRecordType or RecordError."""
    record_type = _int16(key, "key")
    names = _types(topic, version).get(record_type)
    if names is None:
        raise UnknownRecordType(record_type)
    key_schema, value_schema = schema(names[0], version), schema(names[1], version)
    assert key_schema is not None and value_schema is not None
    key_version = record_type if version == KafkaVersion.V3_9 else 0
    decoded_key = _read(key_schema, key[2:], key_version, "key", record_type)
    if value is None:
        return CoordinatorRecord(record_type, key_schema, decoded_key, key_version, None, None, None)
    value_version = _int16(value, "value")
    if version != KafkaVersion.V3_9 and value_version not in value_schema.valid:
        raise RecordError(f"Found an unknown record version {value_version} for {record_type} type")
    decoded = _read(value_schema, value[2:], value_version, "value")
    return CoordinatorRecord(record_type, key_schema, decoded_key, key_version, value_schema, decoded, value_version)


@dataclass(frozen=True)
class MetadataRecord:
    type_name: str  # MetadataRecordType's name, e.g. TOPIC_RECORD
    version: int
    schema: MessageSchema
    message: dict[str, Any]


class MetadataError(Exception):
    """A __cluster_metadata value MetadataRecordSerde cannot read; the text is the exception's message."""


@cache
def _metadata_types(version: KafkaVersion, topic: str = CLUSTER_METADATA) -> dict[int, str]:
    """apiKey -> schema name of the metadata records the given version knows for `topic` (__cluster_metadata's or
    __remote_log_metadata's, told apart by name; 3.9's are all in 3.9/)."""
    older = version == KafkaVersion.V3_9
    remote = _PREFIXES[REMOTE_LOG_METADATA]
    specs = ((n, _load(n, older)) for n in _names(older) if n.startswith(remote) == (topic == REMOTE_LOG_METADATA))
    return {int(spec["apiKey"]): n for n, spec in specs if spec and spec.get("type") == "metadata"}


def _snake(name: str) -> str:
    """MetadataRecordType's constant for a record name: RegisterBrokerRecord -> REGISTER_BROKER_RECORD."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def _unsigned_short(data: bytes, pos: int, what: str) -> tuple[int, int]:
    """AbstractApiMessageSerde.unsignedIntToShort: an unsigned varint that must fit a short."""
    value, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 28:
            raise MetadataError(f"Error while reading {what}")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    if value > 0x7FFF:
        raise MetadataError(f"Value for {what} was too large.")
    return value, pos


def _consumed(s: MessageSchema, data: bytes, version: int) -> int:
    """How many bytes the message takes: the reader ignores what follows, and a prefix reads only once it
    holds the whole message, so the shortest prefix that reads is the message (found by bisection)."""
    lo, hi = 0, len(data)
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            read_message(s, data[:mid], version)
            hi = mid
        except MessageError:
            lo = mid + 1
    return lo


def decode_metadata(value: bytes, version: KafkaVersion) -> MetadataRecord:
    """A __cluster_metadata record's value as MetadataRecordSerde reads it: unsigned varints frame version
    (1), apiKey and version, then the message, which must fill the value. Raises MetadataError."""
    return _decode_framed(value, version, CLUSTER_METADATA)


def decode_remote_log_metadata(value: bytes, version: KafkaVersion) -> MetadataRecord:
    """A __remote_log_metadata record's value as RemoteLogMetadataSerde reads it: the same framing as
    __cluster_metadata's (both are AbstractApiMessageSerde's), with the storage module's four record types
    (RemoteLogSegmentMetadataRecord 0, ...UpdateRecord 1, RemotePartitionDeleteMetadataRecord 2,
    RemoteLogSegmentMetadataSnapshotRecord 3). Raises MetadataError."""
    return _decode_framed(value, version, REMOTE_LOG_METADATA)


def _decode_framed(value: bytes, version: KafkaVersion, topic: str) -> MetadataRecord:
    frame, pos = _unsigned_short(value, 0, "frame version")
    if frame == 0:
        raise MetadataError("Could not deserialize metadata record with frame version 0. Note that upgrades from "
                            "the preview release of KRaft in 2.8 to newer versions are not supported.")
    if frame != 1:
        raise MetadataError(f"Could not deserialize metadata record due to unknown frame version {frame}"
                            "(only frame version 1 is supported)")
    api_key, pos = _unsigned_short(value, pos, "type")
    record_version, pos = _unsigned_short(value, pos, "version")
    name = _metadata_types(version, topic).get(api_key)
    if name is None:
        raise MetadataError(f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id "
                            f"{api_key}")
    s = schema(name, version)
    assert s is not None
    try:
        message = read_checked(s, value[pos:], record_version)
    except MessageError as e:
        raise MetadataError(f"Failed to deserialize record with type {api_key}") from e
    garbage = len(value) - pos - _consumed(s, value[pos:], record_version)
    if garbage > 0:
        raise MetadataError(f"Found {garbage} byte(s) of garbage after {api_key}")
    return MetadataRecord(_snake(s.name), record_version, s, message)


# TransactionState ids -> names (coordinator/transaction/TransactionState.java; Scala's in 3.9)
TXN_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
              "PrepareEpochFence")


# RemoteLogSegmentState and RemotePartitionDeleteState (storage/api's enums): id -> name. An id outside them is
# null in Kafka (forId), which the metadata objects' constructors refuse.
REMOTE_SEGMENT_STATES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED", 2: "DELETE_SEGMENT_STARTED",
                         3: "DELETE_SEGMENT_FINISHED"}
REMOTE_PARTITION_DELETE_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED",
                                  2: "DELETE_PARTITION_FINISHED"}


class JavaException(Exception):
    """What the tool throws (and dies of) where 3.9's transaction-log formatter meets bad bytes."""

    def __init__(self, java_class: str, message: str | None = None) -> None:
        super().__init__(java_class if message is None else f"{java_class}: {message}")
        self.java_class, self.message = java_class, message


def _java_int(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def _java_string_hash(s: str) -> int:
    """java.lang.String.hashCode over UTF-16 code units."""
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return _java_int(h)


def _hash_set_order(partitions: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The iteration order of a scala.collection.mutable.HashSet[TopicPartition] holding `partitions`
    (3.9 keeps a transaction's partitions in one): buckets of `improved hash & (size - 1)`, in each
    bucket by improved hash; the table starts at 16 and doubles once 3/4 full. TopicPartition.hashCode is
    31 * (31 + partition) + topic.hashCode()."""
    unique = list(dict.fromkeys(partitions))
    size = 16
    while len(unique) >= size * 3 // 4:
        size *= 2

    def improved(tp: tuple[str, int]) -> int:
        h = _java_int(31 * (31 + tp[1]) + _java_string_hash(tp[0]))
        return _java_int(h ^ ((h & 0xFFFFFFFF) >> 16))

    return sorted(unique, key=lambda tp: (improved(tp) & (size - 1), improved(tp)))


def transaction_text_v3(key: bytes, value: bytes | None) -> tuple[str, str | None]:
    """(key, payload) as Kafka 3.9's TransactionLog.formatRecordKeyAndValue prints them. Its errors are no
    parse result but the exception the tool dies of (JavaException)."""
    if len(key) < 2:
        raise JavaException("java.nio.BufferUnderflowException")
    key_version = int.from_bytes(key[:2], "big", signed=True)
    if key_version != 0:
        return f"unknown::version={key_version}", None
    key_schema, value_schema = (schema(n, KafkaVersion.V3_9) for n in ("TransactionLogKey", "TransactionLogValue"))
    assert key_schema is not None and value_schema is not None
    try:
        tid = read_message(key_schema, key[2:], 0)["TransactionalId"]
        text = f"transaction_metadata::transactionalId={tid}"
        if value is None:
            return text, "<DELETE>"
        if len(value) < 2:
            raise JavaException("java.nio.BufferUnderflowException")
        version = int.from_bytes(value[:2], "big", signed=True)
        if version not in value_schema.valid:
            raise JavaException("java.lang.IllegalStateException",
                                f"Unknown version {version} from the transaction log message value")
        v = read_checked(value_schema, value[2:], version)
    except MessageError as e:
        if _java_message(e) == "null":
            raise JavaException("java.nio.BufferUnderflowException") from e
        raise JavaException("java.lang.RuntimeException", _java_message(e)) from e
    status = v["TransactionStatus"]
    if not 0 <= status < len(TXN_STATES):
        raise JavaException("java.lang.IllegalStateException",
                            f"Unknown transaction state id {status} from the transaction status message")
    partitions = _hash_set_order([(p["Topic"], i) for p in v["TransactionPartitions"] or [] for i in p["PartitionIds"]])
    return text, (f"producerId:{v['ProducerId']},producerEpoch:{v['ProducerEpoch']},state={TXN_STATES[status]},"
                  f"partitions=[{','.join(f'{t}-{p}' for t, p in partitions)}],"
                  f"txnLastUpdateTimestamp={v['TransactionLastUpdateTimestampMs']},"
                  f"txnTimeoutMs={v['TransactionTimeoutMs']}")


__all__ = ["CLUSTER_METADATA", "CONSUMER_OFFSETS", "REMOTE_LOG_METADATA", "REMOTE_PARTITION_DELETE_STATES",
           "REMOTE_SEGMENT_STATES", "SHARE_GROUP_STATE", "TRANSACTION_STATE", "TXN_STATES", "CoordinatorRecord",
           "JavaException", "MetadataError", "MetadataRecord", "RecordError", "UnknownRecordType", "decode_metadata",
           "decode_record", "decode_remote_log_metadata", "schema", "transaction_text_v3"]
