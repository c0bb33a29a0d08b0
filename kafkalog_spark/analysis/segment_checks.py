"""Segment-level checks, in Spark: the readers' own findings, batch CRCs and offsets, file names, overlaps
and gaps between segments, the time index's last entry, stray and missing files.

Checks (name: severity: what it compares):

- reader findings, carried over with the reader's kind as the check name, file and byte position, from
  every view given, each finding once: from the index view (``index_length_not_multiple``,
  ``index_last_offset_below_base``, ``timeindex_last_offset_below_base``, ``index_offsets_not_increasing``,
  ``index_positions_not_increasing``, ``timeindex_timestamps_not_increasing`` (dump-log: "Found out of order
  timestamp"), ``timeindex_timestamp_decreasing``, ``index_nonzero_tail``, ...), from the batches view
  (``truncated_tail``, ``corrupt_size``, ``skipped_region``, ``batch_too_small``, ...), from the
  partition_files view (``txnindex_*``, ``snapshot_crc_mismatch``, ``snapshot_unknown_version``,
  ``checkpoint_*``, ...) and from the records view (``decompression_failed``, ``record_decode_failed``:
  damage under a right CRC that only a full decode finds), with the reader's severity except: zero tails
  (``index_zero_tail``, ``timeindex_zero_tail`` and the ``timeindex_last_timestamp_before_first`` they cause)
  are info on the active segment (normal in a copy of a running broker's dir) and warnings elsewhere;
  ``truncated_tail`` is a warning on the active segment (an append caught mid-copy) and an error on a closed
  one (rolled segments are complete). The reader's ``batch_crc_invalid`` is reported once, by the batch check
  below (with the CRCs).
- ``batch_crc_invalid``: error: a batch (or legacy message) whose stored CRC does not match its content.
- ``batch_offsets_not_increasing``: error: a batch's first offset not above the previous batch's last.
- ``segment_overlap``: error: the first batch of a segment holding an offset at or past the next segment's
  base offset.
- ``segment_first_offset_below_name``: error: the first batch starts below the file name's offset.
- ``segment_first_offset_above_name``: info: it starts above (normal after compaction; for a
  non-compacted log the first batch's base offset equals the name).
- ``segment_offset_gap``: info: offsets from a segment's last offset + 1 to the next base offset are in no
  segment (normal after compaction; without configs the policy is unknown: the detail says whether the
  cleaner-offset checkpoint lists the partition).
- ``timeindex_last_not_max_timestamp``: error (warning when the time index is empty): a closed segment's
  last time index entry differs from its largest batch maxTimestamp (the broker loads it as the segment's
  largest timestamp, for retention by time).
- ``index_file_missing``: warning: a live ``.log`` without its ``.index`` or ``.timeindex`` (rebuilt on load).
- ``stray_temp_file``: warning: a ``.deleted``/``.cleaned``/``.swap`` segment file (an unfinished delete,
  clean or swap; the broker finishes or discards it at startup), or a KRaft snapshot's ``.checkpoint.part`` /
  ``.checkpoint.deleted`` (the controller deletes both when it loads the metadata log).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..log import time_index
from ..log.checkpoints import CLEANER_OFFSET_CHECKPOINT
from .batch_summary import batch_summary
from .finding_columns import (
    INDEX_FINDINGS,
    KEYS,
    base_offset_from_file,
    candidate,
    emit,
    finding,
    ok,
    problems,
    sibling_file,
    text,
)
from .grouping_keys import PARTITION

TIME_ENTRY = time_index.ENTRY_SIZE
ZERO_TAIL_KINDS = ("index_zero_tail", "timeindex_zero_tail")


def live_segments(views: Mapping[str, DataFrame]) -> DataFrame:
    """Live segments with the views' key names (``segmentBaseOffset``)."""
    return (ok(views["segments"]).where("status = 'live'")
            .withColumnRenamed("baseOffset", "segmentBaseOffset"))


def _or_unknown(name: str) -> Column:
    """A nullable long column as text, ``?`` for null (a legacy wrapper's base offset is not decoded)."""
    return F.coalesce(F.col(name).cast("string"), F.lit("?"))


def _name(offset: Column) -> Column:
    return F.format_string("%020d.log", offset)


# Every view's problem rows count (the records view alone finds what only a full decode can: a payload that does
# not decompress, a record that does not decode). Views repeat each other's findings (segments repeats index,
# records repeats batches): one row per (partition, kind, file, position), worded by the first view here.
READER_VIEWS = ("index", "batches", "partition_files", "segments", "records", "record_stats")
_READER_KEY = [*PARTITION, "kind", "file", "position"]


def reader_findings(views: Mapping[str, DataFrame], live: DataFrame) -> DataFrame:
    """The readers' findings from the problem rows of every view given (:data:`READER_VIEWS`), each once."""
    rows = None
    for rank, view in enumerate(READER_VIEWS):
        if view in views:
            p = problems(views[view]).select(*PARTITION, "problem.*", F.lit(rank).alias("viewRank"))
            rows = p if rows is None else rows.unionByName(p)
    rows = (rows.groupBy(*_READER_KEY).agg(F.min_by(F.struct("severity", "detail"), "viewRank").alias("first"))
            .select(*_READER_KEY, "first.*"))
    rows = (rows.where("kind != 'batch_crc_invalid'")
            .withColumn("segmentBaseOffset", base_offset_from_file(F.col("file")))
            .join(live.select(*KEYS, "isActive"), KEYS, "left"))
    kind, active = F.col("kind"), F.coalesce(F.col("isActive"), F.lit(False))
    zero = kind.isin(*ZERO_TAIL_KINDS) | ((kind == "timeindex_last_timestamp_before_first")
                                        & (F.col("severity") == "warning"))
    closed_tail = (kind == "truncated_tail") & ~active
    severity = (F.when(zero & active, "info").when(zero, "warning").when(closed_tail, "error")
                .otherwise(F.col("severity")))
    detail = (F.when(zero & active, text("active segment: ", F.col("detail")))
              .when(zero, text("closed segment (its indexes are trimmed on roll): ", F.col("detail")))
              .when(closed_tail, text(F.col("detail"), " (a closed segment: the broker wrote it whole, so bytes are "
                                                       "missing; recovery would truncate here)"))
              .otherwise(F.col("detail")))
    return rows.select(*finding(severity, kind, file=F.col("file"), position=F.col("position"),
                                base_offset=F.col("segmentBaseOffset"), detail=detail))


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


def segment_findings(views: Mapping[str, DataFrame], s: DataFrame) -> DataFrame:
    """File name vs first batch, gaps to the next segment, the time index's last entry, missing indexes."""
    cleaned = (ok(views["partition_files"]).where(F.col("fileType") == CLEANER_OFFSET_CHECKPOINT)
               .groupBy(*PARTITION).agg(F.max("offset").alias("cleanerOffset")))
    s = s.join(F.broadcast(cleaned), PARTITION, "left")
    base, first_base, nxt = F.col("segmentBaseOffset"), F.col("firstBase"), F.col("nextBaseOffset")
    log = dict(file=F.col("logFile"), base_offset=base)
    first = F.coalesce(first_base, F.col("firstLast"))
    end = F.coalesce(F.col("maxLast") + 1, base)
    why = F.when(F.col("cleanerOffset").isNotNull(), text(
        "the cleaner-offset checkpoint lists this partition (cleaned up to ", F.col("cleanerOffset"),
        "): compaction explains gaps")).otherwise(F.lit(
            "no cleaner-offset checkpoint entry for this partition: unless it is compacted, offsets are missing "
            "(a deleted or lost segment?)"))
    ts_empty = F.col("maxIndexedTimestamp").isNull()
    ts_bad = (~F.col("isActive") & F.col("timeIndexSize").isNotNull() & (F.col("maxBatchTimestamp") >= 0)
              & (ts_empty | (F.col("maxIndexedTimestamp") != F.col("maxBatchTimestamp"))))
    missing = [candidate(F.col(size).isNull(), "warning", "index_file_missing",
                         file=sibling_file(F.col("logFile"), suffix), base_offset=base,
                         expected=f"a {suffix} file next to the .log", found="none",
                         detail=f"the broker rebuilds a missing {suffix} from the .log when it loads the segment")
               for suffix, size in ((".index", "indexSize"), (".timeindex", "timeIndexSize"))]
    return emit(
        s,
        candidate(first < base, "error", "segment_first_offset_below_name", **log,
                  position=F.col("firstPosition"), expected=text("first offset >= ", base),
                  found=text("first batch offsets ", _or_unknown("firstBase"), "..", F.col("firstLast")),
                  detail=text("the first batch of ", _name(base), " starts below the offset in its name: index entries "
                              "are relative to the name, and offset lookups would pick the wrong segment")),
        candidate(first_base > base, "info", "segment_first_offset_above_name", **log,
                  position=F.col("firstPosition"), expected=text("first offset ", base),
                  found=text("first offset ", first_base),
                  detail=text("the first batch of ", _name(base), " starts ", first_base - base, " offset(s) above "
                              "its name: normal after compaction (the cleaner keeps the name of the first segment it "
                              "merges); for a non-compacted log the first batch starts at the name's offset")),
        candidate(nxt.isNotNull() & (end < nxt), "info", "segment_offset_gap", **log, position=F.col("logSize"),
                  expected=text("next segment at offset ", end), found=text("next segment at offset ", nxt),
                  detail=text("offsets ", end, "..", nxt - 1, " (", nxt - end, ") are in no segment between ",
                              _name(base), " and ", _name(nxt), "; ", why)),
        candidate(ts_bad, F.when(ts_empty, "warning").otherwise("error"), "timeindex_last_not_max_timestamp",
                  file=sibling_file(F.col("logFile"), ".timeindex"), base_offset=base,
                  position=F.when(~ts_empty, (F.col("timeIndexEntries") - 1) * TIME_ENTRY),
                  expected=text("timestamp ", F.col("maxBatchTimestamp"), " (largest batch maxTimestamp, batch at "
                                "position ", F.col("maxTimestampPosition"), ")"),
                  found=F.when(ts_empty, F.lit("no entries")).otherwise(text("timestamp ",
                                                                             F.col("maxIndexedTimestamp"))),
                  detail=F.lit("a closed segment's last time index entry is its largest timestamp (forced on roll); "
                               "the broker loads it as the segment's largestTimestamp, so retention by time and "
                               "offsetsForTimes go wrong (with no entries it falls back to the file's mtime)")),
        *missing,
    )


_TEMP_DETAIL = {
    "deleted": "pending asynchronous delete (file.delete.delay.ms after retention or cleaning): the broker removes it",
    "cleaned": "cleaner output never swapped in: the broker deletes it at startup",
    "swap": "a segment swap was interrupted: the broker completes it at startup (renames it live)",
}
# KRaft snapshots (KafkaMetadataLog deletes both kinds when it loads the metadata log)
_SNAPSHOT_DETAIL = {
    "deleted": "a KRaft snapshot marked for deletion (.checkpoint.deleted): the controller removes it",
    "partial": "a KRaft snapshot never finished (.checkpoint.part): the controller deletes it at startup",
}


def stray_findings(views: Mapping[str, DataFrame]) -> DataFrame:
    temp = ok(views["segments"]).where("status NOT IN ('live', 'snapshot')")
    is_snapshot = F.col("snapshotEndOffset").isNotNull()
    detail = F.coalesce(*[F.when(is_snapshot & (F.col("status") == k), F.lit(v)) for k, v in _SNAPSHOT_DETAIL.items()],
                        *[F.when(F.col("status") == k, F.lit(v)) for k, v in _TEMP_DETAIL.items()])
    return temp.select(*finding("warning", "stray_temp_file", file=F.col("logFile"), base_offset=F.col("baseOffset"),
                                found=text(F.col("logSize"), " bytes"), detail=detail))


def findings(views: Mapping[str, DataFrame], live: DataFrame, summary: DataFrame,
             batch_rows: DataFrame | None = None) -> list[DataFrame]:
    """Every check of this module; ``batch_rows``: :func:`batch_findings` when the caller has them."""
    return [reader_findings(views, live), batch_findings(views, live) if batch_rows is None else batch_rows,
            overlap_findings(views, summary), segment_findings(views, summary), stray_findings(views)]
