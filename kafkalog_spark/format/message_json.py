"""A decoded message as the JSON text Kafka's generated `<Name>JsonConverter.write(message, version)`
prints through Jackson's `JsonNode.toString()`.

The generated converters (Kafka's generator/.../JsonConverterGenerator.java) write the fields in schema
order under their camelCase names, only those present at `version`; a non-default value of a field the
version lacks throws UnsupportedVersionException; a tagged field is written only when it is not its
default. Jackson prints compact JSON: no spaces, strings escaped with `\\"`, `\\\\`, the short escapes
`\\b \\t \\n \\f \\r` and `\\u00XX` (upper-case hex) for the other control characters, everything
else (non-ASCII included) as is.
"""

from __future__ import annotations

import base64
from typing import Any

from .messages import Field, MessageSchema, Struct

_SHORT_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}
_ESCAPES = {c: _SHORT_ESCAPES.get(c, f"\\u{c:04X}") for c in [*range(0x20), 0x22, 0x5C]}


class UnsupportedVersionError(ValueError):
    """Kafka's UnsupportedVersionException from a JsonConverter: a value its version cannot hold."""


def jackson_string(s: str) -> str:
    return '"' + s.translate(_ESCAPES) + '"'


def kafka_uuid(b: bytes) -> str:
    """org.apache.kafka.common.Uuid.toString(): URL-safe base64 of the 16 bytes, no padding."""
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def _scalar(type_: str, v: Any) -> str:
    if v is None:
        return "null"
    if type_ == "bool":
        return "true" if v else "false"
    if type_ == "string":
        return jackson_string(v)
    if type_ == "uuid":
        return jackson_string(kafka_uuid(v))
    if type_ in ("bytes", "records"):
        return jackson_string(base64.b64encode(v).decode())  # Jackson's BinaryNode: base64 with padding
    if type_ == "float64":
        raise NotImplementedError("float64 fields print through Java's Double.toString")
    return str(int(v))


def _value(f: Field, type_: str, v: Any, version: int) -> str:
    if type_.startswith("[]"):
        if v is None:
            return "null"
        return "[" + ",".join(_value(f, type_[2:], e, version) for e in v) + "]"
    if f.struct is not None and type_ == f.struct.name:
        return "null" if v is None else struct_json(f.struct, v, version)
    return _scalar(type_, v)


def struct_json(s: Struct, values: dict[str, Any], version: int) -> str:
    parts = []
    for f in s.fields:
        v = values[f.name]
        if version in f.tagged:
            # the generated JsonConverter writes a tagged struct whatever its value (null included), other tagged
            # fields only when they differ from their default
            if v != f.default or (f.struct is not None and f.type == f.struct.name):
                parts.append(f"{jackson_string(f.json_name)}:{_value(f, f.type, v, version)}")
        elif version in f.versions:
            parts.append(f"{jackson_string(f.json_name)}:{_value(f, f.type, v, version)}")
        elif v != f.default and not (f.struct is not None and f.element_type is None):
            raise UnsupportedVersionError(f"Attempted to write a non-default {f.json_name} at version {version}")
    return "{" + ",".join(parts) + "}"


def message_json(schema: MessageSchema, message: dict[str, Any], version: int) -> str:
    return struct_json(schema.root, message, version)


__all__ = ["UnsupportedVersionError", "jackson_string", "kafka_uuid", "message_json"]
