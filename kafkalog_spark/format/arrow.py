"""Small builders from numpy columns to Arrow arrays without Python-object round trips."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from .scan import gather

# Spark's timestamp range (years 1..9999) in milliseconds: outside it a Kafka timestamp is garbage.
MIN_TIMESTAMP_MS = -62135596800000
MAX_TIMESTAMP_MS = 253402300799999


def _validity(valid: np.ndarray) -> tuple[pa.Buffer | None, int]:
    nulls = int(len(valid) - np.count_nonzero(valid))
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(valid, bitorder="little")), nulls


BINARY = pa.binary()


def binary_from_slices(data: np.ndarray, pos: np.ndarray, lengths: np.ndarray,
                       type_: pa.DataType = BINARY) -> pa.Array:
    """Binary (or string) array of data[pos:pos+len]; a negative length is null."""
    offsets, values = gather(data, pos, lengths)
    validity, nulls = _validity(lengths >= 0)
    return pa.Array.from_buffers(type_, len(pos), [validity, pa.py_buffer(offsets), pa.py_buffer(values)], nulls)


def labels(codes: np.ndarray, names: Sequence[str]) -> pa.Array:
    """String array from small integer codes into ``names`` (codec names, timestamp types, ...)."""
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(list(names))).cast(pa.string())


def constant(value: object, n: int, type_: pa.DataType) -> pa.Array:
    if isinstance(value, str):
        return labels(np.zeros(n, np.int32), [value])
    return pa.array(np.full(n, value), type_) if value is not None else pa.nulls(n, type_)


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
