"""Partition-level checks: the transaction index against the control batches (Spark), and the root checkpoints
against the partition directories present (the log dirs' roots as :mod:`..source.log_dir_roots` reads them). The
producer snapshots and checkpoint offsets against the log's offsets are :mod:`kafkalog_spark.log.local_log_checks`.

- ``txnindex_abort_marker_missing``: error: an aborted transaction's lastOffset is not the offset of a
  control batch in the same segment (read_committed consumers rely on the pair).
- ``txnindex_marker_producer_mismatch``: error: the control batch there belongs to another producer id.
- ``txnindex_marker_not_abort``: error (records view given): the control record there is not an ABORT.
- ``txnindex_entry_missing``: error (records view given): an ABORT marker with no entry in its segment's
  ``.txnindex`` while data of its transaction is still in the log (read_committed consumers would deliver
  those aborted records). A marker whose aborted data the cleaner already removed needs no entry: see
  :func:`aborted_data_remains`.
- ``checkpoint_missing_partition``: warning: a root checkpoint line for a topic-partition with no
  directory in that log dir.
- ``recovery_point_missing``: info: a partition dir without a recovery-point-offset-checkpoint entry (the
  broker would recover it from offset 0); ``__cluster_metadata`` (the KRaft log) never has one: skipped.
- ``special_partition_dir``: info (``-delete``, ``-future``) or warning (``-stray``) partition dirs.
- The checkpoint readers' findings (``checkpoint_malformed``, ``checkpoint_count_mismatch``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..findings import finding_row
from ..log import transaction_index
from ..log.checkpoints import RECOVERY_POINT_OFFSET_CHECKPOINT
from ..source.log_dir_roots import LogDirRoot
from .finding_columns import (
    INDEX_FINDINGS,
    KEYS,
    base_offset_from_file,
    candidate,
    emit,
    finding,
    ok,
    sibling_file,
    text,
)
from .grouping_keys import PARTITION

TXN_ENTRY = transaction_index.ENTRY_SIZE
METADATA_TOPIC = "__cluster_metadata"


def txn_findings(views: Mapping[str, DataFrame], live: DataFrame) -> list[DataFrame]:
    txn = (ok(views["partition_files"]).where("fileType = 'txnindex'")
           .select(*PARTITION, "file", "entry", "producerId", "firstOffset", "lastOffset")
           .withColumn("segmentBaseOffset", base_offset_from_file(F.col("file"))))
    markers = ok(views["batches"]).where("isControl").select(
        *KEYS, F.col("baseOffset").alias("lastOffset"), F.col("producerId").alias("markerProducerId"),
        F.col("position").alias("markerPosition"))
    j = txn.join(markers, [*KEYS, "lastOffset"], "left")
    at = dict(file=F.col("file"), position=F.col("entry") * TXN_ENTRY, base_offset=F.col("segmentBaseOffset"))
    txn_text = text("aborted transaction of producer ", F.col("producerId"), " (offsets ", F.col("firstOffset"), "..",
                    F.col("lastOffset"), ")")
    out = [emit(
        j,
        candidate(F.col("markerPosition").isNull(), "error", "txnindex_abort_marker_missing", **at,
                  expected=text("a control batch at offset ", F.col("lastOffset"), " in this segment"), found="none",
                  detail=text(txn_text, ": its ABORT marker should be in this segment's .log")),
        candidate(F.col("markerProducerId") != F.col("producerId"), "error", "txnindex_marker_producer_mismatch",
                  **at, expected=text("producer ", F.col("producerId")),
                  found=text("producer ", F.col("markerProducerId")),
                  detail=text(txn_text, ": the control batch at offset ", F.col("lastOffset"), " (position ",
                              F.col("markerPosition"), ") belongs to another producer")),
    )]
    if "records" in views:
        control = views["records"].where(F.col("isControl")).select(
            *KEYS, F.col("offset").alias("lastOffset"), F.col("producerId").alias("markerProducerId"),
            "controlType")
        out.append(txn.join(control, [*KEYS, "lastOffset"]).where("controlType != 'ABORT'").select(*finding(
            "error", "txnindex_marker_not_abort", **at, expected="an ABORT marker",
            found=text("a ", F.col("controlType"), " marker"),
            detail=text(txn_text, ": the transaction index lists it as aborted but its marker says otherwise"))))
        aborts = (control.where("controlType = 'ABORT'")
                  .join(txn.withColumnRenamed("producerId", "markerProducerId"),
                        [*KEYS, "lastOffset", "markerProducerId"], "left_anti"))
        aborts = aborted_data_remains(aborts, ok(views["batches"])).join(live.select(*KEYS, "logFile"), KEYS)
        out.append(aborts.select(*finding(
            "error", "txnindex_entry_missing", file=sibling_file(F.col("logFile"), ".txnindex"),
            base_offset=F.col("segmentBaseOffset"),
            expected=text("an entry with lastOffset ", F.col("lastOffset")), found="none",
            detail=text("the ABORT marker of producer ", F.col("markerProducerId"), " at offset ",
                        F.col("lastOffset"), " has no .txnindex entry in its segment: read_committed consumers "
                        "would deliver the aborted records"))))
    return out


def aborted_data_remains(aborts: DataFrame, batches: DataFrame) -> DataFrame:
    """The ABORT markers (``logDir, topic, partition, lastOffset, markerProducerId``) whose transaction still has data
    batches in the log: those after the producer's previous marker and before this one.

    Only those need a `.txnindex` entry. The broker appends one when it writes the marker, but the cleaner
    rebuilds a cleaned segment's index from the aborted transactions whose data it still meets in that pass
    (LogCleaner's CleanedTransactionMetadata.onControlBatchRead appends only when lastObsoleteOffset is set), so
    once an earlier pass removed the aborted batches, the kept marker stands without an entry: read_committed
    has nothing left to skip.
    """
    producer = [*PARTITION, "markerProducerId"]
    markers = batches.where("isControl").select(
        *PARTITION, F.col("producerId").alias("markerProducerId"), F.col("baseOffset").alias("lastOffset"))
    previous = F.lag("lastOffset").over(Window.partitionBy(*producer).orderBy("lastOffset"))
    markers = markers.withColumn("previousMarker", F.coalesce(previous, F.lit(-1)))
    data = batches.where("isTransactional AND NOT isControl").select(
        *PARTITION, F.col("producerId").alias("markerProducerId"), F.col("baseOffset").alias("dataBase"))
    with_previous = aborts.join(markers, [*producer, "lastOffset"])
    a, d = with_previous.alias("a"), data.alias("d")
    remains = [F.col(f"a.{c}") == F.col(f"d.{c}") for c in producer] + [
        F.col("d.dataBase") > F.col("a.previousMarker"), F.col("d.dataBase") < F.col("a.lastOffset")]
    return a.join(d, remains, "left_semi").drop("previousMarker")


def findings(views: Mapping[str, DataFrame], live: DataFrame) -> list[DataFrame]:
    return txn_findings(views, live)


_SPECIAL = {
    "delete": ("info", "a deleted topic's partition, renamed for asynchronous deletion: the broker removes it"),
    "future": ("info", "a replica being moved to this log dir (alter-replica-log-dirs): not live yet"),
    "stray": ("warning", "a stray replica (not assigned to this broker): kept for inspection, never read"),
}


def _row(tp: tuple, severity: str, check: str, file: str, position: int = -1, expected: str | None = None,
         found: str | None = None, detail: str | None = None, *, log_dir: str) -> dict:
    return finding_row(tp[0], tp[1], severity, check, file, position=position, expected=expected, found=found,
                       detail=detail, log_dir=log_dir)


def root_checkpoints(spark: SparkSession, roots: Sequence[LogDirRoot]) -> tuple[DataFrame, dict[tuple, list[int]]]:
    """(findings of the log dirs' root checkpoints, their entries' line positions by (file, topic, partition)), from
    the log dirs' roots as the source reads them."""
    rows: list[dict] = []
    positions: dict[tuple, list[int]] = {}
    for log_dir in roots:
        root = log_dir.path
        present = set()
        for name, tp in log_dir.partition_dirs:
            if tp.kind == "live":
                present.add((tp.topic, tp.partition))
            else:
                severity, why = _SPECIAL[tp.kind]
                rows.append(_row((tp.topic, tp.partition), severity, "special_partition_dir",
                                 f"{root}/{name}", found=f"-{tp.kind} directory", detail=why, log_dir=root))
        for name, cp in log_dir.checkpoints.items():
            path = cp.path
            rows += [_row((None, None), str(f.severity), f.kind, f.file, f.position, detail=f.detail, log_dir=root)
                     for f in cp.findings]
            for tp, pos in cp.line_positions:
                positions.setdefault((path, *tp), []).append(pos)
            entries = dict(cp.line_positions)
            for tp, pos in sorted(entries.items()):
                if tp not in present:
                    rows.append(_row(tp, "warning", "checkpoint_missing_partition", path, pos,
                                     f"a directory {tp[0]}-{tp[1]} in {root}", "none",
                                     f"{name} names a partition this log dir does not hold (deleted, moved, or a "
                                     "partial copy of the log dir)", log_dir=root))
            if name == RECOVERY_POINT_OFFSET_CHECKPOINT:
                for tp in sorted(present - entries.keys()):
                    if tp[0] != METADATA_TOPIC:
                        rows.append(_row(tp, "info", "recovery_point_missing", path, -1,
                                         f"a line for {tp[0]} {tp[1]}", "none",
                                         "without a recovery point the broker recovers the whole log (from offset "
                                         "0) after an unclean shutdown", log_dir=root))
    return spark.createDataFrame(rows, INDEX_FINDINGS), positions
