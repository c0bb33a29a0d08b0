"""Decompression of batch payloads as Kafka writes them: gzip, snappy (two framings), lz4, zstd.

Every codec is capped: a payload that would inflate past ``max_bytes`` raises
:class:`DecompressionError` instead of exhausting memory (a decompression bomb), and so does a corrupt
stream. The caller turns the error into a finding at the batch's position. The codecs write their output
piece by piece into one buffer (:class:`Output`), so memory stays within the cap, not a multiple of it.
"""

from __future__ import annotations

import mmap
import struct
import zlib
from enum import IntEnum

import numpy as np

# Kafka's own names for the codec ids in the attributes' low three bits.
CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")
# Every value of the three codec bits of a batch's attributes, as the batches view labels it (codec_name's words)
CODEC_LABELS = (*CODEC_NAMES, "unknown(5)", "unknown(6)", "unknown(7)")

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


def over_cap(max_bytes: int) -> DecompressionError:
    return DecompressionError(f"decompressed size exceeds the cap of {max_bytes} bytes")


STEP = 1 << 20  # the codecs hand their output over in pieces of at most this many bytes
# A buffer grows by doubling up to this size; past it, one allocation takes all the batch may still write
# (doubling a buffer that holds most of a large batch would hold it twice while copying).
DOUBLING_LIMIT = 64 * 1024 * 1024


# Anonymous mappings private to this process (Python's default for fd -1 is MAP_SHARED: shmem, shared with forked
# children); Windows' mmap has no flags
_PRIVATE = {"flags": mmap.MAP_PRIVATE} if hasattr(mmap, "MAP_PRIVATE") else {}
_HUGE_FROM = 4 << 20  # as numpy's allocator: transparent huge pages (if madvise enables them) from 4 MiB, fewer faults


def _mapped(size: int) -> np.ndarray:
    """An uninitialised uint8 array of ``size`` bytes in its own anonymous mapping: its pages cost memory only once
    written, and all go back to the system when the array is released. (``np.empty`` takes them from malloc, and
    glibc serves sizes under its mmap threshold, which it raises up to 32 MiB once such a block was freed, from its
    heap, which keeps a freed block that lies below a live one resident: a buffer doubling 1 -> 32 MiB then held
    every size it outgrew, ~2 x the cap.)"""
    pages = mmap.mmap(-1, size, **_PRIVATE)
    if size >= _HUGE_FROM and hasattr(mmap, "MADV_HUGEPAGE"):
        pages.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(pages, np.uint8)


class ByteBuffer:
    """A growable byte buffer (numpy, so the compiled kernels write into it too). Growing copies only the
    bytes in use, and the pages of a grown buffer (:func:`_mapped`) cost memory only once written: a
    reservation is free until it is filled, and the buffer it replaces is returned whole."""

    def __init__(self, array: np.ndarray | None = None):
        self.array = np.empty(1 << 16, np.uint8) if array is None else array

    def grow(self, used: int, need: int, reserve: int = 0) -> np.ndarray:
        """The buffer with at least ``need`` bytes free after ``used`` (the contents up to ``used`` kept); past
        DOUBLING_LIMIT, with ``reserve`` free bytes at once."""
        if len(self.array) - used < need:
            size = max(2 * len(self.array), used + need, 1 << 20)
            if reserve and size > DOUBLING_LIMIT:
                size = used + max(need, reserve)
            bigger = _mapped(size)
            bigger[:used] = self.array[:used]
            self.array = bigger
        return self.array


class Output:
    """Where one payload is decompressed to: ``buffer`` from ``start``, at most ``max_bytes`` (one byte more
    is the proof that a payload exceeds the cap)."""

    def __init__(self, buffer: ByteBuffer, start: int, max_bytes: int):
        self.buffer = buffer
        self.start = self.end = start
        self.max_bytes = max_bytes

    def __len__(self) -> int:
        return self.end - self.start

    def left(self) -> int:
        """How many more bytes may come before the payload is known to exceed the cap (at least 1)."""
        return self.max_bytes + 1 - len(self)

    def room(self, n: int) -> np.ndarray:
        """n writable bytes at the end (commit them with :meth:`advance`). Bytes past the cap are refused before
        they are written, so the buffer never needs more than ``max_bytes`` from ``start``."""
        array = self.buffer.grow(self.end, n, reserve=self.max_bytes - len(self))
        return array[self.end:self.end + n]

    def advance(self, n: int) -> None:
        self.end += n
        if len(self) > self.max_bytes:
            raise over_cap(self.max_bytes)

    def write(self, piece: bytes | memoryview) -> None:
        if len(self) + len(piece) > self.max_bytes:  # refuse before copying: the piece is not kept
            self.advance(len(piece))
        self.room(len(piece))[:] = np.frombuffer(piece, np.uint8)
        self.advance(len(piece))

    def tobytes(self) -> bytes:
        return self.buffer.array[self.start:self.end].tobytes()


def decompress(codec: int, payload: bytes | memoryview, *, magic: int = 2,
               max_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> bytes:
    """Decompress one batch payload (v2: bytes 61.. of the batch; v0/v1: the wrapper's value)."""
    out = Output(ByteBuffer(), 0, max_bytes)
    decompress_into(codec, payload, out, magic=magic)
    return out.tobytes()


def decompress_into(codec: int, payload: bytes | memoryview, out: Output, *, magic: int = 2) -> None:
    """Decompress one batch payload into ``out``, piece by piece: memory stays within the cap (plus one
    piece), even for a decompression bomb."""
    try:
        if codec == Codec.GZIP:
            return _gunzip(payload, out)
        if codec == Codec.SNAPPY:
            return _unsnappy(bytes(payload), out)
        if codec == Codec.LZ4:
            return _unlz4(bytes(payload), magic, out)
        if codec == Codec.ZSTD:
            return _unzstd(payload, out)
    except DecompressionError:
        raise
    except Exception as e:  # each library has its own error types; all mean "corrupt stream"
        raise DecompressionError(f"corrupt {codec_name(codec)} stream: {e}") from None
    raise DecompressionError(f"unknown compression codec id {codec}")


def _check(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise over_cap(max_bytes)


def _gunzip(payload: bytes | memoryview, out: Output) -> None:
    # Java's GZIPInputStream reads concatenated members; so do we.
    data = bytes(payload)
    while data:
        d = zlib.decompressobj(wbits=31)
        while not d.eof:
            piece = d.decompress(data, min(STEP, out.left()))
            out.write(piece)
            if not piece and len(d.unconsumed_tail) == len(data):
                break  # no progress: the input ended inside the member
            data = d.unconsumed_tail
        if not d.eof:
            raise DecompressionError("truncated gzip stream")
        data = d.unused_data


def _snappy_raw(block: bytes, out: Output) -> None:
    from cramjam import snappy  # python-snappy's own backend: it decompresses into a given buffer

    # The raw format starts with the uncompressed length as a varint: check the cap before inflating.
    length, shift = 0, 0
    for i, b in enumerate(block[:5]):
        length |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            break
        if i == 4:
            raise DecompressionError("bad snappy length prefix")
    _check(len(out) + length, out.max_bytes)
    out.advance(snappy.decompress_raw_into(block, out.room(length)))


def _unsnappy(payload: bytes, out: Output) -> None:
    # The Java client writes xerial framing; librdkafka writes a raw block. Sniff the magic.
    if not payload.startswith(XERIAL_MAGIC):
        return _snappy_raw(payload, out)
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
        _snappy_raw(payload[pos:pos + n], out)
        pos += n


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


# Header checksum of the frame descriptors Kafka's Java client writes (FLG 0x60, BD 0x40..0x70): no xxh32 needed
_KNOWN_LZ4_HC = {bytes([0x60, bd]): (_xxh32(bytes([0x60, bd])) >> 8) & 0xFF for bd in (0x40, 0x50, 0x60, 0x70)}


def _unlz4(payload: bytes, magic: int, out: Output) -> None:
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
    out.write(d.decompress(payload, max_length=min(STEP, out.left())))
    while not d.eof and not d.needs_input:
        out.write(d.decompress(b"", max_length=min(STEP, out.left())))
    if not d.eof:
        raise DecompressionError("truncated lz4 frame")


ZSTD_TRUNCATED = "truncated zstd stream"
ZSTD_FRAME_MIN = 5  # libzstd's ZSTD_startingInputLength: fewer bytes after a frame cannot start another
# Output of one zstd block (<= 128 KiB) per input byte, at most: a block takes 3 header bytes and 1 or more
# content bytes. Input slices of STEP / this keep every piece of output within about STEP.
_ZSTD_MAX_RATIO = (128 * 1024) // 4


def _unzstd(payload: bytes | memoryview, out: Output) -> None:
    """Frame after frame, as libzstd's one-shot ZSTD_decompressDCtx (the compiled path) reads a payload:
    skippable frames skipped, a frame declaring more than the cap refused before it is read, a truncated
    frame or 1..4 stray bytes at the end an error. (Streaming, libzstd also holds the frame's window: up
    to 128 MiB, its default limit, as in Kafka's zstd-jni.)"""
    import zstandard

    data = memoryview(payload)
    try:
        while len(data) >= ZSTD_FRAME_MIN:
            declared = _zstd_content_size(data)
            if declared is not None and declared > out.max_bytes - len(out):
                raise over_cap(out.max_bytes)
            d = zstandard.ZstdDecompressor().decompressobj()
            pos = 0
            while not d.eof and pos < len(data):
                step = max(4, min(out.left(), STEP) // _ZSTD_MAX_RATIO)
                out.write(d.decompress(data[pos:pos + step]))
                pos = min(pos + step, len(data))
            if not d.eof:
                raise DecompressionError(ZSTD_TRUNCATED)
            data = data[pos - len(d.unused_data):]
    except zstandard.ZstdError as e:
        # python-zstandard words libzstd's error name as "zstd decompress(or) error: <name>"
        raise DecompressionError(f"corrupt zstd stream: {str(e).rpartition('error: ')[2]}") from None
    if len(data):
        raise DecompressionError(ZSTD_TRUNCATED)


def _zstd_content_size(frame: memoryview) -> int | None:
    """The decompressed size a zstd frame's header declares, if it declares one."""
    import zstandard

    try:
        size = zstandard.frame_content_size(frame[:18])  # the longest frame header
    except zstandard.ZstdError:
        return None  # not a frame header: the decompressor words the error
    return size if size >= 0 else None
