"""What a segment's files say, computed where the segment is read: the facts the analyses need of it, so that its
batch rows need not leave the task that decoded them.

Today: its batches' summary (:data:`kafkalog_spark.schemas.BATCH_SUMMARY`), one row a segment, the one home of its
rules, which the source's decoded view computes in the task reading the segment and
:func:`kafkalog_spark.analysis.batch_summary.batch_summary` applies to a batches view's rows grouped by segment.
A segment's batches never change once it rolled (the cleaner and retention replace or delete whole files), so
neither does its row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..format.compression import CODEC_LABELS

# the batches view's columns the summary reads
BATCH_COLUMNS = ("position", "size", "baseOffset", "lastOffset", "count", "isValid", "compresscodec", "timestampType",
                 "isTransactional", "isControl", "deleteHorizonMs", "maxTimestamp", "producerId")


def _sum(values: pa.ChunkedArray) -> int | None:
    """Spark's sum: null when every value is null."""
    return pc.sum(values.cast(pa.int64()), min_count=1).as_py()


def _max(values: pa.ChunkedArray):
    return pc.max(values).as_py()


def _count_true(values: pa.ChunkedArray) -> int | None:
    """How many are true, null when every value is null (Spark's sum of the values cast to int)."""
    return _sum(values.cast(pa.int8()))


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
    table, n = batches, batches.num_rows
    if not n:
        return None
    col = table.column
    position = col("position").to_numpy(zero_copy_only=False)
    max_ts = col("maxTimestamp")
    largest = _max(max_ts)
    at_max = None
    if largest is not None:
        holding = pc.fill_null(pc.equal(max_ts, largest), False).to_numpy(zero_copy_only=False)
        at_max = int(position[holding].min())
    first = int(np.argmin(position))
    producers = col("producerId").drop_null().to_numpy()
    codecs = col("compresscodec")
    size = col("size")
    count = col("count")
    return {
        "batches": n,
        "declaredRecords": _sum(count),
        "firstOffset": pc.min(pc.coalesce(col("baseOffset"), col("lastOffset"))).as_py(),
        "lastOffset": _max(col("lastOffset")),
        "maxTimestamp": largest,
        "largestTimestamp": _max(pc.filter(max_ts, pc.greater_equal(max_ts, 0))),
        "maxTimestampPosition": at_max,
        "timestampTypes": sorted(pc.unique(col("timestampType").drop_null()).to_pylist()),
        "batchBytes": _sum(size),
        "avgBatchSize": pc.mean(size).as_py(),
        "maxBatchSize": _max(size),
        "transactionalBatches": _count_true(col("isTransactional")),
        "controlBatches": _count_true(col("isControl")),
        "invalidBatches": _count_true(pc.invert(col("isValid"))),
        "emptyBatches": _count_true(pc.equal(count, 0)),
        "deleteHorizonBatches": _count_true(pc.is_valid(col("deleteHorizonMs"))),
        "producerIds": len(np.unique(producers[producers >= 0])),
        "codecMix": [(label, k) for label in CODEC_LABELS
                     if (k := _count_true(pc.equal(codecs, label)) or 0) > 0],
        "firstPosition": int(position[first]),
        "firstBatchSize": size[first].as_py(),
        "firstBatchMaxTimestamp": max_ts[first].as_py(),
        "firstBatchLastOffset": col("lastOffset")[first].as_py(),
        "firstBatchBaseOffset": col("baseOffset")[first].as_py(),
    }
