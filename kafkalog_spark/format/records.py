"""Records of a chunk, in file order.

v2 batches: the record bytes of a run of batches (the chunk itself when uncompressed; otherwise one reused
buffer the compiled LZ4/zstd loops, or the Python codecs, decompress into) go through one compiled pass,
``compiled_scanners.decode_records``, that validates every record and writes the Arrow buffers of the records view
directly; Python only sizes the buffers, wraps them and reports findings. Per-record cost on the benchmark
files: ~40 ns decoding plus the decompression (see tests/bench/breakdown.py). Legacy entries (rare) go
through the Python legacy reader."""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..findings import Finding
from . import arrow
from .batches import (
    TIMESTAMP_TYPES,
    SegmentContext,
    V2Headers,
    location_columns,
    parse_legacy,
    report_crc,
    split_entries,
    stamp,
    view_schema,
)
from .compiled_scanners import (
    FULL_HEADER_KEYS,
    FULL_HEADER_VALUES,
    FULL_HEADERS,
    FULL_KEYS,
    FULL_VALUES,
    REC_BAD_LENGTH,
    REC_BAD_VARINT,
    REC_TOO_FEW,
    REC_TRAILING,
    REC_TRUNCATED,
    V2_HEADER_SIZE,
    decode_records,
    record_capacity,
)
from .compression import (
    CODEC_LABELS,
    DEFAULT_MAX_DECOMPRESSED,
    ByteBuffer,
    Codec,
    DecompressionError,
    Output,
    decompress_into,
)
from .java_text import java_utf8
from .legacy import LegacyMessage, deep_messages
from .native import frames_stop
from .native.lz4_block import LZ4_NATIVE, lz4_frames, lz4_header_checksums, use_lz4
from .native.zstd_dctx import use_zstd, zstd_context, zstd_frames

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


@dataclass
class BatchBytes:
    """What the batches read take: on disk, and with their records uncompressed (Kafka's size of the batch were
    it written without compression: a v2 batch's header and its decompressed records region, a legacy
    wrapper's inner entries). A batch whose records do not decompress counts as on disk in both."""

    on_disk: int = 0
    uncompressed: int = 0


def records_view(chunk, ctx: SegmentContext, findings: list[Finding],
                 max_decompressed: int = DEFAULT_MAX_DECOMPRESSED, *, control_only: bool = False,
                 sizes: BatchBytes | None = None) -> Iterator[pa.RecordBatch]:
    """Record rows of the chunk's entries in file order: Arrow batches for runs of v2 or legacy entries
    (a run of compressed v2 batches is cut where its decompressed bytes pass GROUP_BYTES). ``control_only``:
    decode the control batches alone (the others are skipped on their header's attribute, never decompressed);
    ``sizes``: add the batches' bytes on disk and uncompressed to it."""
    v2_index, legacy_index = split_entries(chunk, ctx, findings)
    if control_only:
        v2_index = v2_index[V2Headers.parse(chunk.raw, chunk.positions[v2_index], chunk.sizes[v2_index]).is_control]
        legacy_index = legacy_index[:0]  # control batches are v2 only
    if len(legacy_index) == 0:
        if len(v2_index):
            yield from _v2_records(chunk, v2_index, ctx, findings, max_decompressed, sizes)
        return
    # Mixed formats (a log upgraded from an old message format): keep file order run by run.
    is_v2 = np.zeros(len(chunk), bool)
    is_v2[v2_index] = True
    usable = np.sort(np.concatenate([v2_index, legacy_index]))
    runs = np.split(usable, np.flatnonzero(np.diff(is_v2[usable].astype(np.int8))) + 1)
    for run in runs:
        if is_v2[run[0]]:
            yield from _v2_records(chunk, run, ctx, findings, max_decompressed, sizes)
        else:
            yield _legacy_records(parse_legacy(chunk, run, ctx, findings), chunk.base, ctx, findings,
                                  max_decompressed, sizes)


# Decompressed bytes per Arrow batch (soft limit; one batch may add up to max_decompressed more): memory
# stays proportional to this, not to the chunk's compression ratio. A group is held about three times over
# at its peak (the decompression buffer, the records' Arrow columns, what a view builds of them), in each
# decoding worker: 8 MiB, not 32, took a process reading the decoded view of a 400 MB lz4/zstd segment of the
# broker-shaped set from 449-450 to 391-393 MiB peak RSS, its CPU time the same within noise (two runs each).
GROUP_BYTES = 8 * 1024 * 1024
# A decompression buffer larger than this is released after use instead of kept for the next chunk (it
# doubles while filling a group, so a group of GROUP_BYTES ends in a buffer of 2 * GROUP_BYTES at most,
# unless one batch alone is larger).
RETAIN_BYTES = 2 * GROUP_BYTES


class _DecPool(threading.local):
    """Decompression buffers kept from chunk to chunk (per thread): nothing built from one outlives its
    group (decoding copies into fresh Arrow buffers), and reusing them avoids the page faults of fresh
    allocations. Each run takes its own, so interleaved readers in one thread never share one."""

    def __init__(self) -> None:
        self.free: list[np.ndarray] = []

    def take(self) -> ByteBuffer:
        return ByteBuffer(self.free.pop() if self.free else np.empty(1 << 20, np.uint8))

    def give(self, buf: ByteBuffer) -> None:
        if len(buf.array) <= RETAIN_BYTES and len(self.free) < 2:
            self.free.append(buf.array)


_dec_pool = _DecPool()
_LZ4_HC = lz4_header_checksums() if LZ4_NATIVE else np.zeros(4, np.uint8)
# Free bytes asked for when a compiled loop stops for space: doubled on every stop, up to the cap (which
# always suffices), so a batch larger than any earlier request still gets its room.
FIRST_REQUEST = 4 << 20


def _v2_records(chunk, index: np.ndarray, ctx: SegmentContext, findings: list[Finding],
                max_decompressed: int, sizes: BatchBytes | None = None) -> Iterator[pa.RecordBatch]:
    h = V2Headers.parse(chunk.raw, chunk.positions[index], chunk.sizes[index])
    report_crc(h, chunk, ctx, findings)
    starts = h.positions + V2_HEADER_SIZE
    ends = h.positions + h.sizes
    if sizes is not None:
        sizes.on_disk += int(h.sizes.sum())
    if not h.codec.any():
        if sizes is not None:
            sizes.uncompressed += int(h.sizes.sum())
        yield _decode(chunk, h, chunk.buf, starts, ends, h.records_count, ctx, findings)
        return
    for lo, hi, data, r_start, r_end, counts in _decompressed(chunk, h, starts, ends, ctx, findings,
                                                              max_decompressed):
        group = h.take(slice(lo, hi))
        if sizes is not None:
            region = r_end - r_start  # an uncompressed batch is copied in whole: header + region is its size
            failed = (region == 0) & (counts == 0)  # nothing decompressed (a finding says why): as on disk
            sizes.uncompressed += int(np.where(failed, group.sizes, V2_HEADER_SIZE + region).sum())
        yield _decode(chunk, group, data, r_start, r_end, counts, ctx, findings)


def _decompressed(chunk, h: V2Headers, starts: np.ndarray, ends: np.ndarray, ctx: SegmentContext,
                  findings: list[Finding], cap: int):
    """Groups (lo, hi, data, region starts, region ends, counts) of batches lo..hi with their record bytes
    decompressed into one scratch buffer (uncompressed batches copied in); a batch that fails to decompress
    becomes a finding and an empty region. ``data`` is reused by the next group."""
    dec = _dec_pool.take()
    try:
        yield from _fill_groups(chunk, h, starts, ends, ctx, findings, cap, dec)
    finally:
        _dec_pool.give(dec)


def _lz4_run(buf, starts, ends, i, stop, out, o, cap, r_start, r_end, redo):
    return lz4_frames(buf, starts, ends, i, stop, out, o, cap, GROUP_BYTES, _LZ4_HC, r_start, r_end, redo)


def _zstd_run(buf, starts, ends, i, stop, out, o, cap, r_start, r_end, redo):
    # redo holds each failing batch's zstd error code; one that stopped at the cap may also be corrupt, which Kafka
    # (streaming, no cap) would report
    return zstd_frames(buf, starts, ends, i, stop, out, o, cap, GROUP_BYTES, zstd_context(), r_start, r_end, redo)


class _Kernel(NamedTuple):
    """A codec's compiled kernel: whether it may run (library present, not python_only), the call over a run of
    batches of that codec (returns (next batch, o, :mod:`.native.frames_stop` reason)), and the dtype of its
    per-batch mark of the batches it leaves to the Python path (non-zero: left)."""

    usable: Callable[[], bool]
    run: Callable[..., tuple[int, int, int]]
    redo_dtype: type


_KERNELS = {Codec.LZ4: _Kernel(use_lz4, _lz4_run, bool), Codec.ZSTD: _Kernel(use_zstd, _zstd_run, np.int64)}


def _fill_groups(chunk, h: V2Headers, starts: np.ndarray, ends: np.ndarray, ctx: SegmentContext,
                 findings: list[Finding], cap: int, dec: ByteBuffer):
    buf = chunk.buf
    codec = h.codec
    nb = len(codec)
    r_start = np.zeros(nb, np.int64)
    r_end = np.zeros(nb, np.int64)
    counts = h.records_count.copy()
    redo = {c: np.zeros(nb, k.redo_dtype) for c, k in _KERNELS.items()}
    # end of the run of equal codecs each batch starts
    change = np.flatnonzero(np.diff(codec)) + 1
    run_end = np.repeat(np.append(change, nb), np.diff(np.concatenate(([0], change, [nb]))))
    lo = i = o = 0
    while i < nb:
        out = dec.array
        c = int(codec[i])
        kernel = _KERNELS.get(c)
        if kernel is not None and kernel.usable():
            marks = redo[c]
            j, o, reason = kernel.run(buf, starts, ends, i, int(run_end[i]), out, o, cap, r_start, r_end, marks)
            # a batch the kernel left is read by the Python path, which handles the variant or words the finding
            for k in np.flatnonzero(marks[i:j]) + i:
                o = _python_batch(chunk, h, int(k), starts, ends, o, cap, r_start, r_end, counts, ctx, findings,
                                  dec)
            marks[i:j] = 0
            i = j
            if reason == frames_stop.NEED_SPACE:
                dec.grow(o, _more_room(len(out) - o, cap))
                continue
            if reason == frames_stop.DONE and o < GROUP_BYTES:
                continue
        else:
            o = _python_batch(chunk, h, i, starts, ends, o, cap, r_start, r_end, counts, ctx, findings, dec)
            i += 1
        if o >= GROUP_BYTES or i == nb:
            yield lo, i, dec.array, r_start[lo:i], r_end[lo:i], counts[lo:i]
            lo, o = i, 0
    if lo < nb:
        yield lo, nb, dec.array, r_start[lo:nb], r_end[lo:nb], counts[lo:nb]


def _more_room(free: int, cap: int) -> int:
    """Free bytes to ask for after a compiled loop stopped for space with ``free`` bytes free. Each stop asks
    for more than the last, and ``cap`` free bytes always suffice: the loop resumes at the batch it stopped
    at, so a request that does not grow the buffer would stop it again forever."""
    return min(cap, max(FIRST_REQUEST, 2 * free))


def _failed(chunk, h: V2Headers, i: int, err: Exception, counts: np.ndarray, ctx: SegmentContext,
            findings: list[Finding]) -> None:
    findings.append(Finding(ctx.file, chunk.base + int(h.positions[i]), "decompression_failed",
                            f"batch at offset {int(h.base_offset[i])}: {err}"))
    counts[i] = 0


def _python_batch(chunk, h, i, starts, ends, o, cap, r_start, r_end, counts, ctx, findings, dec: ByteBuffer) -> int:
    """Batch i decompressed by the Python codecs (or copied when uncompressed) into ``dec`` at o; returns the
    new end."""
    s, e = int(starts[i]), int(ends[i])
    view = memoryview(chunk.raw)[s:e]
    out = Output(dec, o, cap)
    try:
        if h.codec[i] == 0:
            out.write(view)
        else:
            decompress_into(int(h.codec[i]), view, out, magic=2)
    except DecompressionError as err:
        _failed(chunk, h, i, err, counts, ctx, findings)
        r_start[i] = r_end[i] = o
        return o
    r_start[i] = o
    r_end[i] = out.end
    return out.end


REC_COLUMNS = ("position", "offset", "ts_us", "ts_valid", "key_offsets", "key_values", "key_valid", "key_size",
               "val_offsets", "val_values", "val_valid", "val_size", "hdr_offsets", "hk_offsets", "hk_values",
               "hv_offsets", "hv_values", "hv_valid", "sequence", "base_offset", "producer_id", "producer_epoch",
               "leader_epoch", "crc", "txn_bits", "control_bits", "valid_bits")
# decode_records FULL_* code -> the estimate it enlarges
FULL_ESTIMATES = {FULL_KEYS: "keys", FULL_VALUES: "values", FULL_HEADERS: "headers",
                  FULL_HEADER_KEYS: "header_keys", FULL_HEADER_VALUES: "header_values"}


class _Estimates(threading.local):
    """Output sizes per byte of record data, learned from the batches decoded so far (per thread).

    The byte and header buffers of an Arrow batch are sized from these before decoding (the records are
    decoded once, straight into them); a buffer that turns out too small makes decode_records stop, and the
    batch is decoded again with that buffer at its upper bound (the record bytes themselves).
    """

    def __init__(self) -> None:
        self.ratio = {"keys": 0.125, "values": 1.0, "headers": 0.125, "header_keys": 0.125, "header_values": 0.125}

    def sizes(self, region_bytes: int, forced: set[str]) -> dict[str, int]:
        return {k: region_bytes if k in forced else min(region_bytes, int(r * 1.25 * region_bytes) + 4096)
                for k, r in self.ratio.items()}

    def learn(self, region_bytes: int, used: dict[str, int]) -> None:
        if region_bytes >= 1 << 16:
            self.ratio = {k: used[k] / region_bytes for k in self.ratio}


_estimates = _Estimates()


def _decode(chunk, h: V2Headers, data: np.ndarray, r_start: np.ndarray, r_end: np.ndarray, counts: np.ndarray,
            ctx: SegmentContext, findings: list[Finding]) -> pa.RecordBatch:
    """Records of the batches ``h`` whose record bytes are data[r_start:r_end) as one Arrow batch."""
    b_cap = record_capacity(r_start, r_end, counts)
    n_cap = max(int(b_cap.sum()), 1)
    region_bytes = int((r_end - r_start).sum())
    flags = (h.is_transactional.astype(np.uint8) | (h.is_control.astype(np.uint8) << 1)
             | (h.crc_valid.astype(np.uint8) << 2))
    file_pos = chunk.base + h.positions
    # per-batch labels that are the same for every batch with records: shared constant arrays
    live = b_cap > 0
    same_ts_type = not live.any() or bool((h.log_append_time[live] == h.log_append_time[live][0]).all())
    same_codec = not live.any() or bool((h.codec[live] == h.codec[live][0]).all())
    forced: set[str] = set()
    while True:
        est = _estimates.sizes(region_bytes, forced)
        bits, h_cap = (n_cap + 7) // 8, est["headers"] // 2 + 1
        sizes = {
            "position": (n_cap, np.int64), "offset": (n_cap, np.int64), "ts_us": (n_cap, np.int64),
            "ts_valid": (bits, np.uint8), "key_offsets": (n_cap + 1, np.int32), "key_values": (est["keys"], np.uint8),
            "key_valid": (bits, np.uint8), "key_size": (n_cap, np.int32), "val_offsets": (n_cap + 1, np.int32),
            "val_values": (est["values"], np.uint8), "val_valid": (bits, np.uint8), "val_size": (n_cap, np.int32),
            "hdr_offsets": (n_cap + 1, np.int32), "hk_offsets": (h_cap + 1, np.int32),
            "hk_values": (est["header_keys"], np.uint8), "hv_offsets": (h_cap + 1, np.int32),
            "hv_values": (est["header_values"], np.uint8), "hv_valid": ((h_cap + 7) // 8, np.uint8),
            "sequence": (n_cap, np.int32), "base_offset": (n_cap, np.int64), "producer_id": (n_cap, np.int64),
            "producer_epoch": (n_cap, np.int16), "leader_epoch": (n_cap, np.int32), "crc": (n_cap, np.int64),
            "txn_bits": (bits, np.uint8), "control_bits": (bits, np.uint8),
            "valid_bits": (bits, np.uint8),
        }
        bufs = arrow.Buffers()
        keys = {name: bufs.add(*spec) for name, spec in sizes.items()}
        ts_type = None if same_ts_type else arrow.LabelColumn(bufs, h.log_append_time, b_cap, TIMESTAMP_TYPES)
        codec = None if same_codec else arrow.LabelColumn(bufs, h.codec, b_cap, CODEC_LABELS)
        bufs.allocate()
        decoded, status, error_pos, totals = decode_records(
            data, r_start, r_end, counts, file_pos, h.base_offset, h.base_timestamp, h.max_timestamp,
            h.log_append_time, h.base_sequence, h.producer_id, h.producer_epoch, h.leader_epoch, h.crc, flags,
            tuple(bufs.array(keys[c]) for c in REC_COLUMNS))
        if not totals[9]:
            break
        forced.add(FULL_ESTIMATES[int(totals[9])])
    n, nh, key_bytes, val_bytes, hk_bytes, hv_bytes, key_nulls, val_nulls, hv_nulls, _, ts_nulls = totals.tolist()
    _estimates.learn(region_bytes, {"keys": key_bytes, "values": val_bytes, "headers": 2 * nh,
                                    "header_keys": hk_bytes, "header_values": hv_bytes})
    for b in np.flatnonzero(status):
        rel = int(error_pos[b] - r_start[b])
        where = (f"at byte {rel} of its decompressed records" if h.codec[b] != 0
                 else f"at file position {chunk.base + int(h.positions[b]) + V2_HEADER_SIZE + rel}")
        findings.append(Finding(ctx.file, chunk.base + int(h.positions[b]), "record_decode_failed",
                                f"batch at offset {int(h.base_offset[b])}: {RECORD_ERRORS[int(status[b])]} ({where})"))

    def buf(name: str, length: int | None = None) -> pa.Buffer:
        b = bufs.buffer(keys[name])
        return b if length is None else b.slice(0, length)

    def fixed(type_: pa.DataType, name: str) -> pa.Array:
        return pa.Array.from_buffers(type_, n, [None, buf(name, n * type_.byte_width)], 0)

    def boolean(name: str) -> pa.Array:
        return pa.Array.from_buffers(pa.bool_(), n, [None, buf(name, (n + 7) // 8)], 0)

    def binary(type_: pa.DataType, length: int, prefix: str, nbytes: int, nulls: int) -> pa.Array:
        validity = buf(f"{prefix}_valid", (length + 7) // 8) if nulls else None
        return pa.Array.from_buffers(type_, length, [validity, buf(f"{prefix}_offsets", 4 * (length + 1)),
                                                     buf(f"{prefix}_values", nbytes)], nulls)

    def labels(col: arrow.LabelColumn | None, codes: np.ndarray, names: tuple[str, ...]) -> pa.Array:
        if col is None:
            return arrow.constant(names[int(codes[live][0])] if live.any() else "", n, pa.string())
        if n == col.n:
            return col.array()
        col.counts = decoded.astype(np.int64)  # some records did not decode: label only those that did
        col.n = n
        return col.array()

    schema = view_schema("records")
    headers_type = schema.field("headers").type
    header_keys = binary(pa.string(), nh, "hk", hk_bytes, 0)
    if hk_bytes and np.frombuffer(buf("hk_values", hk_bytes), np.uint8).max() >= 0x80:
        header_keys = _java_strings(header_keys)
    entries = pa.StructArray.from_arrays([header_keys, binary(pa.binary(), nh, "hv", hv_bytes, hv_nulls)],
                                         fields=list(headers_type.value_type))
    is_control = h.is_control
    columns = location_columns(ctx, n) | {
        "position": fixed(pa.int64(), "position"),
        "offset": fixed(pa.int64(), "offset"),
        "timestamp": pa.Array.from_buffers(schema.field("timestamp").type, n,
                                           [buf("ts_valid", (n + 7) // 8) if ts_nulls else None,
                                            buf("ts_us", 8 * n)], ts_nulls),
        "timestampType": labels(ts_type, h.log_append_time, TIMESTAMP_TYPES),
        "key": binary(pa.binary(), n, "key", key_bytes, key_nulls),
        "value": binary(pa.binary(), n, "val", val_bytes, val_nulls),
        "headers": pa.Array.from_buffers(headers_type, n, [None, buf("hdr_offsets", 4 * (n + 1))], 0,
                                         children=[entries]),
        "keySize": fixed(pa.int32(), "key_size"),
        "valueSize": fixed(pa.int32(), "val_size"),
        "sequence": fixed(pa.int32(), "sequence"),
        "baseOffset": fixed(pa.int64(), "base_offset"),
        "magic": arrow.constant(2, n, pa.int8()),
        "compresscodec": labels(codec, h.codec, CODEC_LABELS),
        "isTransactional": boolean("txn_bits"),
        "isControl": boolean("control_bits"),
        "producerId": fixed(pa.int64(), "producer_id"),
        "producerEpoch": fixed(pa.int16(), "producer_epoch"),
        "partitionLeaderEpoch": fixed(pa.int32(), "leader_epoch"),
        "isValid": boolean("valid_bits"),
        "crc": fixed(pa.int64(), "crc"),
    }
    if (is_control & (decoded > 0)).any():
        columns["controlType"], columns["coordinatorEpoch"] = _control_columns(
            np.repeat(is_control, decoded), columns["key"], columns["value"])
    else:
        columns["controlType"] = arrow.constant(None, n, pa.string())
        columns["coordinatorEpoch"] = arrow.constant(None, n, pa.int32())
    return pa.RecordBatch.from_arrays([columns[f.name] for f in schema], schema=schema)


def _java_strings(arr: pa.Array) -> pa.Array:
    """A string array whose bytes may not be UTF-8 (header keys of a damaged batch) as Kafka reads them:
    Java's UTF-8 decoder, malformed sequences replaced by U+FFFD."""
    try:
        arr.validate(full=True)
        return arr
    except pa.ArrowInvalid:
        return pa.array([None if b is None else java_utf8(b) for b in arr.view(pa.binary()).to_pylist()],
                        pa.string())


def _control_columns(is_control: np.ndarray, keys: pa.Array, values: pa.Array) -> tuple[pa.Array, pa.Array]:
    """controlType and coordinatorEpoch: null except on control records (few: one per transaction)."""
    n = len(is_control)
    names = [*CONTROL_TYPES.values(), "UNKNOWN"]
    codes = np.zeros(n, np.int32)
    has_type = np.zeros(n, bool)
    epochs = np.zeros(n, np.int32)
    has_epoch = np.zeros(n, bool)
    for i in np.flatnonzero(is_control).tolist():
        name, _ = control_type(keys[i].as_py())
        if name is None:
            continue
        codes[i] = names.index(name)
        has_type[i] = True
        if name in ("COMMIT", "ABORT") and (epoch := coordinator_epoch(values[i].as_py())) is not None:
            epochs[i] = epoch
            has_epoch[i] = True
    types = pc.take(pa.array(names, pa.string()), pa.array(codes, mask=~has_type))
    return types, pa.array(epochs, pa.int32(), mask=~has_epoch)


def _legacy_records(wrappers: list[LegacyMessage], base: int, ctx: SegmentContext, findings: list[Finding],
                    max_decompressed: int, sizes: BatchBytes | None = None) -> pa.RecordBatch:
    rows: dict[str, list] = {f.name: [] for f in view_schema("records") if f.name not in location_columns(ctx, 0)}
    for w in wrappers:
        if sizes is not None:
            sizes.on_disk += w.size
        try:
            inner = deep_messages(w, max_decompressed)
        except (DecompressionError, ValueError, struct.error) as err:
            findings.append(Finding(ctx.file, base + w.position, "decompression_failed",
                                    f"legacy wrapper at offset {w.offset}: {err}"))
            if sizes is not None:
                sizes.uncompressed += w.size
            continue
        if sizes is not None:  # an uncompressed entry is its own only message
            sizes.uncompressed += sum(m.size for m in inner) if w.codec else w.size
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
    return stamp(rows, len(rows["offset"]), ctx, view_schema("records"))


__all__ = ["BatchBytes", "control_type", "coordinator_epoch", "records_view"]
