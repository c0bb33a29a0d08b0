"""Decompression of batch payloads as Kafka writes them: gzip, snappy (two framings), lz4, zstd.

Every codec is capped: a payload that would inflate past ``max_bytes`` raises
:class:`DecompressionError` instead of exhausting memory (a decompression bomb), and so does a corrupt
stream. The caller turns the error into a finding at the batch's position.
"""

from __future__ import annotations

import io
import struct
import zlib
from enum import IntEnum

# Kafka's own names for the codec ids in the attributes' low three bits.
CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")

XERIAL_MAGIC = b"\x82SNAPPY\x00"
LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"
DEFAULT_MAX_DECOMPRESSED = 256 * 1024 * 1024


class Codec(IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


def codec_name(codec_id: int) -> str:
    return CODEC_NAMES[codec_id] if 0 <= codec_id < len(CODEC_NAMES) else f"unknown({codec_id})"


class DecompressionError(ValueError):
    """A payload that cannot be decompressed within the size cap."""


def decompress(codec: int, payload: bytes | memoryview, *, magic: int = 2,
               max_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> bytes:
    """Decompress one batch payload (v2: bytes 61.. of the batch; v0/v1: the wrapper's value)."""
    try:
        if codec == Codec.GZIP:
            return _gunzip(payload, max_bytes)
        if codec == Codec.SNAPPY:
            return _unsnappy(bytes(payload), max_bytes)
        if codec == Codec.LZ4:
            return _unlz4(bytes(payload), magic, max_bytes)
        if codec == Codec.ZSTD:
            return _unzstd(payload, max_bytes)
    except DecompressionError:
        raise
    except Exception as e:  # each library has its own error types; all mean "corrupt stream"
        raise DecompressionError(f"corrupt {codec_name(codec)} stream: {e}") from None
    raise DecompressionError(f"unknown compression codec id {codec}")


def _check(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise DecompressionError(f"decompressed size exceeds the cap of {max_bytes} bytes")


def _gunzip(payload: bytes | memoryview, max_bytes: int) -> bytes:
    # Java's GZIPInputStream reads concatenated members; so do we.
    out = bytearray()
    data = bytes(payload)
    while data:
        d = zlib.decompressobj(wbits=31)
        out += d.decompress(data, max_bytes + 1 - len(out))
        _check(len(out), max_bytes)
        if not d.eof:
            raise DecompressionError("truncated gzip stream")
        data = d.unused_data
    return bytes(out)


def _snappy_raw(block: bytes, max_bytes: int) -> bytes:
    import snappy

    # The raw format starts with the uncompressed length as a varint: check the cap before inflating.
    length, shift = 0, 0
    for i, b in enumerate(block[:5]):
        length |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            break
        if i == 4:
            raise DecompressionError("bad snappy length prefix")
    _check(length, max_bytes)
    return snappy.uncompress(block)


def _unsnappy(payload: bytes, max_bytes: int) -> bytes:
    # The Java client writes xerial framing; librdkafka writes a raw block. Sniff the magic.
    if not payload.startswith(XERIAL_MAGIC):
        return _snappy_raw(payload, max_bytes)
    out = bytearray()
    pos = 0
    while pos < len(payload):
        if payload.startswith(XERIAL_MAGIC, pos):  # concatenated streams restart with a header
            pos += 16
            continue
        if pos + 4 > len(payload):
            raise DecompressionError(f"truncated xerial snappy chunk header at {pos}")
        (n,) = struct.unpack_from(">i", payload, pos)
        pos += 4
        if n < 0 or pos + n > len(payload):
            raise DecompressionError(f"xerial snappy chunk of {n} bytes overruns the payload at {pos - 4}")
        out += _snappy_raw(payload[pos:pos + n], max_bytes - len(out))
        pos += n
    return bytes(out)


def _xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32 of a few bytes: only the LZ4 frame descriptor needs it, to mend Kafka's magic-0 quirk."""
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    n = len(data)
    i = 0
    if n >= 16:
        v = [(seed + p1 + p2) & mask, (seed + p2) & mask, seed & mask, (seed - p1) & mask]
        while i + 16 <= n:
            for j in range(4):
                (lane,) = struct.unpack_from("<I", data, i + 4 * j)
                v[j] = (rotl((v[j] + lane * p2) & mask, 13) * p1) & mask
            i += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & mask
    else:
        h = (seed + p5) & mask
    h = (h + n) & mask
    while i + 4 <= n:
        (lane,) = struct.unpack_from("<I", data, i)
        h = (rotl((h + lane * p3) & mask, 17) * p4) & mask
        i += 4
    while i < n:
        h = (rotl((h + data[i] * p5) & mask, 11) * p1) & mask
        i += 1
    h ^= h >> 15
    h = (h * p2) & mask
    h ^= h >> 13
    h = (h * p3) & mask
    h ^= h >> 16
    return h


def _lz4_descriptor_end(frame: bytes) -> int:
    flg = frame[4]
    end = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    if len(frame) <= end:
        raise DecompressionError("truncated lz4 frame descriptor")
    return end


STEP = 1 << 20  # python-lz4 and python-zstandard allocate what they are allowed to return: ask for 1 MiB at a time
# Header checksum of the frame descriptors Kafka's Java client writes (FLG 0x60, BD 0x40..0x70): no xxh32 needed
_KNOWN_LZ4_HC = {bytes([0x60, bd]): (_xxh32(bytes([0x60, bd])) >> 8) & 0xFF for bd in (0x40, 0x50, 0x60, 0x70)}


def _unlz4(payload: bytes, magic: int, max_bytes: int) -> bytes:
    import lz4.frame

    if not payload.startswith(LZ4_FRAME_MAGIC):
        raise DecompressionError("missing lz4 frame magic")
    end = _lz4_descriptor_end(payload)
    hc = _KNOWN_LZ4_HC.get(payload[4:end])
    good_hc = hc if hc is not None else (_xxh32(payload[4:end]) >> 8) & 0xFF
    if payload[end] != good_hc:
        # Kafka's magic-0 writer computed the header checksum over magic+descriptor (KAFKA-3160); it
        # accepts that form for magic 0 only, and so do we.
        broken_hc = (_xxh32(payload[0:end]) >> 8) & 0xFF
        if magic != 0 or payload[end] != broken_hc:
            raise DecompressionError("lz4 frame header checksum mismatch")
        payload = payload[:end] + bytes([good_hc]) + payload[end + 1:]
    d = lz4.frame.LZ4FrameDecompressor()
    out = bytearray(d.decompress(payload, max_length=min(STEP, max_bytes + 1)))
    while not d.eof and not d.needs_input and len(out) <= max_bytes:
        out += d.decompress(b"", max_length=min(STEP, max_bytes + 1 - len(out)))
    _check(len(out), max_bytes)
    if not d.eof:
        raise DecompressionError("truncated lz4 frame")
    return bytes(out)


def _unzstd(payload: bytes | memoryview, max_bytes: int) -> bytes:
    import zstandard

    # The content size may be absent from the frame header: stream, reading at most cap + 1 bytes.
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(payload), read_across_frames=True)
    out = bytearray()
    while chunk := reader.read(min(STEP, max_bytes + 1 - len(out))):
        out += chunk
        _check(len(out), max_bytes)
    return bytes(out)
