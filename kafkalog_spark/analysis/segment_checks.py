"""Segment-level checks that read batch rows, in Spark: batch CRCs and offsets, and overlaps between segments (the
checks that need only a partition's segment rows and its batches' aggregates are
:mod:`kafkalog_spark.log.local_log_checks`, run by :mod:`.local_log_findings`).

Checks (name: severity: what it compares):

- ``batch_crc_invalid``: error: a batch (or legacy message) whose stored CRC does not match its content.
- ``batch_offsets_not_increasing``: error: a batch's first offset not above the previous batch's last.
- ``segment_overlap``: error: the first batch of a segment holding an offset at or past the next segment's
  base offset.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .batch_summary import batch_summary
from .finding_columns import INDEX_FINDINGS, KEYS, candidate, emit, ok, text


def live_segments(views: Mapping[str, DataFrame]) -> DataFrame:
    """Live segments with the views' key names (``segmentBaseOffset``)."""
    return (ok(views["segments"]).where("status = 'live'")
            .withColumnRenamed("baseOffset", "segmentBaseOffset"))


def _or_unknown(name: str) -> Column:
    """A nullable long column as text, ``?`` for null (a legacy wrapper's base offset is not decoded)."""
    return F.coalesce(F.col(name).cast("string"), F.lit("?"))


def _name(offset: Column) -> Column:
    return F.format_string("%020d.log", offset)


def batch_findings(views: Mapping[str, DataFrame], live: DataFrame) -> DataFrame:
    """CRCs and offset order within a segment (:mod:`kafkalog_spark.log.batch_checks`, applied to each segment's
    batches): a function of the segment's batches alone, so an incremental run keeps them per segment
    (:func:`overlap_findings` looks at the next segment too). The nightly job and validate take them from the tasks
    that read the segments instead (the decoded view's ``batch_findings`` part)."""
    from ..log.batch_checks import BATCH_COLUMNS

    b = ok(views["batches"]).join(live.select(*KEYS, "logFile"), KEYS).select(*KEYS, "logFile", *BATCH_COLUMNS)
    return b.groupBy(*KEYS).applyInArrow(_check_segment_batches, INDEX_FINDINGS)


def _check_segment_batches(table):
    """One segment's batch rows (its keys, ``logFile`` and batch columns) to its findings, as an Arrow table."""
    import pyarrow as pa

    from ..log.batch_checks import segment_batch_findings
    from ..schemas import arrow_schema

    table = table.sort_by("position")
    key = {"logDir": table.column("logDir")[0].as_py(), "topic": table.column("topic")[0].as_py(),
           "partition": table.column("partition")[0].as_py(),
           "baseOffset": table.column("segmentBaseOffset")[0].as_py()}
    rows = segment_batch_findings(key, table.column("logFile")[0].as_py(), table)
    return pa.Table.from_pylist(rows, schema=arrow_schema(INDEX_FINDINGS))


def overlap_findings(views: Mapping[str, DataFrame], summary: DataFrame) -> DataFrame:
    """The first batch past the next segment's base offset. Only a segment whose largest last offset
    (``summary``: :func:`segment_summary`) reaches the next segment's base can hold one, so only those segments'
    batches are read (an incremental run reads no unchanged segment's batches for this)."""
    reaching = summary.where(F.col("maxLast") >= F.col("nextBaseOffset")).select(*KEYS, "logFile", "nextBaseOffset")
    b = _ordered_batches(ok(views["batches"]).join(reaching, KEYS))
    nxt = F.col("nextBaseOffset")
    return emit(
        b,
        candidate((F.col("lastOffset") >= nxt) & (F.col("prevLast").isNull() | (F.col("prevLast") < nxt)),
                  "error", "segment_overlap", **_at_batch(), expected=text("offsets < ", nxt, " (the next segment's "
                                                                          "base)"),
                  found=_offsets(), detail=text("from this batch on, the segment holds offsets at or past the start "
                                                "of ", _name(nxt), ": two segments claim the same offsets")),
    )


def _ordered_batches(b: DataFrame) -> DataFrame:
    """Each batch with the last offset and position of the batch before it in its segment."""
    w = Window.partitionBy(*KEYS).orderBy("position")
    return b.withColumn("prevLast", F.lag("lastOffset").over(w)).withColumn("prevPosition", F.lag("position").over(w))


def _at_batch() -> dict[str, Column]:
    return dict(file=F.col("logFile"), position=F.col("position"), base_offset=F.col("segmentBaseOffset"))


def _offsets() -> Column:
    return text("offsets ", _or_unknown("baseOffset"), "..", F.col("lastOffset"))


def segment_summary(views: Mapping[str, DataFrame], live: DataFrame) -> DataFrame:
    """Live segments with a .log, with their batches' first offsets, last offset and largest timestamp: from
    ``views['batch_summary']`` (:func:`~.batch_summary.batch_summary`) when given, else from the batches."""
    summary = views["batch_summary"] if "batch_summary" in views else batch_summary(views["batches"])
    summary = summary.select(*KEYS, F.col("firstBatchBaseOffset").alias("firstBase"),
                             F.col("firstBatchLastOffset").alias("firstLast"), "firstPosition",
                             F.col("lastOffset").alias("maxLast"), F.col("maxTimestamp").alias("maxBatchTimestamp"),
                             "maxTimestampPosition")
    return live.where(F.col("logFile").isNotNull()).join(summary, KEYS, "left")


def findings(views: Mapping[str, DataFrame], live: DataFrame, summary: DataFrame,
             batch_rows: DataFrame | None = None) -> list[DataFrame]:
    """Every check of this module; ``batch_rows``: :func:`batch_findings` when the caller has them."""
    return [batch_findings(views, live) if batch_rows is None else batch_rows, overlap_findings(views, summary)]
