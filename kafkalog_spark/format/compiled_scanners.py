"""Compiled scanners over raw log bytes (numba): entry framing, v2 batch headers, v2 records.

These are the hot loops. They read a ``uint8`` numpy array and write into preallocated numpy arrays
(:func:`decode_records` writes the records view's Arrow buffers directly); everything that allocates
Python objects (findings, Arrow arrays) stays outside. They never raise on
bad bytes: they stop and return a status code plus the byte position, and the caller turns that into
a finding. ``cache=True`` keeps the compiled code on disk so Spark workers do not recompile each time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .native.memory import copy_bytes, memcpy, prefetch, prefetch_write

# Framing shared by every magic: offset int64, size int32, then the body (magic at byte 16).
LOG_OVERHEAD = 12
HEADER_SIZE_UP_TO_MAGIC = 17
MIN_ENTRY_SIZE = 14  # LegacyRecord.RECORD_OVERHEAD_V0: a smaller size field is corrupt
V2_HEADER_SIZE = 61
INT32_MAX = 2**31 - 1
# Spark's timestamp range (years 1..9999) in milliseconds: outside it a Kafka timestamp is garbage.
MIN_TIMESTAMP_MS = -62135596800000
MAX_TIMESTAMP_MS = 253402300799999

# scan_entries stop status
SCAN_END = 0  # reached the limit, or fewer than 17 bytes remain
SCAN_PARTIAL = 1  # an entry starts before the limit but its bytes run past the buffer
SCAN_CORRUPT_SIZE = 2  # size field below the minimum: framing is lost here

# decode_records status per batch
REC_OK = 0
REC_TRUNCATED = 1  # a field runs past the end of the batch
REC_BAD_VARINT = 2  # a varint longer than 5 (or 10) bytes
REC_BAD_LENGTH = 3  # a negative length where none is allowed, or a record length mismatch
REC_TRAILING = 4  # bytes remain after the declared number of records
REC_TOO_FEW = 5  # the batch ended before its declared record count


@njit(cache=True, inline="always")
def _i32(buf, p):
    return np.int32((np.uint32(buf[p]) << 24) | (np.uint32(buf[p + 1]) << 16)
                    | (np.uint32(buf[p + 2]) << 8) | np.uint32(buf[p + 3]))


@njit(cache=True, inline="always")
def _u32(buf, p):
    return np.int64((np.uint32(buf[p]) << 24) | (np.uint32(buf[p + 1]) << 16)
                    | (np.uint32(buf[p + 2]) << 8) | np.uint32(buf[p + 3]))


@njit(cache=True, inline="always")
def _i16(buf, p):
    return np.int16((np.uint16(buf[p]) << 8) | np.uint16(buf[p + 1]))


@njit(cache=True, inline="always")
def _i64(buf, p):
    v = np.uint64(0)
    for i in range(8):
        v = (v << np.uint64(8)) | np.uint64(buf[p + i])
    return np.int64(v)


@njit(cache=True)
def scan_entries(buf, start, limit):
    """Walk entry framing from ``start``: every entry that starts before ``limit`` and fits in ``buf``.

    Returns (positions, sizes, magics, count, stop_position, status). Sizes include the 12-byte
    offset/size prefix, like Kafka's ``sizeInBytes``.
    """
    n = len(buf)
    cap = max(1, (min(limit, n) - start) // (LOG_OVERHEAD + MIN_ENTRY_SIZE) + 1)
    positions = np.empty(cap, np.int64)
    sizes = np.empty(cap, np.int64)
    magics = np.empty(cap, np.int8)
    k = 0
    p = start
    while p < limit:
        if n - p < HEADER_SIZE_UP_TO_MAGIC:
            return positions, sizes, magics, k, p, SCAN_END if n - p == 0 else SCAN_PARTIAL
        size = _i32(buf, p + 8)
        if size < MIN_ENTRY_SIZE:
            return positions, sizes, magics, k, p, SCAN_CORRUPT_SIZE
        total = np.int64(size) + LOG_OVERHEAD
        if p + total > n:
            return positions, sizes, magics, k, p, SCAN_PARTIAL
        positions[k] = p
        sizes[k] = total
        magics[k] = np.int8(buf[p + 16])
        k += 1
        p += total
    return positions, sizes, magics, k, p, SCAN_END


@njit(cache=True)
def parse_v2_headers(buf, positions):
    """Decode the 61-byte v2 batch header at each position into columns."""
    m = len(positions)
    base_offset = np.empty(m, np.int64)
    batch_length = np.empty(m, np.int32)
    leader_epoch = np.empty(m, np.int32)
    crc = np.empty(m, np.int64)
    attributes = np.empty(m, np.int16)
    last_offset_delta = np.empty(m, np.int32)
    base_timestamp = np.empty(m, np.int64)
    max_timestamp = np.empty(m, np.int64)
    producer_id = np.empty(m, np.int64)
    producer_epoch = np.empty(m, np.int16)
    base_sequence = np.empty(m, np.int32)
    records_count = np.empty(m, np.int32)
    for i in range(m):
        p = positions[i]
        base_offset[i] = _i64(buf, p)
        batch_length[i] = _i32(buf, p + 8)
        leader_epoch[i] = _i32(buf, p + 12)
        crc[i] = _u32(buf, p + 17)
        attributes[i] = _i16(buf, p + 21)
        last_offset_delta[i] = _i32(buf, p + 23)
        base_timestamp[i] = _i64(buf, p + 27)
        max_timestamp[i] = _i64(buf, p + 35)
        producer_id[i] = _i64(buf, p + 43)
        producer_epoch[i] = _i16(buf, p + 51)
        base_sequence[i] = _i32(buf, p + 53)
        records_count[i] = _i32(buf, p + 57)
    return (base_offset, batch_length, leader_epoch, crc, attributes, last_offset_delta, base_timestamp,
            max_timestamp, producer_id, producer_epoch, base_sequence, records_count)


@njit(cache=True, inline="always")
def _varint(buf, p, end, max_bytes):
    """Zig-zag base-128 varint at p. Returns (value, next position, status)."""
    raw = np.uint64(0)
    shift = np.uint64(0)
    for _ in range(max_bytes):
        if p >= end:
            return np.int64(0), p, REC_TRUNCATED
        b = np.uint64(buf[p])
        p += 1
        raw |= (b & np.uint64(0x7F)) << shift
        if b < np.uint64(0x80):
            value = np.int64(raw >> np.uint64(1)) ^ -np.int64(raw & np.uint64(1))
            return value, p, REC_OK
        shift += np.uint64(7)
    return np.int64(0), p, REC_BAD_VARINT


@njit(cache=True, inline="always")
def _vint(buf, p, end, max_bytes):
    """_varint with the 1-byte case first (most lengths, deltas and counts in practice)."""
    if p < end:
        b = buf[p]
        if b < 0x80:
            return np.int64(b >> 1) ^ -np.int64(b & 1), p + 1, REC_OK
    return _varint(buf, p, end, max_bytes)


def record_capacity(region_start: np.ndarray, region_end: np.ndarray, declared_counts: np.ndarray) -> np.ndarray:
    """Most records each region can hold: every record takes at least 7 bytes, whatever a batch declares."""
    fits = (region_end - region_start) // 7 + 1
    return np.minimum(np.maximum(declared_counts, 0), fits).astype(np.int64)


@njit(cache=True, inline="always")
def _set_bit(bitmap, i):
    bitmap[i >> 3] |= np.uint8(1 << (i & 7))


@njit(cache=True)
def _fill_bits(bitmap, start, stop, value):
    """Bits [start, stop) of a zeroed bitmap set to ``value``."""
    if not value or start >= stop:
        return
    i = start
    while i < stop and (i & 7) != 0:
        _set_bit(bitmap, i)
        i += 1
    while i + 8 <= stop:
        bitmap[i >> 3] = 0xFF
        i += 8
    while i < stop:
        _set_bit(bitmap, i)
        i += 1


@njit(cache=True)
def label_rows(codes, label_bytes, label_offsets, b_first, b_count, offsets, values):
    """A string column whose value is constant per batch: label ``codes[b]`` for every row of batch b."""
    o = 0
    offsets[0] = 0
    for b in range(len(codes)):
        s = label_offsets[codes[b]]
        ln = label_offsets[codes[b] + 1] - s
        for i in range(b_first[b], b_first[b] + b_count[b]):
            memcpy(values, o, label_bytes, s, ln)
            o += ln
            offsets[i + 1] = o


# decode_records: which output ran out of room (the caller enlarges it and decodes again)
FULL_KEYS = 1
FULL_VALUES = 2
FULL_HEADERS = 3
FULL_HEADER_KEYS = 4
FULL_HEADER_VALUES = 5
# decode_records asks for the record bytes this far ahead of the record it decodes, and for the value bytes this
# far ahead of where it writes: a group's record bytes and outputs are tens of MiB, past the core's caches, and
# the loads of one record depend on each other (a varint, then the field it sizes), so a miss stalls the loop.
PREFETCH_AHEAD = 2048


@njit(cache=True, inline="always")
def _v12(buf, p):
    """Unchecked zig-zag varint of 1 or 2 bytes at p (the caller guarantees p + 1 < len(buf)).
    Returns (value, next position); next position == p when the varint is longer (slow path)."""
    b = np.int64(buf[p])
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), p + 1
    c = np.int64(buf[p + 1])
    if c < 0x80:
        raw = (b & 0x7F) | (c << 7)
        return (raw >> 1) ^ -(raw & 1), p + 2
    return np.int64(0), p


@njit(cache=True)
def decode_records(data, region_start, region_end, declared_counts, file_pos, base_offset, base_timestamp,
                   max_timestamp, log_append_time, base_sequence, producer_id, producer_epoch, leader_epoch, crc,
                   b_flags, out):
    """Decode the records of v2 batches whose (decompressed) record bytes are data[start:end), in one pass,
    straight into the Arrow buffers of the records view (``out``, preallocated by the caller).

    A record is written only once all its fields are known to lie inside its declared length, which lies
    inside its batch's region: a bad record ends its batch (status and byte position reported per batch,
    as Kafka would stop there) and leaves no trace in the output. Per-record buffers must hold
    :func:`record_capacity` rows; the byte and header buffers are sized from an estimate: when one runs
    out, decoding stops and ``totals[9]`` names it (``FULL_*``), and the caller retries with more room.
    ``b_flags`` per batch: 1 transactional, 2 control, 4 CRC valid. Timestamps become Spark microseconds,
    null for -1 and outside years 1..9999; sequences follow DefaultRecordBatch.incrementSequence.

    Returns (per batch: records decoded, status, failure position in ``data``; totals: records, headers,
    key/value/header-key/header-value bytes, null keys/values/header values and timestamps... see below).
    totals = [records, headers, key bytes, value bytes, header key bytes, header value bytes, null keys,
    null values, null header values, FULL_* or 0, null timestamps].
    """
    (position, offset, ts_us, ts_valid, key_offsets, key_values, key_valid, key_size, val_offsets, val_values,
     val_valid, val_size, hdr_offsets, hk_offsets, hk_values, hv_offsets, hv_values, hv_valid, sequence,
     base_offset_out, producer_id_out, producer_epoch_out, leader_epoch_out, crc_out, txn_bits, control_bits,
     valid_bits) = out
    nb = len(region_start)
    b_decoded = np.zeros(nb, np.int32)
    b_status = np.zeros(nb, np.int8)
    b_error_pos = np.full(nb, -1, np.int64)
    totals = np.zeros(11, np.int64)
    for bm in (ts_valid, key_valid, val_valid, hv_valid, txn_bits, control_bits, valid_bits):
        bm[:] = 0
    rec_cap = len(position)
    key_cap = len(key_values)
    val_cap = len(val_values)
    hdr_cap = len(hk_offsets) - 1
    hk_cap = len(hk_values)
    hv_cap = len(hv_values)
    n = 0
    nh = 0
    n_data = len(data)
    kb = 0  # key bytes written
    vb = 0
    hkb = 0
    hvb = 0
    key_nulls = 0
    val_nulls = 0
    hv_nulls = 0
    ts_nulls = 0
    full = 0
    key_offsets[0] = 0
    val_offsets[0] = 0
    hdr_offsets[0] = 0
    hk_offsets[0] = 0
    hv_offsets[0] = 0
    for b in range(nb):
        p = region_start[b]
        end = region_end[b]
        status = REC_OK
        rec_start = p
        n0 = n
        pos_b = file_pos[b]
        base_b = base_offset[b]
        seq_b = np.int64(base_sequence[b])
        log_append_b = log_append_time[b]
        base_ts_b = base_timestamp[b]
        max_ts_b = max_timestamp[b]
        producer_id_b = producer_id[b]
        producer_epoch_b = producer_epoch[b]
        leader_epoch_b = leader_epoch[b]
        crc_b = crc[b]
        for _ in range(max(declared_counts[b], 0)):
            rec_start = p
            # hints only (they never fault, past the end either): 3 cache lines of input per ~150-byte record,
            # and the outputs written by the byte (values, keys, header keys and values)
            prefetch(data, p + PREFETCH_AHEAD)
            prefetch(data, p + PREFETCH_AHEAD + 64)
            prefetch(data, p + PREFETCH_AHEAD + 128)
            prefetch_write(val_values, vb + PREFETCH_AHEAD)
            prefetch_write(val_values, vb + PREFETCH_AHEAD + 64)
            prefetch_write(key_values, kb + 512)
            prefetch_write(hk_values, hkb + 512)
            prefetch_write(hv_values, hvb + 1024)
            # Fast path: every varint 1 or 2 bytes, every length in range, the record well inside data
            # (reads overshoot the record by at most 8 bytes before a check). Anything else, or any
            # inconsistency, re-reads the record on the checked path below, which decides its status.
            fast = False
            while True:
                if p + 2 > end:
                    break
                length, q = _v12(data, p)
                if q == p or length < 0:
                    break
                rec_end = q + length
                if rec_end > end or rec_end + 16 > n_data:
                    break
                q += 1  # attributes
                ts_delta, q2 = _v12(data, q)
                if q2 == q:
                    break
                off_delta, q = _v12(data, q2)
                if q == q2:
                    break
                key_len, q2 = _v12(data, q)
                if q2 == q or key_len < -1:
                    break
                key_pos = q2
                q = q2 + max(key_len, 0)
                if q >= rec_end:
                    break
                val_len, q2 = _v12(data, q)
                if q2 == q or val_len < -1:
                    break
                val_pos = q2
                q = q2 + max(val_len, 0)
                if q >= rec_end:
                    break
                hdr_count, q2 = _v12(data, q)
                if q2 == q or hdr_count < 0:
                    break
                q = q2
                h = nh
                hk = hkb
                hv = hvb
                rec_hv_nulls = 0
                ok = True
                for _h in range(hdr_count):
                    if q >= rec_end:
                        ok = False
                        break
                    hk_len, q2 = _v12(data, q)
                    if q2 == q or hk_len < 0 or q2 + hk_len >= rec_end:
                        ok = False
                        break
                    hk_pos = q2
                    q = q2 + hk_len
                    hv_len, q2 = _v12(data, q)
                    if q2 == q or hv_len < -1 or q2 + max(hv_len, 0) > rec_end:
                        ok = False
                        break
                    if h == hdr_cap or hk + hk_len > hk_cap or hv + max(hv_len, 0) > hv_cap:
                        ok = False
                        break
                    hv_pos = q2
                    q = q2 + max(hv_len, 0)
                    copy_bytes(hk_values, hk, data, hk_pos, hk_len)
                    hk += hk_len
                    hk_offsets[h + 1] = hk
                    if hv_len >= 0:
                        copy_bytes(hv_values, hv, data, hv_pos, hv_len)
                        hv += hv_len
                        _set_bit(hv_valid, h)
                    else:
                        hv_valid[h >> 3] &= ~np.uint8(1 << (h & 7))
                        rec_hv_nulls += 1
                    hv_offsets[h + 1] = hv
                    h += 1
                if not ok or q != rec_end:
                    break
                if n == rec_cap or kb + max(key_len, 0) > key_cap or vb + max(val_len, 0) > val_cap:
                    break
                p = q
                fast = True
                break
            if not fast:
                p = rec_start
                length, p, status = _vint(data, p, end, 5)
                if status != REC_OK:
                    break
                body_start = p
                if length < 0 or body_start + length > end:
                    status = REC_TRUNCATED if length >= 0 else REC_BAD_LENGTH
                    break
                rec_end = body_start + length
                p += 1  # attributes, unused
                ts_delta, p, status = _vint(data, p, rec_end, 10)
                if status != REC_OK:
                    break
                off_delta, p, status = _vint(data, p, rec_end, 5)
                if status != REC_OK:
                    break
                key_len, p, status = _vint(data, p, rec_end, 5)
                if status != REC_OK:
                    break
                key_pos = p
                if key_len > 0:
                    p += key_len
                elif key_len < -1:
                    status = REC_BAD_LENGTH
                    break
                val_len, p, status = _vint(data, p, rec_end, 5)
                if status != REC_OK:
                    break
                val_pos = p
                if val_len > 0:
                    p += val_len
                elif val_len < -1:
                    status = REC_BAD_LENGTH
                    break
                hdr_count, p, status = _vint(data, p, rec_end, 5)
                if status != REC_OK:
                    break
                if hdr_count < 0 or p > rec_end:
                    status = REC_BAD_LENGTH
                    break
                # headers go straight to the output; they count only once the record is complete
                h = nh
                hk = hkb
                hv = hvb
                rec_hv_nulls = 0
                for _h in range(hdr_count):
                    hk_len, p, status = _vint(data, p, rec_end, 5)
                    if status != REC_OK:
                        break
                    if hk_len < 0:
                        status = REC_BAD_LENGTH
                        break
                    hk_pos = p
                    p += hk_len
                    hv_len, p, status = _vint(data, p, rec_end, 5)
                    if status != REC_OK:
                        break
                    hv_pos = p
                    if hv_len > 0:
                        p += hv_len
                    elif hv_len < -1:
                        status = REC_BAD_LENGTH
                        break
                    if p > rec_end:
                        status = REC_TRUNCATED
                        break
                    if h == hdr_cap:
                        full = FULL_HEADERS
                        break
                    if hk + hk_len > hk_cap:
                        full = FULL_HEADER_KEYS
                        break
                    if hv + max(hv_len, 0) > hv_cap:
                        full = FULL_HEADER_VALUES
                        break
                    copy_bytes(hk_values, hk, data, hk_pos, hk_len)
                    hk += hk_len
                    hk_offsets[h + 1] = hk
                    if hv_len >= 0:
                        copy_bytes(hv_values, hv, data, hv_pos, hv_len)
                        hv += hv_len
                        _set_bit(hv_valid, h)
                    else:
                        hv_valid[h >> 3] &= ~np.uint8(1 << (h & 7))  # a rolled-back record may have set it
                        rec_hv_nulls += 1
                    hv_offsets[h + 1] = hv
                    h += 1
                if full:
                    break
                if status != REC_OK:
                    break
                if p != rec_end:
                    # Kafka: "Invalid record size: expected to read N bytes in record payload, but ..."
                    status = REC_BAD_LENGTH
                    break
                if n == rec_cap:
                    break  # cannot happen: the capacity bounds the records the bytes can hold
                if kb + max(key_len, 0) > key_cap:
                    full = FULL_KEYS
                    break
                if vb + max(val_len, 0) > val_cap:
                    full = FULL_VALUES
                    break
            # the record is whole: write it
            nh = h
            hkb = hk
            hvb = hv
            hv_nulls += rec_hv_nulls
            hdr_offsets[n + 1] = nh
            if key_len >= 0:
                copy_bytes(key_values, kb, data, key_pos, key_len)
                kb += key_len
                _set_bit(key_valid, n)
            else:
                key_nulls += 1
            key_offsets[n + 1] = kb
            key_size[n] = key_len
            if val_len >= 0:
                copy_bytes(val_values, vb, data, val_pos, val_len)
                vb += val_len
                _set_bit(val_valid, n)
            else:
                val_nulls += 1
            val_offsets[n + 1] = vb
            val_size[n] = val_len
            offset[n] = base_b + off_delta
            ms = max_ts_b if log_append_b else base_ts_b + ts_delta
            if ms != -1 and MIN_TIMESTAMP_MS <= ms <= MAX_TIMESTAMP_MS:
                ts_us[n] = ms * 1000
                _set_bit(ts_valid, n)
            else:
                ts_us[n] = 0
                ts_nulls += 1
            if seq_b < 0:
                sequence[n] = -1
            else:
                s = seq_b + off_delta
                sequence[n] = s - INT32_MAX - 1 if s > INT32_MAX else s
            n += 1
        if full:
            totals[9] = full
            return b_decoded, b_status, b_error_pos, totals
        # the batch's own fields, the same on each of its records: one short run per column
        position[n0:n] = pos_b
        base_offset_out[n0:n] = base_b
        producer_id_out[n0:n] = producer_id_b
        producer_epoch_out[n0:n] = producer_epoch_b
        leader_epoch_out[n0:n] = leader_epoch_b
        crc_out[n0:n] = crc_b
        b_decoded[b] = n - n0
        _fill_bits(txn_bits, n0, n, (b_flags[b] & 1) != 0)
        _fill_bits(control_bits, n0, n, (b_flags[b] & 2) != 0)
        _fill_bits(valid_bits, n0, n, (b_flags[b] & 4) != 0)
        if status != REC_OK:
            b_status[b] = status
            b_error_pos[b] = rec_start
        elif b_decoded[b] < declared_counts[b]:
            b_status[b] = REC_TOO_FEW
            b_error_pos[b] = p
        elif p != end:
            b_status[b] = REC_TRAILING
            b_error_pos[b] = p
    totals[0] = n
    totals[1] = nh
    totals[2] = kb
    totals[3] = vb
    totals[4] = hkb
    totals[5] = hvb
    totals[6] = key_nulls
    totals[7] = val_nulls
    totals[8] = hv_nulls
    totals[10] = ts_nulls
    return b_decoded, b_status, b_error_pos, totals


@njit(cache=True)
def find_v2_candidates(buf, start, limit):
    """Positions after ``start`` where a v2 batch header plausibly begins (magic 2, sane lengths).

    Used to resynchronise after the framing is lost; the caller confirms candidates by their CRC.
    """
    n = len(buf)
    out = np.empty(16, np.int64)
    k = 0
    for p in range(start, min(limit, n - V2_HEADER_SIZE + 1)):
        if buf[p + 16] != 2:
            continue
        length = _i32(buf, p + 8)
        if length < V2_HEADER_SIZE - LOG_OVERHEAD or p + LOG_OVERHEAD + length > n:
            continue
        if (buf[p + 22] & 0x07) > 4 or _i32(buf, p + 23) < 0 or _i32(buf, p + 57) < 0:
            continue
        out[k] = p
        k += 1
        if k == len(out):
            break
    return out[:k]
