"""Compiled scanners over raw log bytes (numba): entry framing, v2 batch headers, v2 records.

These are the hot loops. They read a ``uint8`` numpy array and write into preallocated numpy arrays;
everything that allocates Python objects (findings, Arrow arrays) stays outside. They never raise on
bad bytes: they stop and return a status code plus the byte position, and the caller turns that into
a finding. ``cache=True`` keeps the compiled code on disk so Spark workers do not recompile each time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Framing shared by every magic: offset int64, size int32, then the body (magic at byte 16).
LOG_OVERHEAD = 12
HEADER_SIZE_UP_TO_MAGIC = 17
MIN_ENTRY_SIZE = 14  # LegacyRecord.RECORD_OVERHEAD_V0: a smaller size field is corrupt
V2_HEADER_SIZE = 61

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


@njit(cache=True)
def _grow(a, need):
    if need <= len(a):
        return a
    b = np.empty(max(need, 2 * len(a)), a.dtype)
    b[: len(a)] = a
    return b


@njit(cache=True)
def decode_records(data, region_start, region_end, declared_counts):
    """Decode the records of v2 batches whose (decompressed) record bytes are data[start:end).

    Returns per-record columns (batch index, offset delta, timestamp delta, key/value position and
    length with -1 for null, first header index, header count), per-header columns, and per batch
    (records decoded, status, byte position of the failure inside ``data``).
    """
    nb = len(region_start)
    cap = 0
    for b in range(nb):
        # Every record takes at least 7 bytes: never trust a declared count beyond what bytes allow.
        cap += min(max(declared_counts[b], 0), (region_end[b] - region_start[b]) // 7 + 1)
    cap = max(cap, 1)
    r_batch = np.empty(cap, np.int32)
    r_offset_delta = np.empty(cap, np.int32)
    r_ts_delta = np.empty(cap, np.int64)
    r_key_pos = np.empty(cap, np.int64)
    r_key_len = np.empty(cap, np.int32)
    r_val_pos = np.empty(cap, np.int64)
    r_val_len = np.empty(cap, np.int32)
    r_hdr_first = np.empty(cap, np.int64)
    r_hdr_count = np.empty(cap, np.int32)
    h_key_pos = np.empty(64, np.int64)
    h_key_len = np.empty(64, np.int32)
    h_val_pos = np.empty(64, np.int64)
    h_val_len = np.empty(64, np.int32)
    b_decoded = np.zeros(nb, np.int32)
    b_status = np.zeros(nb, np.int8)
    b_error_pos = np.full(nb, -1, np.int64)
    n = 0
    nh = 0
    for b in range(nb):
        p = region_start[b]
        end = region_end[b]
        status = REC_OK
        for _ in range(max(declared_counts[b], 0)):
            rec_start = p
            length, p, status = _varint(data, p, end, 5)
            if status != REC_OK:
                break
            body_start = p
            if length < 0 or body_start + length > end:
                status = REC_TRUNCATED if length >= 0 else REC_BAD_LENGTH
                break
            rec_end = body_start + length
            p += 1  # attributes, unused
            ts_delta, p, status = _varint(data, p, rec_end, 10)
            if status != REC_OK:
                break
            off_delta, p, status = _varint(data, p, rec_end, 5)
            if status != REC_OK:
                break
            key_len, p, status = _varint(data, p, rec_end, 5)
            if status != REC_OK:
                break
            key_pos = p
            if key_len > 0:
                p += key_len
            elif key_len < -1:
                status = REC_BAD_LENGTH
                break
            val_len, p, status = _varint(data, p, rec_end, 5)
            if status != REC_OK:
                break
            val_pos = p
            if val_len > 0:
                p += val_len
            elif val_len < -1:
                status = REC_BAD_LENGTH
                break
            hdr_count, p, status = _varint(data, p, rec_end, 5)
            if status != REC_OK:
                break
            if hdr_count < 0 or p > rec_end:
                status = REC_BAD_LENGTH
                break
            hdr_first = nh
            for _h in range(hdr_count):
                hk_len, p, status = _varint(data, p, rec_end, 5)
                if status != REC_OK:
                    break
                if hk_len < 0:
                    status = REC_BAD_LENGTH
                    break
                hk_pos = p
                p += hk_len
                hv_len, p, status = _varint(data, p, rec_end, 5)
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
                if nh == len(h_key_pos):
                    h_key_pos = _grow(h_key_pos, nh + 1)
                    h_key_len = _grow(h_key_len, nh + 1)
                    h_val_pos = _grow(h_val_pos, nh + 1)
                    h_val_len = _grow(h_val_len, nh + 1)
                h_key_pos[nh] = hk_pos
                h_key_len[nh] = hk_len
                h_val_pos[nh] = hv_pos
                h_val_len[nh] = hv_len
                nh += 1
            if status != REC_OK:
                nh = hdr_first
                break
            if p != rec_end:
                # Kafka: "Invalid record size: expected to read N bytes in record payload, but ..."
                status = REC_BAD_LENGTH
                nh = hdr_first
                break
            if n == len(r_batch):
                break  # cannot happen: cap bounds the records the bytes can hold
            r_batch[n] = b
            r_offset_delta[n] = off_delta
            r_ts_delta[n] = ts_delta
            r_key_pos[n] = key_pos
            r_key_len[n] = key_len
            r_val_pos[n] = val_pos
            r_val_len[n] = val_len
            r_hdr_first[n] = hdr_first
            r_hdr_count[n] = hdr_count
            n += 1
            b_decoded[b] += 1
        if status != REC_OK:
            b_status[b] = status
            b_error_pos[b] = rec_start
        elif b_decoded[b] < declared_counts[b]:
            b_status[b] = REC_TOO_FEW
            b_error_pos[b] = p
        elif p != end:
            b_status[b] = REC_TRAILING
            b_error_pos[b] = p
    return (r_batch[:n], r_offset_delta[:n], r_ts_delta[:n], r_key_pos[:n], r_key_len[:n], r_val_pos[:n],
            r_val_len[:n], r_hdr_first[:n], r_hdr_count[:n], h_key_pos[:nh], h_key_len[:nh], h_val_pos[:nh],
            h_val_len[:nh], b_decoded, b_status, b_error_pos)


@njit(cache=True)
def gather(data, pos, lengths):
    """Copy the byte slices (pos, len) into one buffer; returns (int32 Arrow offsets, bytes).

    A negative length is a null and contributes no bytes.
    """
    m = len(pos)
    offsets = np.empty(m + 1, np.int32)
    total = 0
    offsets[0] = 0
    for i in range(m):
        if lengths[i] > 0:
            total += lengths[i]
        offsets[i + 1] = total
    out = np.empty(total, np.uint8)
    for i in range(m):
        ln = lengths[i]
        if ln > 0:
            o = offsets[i]
            s = pos[i]
            out[o:o + ln] = data[s:s + ln]
    return offsets, out


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
