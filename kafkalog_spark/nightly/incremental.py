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

Each run writes the rows of the segments it decoded into one table, :data:`ROWS`: each row one of the parts of
:data:`PARTS` (the views of :data:`DECODED` and the per-segment rows of :data:`KEPT`) in the struct column named after
it, the others null, under the segment's keys; and a row per segment into :data:`SEGMENTS` (its identity,
``recordsWhole`` and ``decodedIn``: the snapshot holding its rows). The next run compares its segments with those of
the latest committed snapshot of each log dir, decodes those that differ, are new, or whose rows are not found, and
reads the others' rows back from their ``decodedIn`` snapshot, in one scan of :data:`ROWS` (cached, each part a
selection of it): its views hold the same rows as a full run's, and so does every table computed from them.
The analyses that read every batch read the unchanged segments' per-segment rows of :data:`KEPT` instead of their
batches; those that read some batches one by one (control and transactional batches, the compacted topics', a
partition's replay from its producer snapshot, replicas compared) select them from the batch rows read back.

A compacted topic's segment (whose records the job keeps whole, not only its control records) is reused only if its
records were kept whole when it was decoded; rows kept whole of a topic no longer compacted are cut to its control
records.

Planning reads back two small things, each with one query: the committed snapshots' runs that wrote both tables of
:data:`CACHE_TABLES` (the manifest, asked on a thread of its own while the log dirs are read), and the previous
snapshots' rows of :data:`SEGMENTS` of the same log dirs: each segment's identity in the latest of them, found only if
the run of its ``decodedIn`` snapshot decoded it with the same identity (a snapshot written again since may not hold
it). :data:`ROWS` is then read back once, pruned to the partitions of those runs, with no further query of the
manifest: on the driver, each read of a Delta table is a file listing and a Spark job.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import reduce

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..delta import TableLocation, committed_runs, rows_of_runs
from ..source import decoded_part

SEGMENTS = "decoded_segments"
ROWS = "decoded_rows"
# the views of the source's decoded rows a run keeps (the records view: the control records and the compacted topics'
# records whole, without payloads)
DECODED = ("batches", "record_stats", "records")
# per segment, what the analyses derive from its files alone, by the views' key (computed from the source's views:
# not views of the source)
ENTRY_FINDINGS_VIEW = "index_entry_findings"
BATCH_FINDINGS_VIEW = "batch_findings"
SUMMARY_VIEW = "batch_summary"
# ... each with its column of the segment's base offset
KEPT = {ENTRY_FINDINGS_VIEW: "baseOffset", BATCH_FINDINGS_VIEW: "baseOffset", SUMMARY_VIEW: "segmentBaseOffset"}
# every part :data:`ROWS` keeps, each with its column of the segment's base offset
PARTS = {**dict.fromkeys(DECODED, "segmentBaseOffset"), **KEPT}
CACHE_TABLES = (SEGMENTS, ROWS)
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
# back (2: each segment read whole, its batch summary computed in its task by log/segment_facts.py; a warehouse that
# kept its rows in a table per part, before ROWS, has no run that wrote both CACHE_TABLES: decoded in full once)
SEGMENT_FACTS_VERSION = 2


def decode_key(max_split_bytes: int) -> str:
    """How this package decodes: its version, what its tasks compute of a segment (:data:`SEGMENT_FACTS_VERSION`) and
    the split size (a cached row is read back only if they agree)."""
    from .. import __version__

    return f"{__version__}/facts{SEGMENT_FACTS_VERSION}/{max_split_bytes}"


def segment_identities(segments: DataFrame, partition_files: DataFrame, key: str) -> list[tuple]:
    """The :data:`IDENTITY` of each live segment with a `.log` (the segments view), on the driver: ``abortedKey`` is
    :func:`aborted_key` of the aborted transactions (partition_files' `.txnindex` entries of its partition) whose
    offsets meet the segment's. Two collects, a row per segment and a row per aborted transaction (the segments view
    collected on the driver: none of its own)."""
    live = (segments.where("problem is null and status = 'live' and logFile is not null")
            .select(*KEYS[:-1], F.col("baseOffset").alias("segmentBaseOffset"), *IDENTITY[len(KEYS):-2],
                    "nextBaseOffset").collect())
    aborted_by_partition: dict[tuple, list[tuple]] = {}
    for r in (partition_files.where("problem is null and fileType = 'txnindex' and producerId is not null")
              .select(*KEYS[:-1], "firstOffset", "lastOffset", "producerId").collect()):
        aborted_by_partition.setdefault(tuple(r[:3]), []).append((r.firstOffset, r.lastOffset, r.producerId))
    identities = {}
    for r in live:
        base, following = r.segmentBaseOffset, r.nextBaseOffset
        meeting = [t for t in aborted_by_partition.get(tuple(r[:3]), ())
                   if t[1] is not None and base is not None and t[1] >= base
                   and (following is None or (t[0] is not None and t[0] < following))]
        identities[tuple(r[:-1])] = aborted_key(meeting)
    return [(*identity, aborted_hash, key) for identity, aborted_hash in identities.items()]


def aborted_key(transactions: Sequence[tuple[int | None, int | None, int]]) -> str:
    """A hash of aborted transactions, each (first offset, abort offset, producer id): the SHA-256 of their JSON
    (distinct, sorted, nulls first, a null field left out), as runs before kept it."""
    def text(t: tuple) -> str:
        fields = zip(("firstOffset", "abortOffset", "producerId"), t, strict=True)
        return "{" + ",".join(f'"{name}":{value}' for name, value in fields if value is not None) + "}"

    ordered = sorted(set(transactions), key=lambda t: tuple((v is not None, v or 0) for v in t))
    return hashlib.sha256(("[" + ",".join(map(text, ordered)) + "]").encode()).hexdigest()


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


def plan(spark: SparkSession, where: TableLocation, identities: Sequence[tuple], compacted: Sequence[str],
         snapshot_id: str, runs: Mapping[str, str]) -> DecodePlan:
    """Which segments this run (of ``snapshot_id``) decodes and which it reads back from the latest snapshot of
    their log dir among ``runs`` (:func:`kept_runs`; none: decode every one, a full run)."""
    current = list(identities)
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


def packed(parts: Mapping[str, DataFrame]) -> DataFrame:
    """The rows of :data:`ROWS` for ``parts`` (of :data:`PARTS`, each as its view has it): each part's row in the struct
    column named after it, the others null, under the segment's :data:`KEYS`."""
    empty = {part: F.lit(None).cast(rows.schema).alias(part) for part, rows in parts.items()}
    return reduce(DataFrame.unionByName, (
        rows.select(*KEYS[:-1], F.col(PARTS[part]).alias(KEYS[-1]),
                    *(F.struct(*rows.columns).alias(p) if p == part else empty[p] for p in parts))
        for part, rows in parts.items()))


def read_back(spark: SparkSession, where: TableLocation, decode_plan: DecodePlan) -> DataFrame | None:
    """The rows of :data:`ROWS` of the reused segments, each from the snapshot holding its rows (None when no segment
    is reused)."""
    if not decode_plan.reused:
        return None
    keys = spark.createDataFrame(decode_plan.reused, "logDir string, topic string, partition int, "
                                                     "segmentBaseOffset long, snapshotId string")
    return (rows_of_runs(spark, where, ROWS, decode_plan.runs)
            .join(F.broadcast(keys), [*KEYS, "snapshotId"], "left_semi").drop("snapshotId", "snapshotTime"))


def reused_part(rows: DataFrame, part: str, compacted: Sequence[str]) -> DataFrame:
    """The rows of ``part`` read back (``rows``: :func:`read_back`'s). Records kept whole of a topic not in
    ``compacted`` are cut to its control records."""
    out = decoded_part(rows, part)
    return out.where(F.col("isControl") | F.col("topic").isin(list(compacted))) if part == "records" else out


def segments_table(spark: SparkSession, decode_plan: DecodePlan) -> DataFrame:
    """This run's rows of :data:`SEGMENTS`."""
    return spark.createDataFrame(decode_plan.segments, SEGMENTS_SCHEMA)


class Reuse:
    """One incremental run's part in reading the views (:func:`~.pipeline.read_cached_views`): it plans from the
    listing which segments to decode (:meth:`decode_options`), gives every part's rows, those decoded and those read
    back (:meth:`with_reused`), and what this run keeps for the next (:meth:`tables`); :attr:`counts` then says how
    much was decoded and reused. ``full``: decode every segment (the tables for later runs are written all the
    same). The rows read back are cached, once: :meth:`unpersist` when the views are no longer read."""

    def __init__(self, spark: SparkSession, where: TableLocation, snapshot_id: str, max_split_bytes: int, *,
                 full: bool = False) -> None:
        self.spark, self.where, self.snapshot_id = spark, where, snapshot_id
        self.key = decode_key(max_split_bytes)
        self.decode_plan: DecodePlan | None = None
        self._fresh: dict[str, DataFrame] = {}  # the parts' rows decoded in this run
        self._back: DataFrame | None = None
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

    def tables(self) -> dict[str, DataFrame]:
        """What this run writes for the next, by table name: :data:`SEGMENTS`, and as :data:`ROWS` the rows of the
        segments it decoded (those :meth:`with_reused` was given)."""
        segments = segments_table(self.spark, self._planned())
        decoded = F.broadcast(segments.where(F.col("decodedIn") == self.snapshot_id).select(*KEYS))
        return {SEGMENTS: segments, ROWS: packed(self._fresh).join(decoded, list(KEYS), "left_semi")}

    def with_reused(self, fresh: Mapping[str, DataFrame], compacted: Sequence[str],
                    cache: Callable[[DataFrame], DataFrame] = DataFrame.persist) -> dict[str, DataFrame]:
        """Every part of :data:`PARTS` (``fresh``: the rows decoded in this run, by part): those rows and those read
        back, which ``cache`` caches (one scan of the table for every part)."""
        self._fresh = {part: fresh[part] for part in PARTS}
        self._back = read_back(self.spark, self.where, self._planned())
        if self._back is None:
            return dict(self._fresh)
        self._back = cache(self._back)
        return {part: union_rows(rows, reused_part(self._back, part, compacted)) for part, rows in self._fresh.items()}

    @property
    def reads_back(self) -> bool:
        """Whether the run reads rows back from the warehouse (once :meth:`with_reused` ran): some segment is
        unchanged since a snapshot that kept its rows."""
        return self._back is not None

    def unpersist_read_back(self) -> None:
        """Uncache the rows read back (what is built on them first: see :meth:`unpersist`)."""
        if self._back is not None:
            self._back.unpersist()

    def unpersist(self) -> None:
        """Uncache the rows read back, and those :meth:`with_reused` was given where the caller cached them (the views
        hold their unions with the rows read back, not them)."""
        for rows in [*self._fresh.values(), *([self._back] if self._back is not None else [])]:
            rows.unpersist()

    @property
    def counts(self) -> dict[str, int]:
        return dict(self._planned().counts)

    def _planned(self) -> DecodePlan:
        if self.decode_plan is None:
            raise RuntimeError("Reuse: decode_options() plans the run first")
        return self.decode_plan
