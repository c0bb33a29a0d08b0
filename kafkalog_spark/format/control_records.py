"""The values of KRaft control records: LeaderChange, SnapshotHeader, SnapshotFooter, KRaftVersion, KRaftVoters.

A control record's key is (version int16, type int16) (ControlRecordType); its value is one message
of Kafka's schema language. Kafka reads every one of these values at version 0
(clients/.../record/internal/ControlRecordUtils.java: `new LeaderChangeMessage(accessor, (short) 0)`),
whatever the message's own `Version` field says; dump-log then prints it as JSON at that field's
version. The schemas below are the fields of clients/src/main/resources/common/message/
LeaderChangeMessage.json, SnapshotHeaderRecord.json, SnapshotFooterRecord.json, KRaftVersionRecord.json
and VotersRecord.json as Kafka 3.9 and 4.x ship them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .messages import MessageError, MessageSchema, parse_schema, read_message

_V0 = {"versions": "0+"}

LEADER_CHANGE = parse_schema({
    "name": "LeaderChangeMessage", "validVersions": "0-1", "flexibleVersions": "0+",
    "fields": [
        {"name": "Version", "type": "int16", **_V0},
        {"name": "LeaderId", "type": "int32", **_V0},
        {"name": "Voters", "type": "[]Voter", **_V0},
        {"name": "GrantingVoters", "type": "[]Voter", **_V0},
    ],
    "commonStructs": [{"name": "Voter", "versions": "0+", "fields": [
        {"name": "VoterId", "type": "int32", **_V0},
        {"name": "VoterDirectoryId", "type": "uuid", "versions": "1+"},
    ]}],
})

SNAPSHOT_HEADER = parse_schema({
    "name": "SnapshotHeaderRecord", "validVersions": "0", "flexibleVersions": "0+",
    "fields": [
        {"name": "Version", "type": "int16", **_V0},
        {"name": "LastContainedLogTimestamp", "type": "int64", **_V0},
    ],
})

SNAPSHOT_FOOTER = parse_schema({
    "name": "SnapshotFooterRecord", "validVersions": "0", "flexibleVersions": "0+",
    "fields": [{"name": "Version", "type": "int16", **_V0}],
})

KRAFT_VERSION = parse_schema({
    "name": "KRaftVersionRecord", "validVersions": "0", "flexibleVersions": "0+",
    "fields": [
        {"name": "Version", "type": "int16", **_V0},
        {"name": "KRaftVersion", "type": "int16", **_V0},
    ],
})

VOTERS = parse_schema({
    "name": "VotersRecord", "validVersions": "0", "flexibleVersions": "0+",
    "fields": [
        {"name": "Version", "type": "int16", **_V0},
        {"name": "Voters", "type": "[]Voter", **_V0, "fields": [
            {"name": "VoterId", "type": "int32", **_V0},
            {"name": "VoterDirectoryId", "type": "uuid", **_V0},
            {"name": "Endpoints", "type": "[]Endpoint", **_V0, "fields": [
                {"name": "Name", "type": "string", **_V0},
                {"name": "Host", "type": "string", **_V0},
                {"name": "Port", "type": "uint16", **_V0},
            ]},
            {"name": "KRaftVersionFeature", "type": "KRaftVersionFeature", **_V0, "fields": [
                {"name": "MinSupportedVersion", "type": "int16", **_V0},
                {"name": "MaxSupportedVersion", "type": "int16", **_V0},
            ]},
        ]},
    ],
})

# ControlRecordType ids (clients/.../record/internal/ControlRecordType.java) with a message value
SCHEMAS: dict[str, MessageSchema] = {
    "LEADER_CHANGE": LEADER_CHANGE,
    "SNAPSHOT_HEADER": SNAPSHOT_HEADER,
    "SNAPSHOT_FOOTER": SNAPSHOT_FOOTER,
    "KRAFT_VERSION": KRAFT_VERSION,
    "KRAFT_VOTERS": VOTERS,
}
READ_VERSION = 0  # ControlRecordUtils reads every control message at version 0


@dataclass(frozen=True)
class ControlMessage:
    control_type: str  # ControlRecordType name, e.g. LEADER_CHANGE
    schema: MessageSchema
    message: dict[str, Any]

    @property
    def version(self) -> int:
        """The message's own Version field: the version dump-log prints it at."""
        return int(self.message["Version"])


def decode_control_message(control_type: str, value: bytes | None) -> ControlMessage | None:
    """The value of a KRaft control record, or None for types without a message (COMMIT/ABORT have
    their own EndTransactionMarker, UNKNOWN has nothing). Raises MessageError on bytes that do not
    fit, as Kafka's reader throws (a null value included)."""
    schema = SCHEMAS.get(control_type)
    if schema is None:
        return None
    if value is None:
        raise MessageError(f"{control_type} control record without a value", 0)
    return ControlMessage(control_type, schema, read_message(schema, value, READ_VERSION))


__all__ = ["SCHEMAS", "ControlMessage", "decode_control_message"]
