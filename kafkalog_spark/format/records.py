"""Records of a chunk: batches decompressed, records decoded by the compiled scanner, Arrow built from
numpy columns. Legacy entries (rare) go through the Python legacy reader. Rows keep file order."""

from __future__ import annotations

import struct
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from ..findings import Finding
from ..schemas import RECORDS, arrow_schema
from . import arrow
from .batches import (
    CODEC_LABELS,
    TIMESTAMP_TYPES,
    SegmentContext,
    V2Headers,
    increment_sequence,
    parse_legacy,
    report_crc,
    split_entries,
    stamp,
)
from .compression import DEFAULT_MAX_DECOMPRESSED, DecompressionError, decompress
from .legacy import LegacyMessage, deep_messages
from .scan import (
    REC_BAD_LENGTH,
    REC_BAD_VARINT,
    REC_TOO_FEW,
    REC_TRAILING,
    REC_TRUNCATED,
    V2_HEADER_SIZE,
    decode_records,
)

# ControlRecordType ids, as Kafka names them
CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER",
                 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}
RECORD_ERRORS = {
    REC_TRUNCATED: "a record runs past the end of its batch",
    REC_BAD_VARINT: "a varint is longer than its maximum size",
    REC_BAD_LENGTH: "a record's fields do not add up to its declared length",
    REC_TRAILING: "Incorrect declared batch size, records still remaining in file",
    REC_TOO_FEW: "the batch ends before its declared record count",
}


def control_type(key: bytes | None) -> tuple[str | None, int]:
    """Control record type name and id from its key (int16 version, int16 type)."""
    if key is None or len(key) < 4:
        return None, -1
    type_id = struct.unpack_from(">h", key, 2)[0]
    return CONTROL_TYPES.get(type_id, "UNKNOWN"), type_id


def coordinator_epoch(value: bytes | None) -> int | None:
    """COMMIT/ABORT marker value: int16 version, int32 coordinatorEpoch."""
    if value is None or len(value) < 6:
        return None
    return struct.unpack_from(">i", value, 2)[0]


def records_view(chunk, ctx: SegmentContext, findings: list[Finding],
                 max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> Iterator[pa.RecordBatch]:
    """Record rows of the chunk's entries, one Arrow batch per run of v2 or legacy entries."""
    v2_index, legacy_index = split_entries(chunk, ctx, findings)
    if len(legacy_index) == 0:
        if len(v2_index):
            yield _v2_records(chunk, v2_index, ctx, findings, max_decompressed)
        return
    # Mixed formats (a log upgraded from an old message format): keep file order run by run.
    is_v2 = np.zeros(len(chunk), bool)
    is_v2[v2_index] = True
    usable = np.sort(np.concatenate([v2_index, legacy_index]))
    runs = np.split(usable, np.flatnonzero(np.diff(is_v2[usable].astype(np.int8))) + 1)
    for run in runs:
        if is_v2[run[0]]:
            yield _v2_records(chunk, run, ctx, findings, max_decompressed)
        else:
            yield _legacy_records(parse_legacy(chunk, run, ctx, findings), chunk.base, ctx, findings,
                                  max_decompressed)


def _record_regions(chunk, h: V2Headers, ctx: SegmentContext, findings: list[Finding], max_decompressed: int):
    """(data, starts, ends, counts, compressed?) for decode_records; failed batches get an empty region."""
    starts = h.positions + V2_HEADER_SIZE
    ends = h.positions + h.sizes
    counts = h.records_count.copy()
    codec = h.codec
    if not codec.any():
        return np.frombuffer(chunk.raw, np.uint8), starts, ends, counts, False
    view = memoryview(chunk.raw)
    pieces = []
    length = 0
    for i in range(len(h.positions)):
        s, e = int(starts[i]), int(ends[i])
        if codec[i] == 0:
            piece = view[s:e]
        else:
            try:
                piece = decompress(int(codec[i]), view[s:e], magic=2, max_bytes=max_decompressed)
            except DecompressionError as err:
                findings.append(Finding(ctx.file, chunk.base + int(h.positions[i]), "decompression_failed",
                                        f"batch at offset {int(h.base_offset[i])}: {err}"))
                piece = b""
                counts[i] = 0
        starts[i] = length
        length += len(piece)
        ends[i] = length
        pieces.append(piece)
    return np.frombuffer(b"".join(pieces), np.uint8), starts, ends, counts, True


def _v2_records(chunk, index: np.ndarray, ctx: SegmentContext, findings: list[Finding],
                max_decompressed: int) -> pa.RecordBatch:
    h = V2Headers.parse(chunk.raw, chunk.positions[index], chunk.sizes[index])
    report_crc(h, chunk, ctx, findings)
    data, starts, ends, counts, compressed = _record_regions(chunk, h, ctx, findings, max_decompressed)
    (bi, off_delta, ts_delta, key_pos, key_len, val_pos, val_len, hdr_first, hdr_count, hk_pos, hk_len,
     hv_pos, hv_len, _decoded, status, error_pos) = decode_records(data, starts, ends, counts)
    for b in np.flatnonzero(status):
        where = (f"at byte {int(error_pos[b] - starts[b])} of its decompressed records" if compressed
                 else f"at file position {chunk.base + int(error_pos[b])}")
        findings.append(Finding(ctx.file, chunk.base + int(h.positions[b]), "record_decode_failed",
                                f"batch at offset {int(h.base_offset[b])}: {RECORD_ERRORS[int(status[b])]} ({where})"))
    n = len(bi)
    ts = np.where(h.log_append_time[bi], h.max_timestamp[bi], h.base_timestamp[bi] + ts_delta)
    base_seq = h.base_sequence[bi]
    keys = arrow.binary_from_slices(data, key_pos, key_len)
    values = arrow.binary_from_slices(data, val_pos, val_len)
    columns = {
        "position": chunk.base + h.positions[bi],
        "offset": h.base_offset[bi] + off_delta,
        "timestamp": arrow.timestamps_ms(ts),
        "timestampType": arrow.labels(h.log_append_time[bi].astype(np.int32), TIMESTAMP_TYPES),
        "key": keys,
        "value": values,
        "headers": _headers(data, hdr_first, hdr_count, hk_pos, hk_len, hv_pos, hv_len),
        "keySize": key_len,
        "valueSize": val_len,
        "sequence": increment_sequence(base_seq, off_delta),
        "baseOffset": h.base_offset[bi],
        "magic": np.full(n, 2, np.int8),
        "compresscodec": arrow.labels(h.codec[bi], CODEC_LABELS),
        "isTransactional": h.is_transactional[bi],
        "isControl": h.is_control[bi],
        "producerId": h.producer_id[bi],
        "producerEpoch": h.producer_epoch[bi],
        "partitionLeaderEpoch": h.leader_epoch[bi],
        "isValid": h.crc_valid[bi],
        "crc": h.crc[bi],
    }
    columns["controlType"], columns["coordinatorEpoch"] = _control_columns(h.is_control[bi], keys, values)
    return stamp(columns, n, ctx, arrow_schema(RECORDS))


def _headers(data, hdr_first, hdr_count, hk_pos, hk_len, hv_pos, hv_len) -> pa.Array:
    n_headers = len(hk_pos)
    offsets = np.empty(len(hdr_first) + 1, np.int32)
    offsets[:-1] = hdr_first
    offsets[-1] = n_headers
    struct_type = arrow_schema(RECORDS).field("headers").type.value_type
    entries = pa.StructArray.from_arrays(
        [arrow.binary_from_slices(data, hk_pos, hk_len, pa.string()), arrow.binary_from_slices(data, hv_pos, hv_len)],
        fields=list(struct_type),
    )
    return pa.ListArray.from_arrays(pa.array(offsets), entries, type=arrow_schema(RECORDS).field("headers").type)


def _control_columns(is_control: np.ndarray, keys: pa.Array, values: pa.Array) -> tuple[pa.Array, pa.Array]:
    n = len(is_control)
    types: list[str | None] = [None] * n
    epochs: list[int | None] = [None] * n
    for i in np.flatnonzero(is_control).tolist():
        name, _ = control_type(keys[i].as_py())
        types[i] = name
        if name in ("COMMIT", "ABORT"):
            epochs[i] = coordinator_epoch(values[i].as_py())
    return pa.array(types, pa.string()), pa.array(epochs, pa.int32())


def _legacy_records(wrappers: list[LegacyMessage], base: int, ctx: SegmentContext, findings: list[Finding],
                    max_decompressed: int) -> pa.RecordBatch:
    rows: dict[str, list] = {f.name: [] for f in arrow_schema(RECORDS) if f.name not in ("topic", "partition",
                                                                                          "segmentBaseOffset")}
    for w in wrappers:
        try:
            inner = deep_messages(w, max_decompressed)
        except (DecompressionError, ValueError, struct.error) as err:
            findings.append(Finding(ctx.file, base + w.position, "decompression_failed",
                                    f"legacy wrapper at offset {w.offset}: {err}"))
            continue
        for m in inner:
            ts = m.timestamp
            row = {
                "position": base + w.position, "offset": m.offset,
                "timestamp": ts * 1000 if ts != -1 and arrow.MIN_TIMESTAMP_MS <= ts <= arrow.MAX_TIMESTAMP_MS else None,
                "timestampType": m.timestamp_type, "key": m.key, "value": m.value, "headers": [],
                "keySize": -1 if m.key is None else len(m.key), "valueSize": -1 if m.value is None else len(m.value),
                "sequence": -1, "baseOffset": inner[0].offset, "magic": w.magic,
                "compresscodec": CODEC_LABELS[w.codec], "isTransactional": False, "isControl": False,
                "controlType": None, "coordinatorEpoch": None, "producerId": -1, "producerEpoch": -1,
                "partitionLeaderEpoch": -1, "isValid": m.is_valid and w.is_valid, "crc": m.crc,
            }
            for k, v in row.items():
                rows[k].append(v)
    return stamp(rows, len(rows["offset"]), ctx, arrow_schema(RECORDS))


__all__ = ["control_type", "coordinator_epoch", "records_view"]
