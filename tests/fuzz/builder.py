"""Kafka record batches built from scratch, as the clients write them: v2 batches (every codec, both snappy
framings, the Java client's LZ4 frames and the LZ4 library's own, transactional and control batches) and
legacy v0/v1 messages (plain and compressed wrappers). The compressors are the codec libraries themselves;
only the framing (Kafka's format) is written here. Used by the differential fuzzer as valid starting
points before mutation."""

from __future__ import annotations

import gzip
import random
import struct
import zlib
from dataclasses import dataclass, field

import lz4.block
import lz4.frame
import zstandard
from cramjam import snappy
from crc32c import crc32c

from kafkalog_spark.format.compression import _xxh32

NONE, GZIP, SNAPPY, LZ4, ZSTD = range(5)
XERIAL_HEADER = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
LZ4_MAGIC = struct.pack("<I", 0x184D2204)


def varint(n: int) -> bytes:
    """Kafka's zig-zag varint (ByteUtils.writeVarint / writeVarlong)."""
    z = (n << 1) ^ (n >> 63)
    z &= (1 << 64) - 1
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _nullable(b: bytes | None) -> bytes:
    return varint(-1) if b is None else varint(len(b)) + b


@dataclass
class Record:
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp_delta: int = 0


def encode_record(r: Record, offset_delta: int) -> bytes:
    body = bytearray(b"\x00")  # attributes (unused)
    body += varint(r.timestamp_delta) + varint(offset_delta) + _nullable(r.key) + _nullable(r.value)
    body += varint(len(r.headers))
    for k, v in r.headers:
        body += _nullable(k.encode()) + _nullable(v)
    return varint(len(body)) + bytes(body)


# -- codecs ---------------------------------------------------------------------------------------------


def xerial_snappy(raw: bytes, block: int = 32 * 1024) -> bytes:
    """snappy-java's SnappyOutputStream framing (the Java client): a header, then [int32 size][raw block]."""
    out = bytearray(XERIAL_HEADER)
    for i in range(0, len(raw), block):
        c = bytes(snappy.compress_raw(raw[i:i + block]))
        out += struct.pack(">i", len(c)) + c
    return bytes(out)


def java_lz4(raw: bytes, bd: int = 0x40, broken_checksum: bool = False) -> bytes:
    """Kafka's KafkaLZ4BlockOutputStream: FLG 0x60 (independent blocks, no checksums), BD ``bd``; blocks
    compressed on their own, stored uncompressed (high bit set) when that is not smaller. Magic 0 wrote the
    header checksum over magic + descriptor (KAFKA-3160): ``broken_checksum``."""
    descriptor = bytes([0x60, bd])
    hc = (_xxh32(LZ4_MAGIC + descriptor if broken_checksum else descriptor) >> 8) & 0xFF
    out = bytearray(LZ4_MAGIC + descriptor + bytes([hc]))
    block_max = 1 << (8 + 2 * (bd >> 4))
    for i in range(0, len(raw), block_max):
        piece = raw[i:i + block_max]
        c = lz4.block.compress(piece, store_size=False)
        if len(c) >= len(piece):
            out += struct.pack("<I", len(piece) | 0x80000000) + piece
        else:
            out += struct.pack("<I", len(c)) + c
    out += b"\x00\x00\x00\x00"
    return bytes(out)


def compress(codec: int, raw: bytes, rng: random.Random, magic: int = 2) -> bytes:
    """``raw`` compressed as one of the clients would (the variant drawn from ``rng``)."""
    if codec == GZIP:
        return gzip.compress(raw, rng.choice((1, 6, 9)), mtime=0) if rng.random() < 0.9 else (
            zlib.compress(raw, wbits=31) + zlib.compress(b"", wbits=31))  # two members, as Java accepts
    if codec == SNAPPY:
        return xerial_snappy(raw, rng.choice((64, 1024, 32 * 1024))) if rng.random() < 0.5 else bytes(
            snappy.compress_raw(raw))  # librdkafka: one raw block
    if codec == LZ4:
        if rng.random() < 0.7:
            return java_lz4(raw, rng.choice((0x40, 0x50, 0x60, 0x70)), broken_checksum=magic == 0)
        return lz4.frame.compress(raw, block_linked=rng.random() < 0.5, content_checksum=rng.random() < 0.5,
                                  store_size=rng.random() < 0.5)
    if codec == ZSTD:
        return zstandard.ZstdCompressor(level=rng.choice((1, 3, 19)), write_checksum=rng.random() < 0.5,
                                        write_content_size=rng.random() < 0.5).compress(raw)
    return raw


# -- v2 batches -----------------------------------------------------------------------------------------


@dataclass
class BatchSpec:
    base_offset: int
    records: list[Record]
    codec: int = NONE
    transactional: bool = False
    control: bool = False
    log_append_time: bool = False
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    leader_epoch: int = 0
    base_timestamp: int = 1_700_000_000_000


def v2_batch(spec: BatchSpec, rng: random.Random) -> bytes:
    """One DefaultRecordBatch: the 61-byte header (CRC-32C over attributes..end) and its records."""
    raw = b"".join(encode_record(r, i) for i, r in enumerate(spec.records))
    payload = compress(spec.codec, raw, rng)
    attributes = spec.codec | (0x08 if spec.log_append_time else 0) | (0x10 if spec.transactional else 0) | (
        0x20 if spec.control else 0)
    n = len(spec.records)
    max_ts = spec.base_timestamp + max((r.timestamp_delta for r in spec.records), default=0)
    after_crc = struct.pack(">hiqqqhii", attributes, max(n - 1, 0), spec.base_timestamp, max_ts, spec.producer_id,
                            spec.producer_epoch, spec.base_sequence, n) + payload
    after_length = struct.pack(">ibI", spec.leader_epoch, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", spec.base_offset, len(after_length)) + after_length


def fix_crc(entry: bytearray | bytes) -> bytes:
    """A v2 entry with its CRC recomputed (after a deliberate change behind the CRC)."""
    b = bytearray(entry)
    if len(b) >= 21:
        b[17:21] = struct.pack(">I", crc32c(bytes(b[21:])))
    return bytes(b)


def control_record(type_id: int, coordinator_epoch: int = 0) -> Record:
    """An EndTransactionMarker (ABORT 0 / COMMIT 1) or another control type with a short value."""
    key = struct.pack(">hh", 0, type_id)
    value = struct.pack(">hi", 0, coordinator_epoch) if type_id in (0, 1) else b"\x00\x00\x00\x00"
    return Record(key, value)


# -- legacy messages ------------------------------------------------------------------------------------


def legacy_message(magic: int, offset: int, key: bytes | None, value: bytes | None, *, codec: int = 0,
                   timestamp: int = 1_600_000_000_000, log_append_time: bool = False) -> bytes:
    """A v0/v1 entry: offset, size, CRC32 (over magic..value), magic, attributes, [timestamp], key, value."""
    body = struct.pack(">bb", magic, codec | (0x08 if log_append_time and magic == 1 else 0))
    if magic == 1:
        body += struct.pack(">q", timestamp)
    body += (struct.pack(">i", -1) if key is None else struct.pack(">i", len(key)) + key)
    body += (struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value)
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


def legacy_wrapper(magic: int, codec: int, base_offset: int, records: list[Record], rng: random.Random) -> bytes:
    """A compressed wrapper: its value is the compressed inner message set (v1: relative inner offsets and
    the wrapper at the last absolute offset, as Kafka writes them)."""
    inner = b"".join(legacy_message(magic, i if magic == 1 else base_offset + i, r.key, r.value)
                     for i, r in enumerate(records))
    return legacy_message(magic, base_offset + len(records) - 1, None, compress(codec, inner, rng, magic),
                          codec=codec)


# -- random content -------------------------------------------------------------------------------------


def random_records(rng: random.Random, n: int) -> list[Record]:
    out = []
    for _ in range(n):
        size = rng.choice((0, 1, 10, 100, 1000, 5000))
        value = None if rng.random() < 0.1 else (bytes(size) if rng.random() < 0.3 else rng.randbytes(size))
        key = None if rng.random() < 0.3 else f"key-{rng.randrange(50)}".encode()
        headers = [(f"h{j}", None if rng.random() < 0.2 else rng.randbytes(rng.randrange(8)))
                   for j in range(rng.choice((0, 0, 1, 3)))]
        out.append(Record(key, value, headers, rng.randrange(1000)))
    return out


def random_segment(rng: random.Random, codecs: tuple[int, ...] = (NONE, GZIP, SNAPPY, LZ4, ZSTD)) -> bytes:
    """A few entries of random formats, codecs and kinds, offsets increasing as in a real segment."""
    out = bytearray()
    offset = rng.randrange(1000)
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        codec = rng.choice(codecs)
        if kind < 0.12:
            magic = rng.choice((0, 1))
            records = random_records(rng, rng.randint(1, 4))
            if codec == ZSTD or codec == NONE:  # no zstd before v2; an uncompressed set is plain messages
                for r in records:
                    out += legacy_message(magic, offset, r.key, r.value)
                    offset += 1
                continue
            out += legacy_wrapper(magic, codec, offset, records, rng)
            offset += len(records)
            continue
        pid = rng.randrange(1 << 20)
        if kind < 0.22:  # a control batch: transaction marker (or another control type)
            spec = BatchSpec(offset, [control_record(rng.choice((0, 1, 0, 1, 2, 99)), rng.randrange(5))],
                             codec=NONE, transactional=True, control=True, producer_id=pid, producer_epoch=0)
        else:
            txn = kind < 0.4
            spec = BatchSpec(offset, random_records(rng, rng.randint(1, 6)), codec=codec, transactional=txn,
                             log_append_time=rng.random() < 0.2, producer_id=pid if txn or rng.random() < 0.5
                             else -1, producer_epoch=0 if txn else -1, base_sequence=rng.randrange(100) if txn
                             else -1, leader_epoch=rng.randrange(3))
        out += v2_batch(spec, rng)
        offset += len(spec.records)
    return bytes(out)
