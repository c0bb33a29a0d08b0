"""Index validation: everything ``kafka-dump-log --verify-index-only`` / ``--index-sanity-check`` checks,
and more, as one DataFrame of findings (one row per problem).

A function of DataFrames: the views ``segments``, ``batches``, ``index`` and ``partition_files`` read by
the `kafkalog` source for the same paths (``records`` optionally, for the ABORT/COMMIT type of control
records), plus the broker log dirs whose root checkpoint files to check. The checks live in
:mod:`kafkalog_spark.log.local_log_checks` (reader findings, segment files, snapshots and checkpoint offsets,
reduced per partition by :mod:`.local_log_findings`), :mod:`.segment_checks` (batches, overlaps),
:mod:`.index_entries` (each offset and time index entry against the batches of its segment) and
:mod:`.partition_checks` (transaction index, root checkpoints). Each check has a stable snake_case name; see the
module docstrings for what each compares.

    views = read_validation_views(spark, ["/var/lib/kafka/data"])
    index_findings(spark, views, log_dirs=["/var/lib/kafka/data"]).where("severity = 'error'").show()

Every view is read by several checks: cache them (``validate`` does) when the log dirs are large. The problem
rows of every view given count (:mod:`kafkalog_spark.log.local_log_checks`): without the record_stats (or records)
view, damage that only a full decode finds is not seen.

Every row carries its log dir (``logDir``): replicas of a topic-partition read from several brokers' log dirs
(or a copy next to its original) are checked each on its own, in the same job.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from pyspark.sql import DataFrame, Row, SparkSession

from . import index_entries, partition_checks, segment_checks
from .finding_columns import INDEX_FINDINGS, KEYS
from .local_log_findings import local_log_findings

VIEWS = ("segments", "batches", "index", "partition_files")
__all__ = ["INDEX_FINDINGS", "VIEWS", "batch_findings", "entry_findings", "index_findings", "log_dirs_of",
           "read_validation_views", "validate", "validate_rows"]


def index_findings(spark: SparkSession, views: Mapping[str, DataFrame], log_dirs: Sequence[str] = (), *,
                   entry_rows: DataFrame | None = None, batch_rows: DataFrame | None = None) -> DataFrame:
    """Index and segment validation findings (schema :data:`INDEX_FINDINGS`).

    ``views``: ``segments``, ``batches``, ``index`` and ``partition_files`` as the `kafkalog` source reads
    them (PERMISSIVE, problem rows included) for the same paths; ``records`` (its control records suffice) and
    ``record_stats`` are optional: with the records, the transaction index is checked against the control
    records' ABORT/COMMIT type both ways, and the problem rows of both count (damage under a right CRC). ``log_dirs``:
    broker log dirs (roots holding the offset checkpoint files) whose checkpoints are checked against the
    partition directories present; partition-level checkpoint entries come from ``partition_files``.
    Each log dir's partitions are checked on their own (replicas of a partition in several brokers' log dirs stay
    apart). ``entry_rows``: the findings of the index entries of the segments with a `.log`, when the caller has
    them (the tasks that read the segments compute them; some perhaps kept from an earlier run): ``views['index']``
    is then read only for the entries of segments without a `.log`, checked here (``segment_log_missing``); by
    default every entry is checked from the views (:func:`entry_findings`); ``batch_rows``, likewise, the findings
    of each segment's batches (:func:`batch_findings`). Lazy, except for the driver-side read of the root
    checkpoints.
    """
    missing = [v for v in VIEWS if v not in views]
    if missing:
        raise ValueError(f"index_findings needs the views {', '.join(VIEWS)}; missing: {', '.join(missing)}")
    from ..source.log_dir_roots import read_log_dir_roots

    root, line_positions = partition_checks.root_checkpoints(spark, read_log_dir_roots(log_dirs))
    live = segment_checks.live_segments(views)
    summary = segment_checks.segment_summary(views, live)
    parts = [
        local_log_findings(views, line_positions, log_missing=entry_rows is not None),
        *segment_checks.findings(views, live, summary, batch_rows),
        index_entries.findings(views, live) if entry_rows is None else entry_rows,
        *partition_checks.findings(views, live),
        root,
    ]
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p)
    return out


def entry_findings(views: Mapping[str, DataFrame]) -> DataFrame:
    """The findings of each segment's index entries against its batches (:mod:`.index_entries`): a function of the
    segment's files alone (its `.log`, `.index` and `.timeindex`), so an incremental run keeps them per segment."""
    return index_entries.findings(views, segment_checks.live_segments(views))


def batch_findings(views: Mapping[str, DataFrame]) -> DataFrame:
    """The findings of each segment's batches among themselves (CRCs, offset order:
    :func:`.segment_checks.batch_findings`): a function of the segment's `.log` alone, so an incremental run keeps
    them per segment."""
    return segment_checks.batch_findings(views, segment_checks.live_segments(views))


def log_dirs_of(paths: Sequence[str]) -> list[str]:
    """The paths that are log dirs (not partition dirs): those whose root checkpoints apply."""
    from ..log.log_dir import is_partition_dir

    return [p for p in paths if not is_partition_dir(p)]


def read_validation_views(spark: SparkSession, paths: Sequence[str] | str, *, records: bool = False,
                          **options: str) -> dict[str, DataFrame]:
    """The views :func:`index_findings` takes, read by the `kafkalog` source (internal topics included
    unless ``includeInternal`` says otherwise). ``records=True`` decodes the records too: the record_stats view
    (every record's decode problems) and the records view's control records (their types)."""
    from ..source import control_records
    from ..source import read_views as source_views

    views = source_views(spark, paths, [*VIEWS, "record_stats", "records"] if records else VIEWS, **options)
    if records:
        views["records"] = control_records(views["records"])
    return views


def validate_rows(spark: SparkSession, paths: Sequence[str] | str, *, records: bool = True,
                  **options: str) -> Iterator[Row]:
    """The findings of ``paths`` (log dirs or partition dirs), all read and checked in one job: each row carries
    its log dir, so replicas of one partition in several log dirs stay apart. The views are persisted while the
    checks run (several checks read each view) and unpersisted after. ``records=True`` (the default) decodes the
    records too: damage under a right CRC (a payload that does not decompress, a record that does not decode) is
    found only so, and the transaction index is checked against the control records' types; the tasks that decode
    the segments then also check their index entries and batches (the decoded view's parts), which are not checked
    again here."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    if not paths:
        raise ValueError("validate: give at least one log dir or partition dir")
    from ..source import decoded_views
    from ..source import read_views as source_views
    from ..source.views import BATCH_FINDINGS_PART, ENTRY_FINDINGS_PART

    if records:  # the segments read once for the batches, record_stats and records views (the decoded view)
        decoded = source_views(spark, paths, ["decoded"], **options)["decoded"].persist()
        listed = [v for v in VIEWS if v != "batches"]
        views = {k: v.persist() for k, v in source_views(spark, paths, listed, **options).items()}
        cached = [decoded, *views.values()]
        views |= decoded_views(decoded)
        # of the control records, only these columns are read
        views["records"] = views["records"].select(*KEYS, "offset", "isControl", "producerId", "controlType",
                                                   "problem")
    else:
        views = {k: v.persist() for k, v in read_validation_views(spark, paths, **options).items()}
        cached = list(views.values())
    # what the tasks that read the segments computed of them (with records: the decoded view's parts)
    computed = {"entry_rows": views.pop(ENTRY_FINDINGS_PART), "batch_rows": views.pop(BATCH_FINDINGS_PART)} \
        if records else {}
    try:
        yield from index_findings(spark, views, log_dirs_of(paths), **computed).collect()
    finally:
        for v in reversed(cached):
            v.unpersist()


def validate(spark: SparkSession, paths: Sequence[str] | str, *, records: bool = True, **options: str) -> DataFrame:
    """:func:`validate_rows` as a DataFrame (schema :data:`INDEX_FINDINGS`) of the collected findings."""
    return spark.createDataFrame(list(validate_rows(spark, paths, records=records, **options)), INDEX_FINDINGS)
