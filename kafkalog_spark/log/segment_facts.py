"""What a segment's files say, computed where the segment is read: the facts the analyses need of it, so that its
batch rows need not leave the task that decoded them.

Today: its batches' summary (:data:`kafkalog_spark.schemas.BATCH_SUMMARY`), one row a segment, the one home of its
rules, which the source's decoded view computes in the task reading the segment and
:func:`kafkalog_spark.analysis.batch_summary.batch_summary` applies to a batches view's rows grouped by segment.
A segment's batches never change once it rolled (the cleaner and retention replace or delete whole files), so
neither does its row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..format.compression import CODEC_LABELS

# the batches view's columns the summary reads
BATCH_COLUMNS = ("position", "size", "baseOffset", "lastOffset", "count", "isValid", "compresscodec", "timestampType",
                 "isTransactional", "isControl", "deleteHorizonMs", "maxTimestamp", "producerId")


class _Column:
    """One batch column as numpy: its values (nulls filled) and which are set (None: all). Each aggregate below is
    a numpy reduction over these: a segment's summary is some twenty of them, and pyarrow.compute's cost per call
    (tens of microseconds) made them most of a small segment's cost in the task that reads it."""

    __slots__ = ("values", "valid")

    def __init__(self, array: pa.Array, fill) -> None:
        if array.null_count:
            self.valid = array.is_valid().to_numpy(zero_copy_only=False)
            array = array.fill_null(fill)
        else:
            self.valid = None
        self.values = array.to_numpy(zero_copy_only=False)

    def present(self) -> np.ndarray:
        """The values that are set."""
        return self.values if self.valid is None else self.values[self.valid]


def _sum(column: _Column) -> int | None:
    """Spark's sum: null when every value is null."""
    values = column.present()
    return int(values.sum(dtype=np.int64)) if len(values) else None


def _max(values: np.ndarray) -> int | None:
    return int(values.max()) if len(values) else None


def _count_true(column: _Column, where: Callable[[np.ndarray], np.ndarray] | None = None) -> int | None:
    """How many are true (of ``where``, a test of the values, when given), null when every value is null (Spark's
    sum of the values cast to int)."""
    values = column.present()
    if not len(values):
        return None
    return int(np.count_nonzero(values if where is None else where(values)))


def batch_summary_row(batches: pa.Table | Sequence[pa.RecordBatch]) -> dict | None:
    """The summary of one segment's batch rows (the batches view's columns, problem rows left out), as a row of
    :data:`~kafkalog_spark.schemas.BATCH_SUMMARY` (without its keys); None when it has no batch.

    - counts: ``batches``, ``declaredRecords`` (the batches' record counts), ``transactionalBatches``,
      ``controlBatches``, ``invalidBatches`` (CRC), ``emptyBatches``, ``deleteHorizonBatches``, ``producerIds``
      (distinct producer ids), ``codecMix`` (batches per codec, codecs without a batch left out), ``timestampTypes``;
    - sizes: ``batchBytes``, ``avgBatchSize``, ``maxBatchSize``;
    - offsets: ``firstOffset`` (the smallest, a legacy wrapper's last offset where its base is unknown),
      ``lastOffset`` (the largest);
    - times: ``maxTimestamp`` (the largest, -1 included), ``largestTimestamp`` (the largest at or above 0, as
      retention reads it: a batch without a timestamp does not count), ``maxTimestampPosition`` (the first batch
      holding ``maxTimestamp``, as a LogSegment keeps the offset of its max timestamp: only a larger one replaces it);
    - the first batch (the smallest position): ``firstPosition``, ``firstBatchBaseOffset``, ``firstBatchLastOffset``,
      ``firstBatchSize``, ``firstBatchMaxTimestamp``."""
    if not isinstance(batches, pa.Table):
        batches = list(batches)
        if not batches:  # Arrow cannot build a table of no batches without a schema
            return None
        batches = pa.Table.from_batches(batches)
    n = batches.num_rows
    if not n:
        return None
    arrays = {name: _array(batches, name) for name in BATCH_COLUMNS}
    position = _Column(arrays["position"], 0).values
    max_ts = _Column(arrays["maxTimestamp"], 0)
    timestamps = max_ts.present()
    largest = _max(timestamps)
    at_max = None
    if largest is not None:
        holding = max_ts.values == largest
        if max_ts.valid is not None:
            holding &= max_ts.valid
        at_max = int(position[holding].min())
    first = int(np.argmin(position))
    producers = _Column(arrays["producerId"], -1).present()
    codecs = pc.value_counts(arrays["compresscodec"]).to_pylist()
    codec_counts = {c["values"]: c["counts"] for c in codecs}
    size, count = _Column(arrays["size"], 0), _Column(arrays["count"], 0)
    sizes = size.present()
    last = _Column(arrays["lastOffset"], 0)
    at_or_above_zero = timestamps[timestamps >= 0]
    return {
        "batches": n,
        "declaredRecords": _sum(count),
        "firstOffset": _first_offset(_Column(arrays["baseOffset"], 0), last),
        "lastOffset": _max(last.present()),
        "maxTimestamp": largest,
        "largestTimestamp": _max(at_or_above_zero),
        "maxTimestampPosition": at_max,
        "timestampTypes": sorted(pc.unique(arrays["timestampType"].drop_null()).to_pylist()),
        "batchBytes": _sum(size),
        "avgBatchSize": float(sizes.sum(dtype=np.int64)) / len(sizes) if len(sizes) else None,
        "maxBatchSize": _max(sizes),
        "transactionalBatches": _count_true(_Column(arrays["isTransactional"], False)),
        "controlBatches": _count_true(_Column(arrays["isControl"], False)),
        "invalidBatches": _count_true(_Column(arrays["isValid"], True), np.logical_not),
        "emptyBatches": _count_true(count, lambda values: values == 0),
        "deleteHorizonBatches": n - arrays["deleteHorizonMs"].null_count,
        "producerIds": len(np.unique(producers[producers >= 0])),
        "codecMix": [(label, codec_counts[label]) for label in CODEC_LABELS if codec_counts.get(label, 0) > 0],
        "firstPosition": int(position[first]),
        "firstBatchSize": arrays["size"][first].as_py(),
        "firstBatchMaxTimestamp": arrays["maxTimestamp"][first].as_py(),
        "firstBatchLastOffset": arrays["lastOffset"][first].as_py(),
        "firstBatchBaseOffset": arrays["baseOffset"][first].as_py(),
    }


def _array(table: pa.Table, name: str) -> pa.Array:
    column = table.column(name)
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _first_offset(base: _Column, last: _Column) -> int | None:
    """The smallest offset: each batch's base offset, or its last where the base is unknown (a legacy wrapper's)."""
    if base.valid is None:
        return int(base.values.min())
    offsets = np.where(base.valid, base.values, last.values)
    if last.valid is not None:
        offsets = offsets[base.valid | last.valid]
    return int(offsets.min()) if len(offsets) else None
