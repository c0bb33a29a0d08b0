"""Small builders from numpy columns to Arrow arrays without Python-object round trips."""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np
import pyarrow as pa

from .compiled_scanners import MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, label_rows

__all__ = ["MAX_TIMESTAMP_MS", "MIN_TIMESTAMP_MS", "Buffers", "LabelColumn", "constant", "labels", "nullable",
           "record_batch", "string_labels", "timestamps_ms"]

ALIGNMENT = 64  # Arrow's recommended buffer alignment
POOLED_BYTES = 1 << 20  # smaller batches allocate from Arrow's pool directly
MAX_SLABS = 3  # slabs a thread keeps for reuse


class _Slabs(threading.local):
    """Large byte buffers recycled once every Arrow array built on them is gone.

    A batch's buffers are carved out of one slab, wrapped with ``pa.py_buffer`` (which holds a reference to
    the slab). When the consumer drops the batch (Spark serialises it, the benchmark counts it), that
    reference goes and the slab's reference count falls back to the pool's own: the next batch reuses it.
    Fresh memory costs a page fault per 4 KiB on first write, which with small records costs more than
    decoding them. A slab still referenced (a caller keeping batches, as ``read_log`` does) is never
    touched; the pool then allocates new ones and forgets the oldest.
    """

    def __init__(self) -> None:
        self.slabs: list[np.ndarray] = []

    def get(self, size: int) -> np.ndarray:
        best = None
        for slab in self.slabs:
            # references: the list, the loop variable, getrefcount's argument
            if len(slab) >= size and sys.getrefcount(slab) <= 3 and (best is None or len(slab) < len(best)):
                best = slab
        if best is not None:
            return best
        slab = np.empty(size + size // 16, np.uint8)  # a little room for the next, similar batch
        self.slabs.append(slab)
        if len(self.slabs) > MAX_SLABS:
            self.slabs.pop(0)
        return slab


_slabs = _Slabs()


class Buffers:
    """Carves the buffers of one Arrow batch out of a single allocation.

    ``add`` registers a buffer; after ``allocate``, ``array`` is a writable numpy view for the compiled
    kernels and ``buffer`` the same bytes as a ``pa.Buffer`` for ``pa.Array.from_buffers``. Large batches
    use a recycled slab (see :class:`_Slabs`), small ones Arrow's memory pool.
    """

    def __init__(self) -> None:
        self._specs: list[tuple[int, np.dtype]] = []
        self._offsets: list[int] = []
        self._size = 0
        self._base: pa.Buffer | None = None
        self._bytes: np.ndarray | None = None

    def add(self, count: int, dtype: type | np.dtype) -> int:
        dtype = np.dtype(dtype)
        self._offsets.append(self._size)
        self._specs.append((count, dtype))
        self._size += -(-count * dtype.itemsize // ALIGNMENT) * ALIGNMENT
        return len(self._specs) - 1

    def allocate(self) -> None:
        if self._size >= POOLED_BYTES:
            slab = _slabs.get(self._size)
            self._base = pa.py_buffer(slab)
            self._bytes = slab
        else:
            self._base = pa.allocate_buffer(max(self._size, 1))
            self._bytes = np.frombuffer(self._base, np.uint8)

    def array(self, key: int) -> np.ndarray:
        count, dtype = self._specs[key]
        start = self._offsets[key]
        return self._bytes[start:start + count * dtype.itemsize].view(dtype)

    def buffer(self, key: int) -> pa.Buffer:
        count, dtype = self._specs[key]
        return self._base.slice(self._offsets[key], count * dtype.itemsize)


@lru_cache(maxsize=256)
def _label_table(names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    encoded = [s.encode("utf-8") for s in names]
    lengths = np.array([len(e) for e in encoded], np.int64)
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer(b"".join(encoded) or b"\0", np.uint8), offsets, lengths


class LabelColumn:
    """A string column repeating ``names[codes[b]]`` ``counts[b]`` times for each b: a label per batch
    (codec name, timestamp type, topic) spread over the batch's rows. Registers its buffers in ``bufs``;
    ``array()`` fills them once ``bufs`` is allocated."""

    def __init__(self, bufs: Buffers, codes: np.ndarray, counts: np.ndarray, names: Sequence[str]):
        self.table, self.offsets, lengths = _label_table(tuple(names))
        self.codes = np.asarray(codes, np.int64)
        self.counts = np.asarray(counts, np.int64)
        self.n = int(self.counts.sum())
        nbytes = int((lengths[self.codes] * self.counts).sum())
        if nbytes > 2**31 - 1:
            raise OverflowError("string column over 2 GiB")
        self.bufs = bufs
        self.off_key, self.val_key = bufs.add(self.n + 1, np.int32), bufs.add(nbytes, np.uint8)

    def array(self) -> pa.Array:
        first = np.zeros(len(self.counts), np.int64)
        np.cumsum(self.counts[:-1], out=first[1:])
        b = self.bufs
        label_rows(self.codes, self.table, self.offsets, first, self.counts, b.array(self.off_key),
                   b.array(self.val_key))
        return pa.Array.from_buffers(pa.string(), self.n, [None, b.buffer(self.off_key), b.buffer(self.val_key)], 0)


def string_labels(codes: np.ndarray, counts: np.ndarray, names: Sequence[str]) -> pa.Array:
    """String array repeating ``names[codes[b]]`` ``counts[b]`` times for each b (see :class:`LabelColumn`)."""
    bufs = Buffers()
    col = LabelColumn(bufs, codes, counts, names)
    bufs.allocate()
    return col.array()


def labels(codes: np.ndarray, names: Sequence[str]) -> pa.Array:
    """String array from small integer codes into ``names`` (codec names, timestamp types, ...)."""
    return string_labels(codes, np.ones(len(codes), np.int64), names)


class _Constants:
    """Arrays repeating one value (topic, partition, codec name, all-null columns...), built once and sliced
    for each batch: Arrow arrays are immutable, so batches can share them. Bounded: a few dozen values, and
    an array is cached only up to CACHED_BYTES."""

    MAX_ENTRIES = 64
    CACHED_BYTES = 16 * 1024 * 1024

    def __init__(self) -> None:
        self.arrays: OrderedDict[tuple, pa.Array] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, value: object, n: int, type_: pa.DataType) -> pa.Array:
        key = (str(type_), type(value).__name__, value)
        with self.lock:
            arr = self.arrays.get(key)
            if arr is not None and len(arr) >= n:
                self.arrays.move_to_end(key)
                return arr.slice(0, n)
        size = max(n, 2 * len(arr) if arr is not None else 0, 4096)
        arr = _repeat(value, size, type_)
        if arr.nbytes > self.CACHED_BYTES:
            return arr.slice(0, n)
        with self.lock:
            self.arrays[key] = arr
            while len(self.arrays) > self.MAX_ENTRIES:
                self.arrays.popitem(last=False)
        return arr.slice(0, n)


def _repeat(value: object, n: int, type_: pa.DataType) -> pa.Array:
    if value is None:
        return pa.nulls(n, type_)
    if isinstance(value, str):
        return string_labels(np.zeros(1, np.int64), np.array([n], np.int64), [value])
    return pa.array(np.full(n, value, type_.to_pandas_dtype()), type_)


_constants = _Constants()


def constant(value: object, n: int, type_: pa.DataType) -> pa.Array:
    """``value`` (None: null) repeated ``n`` times, as a slice of a shared array."""
    return _constants.get(value, n, type_)


def timestamps_ms(ms: np.ndarray) -> pa.Array:
    """Spark timestamps (microseconds, UTC) from Kafka milliseconds; -1 ("none") and garbage are null."""
    valid = (ms != -1) & (ms >= MIN_TIMESTAMP_MS) & (ms <= MAX_TIMESTAMP_MS)
    micros = np.where(valid, ms, 0) * 1000
    return pa.array(micros, pa.timestamp("us", tz="UTC"), mask=~valid)


def nullable(values: np.ndarray, valid: np.ndarray, type_: pa.DataType) -> pa.Array:
    return pa.array(values, type_, mask=~valid)


def record_batch(columns: Mapping[str, object], schema: pa.Schema) -> pa.RecordBatch:
    """A batch with exactly ``schema``: every field from ``columns`` (arrays, numpy arrays or lists)."""
    arrays = []
    for field in schema:
        col = columns[field.name]
        arr = col if isinstance(col, pa.Array) else pa.array(col, field.type)
        if arr.type != field.type:
            arr = arr.cast(field.type)
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
