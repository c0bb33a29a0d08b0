"""The incremental run: each rolled segment decoded once, its rows read back by the runs after it.

Kafka never changes a rolled segment: only the active segment grows; retention deletes whole segments, the cleaner
replaces them with new files, a partition moved to another log dir is copied there anew. So the rows the `.log`
views (batches, record_stats, records) read from a segment follow from its identity (:data:`IDENTITY`):

- where it is: log dir, topic, partition, base offset, the `.log` file's path;
- its files: the `.log`'s size and modification time, the offset index's time (a cleaned segment's `.log`
  gets its original's time from the cleaner, and its size may stay the same; its index is new), and the time
  index's size and time;
- ``abortedKey``, the aborted transactions over its offsets: record_stats counts their records, and the abort of a
  transaction begun in this segment is indexed in the segment holding the marker, often a later one;
- ``decodeKey``: the package's version, what its tasks compute of a segment and the split size.

So do the findings of its index entries against its batches
(:func:`~kafkalog_spark.analysis.index_validation.entry_findings`): a run reads the index entries of the segments it
decodes only (the tasks that decode them check them; the segments view, which reads every index, has every index's
problem rows); and
what the analyses derive from its batches alone (:data:`KEPT`): their aggregates
(:func:`~kafkalog_spark.analysis.batch_summary.batch_summary`) and their findings among themselves
(:func:`~kafkalog_spark.analysis.index_validation.batch_findings`).

Each run writes the rows of the segments it decoded into the tables of :data:`DECODED`, one per view, and of
:data:`KEPT`, and a row per segment into :data:`SEGMENTS` (its identity, ``recordsWhole`` and ``decodedIn``: the
snapshot holding its rows). The next run compares its segments with those of the latest committed snapshot of each
log dir, decodes those that differ, are new, or whose rows are not found, and reads the others' rows back from their
``decodedIn`` snapshot: its views hold the same rows as a full run's, and so does every table computed from them.
The analyses that read every batch read the unchanged segments' per-segment rows of :data:`KEPT` instead of their
batches; those that read some batches one by one (control and transactional batches, the compacted topics', a
partition's replay from its producer snapshot, replicas compared) select them from the batch rows read back.

A compacted topic's segment (whose records the job keeps whole, not only its control records) is reused only if its
records were kept whole when it was decoded; rows kept whole of a topic no longer compacted are cut to its control
records.

Planning reads back two small things, each with one query: the committed snapshots' runs that wrote every table of
:data:`CACHE_TABLES` (the manifest, asked on a thread of its own while the log dirs are read), and the previous
snapshots' rows of :data:`SEGMENTS` of the same log dirs: each segment's identity in the latest of them, found only if
the run of its ``decodedIn`` snapshot decoded it with the same identity (a snapshot written again since may not hold
it). Each table is then read back pruned to the partitions of those runs, with no further query of the manifest, the
tables' scans planned at once: on the driver, each read of a Delta table is a file listing and a Spark job.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import reduce

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..delta import TableLocation, committed_runs, rows_of_runs

SEGMENTS = "decoded_segments"
DECODED = {"batches": "decoded_batches", "record_stats": "decoded_record_stats", "records": "decoded_records"}
# per segment, what the analyses derive from its files alone, by the views' key (computed from the source's views:
# not views of the source): the table keeping it and its column of the segment's base offset
ENTRY_FINDINGS_VIEW = "index_entry_findings"
BATCH_FINDINGS_VIEW = "batch_findings"
SUMMARY_VIEW = "batch_summary"
KEPT = {ENTRY_FINDINGS_VIEW: ("decoded_index_findings", "baseOffset"),
        BATCH_FINDINGS_VIEW: ("decoded_batch_findings", "baseOffset"),
        SUMMARY_VIEW: ("decoded_batch_summary", "segmentBaseOffset")}
CACHE_TABLES = (SEGMENTS, *DECODED.values(), *(table for table, _ in KEPT.values()))
KEYS = ("logDir", "topic", "partition", "segmentBaseOffset")
IDENTITY = (*KEYS, "logFile", "logSize", "logModified", "indexModified", "timeIndexSize", "timeIndexModified",
            "abortedKey", "decodeKey")
SEGMENTS_SCHEMA = ("logDir string, topic string, partition int, segmentBaseOffset long, logFile string, "
                   "logSize long, logModified timestamp, indexModified timestamp, timeIndexSize long, "
                   "timeIndexModified timestamp, abortedKey string, decodeKey string, recordsWhole boolean, "
                   "decodedIn string")


def union_rows(a: DataFrame, b: DataFrame) -> DataFrame:
    """``a``'s rows and ``b``'s by column name. Rows of runs with and without a remote store differ by the ``tier``
    column (a run's views, its segment_stats): the one that lacks it gets it as null."""
    return a.unionByName(b, allowMissingColumns=set(a.columns) != set(b.columns))


# What the tasks compute of a segment, by version: rows kept by a run of another version are decoded again, not read
# back (2: each segment read whole, its batch summary computed in its task by log/segment_facts.py)
SEGMENT_FACTS_VERSION = 2


def decode_key(max_split_bytes: int) -> str:
    """How this package decodes: its version, what its tasks compute of a segment (:data:`SEGMENT_FACTS_VERSION`) and
    the split size (a cached row is read back only if they agree)."""
    from .. import __version__

    return f"{__version__}/facts{SEGMENT_FACTS_VERSION}/{max_split_bytes}"


def segment_identities(segments: DataFrame, partition_files: DataFrame, key: str) -> DataFrame:
    """One row per live segment with a `.log` (the segments view), with its :data:`IDENTITY`: ``abortedKey`` is a
    hash of the aborted transactions (partition_files' `.txnindex` entries of its partition) whose offsets meet
    the segment's."""
    live = (segments.where("problem is null and status = 'live' and logFile is not null")
            .select("logDir", "topic", "partition", F.col("baseOffset").alias("segmentBaseOffset"), "logFile",
                    "logSize", "logModified", "indexModified", "timeIndexSize", "timeIndexModified",
                    "nextBaseOffset"))
    aborted = (partition_files.where("problem is null and fileType = 'txnindex'")
               .select(F.col("logDir").alias("txnLogDir"), F.col("topic").alias("txnTopic"),
                       F.col("partition").alias("txnPartition"), "producerId", "firstOffset",
                       F.col("lastOffset").alias("abortOffset")))
    meets = ((F.col("txnLogDir") == F.col("logDir")) & (F.col("txnTopic") == F.col("topic"))
             & (F.col("txnPartition") == F.col("partition")) & (F.col("abortOffset") >= F.col("segmentBaseOffset"))
             & (F.col("nextBaseOffset").isNull() | (F.col("firstOffset") < F.col("nextBaseOffset"))))
    joined = live.join(aborted, meets, "left")
    txns = F.sort_array(F.collect_set(F.when(F.col("producerId").isNotNull(),
                                             F.struct("firstOffset", "abortOffset", "producerId"))))
    per_segment = joined.groupBy(*IDENTITY[:-2]).agg(F.sha2(F.to_json(txns), 256).alias("abortedKey"))
    return per_segment.withColumn("decodeKey", F.lit(key))


@dataclass(frozen=True)
class DecodePlan:
    """What a run decodes and what it reads back. ``decode``: the `.log` files to decode (None: every one, a full
    run); ``segments``: this run's rows of :data:`SEGMENTS`; ``reused``: the keys of the segments read back, each
    with the ``snapshotId`` holding its rows; ``counts``: the manifest's segmentsDecoded, segmentsReused,
    bytesDecoded and bytesReused; ``runs``: the committed run of each snapshot read back (that holds its rows)."""

    decode: tuple[str, ...] | None
    segments: list[tuple]
    reused: list[tuple] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)

    def source_option(self) -> dict[str, str]:
        """The `kafkalog` source's option that decodes only :attr:`decode` (none for a full run)."""
        return {} if self.decode is None else {"segmentFiles": json.dumps(list(self.decode))}


def kept_runs(spark: SparkSession, where: TableLocation, snapshot_id: str) -> dict[str, str]:
    """The committed snapshots' runs that kept what a run reads back (:data:`CACHE_TABLES`; a warehouse of a version
    that kept less is decoded in full once), but those of ``snapshot_id``: one query of the manifest, after which
    every table is read back pruned to their rows."""
    return {s: r for s, r in committed_runs(spark, where, CACHE_TABLES).items() if s != snapshot_id}


def plan(spark: SparkSession, where: TableLocation, identities: DataFrame, compacted: Sequence[str],
         snapshot_id: str, runs: Mapping[str, str]) -> DecodePlan:
    """Which segments this run (of ``snapshot_id``) decodes and which it reads back from the latest snapshot of
    their log dir among ``runs`` (:func:`kept_runs`; none: decode every one, a full run)."""
    current = [tuple(r) for r in identities.select(*IDENTITY).collect()]
    whole = set(compacted)
    previous = _previous(spark, where, sorted({r[0] for r in current}), snapshot_id, runs) if runs else {}
    rows, reused, decode = [], [], []
    for identity in current:
        found = previous.get(identity)
        records_whole = identity[1] in whole
        if found is not None and (found[0] or not records_whole):  # its records, as this run keeps them
            rows.append((*identity, found[0], found[1]))
            reused.append((*identity[:len(KEYS)], found[1]))
        else:
            rows.append((*identity, records_whole, snapshot_id))
            decode.append(identity)
    size = IDENTITY.index("logSize")
    counts = {"segmentsDecoded": len(decode), "segmentsReused": len(reused),
              "bytesDecoded": sum(r[size] or 0 for r in decode),
              "bytesReused": sum(r[size] or 0 for r in rows if r[-1] != snapshot_id)}
    files = None if not previous else tuple(sorted(r[IDENTITY.index("logFile")] for r in decode))
    return DecodePlan(files, rows, reused, counts, {s: runs[s] for s in sorted({r[-1] for r in reused})})


def _previous(spark: SparkSession, where: TableLocation, log_dirs: list[str], snapshot_id: str,
              runs: Mapping[str, str]) -> dict[tuple, tuple[bool, str]]:
    """The identities of the segments of ``log_dirs`` in each one's latest snapshot of ``runs`` (the committed
    snapshots' runs that wrote :data:`CACHE_TABLES`, those of ``snapshot_id`` left out), whose rows are found:
    identity -> (recordsWhole, decodedIn). One query of :data:`SEGMENTS`."""
    if not log_dirs:
        return {}
    rows = rows_of_runs(spark, where, SEGMENTS, runs).where(F.col("logDir").isin(log_dirs))
    # one snapshot a log dir, the latest (of two at the same time, the greater id): its rows, not a mix of two
    newest = Window.partitionBy("logDir").orderBy(F.desc("snapshotTime"), F.desc("snapshotId"))
    latest = (rows.where(F.col("decodedIn") != snapshot_id)
              .withColumn("_rank", F.dense_rank().over(newest)).where(F.col("_rank") == 1))
    # a segment's rows are found where the committed run of its decodedIn snapshot decoded it, the same files (that
    # run's row of it names its own snapshot): gone if that snapshot was written again since, without the segment or
    # with other files. Null-safe: a segment may lack an index file (null times)
    own = rows.where(F.col("decodedIn") == F.col("snapshotId")).select(
        *[F.col(c).alias(f"_{c}") for c in (*IDENTITY, "decodedIn")])
    same = reduce(lambda a, b: a & b, [F.col(c).eqNullSafe(F.col(f"_{c}")) for c in (*IDENTITY, "decodedIn")])
    found = latest.join(own, same, "left_semi").select(*IDENTITY, "recordsWhole", "decodedIn").collect()
    n = len(IDENTITY)
    return {tuple(r)[:n]: (r.recordsWhole, r.decodedIn) for r in found}


def read_back(spark: SparkSession, where: TableLocation, decode_plan: DecodePlan, view: str,
              compacted: Sequence[str]) -> DataFrame | None:
    """The rows of ``view`` (one of :data:`DECODED`) of the reused segments, as the view has them (None when no
    segment is reused). Records kept whole of a topic not in ``compacted`` are cut to its control records."""
    rows = _reused_rows(spark, where, decode_plan, DECODED[view], "segmentBaseOffset")
    if rows is not None and view == "records":
        rows = rows.where(F.col("isControl") | F.col("topic").isin(list(compacted)))
    return rows


def _reused_rows(spark: SparkSession, where: TableLocation, decode_plan: DecodePlan, table: str,
                 base_offset: str) -> DataFrame | None:
    """The rows of cache ``table`` of the reused segments, each from the snapshot holding its rows (None when no
    segment is reused); ``base_offset``: the table's column of the segment's base offset."""
    if not decode_plan.reused:
        return None
    names = [*KEYS[:-1], base_offset]
    keys = spark.createDataFrame(decode_plan.reused, ", ".join(
        [f"{k} {t}" for k, t in zip(names, ("string", "string", "int", "long"), strict=True)] + ["snapshotId string"]))
    return (rows_of_runs(spark, where, table, decode_plan.runs)
            .join(F.broadcast(keys), [*names, "snapshotId"], "left_semi").drop("snapshotId", "snapshotTime"))


def segments_table(spark: SparkSession, decode_plan: DecodePlan) -> DataFrame:
    """This run's rows of :data:`SEGMENTS`."""
    return spark.createDataFrame(decode_plan.segments, SEGMENTS_SCHEMA)


class Reuse:
    """One incremental run's part in reading the views (:func:`~.pipeline.read_cached_views`): it plans from the
    listing which segments to decode (:meth:`decode_options`), gives the rows of the others
    (:meth:`with_reused`) and what this run keeps for the next (:meth:`tables`); :attr:`counts` then says how
    much was decoded and reused; :meth:`with_kept` gives the per-segment rows of :data:`KEPT`. ``full``: decode every
    segment (the tables for later runs are written all the
    same)."""

    def __init__(self, spark: SparkSession, where: TableLocation, snapshot_id: str, max_split_bytes: int, *,
                 full: bool = False) -> None:
        self.spark, self.where, self.snapshot_id = spark, where, snapshot_id
        self.key = decode_key(max_split_bytes)
        self.decode_plan: DecodePlan | None = None
        self._fresh: dict[str, DataFrame] = {}  # the views' rows decoded in this run
        # the manifest asked now, on a thread of its own, while the log dirs are read: it needs nothing from them
        self._runs: Future[dict[str, str]] | None = None
        if not full:
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafkalog-manifest")
            self._runs = pool.submit(kept_runs, spark, where, snapshot_id)
            pool.shutdown(wait=False)  # its thread ends with the query

    def decode_options(self, segments: DataFrame, partition_files: DataFrame,
                       compacted: Sequence[str]) -> dict[str, str]:
        """Plan the run from the listing views; the `kafkalog` source's options that decode what it must."""
        identities = segment_identities(segments, partition_files, self.key)
        runs = self._runs.result() if self._runs is not None else {}
        self.decode_plan = plan(self.spark, self.where, identities, compacted, self.snapshot_id, runs)
        return self.decode_plan.source_option()

    def tables(self, views: Mapping[str, DataFrame]) -> dict[str, DataFrame]:
        """What this run writes for the next, by table name: :data:`SEGMENTS`, and the rows of the segments it decoded
        (those :meth:`with_reused` was given) and of :data:`KEPT` (``views``' rows of those segments)."""
        segments = segments_table(self.spark, self._planned())
        decoded = F.broadcast(segments.where(F.col("decodedIn") == self.snapshot_id).select(*KEYS))
        kept = {table: views[view].join(decoded.withColumnRenamed("segmentBaseOffset", base_offset),
                                        [*KEYS[:-1], base_offset], "left_semi")
                for view, (table, base_offset) in KEPT.items()}
        return {SEGMENTS: segments} | kept | {
            table: self._fresh[view].join(decoded, list(KEYS), "left_semi") for view, table in DECODED.items()}

    def with_kept(self, view: str, fresh: DataFrame) -> DataFrame:
        """The rows of ``view`` (of :data:`KEPT`) of every segment: ``fresh``, those computed in this run (of the
        segments it decodes), and those read back."""
        table, base_offset = KEPT[view]
        back = _reused_rows(self.spark, self.where, self._planned(), table, base_offset)
        return fresh if back is None else union_rows(fresh, back)

    def with_reused(self, decoded: Mapping[str, DataFrame], compacted: Sequence[str]) -> dict[str, DataFrame]:
        """The views: the rows decoded in this run (``decoded``) and those read back."""
        self._fresh = dict(decoded)
        out = {}
        for view, rows in decoded.items():
            back = read_back(self.spark, self.where, self._planned(), view, compacted)
            out[view] = rows if back is None else union_rows(rows, back)
        return out

    @property
    def counts(self) -> dict[str, int]:
        return dict(self._planned().counts)

    def _planned(self) -> DecodePlan:
        if self.decode_plan is None:
            raise RuntimeError("Reuse: decode_options() plans the run first")
        return self.decode_plan
