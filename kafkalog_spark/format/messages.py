"""One generic reader for Kafka's message schema language (clients/src/main/resources/common/message/*.json).

Kafka generates a Java class per schema (`<Name>.read(Readable, version)`); here the schemas stay data
(dicts in the JSON form Kafka writes them) and :func:`read_message` walks them. Covered: the integer
types, bool, float64, string, bytes/records, uuid, arrays of anything, nested and common structs,
nullable fields, flexible versions (compact lengths, tagged fields) and defaults for fields absent
from a version. Values come back as plain Python (uuid as its 16 bytes, bytes as bytes).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from .java_text import java_utf8


class MessageError(ValueError):
    """Bytes that do not fit the schema; `position` is the byte offset inside the message."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.position = position


@dataclass(frozen=True)
class Versions:
    """A version range as Kafka writes it: "0+", "1-3", "2", "none"."""

    low: int
    high: int  # inclusive; 32767 for "N+"

    @staticmethod
    def parse(text: str | None) -> Versions:
        if text is None or text == "none":
            return Versions(1, 0)  # empty
        if text.endswith("+"):
            return Versions(int(text[:-1]), 0x7FFF)
        low, _, high = text.partition("-")
        return Versions(int(low), int(high or low))

    def __contains__(self, version: int) -> bool:
        return self.low <= version <= self.high


_FIXED = {"int8": ">b", "int16": ">h", "uint16": ">H", "int32": ">i", "uint32": ">I", "int64": ">q",
          "float64": ">d"}
_DEFAULT_ZERO = {"int8", "int16", "uint16", "int32", "uint32", "int64"}
ZERO_UUID = bytes(16)


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # "int32", "[]Voter", "Voter", ...
    versions: Versions
    nullable: Versions
    tagged: Versions
    tag: int | None
    default: Any
    struct: Struct | None  # for struct and array-of-struct types

    @property
    def json_name(self) -> str:
        """The name the generated JsonConverter uses: the first letter lower-cased (KRaftVersion -> kRaftVersion)."""
        return self.name[:1].lower() + self.name[1:]

    @property
    def element_type(self) -> str | None:
        return self.type[2:] if self.type.startswith("[]") else None


@dataclass(frozen=True)
class Struct:
    name: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class MessageSchema:
    name: str
    valid: Versions
    flexible: Versions
    root: Struct


def _default(spec: dict, type_: str, nullable: Versions) -> Any:
    if "default" in spec:
        d = spec["default"]
        if d == "null":
            return None
        if type_ in _DEFAULT_ZERO:
            return int(d, 0) if isinstance(d, str) else int(d)
        if type_ == "bool":
            return d in (True, "true")
        if type_ == "float64":
            return float(d)
        return d
    if type_ in _DEFAULT_ZERO:
        return 0
    if type_.startswith("[]"):
        return []
    # a struct's default (all its fields' defaults) is built where it is needed: _default_struct
    return {"bool": False, "float64": 0.0, "string": "", "uuid": ZERO_UUID, "bytes": b"", "records": None}.get(type_)


def _struct(name: str, specs: list[dict], common: dict[str, list[dict]]) -> Struct:
    fields = []
    for spec in specs:
        type_ = spec["type"]
        element = type_[2:] if type_.startswith("[]") else type_
        sub = None
        if "fields" in spec:
            sub = _struct(element, spec["fields"], common)
        elif element in common:
            sub = _struct(element, common[element], common)
        nullable = Versions.parse(spec.get("nullableVersions"))
        default = _default(spec, type_, nullable)
        fields.append(Field(spec["name"], type_, Versions.parse(spec["versions"]), nullable,
                            Versions.parse(spec.get("taggedVersions")), spec.get("tag"), default, sub))
    return Struct(name, tuple(fields))


def parse_schema(spec: dict) -> MessageSchema:
    """A schema in Kafka's JSON form (comments and "about" texts may be left out)."""
    common = {s["name"]: s["fields"] for s in spec.get("commonStructs", [])}
    return MessageSchema(spec["name"], Versions.parse(spec["validVersions"]),
                         Versions.parse(spec.get("flexibleVersions")), _struct(spec["name"], spec["fields"], common))


class _Reader:
    """Kafka's ByteBufferAccessor plus the varint and compact forms of `Readable`."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise MessageError(f"need {n} bytes at {self.pos}, {len(self.data) - self.pos} left", self.pos)
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def fixed(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def uvarint(self) -> int:
        value, shift = 0, 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7
            if shift > 28:
                raise MessageError("varint longer than 5 bytes", self.pos)

    def length(self, flexible: bool, wide: bool = False) -> int:
        """A length prefix; -1 for null. Compact forms store length + 1 as an unsigned varint."""
        if flexible:
            return self.uvarint() - 1
        return self.fixed(">i" if wide else ">h")


def _value(r: _Reader, field: Field, type_: str, version: int, flexible: bool) -> Any:
    if type_ in _FIXED:
        return r.fixed(_FIXED[type_])
    if type_ == "bool":
        return r.take(1)[0] != 0
    if type_ == "uuid":
        return r.take(16)
    if type_ == "string":
        n = r.length(flexible)
        if n < 0:
            return _null(r, field, version)
        return java_utf8(r.take(n))
    if type_ in ("bytes", "records"):
        n = r.length(flexible, wide=True)
        return _null(r, field, version) if n < 0 else r.take(n)
    if type_.startswith("[]"):
        n = r.length(flexible, wide=True)
        if n < 0:
            return _null(r, field, version)
        element = type_[2:]
        return [_value(r, field, element, version, flexible) for _ in range(n)]
    if field.struct is None:
        raise MessageError(f"unknown type {type_} of field {field.name}", r.pos)
    if version in field.nullable and type_ == field.type:  # the field itself, not an element of a nullable array
        # A nullable struct starts with a presence marker, as the generated readers read it: an unsigned varint in
        # flexible versions (0: null), an int8 otherwise (negative: null).
        present = r.uvarint() > 0 if flexible else r.fixed(">b") >= 0
        if not present:
            return None
    return _read_struct(r, field.struct, version, flexible)


def _null(r: _Reader, field: Field, version: int) -> None:
    if version not in field.nullable:
        raise MessageError(f"non-nullable field {field.json_name} was serialized as null", r.pos)
    return None


def _absent(f: Field) -> Any:
    if f.struct is not None and f.element_type is None and f.default is None:
        return {g.name: _absent(g) for g in f.struct.fields}
    return list(f.default) if isinstance(f.default, list) else f.default


def _read_struct(r: _Reader, s: Struct, version: int, flexible: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    tagged: dict[int, Field] = {}
    for f in s.fields:
        if version in f.tagged and f.tag is not None:
            tagged[f.tag] = f
            out[f.name] = _absent(f)
        elif version in f.versions:
            out[f.name] = _value(r, f, f.type, version, flexible)
        else:
            out[f.name] = _absent(f)
    if flexible:
        for _ in range(r.uvarint()):
            tag, size = r.uvarint(), r.uvarint()
            end = r.pos + size
            if tag in tagged:
                out[tagged[tag].name] = _value(r, tagged[tag], tagged[tag].type, version, flexible)
                if r.pos != end:
                    raise MessageError(f"tagged field {tag} is {size} bytes, read {r.pos - end + size}", r.pos)
            else:
                r.take(size)  # an unknown tagged field: kept raw by Kafka, never printed
    return out


def read_message(schema: MessageSchema, data: bytes, version: int) -> dict[str, Any]:
    """The message in `data` read at `version` (Kafka's generated `<Name>(Readable, version)`).
    Trailing bytes are ignored, as Kafka's readers ignore them. Raises MessageError."""
    return _read_struct(_Reader(data), schema.root, version, version in schema.flexible)


__all__ = ["Field", "MessageError", "MessageSchema", "Struct", "Versions", "ZERO_UUID", "parse_schema",
           "read_message"]
