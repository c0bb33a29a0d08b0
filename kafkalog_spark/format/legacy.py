"""Legacy message sets (magic 0 and 1): entries, compressed wrappers and their inner messages.

Legacy data is rare on modern brokers (only logs written before 0.11 and never rewritten), so this is
plain Python: clarity over speed. The v2 hot path is in :mod:`kafkalog_spark.format.compiled_scanners`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from .compression import DecompressionError, decompress
from .crc import crc32

TIMESTAMP_TYPE_MASK = 0x08
CODEC_MASK = 0x07


class LegacyFormatError(ValueError):
    """A legacy message whose fields overrun it; ``position`` is relative to the parsed buffer."""

    def __init__(self, message: str, position: int):
        super().__init__(message)
        self.position = position


@dataclass(slots=True)
class LegacyMessage:
    offset: int
    position: int  # of the entry (offset/size prefix), in the buffer it was parsed from
    size: int  # entry size in bytes, prefix included
    crc: int
    magic: int
    attributes: int
    timestamp: int  # -1 for magic 0
    key: bytes | None
    value: bytes | None
    is_valid: bool

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def timestamp_type(self) -> str:
        if self.magic == 0:
            return "NoTimestampType"
        return "LogAppendTime" if self.attributes & TIMESTAMP_TYPE_MASK else "CreateTime"


def parse_message(buf: bytes | memoryview, position: int, size: int) -> LegacyMessage:
    """Parse the legacy entry at ``position`` whose total size (prefix included) is ``size``."""
    end = position + size
    offset, _, crc, magic, attributes = struct.unpack_from(">qiIbb", buf, position)
    p = position + 18
    timestamp = -1
    if magic == 1:
        (timestamp,) = struct.unpack_from(">q", buf, p)
        p += 8
    key, p = _bytes_field(buf, p, end, "key")
    value, p = _bytes_field(buf, p, end, "value")
    if p != end:
        raise LegacyFormatError(f"message declares {size - 12} bytes but its fields take {p - position - 12}",
                                position)
    is_valid = crc32(buf[position + 16:end]) == crc
    return LegacyMessage(offset, position, size, crc, magic, attributes, timestamp, key, value, is_valid)


def _bytes_field(buf: bytes | memoryview, p: int, end: int, name: str) -> tuple[bytes | None, int]:
    if p + 4 > end:
        raise LegacyFormatError(f"{name} length runs past the message end", p)
    (n,) = struct.unpack_from(">i", buf, p)
    p += 4
    if n < 0:
        if n != -1:
            raise LegacyFormatError(f"negative {name} length {n}", p - 4)
        return None, p
    if p + n > end:
        raise LegacyFormatError(f"{name} of {n} bytes runs past the message end", p - 4)
    return bytes(buf[p:p + n]), p + n


def iter_entries(buf: bytes) -> Iterator[LegacyMessage]:
    """Entries of an uncompressed legacy message set (a wrapper's inner set); a partial tail ends it."""
    p = 0
    while len(buf) - p >= 12:
        (size,) = struct.unpack_from(">i", buf, p + 8)
        if size < 14:
            raise LegacyFormatError(f"inner message size {size} below the minimum of 14", p)
        if p + 12 + size > len(buf):
            return
        yield parse_message(buf, p, 12 + size)
        p += 12 + size


def deep_messages(wrapper: LegacyMessage, max_bytes: int) -> list[LegacyMessage]:
    """The messages a legacy entry stands for: itself, or a compressed wrapper's inner messages with
    absolute offsets (and the wrapper's timestamp when it uses LogAppendTime)."""
    if wrapper.codec == 0:
        return [wrapper]
    if wrapper.value is None:
        raise DecompressionError("compressed wrapper message has a null value")
    inner = list(iter_entries(decompress(wrapper.codec, wrapper.value, magic=wrapper.magic, max_bytes=max_bytes)))
    if not inner:
        raise DecompressionError("compressed wrapper message holds no inner messages")
    if wrapper.magic >= 1:
        # v1 inner offsets are relative (0..n-1); the wrapper carries the absolute offset of the last.
        # A wrapper offset of 0 (some old librdkafka releases) means the base offset is 0.
        base = wrapper.offset - inner[-1].offset if wrapper.offset != 0 else 0
        log_append = bool(wrapper.attributes & TIMESTAMP_TYPE_MASK)
        for m in inner:
            m.offset += base
            if log_append:
                m.timestamp = wrapper.timestamp
                m.attributes |= TIMESTAMP_TYPE_MASK
    return inner
