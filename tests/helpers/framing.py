"""Kafka's record batch framing walked with struct, apart from the decoder under test: what the tests take
expected positions, sizes and counts from.

A batch at byte position P holds its base offset at P and its length at P + 8, and takes 12 + length bytes (any
magic). A v2 batch also holds its attributes at P + 21 (codec in bits 0-2, control in bit 5), its last offset delta
at P + 23, its record count at P + 57, and its records from P + 61."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import NamedTuple

LOG_OVERHEAD = 12  # the base offset and the length field, which the length does not count
RECORDS_OFFSET = 61  # a v2 batch's header size: its records (compressed or not) start here


class Batch(NamedTuple):
    """A batch of any magic, as its framing places it."""

    position: int
    size: int
    base_offset: int


class Frame(NamedTuple):
    """A v2 batch as its header gives it, with its records region (compressed or not)."""

    position: int
    size: int
    base_offset: int
    last_offset: int
    count: int
    attributes: int
    payload: bytes

    @property
    def codec(self) -> int:
        return self.attributes & 7

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & 0x20)


def _data(source: bytes | bytearray | Path) -> bytes:
    return source.read_bytes() if isinstance(source, Path) else bytes(source)


def batches(source: bytes | bytearray | Path) -> list[Batch]:
    """The batches of a sound segment (its bytes or its path), in file order; it must end with its last batch."""
    data, out, position = _data(source), [], 0
    while position + LOG_OVERHEAD <= len(data):
        base, length = struct.unpack_from(">qi", data, position)
        out.append(Batch(position, LOG_OVERHEAD + length, base))
        position += LOG_OVERHEAD + length
    assert position == len(data), (source if isinstance(source, Path) else "segment", position, len(data))
    return out


def frames(source: bytes | bytearray | Path) -> list[Frame]:
    """The v2 batches of a sound segment (its bytes or its path), in file order."""
    data = _data(source)
    out = []
    for b in batches(data):
        attributes, delta = struct.unpack_from(">hi", data, b.position + 21)
        count = struct.unpack_from(">i", data, b.position + 57)[0]
        out.append(Frame(b.position, b.size, b.base_offset, b.base_offset + delta, count, attributes,
                         data[b.position + RECORDS_OFFSET:b.position + b.size]))
    return out
