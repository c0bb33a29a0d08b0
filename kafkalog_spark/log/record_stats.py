"""The aggregates of a segment's records that the segment statistics need, added up batch by batch as the records
are decoded, in the task that decodes them: nothing per record leaves it (the `record_stats` view of the source).

What is counted is what :func:`kafkalog_spark.analysis.segment_stats.segment_stats` reports: records, control
records, tombstones (data records with a null value), keyless data records, the aborted ones (Kafka's rule,
:mod:`.aborted_transactions`), the data records' payload (key, value and header keys and values), the earliest
timestamp, the batches' bytes on disk and uncompressed, and a bottom-k sketch of the data records' keys. The
sketch keeps the k smallest distinct 63-bit hashes of the keys seen: pieces of a segment read by several tasks
merge by taking the k smallest of their union, so the distinct count is exact up to k keys and a K-minimum-values
estimate (relative standard error about 1/sqrt(k), 1.6%) beyond.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from ..format.records import BatchBytes
from ..schemas import KEY_SKETCH_SIZE as DISTINCT_KEYS_K
from .aborted_transactions import AbortedTransactions


@njit(cache=True)
def _key_hashes(offsets: np.ndarray, data: np.ndarray, selected: np.ndarray) -> np.ndarray:
    """63-bit hashes of the binary values data[offsets[i]:offsets[i+1]] for which ``selected[i]``: FNV-1a over the
    bytes, then MurmurHash3's 64-bit finalizer so every bit of the result depends on every byte (the sketch ranks
    hashes by value)."""
    out = np.empty(np.count_nonzero(selected), np.int64)
    k = 0
    for i in range(len(selected)):
        if not selected[i]:
            continue
        h = np.uint64(0xCBF29CE484222325)
        for j in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[j])) * np.uint64(0x100000001B3)
        h ^= h >> np.uint64(33)
        h *= np.uint64(0xFF51AFD7ED558CCD)
        h ^= h >> np.uint64(33)
        h *= np.uint64(0xC4CEB9FE1A85EC53)
        h ^= h >> np.uint64(33)
        out[k] = np.int64(h >> np.uint64(1))
        k += 1
    return out


def key_hashes(keys: pa.Array, selected: np.ndarray | None = None) -> np.ndarray:
    """The 63-bit hashes (as int64, non-negative) of the binary ``keys`` that are ``selected`` (default: the
    non-null ones), read in place: the keys are neither filtered nor cast into a copy first."""
    valid = keys.is_valid().to_numpy(zero_copy_only=False)
    selected = valid if selected is None else selected & valid
    if not selected.any():
        return np.empty(0, np.int64)
    _, offsets, data = keys.buffers()
    wide = pa.types.is_large_binary(keys.type) or pa.types.is_large_string(keys.type)
    offsets = np.frombuffer(offsets, np.int64 if wide else np.int32, len(keys) + 1, keys.offset * (8 if wide else 4))
    data = np.frombuffer(data, np.uint8) if data is not None else np.empty(0, np.uint8)
    return _key_hashes(offsets, data, selected)


def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """np.unique's result by a sort: numpy 2's np.unique hashes integers, ten times slower here on a batch of
    keys' hashes (measured: 194 against 18 ns a value)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def smallest_distinct(hashes: np.ndarray, k: int = DISTINCT_KEYS_K) -> np.ndarray:
    """The ``k`` smallest distinct values of ``hashes``, sorted."""
    if len(hashes) > 4 * k:  # a cheap cut before sorting: at most the k + 1 smallest values, repeats counted
        smallest = _sorted_distinct(hashes[hashes <= np.partition(hashes, k)[k]])
        if len(smallest) >= k:  # else repeats hid some of the k smallest distinct values
            return smallest[:k]
    return _sorted_distinct(hashes)[:k]


def _header_data_bytes(headers: pa.Array) -> np.ndarray:
    """Per record, its headers' keys and values in bytes (a null value: 0): the headers' sizes summed between
    each record's list offsets (a null list of headers: 0)."""
    offsets = headers.offsets.to_numpy()
    flat = headers.values.slice(offsets[0], offsets[-1] - offsets[0])
    if not len(flat):
        return np.zeros(len(headers), np.int64)
    sizes = (pc.fill_null(pc.binary_length(flat.field("key")), 0).to_numpy(zero_copy_only=False).astype(np.int64)
             + pc.fill_null(pc.binary_length(flat.field("value")), 0).to_numpy(zero_copy_only=False))
    running = np.concatenate(([0], np.cumsum(sizes)))
    offsets = offsets - offsets[0]
    out = running[offsets[1:]] - running[offsets[:-1]]
    if headers.null_count:
        out[~headers.is_valid().to_numpy(zero_copy_only=False)] = 0
    return out


def _bools(batch: pa.RecordBatch, name: str) -> np.ndarray:
    return batch.column(name).to_numpy(zero_copy_only=False).astype(bool)


class RecordStats:
    """One segment piece's record aggregates; :meth:`add` each records-view batch as decoded, then :meth:`row`.
    ``sizes`` is the :class:`~kafkalog_spark.format.records.BatchBytes` the decoder adds the same batches to."""

    def __init__(self, aborted: AbortedTransactions, sizes: BatchBytes):
        self.aborted = aborted
        self.sizes = sizes
        self.records = self.control = self.data = self.tombstones = self.keyless = self.aborted_records = 0
        self.payload = 0
        self.max_payload: int | None = None
        self.min_timestamp_us: int | None = None
        self.hashes = np.empty(0, np.int64)

    def add(self, batch: pa.RecordBatch) -> None:
        n = batch.num_rows
        if n == 0:
            return
        control = _bools(batch, "isControl")
        data = ~control
        keys, values = batch.column("key"), batch.column("value")
        self.records += n
        self.control += int(control.sum())
        self.data += int(data.sum())
        self.tombstones += int((data & values.is_null().to_numpy(zero_copy_only=False)).sum())
        key_null = keys.is_null().to_numpy(zero_copy_only=False)
        self.keyless += int((data & key_null).sum())
        transactional = _bools(batch, "isTransactional") & data
        if self.aborted and transactional.any():
            self.aborted_records += int(self.aborted.mask(batch.column("producerId").to_numpy(zero_copy_only=False),
                                                          batch.column("offset").to_numpy(), transactional).sum())
        if data.any():
            payload = (np.maximum(batch.column("keySize").to_numpy(zero_copy_only=False), 0).astype(np.int64)
                       + np.maximum(batch.column("valueSize").to_numpy(zero_copy_only=False), 0)
                       + _header_data_bytes(batch.column("headers")))[data]
            self.payload += int(payload.sum())
            top = int(payload.max())
            self.max_payload = top if self.max_payload is None else max(self.max_payload, top)
        earliest = pc.min(batch.column("timestamp").cast(pa.int64())).as_py()
        if earliest is not None:
            self.min_timestamp_us = earliest if self.min_timestamp_us is None else min(self.min_timestamp_us, earliest)
        keyed = data & ~key_null
        if keyed.any():
            new = key_hashes(keys, keyed)
            if len(self.hashes) == DISTINCT_KEYS_K:
                new = new[new < self.hashes[-1]]  # only a smaller hash can enter the k smallest
            self.hashes = smallest_distinct(np.concatenate([self.hashes, new]))

    def row(self) -> dict:
        """The piece's aggregates; the record columns are null when it has no records (as for a segment without
        any: no count to report, not a count of zero)."""
        has = self.records > 0

        def count(v: int) -> int | None:
            return v if has else None

        return {
            "records": self.records, "controlRecords": count(self.control), "dataRecords": count(self.data),
            "tombstones": count(self.tombstones), "keylessRecords": count(self.keyless),
            "abortedRecords": count(self.aborted_records),
            "payloadBytes": self.payload if self.data else None, "maxRecordSize": self.max_payload,
            "minTimestamp": None if self.min_timestamp_us is None else self.min_timestamp_us // 1000,
            "batchBytes": self.sizes.on_disk, "bytesBeforeCompression": self.sizes.uncompressed,
            "keyHashes": self.hashes.tolist() if len(self.hashes) else None,
        }
