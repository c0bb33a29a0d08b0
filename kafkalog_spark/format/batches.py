"""Record batch headers of a chunk: v2 headers decoded by the compiled scanner, legacy entries parsed,
CRCs checked; the batches view. Never decompresses."""

from __future__ import annotations

import struct
from dataclasses import dataclass, fields

import numpy as np
import pyarrow as pa

from ..findings import Finding
from ..schemas import BATCHES, RECORDS, arrow_schema
from . import arrow
from .compiled_scanners import V2_HEADER_SIZE, parse_v2_headers
from .compression import CODEC_LABELS
from .crc import crc32c
from .legacy import LegacyFormatError, LegacyMessage, parse_message
from .native.crc32c_hw import crc32c_ranges, use_crc

INT32_MAX = 2**31 - 1
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime", "NoTimestampType")
ATTR_CODEC = 0x07
ATTR_LOG_APPEND_TIME = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40


_VIEW_SCHEMAS: dict[str, pa.Schema] = {}


def view_schema(view: str) -> pa.Schema:
    """The Arrow schema of the ``records`` or ``batches`` view, derived once per process (deriving it hashes
    pyspark's StructType, ~0.1 ms a call) and immune to later in-place changes of the shared StructTypes."""
    schema = _VIEW_SCHEMAS.get(view)
    if schema is None:
        schema = _VIEW_SCHEMAS[view] = arrow_schema({"records": RECORDS, "batches": BATCHES}[view])
    return schema


@dataclass(frozen=True, slots=True)
class SegmentContext:
    """Where rows come from: stamped on every row and named in every finding."""

    file: str
    topic: str
    partition: int
    segment_base_offset: int | None
    snapshot_end_offset: int | None = None  # set when the file is a KRaft snapshot rather than a segment
    snapshot_epoch: int | None = None


def increment_sequence(sequence: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Kafka's DefaultRecordBatch.incrementSequence: wraps past Int.MAX to 0; -1 stays -1."""
    s = sequence.astype(np.int64) + delta.astype(np.int64)
    s = np.where(s > INT32_MAX, s - INT32_MAX - 1, s)
    return np.where(sequence < 0, -1, s).astype(np.int32)


@dataclass(slots=True)
class V2Headers:
    """Decoded v2 batch headers of a chunk, as numpy columns (positions relative to the chunk)."""

    positions: np.ndarray
    sizes: np.ndarray
    base_offset: np.ndarray
    leader_epoch: np.ndarray
    crc: np.ndarray
    attributes: np.ndarray
    last_offset_delta: np.ndarray
    base_timestamp: np.ndarray
    max_timestamp: np.ndarray
    producer_id: np.ndarray
    producer_epoch: np.ndarray
    base_sequence: np.ndarray
    records_count: np.ndarray
    crc_valid: np.ndarray

    @classmethod
    def parse(cls, raw: bytes, positions: np.ndarray, sizes: np.ndarray) -> V2Headers:
        buf = np.frombuffer(raw, np.uint8)
        (base_offset, _length, leader_epoch, crc, attributes, last_offset_delta, base_timestamp, max_timestamp,
         producer_id, producer_epoch, base_sequence, records_count) = parse_v2_headers(buf, positions)
        if use_crc():
            computed = crc32c_ranges(buf, positions + 21, positions + sizes)
        else:
            view = memoryview(raw)
            computed = np.fromiter((crc32c(view[p + 21:p + s]) for p, s in zip(positions.tolist(), sizes.tolist(),
                                                                              strict=True)),
                                   np.int64, len(positions))
        return cls(positions, sizes, base_offset, leader_epoch, crc, attributes, last_offset_delta,
                   base_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence, records_count,
                   computed == crc)

    def take(self, sel) -> V2Headers:
        """The headers of the batches ``sel`` selects (a slice or an index array)."""
        return V2Headers(*(getattr(self, f.name)[sel] for f in fields(V2Headers)))

    @property
    def codec(self) -> np.ndarray:
        return self.attributes & ATTR_CODEC

    @property
    def log_append_time(self) -> np.ndarray:
        return (self.attributes & ATTR_LOG_APPEND_TIME) != 0

    @property
    def is_control(self) -> np.ndarray:
        return (self.attributes & ATTR_CONTROL) != 0

    @property
    def is_transactional(self) -> np.ndarray:
        return (self.attributes & ATTR_TRANSACTIONAL) != 0

    @property
    def last_offset(self) -> np.ndarray:
        return self.base_offset + self.last_offset_delta


def split_entries(chunk, ctx: SegmentContext, findings: list[Finding]) -> tuple[np.ndarray, np.ndarray]:
    """Indexes of the chunk's usable v2 entries and legacy entries; reports the rest."""
    magics = chunk.magics
    v2 = magics == 2
    small = v2 & (chunk.sizes < V2_HEADER_SIZE)
    for i in np.flatnonzero(small):
        findings.append(Finding(ctx.file, chunk.base + int(chunk.positions[i]), "batch_too_small",
                                f"v2 batch of {int(chunk.sizes[i])} bytes is smaller than its "
                                f"{V2_HEADER_SIZE}-byte header"))
    unknown = ~np.isin(magics, (0, 1, 2))
    for i in np.flatnonzero(unknown):
        findings.append(Finding(ctx.file, chunk.base + int(chunk.positions[i]), "unknown_magic",
                                f"entry with unknown magic {int(magics[i])} ({int(chunk.sizes[i])} bytes) skipped"))
    return np.flatnonzero(v2 & ~small), np.flatnonzero((magics == 0) | (magics == 1))


def report_crc(h: V2Headers, chunk, ctx: SegmentContext, findings: list[Finding]) -> None:
    for i in np.flatnonzero(~h.crc_valid):
        findings.append(Finding(ctx.file, chunk.base + int(h.positions[i]), "batch_crc_invalid",
                                f"batch at offset {int(h.base_offset[i])}: stored CRC-32C {int(h.crc[i])} does not "
                                "match the computed one"))
    for i in np.flatnonzero(h.codec > 4):
        findings.append(Finding(ctx.file, chunk.base + int(h.positions[i]), "unknown_codec",
                                f"batch at offset {int(h.base_offset[i])}: compression codec id {int(h.codec[i])}"))


def parse_legacy(chunk, index: np.ndarray, ctx: SegmentContext, findings: list[Finding]) -> list[LegacyMessage]:
    out = []
    for i in index.tolist():
        try:
            m = parse_message(chunk.raw, int(chunk.positions[i]), int(chunk.sizes[i]))
        except (LegacyFormatError, struct.error) as e:  # struct.error: an entry too short for its header
            findings.append(Finding(ctx.file, chunk.base + int(chunk.positions[i]), "corrupt_message", str(e)))
            continue
        if not m.is_valid:
            findings.append(Finding(ctx.file, chunk.base + m.position, "batch_crc_invalid",
                                    f"legacy message at offset {m.offset}: stored CRC32 {m.crc} does not match"))
        out.append(m)
    return out


def batches_view(chunk, ctx: SegmentContext, findings: list[Finding]) -> pa.RecordBatch:
    """One row per batch (v2) or legacy entry of the chunk, in file order."""
    v2_index, legacy_index = split_entries(chunk, ctx, findings)
    h = V2Headers.parse(chunk.raw, chunk.positions[v2_index], chunk.sizes[v2_index])
    report_crc(h, chunk, ctx, findings)
    legacy = parse_legacy(chunk, legacy_index, ctx, findings)
    n = len(v2_index)
    delete_horizon = (h.attributes & ATTR_DELETE_HORIZON) != 0
    columns = {
        "position": chunk.base + h.positions,
        "size": h.sizes,
        "baseOffset": h.base_offset,
        "lastOffset": h.last_offset,
        "count": h.records_count,
        "magic": np.full(n, 2, np.int8),
        "crc": h.crc,
        "isValid": h.crc_valid,
        "attributes": h.attributes,
        "compresscodec": arrow.labels(h.codec, CODEC_LABELS),
        "timestampType": arrow.labels(h.log_append_time.astype(np.int32), TIMESTAMP_TYPES),
        "isTransactional": h.is_transactional,
        "isControl": h.is_control,
        "deleteHorizonMs": arrow.nullable(h.base_timestamp, delete_horizon, pa.int64()),
        "partitionLeaderEpoch": h.leader_epoch,
        "baseTimestamp": h.base_timestamp,
        "maxTimestamp": h.max_timestamp,
        "producerId": h.producer_id,
        "producerEpoch": h.producer_epoch,
        "baseSequence": h.base_sequence,
        "lastSequence": increment_sequence(h.base_sequence, h.last_offset_delta),
    }
    batch = stamp(columns, n, ctx, view_schema("batches"))
    if not legacy:
        return batch
    legacy_batch = stamp(_legacy_columns(legacy, chunk.base), len(legacy), ctx, view_schema("batches"))
    table = pa.Table.from_batches([batch, legacy_batch]).sort_by("position")
    return table.combine_chunks().to_batches()[0]


def _legacy_columns(messages: list[LegacyMessage], base: int) -> dict:
    def col(f):
        return [f(m) for m in messages]

    return {
        "position": col(lambda m: base + m.position),
        "size": col(lambda m: m.size),
        # a compressed wrapper's base offset is only known after decompressing it
        "baseOffset": col(lambda m: m.offset if m.codec == 0 else None),
        "lastOffset": col(lambda m: m.offset),
        "count": col(lambda m: None),
        "magic": col(lambda m: m.magic),
        "crc": col(lambda m: m.crc),
        "isValid": col(lambda m: m.is_valid),
        "attributes": col(lambda m: m.attributes),
        "compresscodec": col(lambda m: CODEC_LABELS[m.codec]),
        "timestampType": col(lambda m: m.timestamp_type),
        "isTransactional": col(lambda m: False),
        "isControl": col(lambda m: False),
        "deleteHorizonMs": col(lambda m: None),
        "partitionLeaderEpoch": col(lambda m: -1),
        "baseTimestamp": col(lambda m: m.timestamp),
        "maxTimestamp": col(lambda m: m.timestamp),
        "producerId": col(lambda m: -1),
        "producerEpoch": col(lambda m: -1),
        "baseSequence": col(lambda m: -1),
        "lastSequence": col(lambda m: -1),
    }


def location_columns(ctx: SegmentContext, n: int) -> dict[str, pa.Array]:
    """The columns saying which file every row of a view comes from (constant over a chunk)."""
    return {
        "topic": arrow.constant(ctx.topic, n, pa.string()),
        "partition": arrow.constant(ctx.partition, n, pa.int32()),
        "segmentBaseOffset": arrow.constant(ctx.segment_base_offset, n, pa.int64()),
        "snapshotEndOffset": arrow.constant(ctx.snapshot_end_offset, n, pa.int64()),
        "snapshotEpoch": arrow.constant(ctx.snapshot_epoch, n, pa.int32()),
    }


def stamp(columns: dict, n: int, ctx: SegmentContext, schema: pa.Schema) -> pa.RecordBatch:
    """Add the location columns and build the batch with ``schema``."""
    return arrow.record_batch(columns | location_columns(ctx, n), schema)
