"""Snapshots all-or-nothing: a reader sees a snapshot whole or not at all, whenever the writer stops.

A run writes its rows into every table first, each row tagged with the snapshot id and the run's own id
(``runId``, a fresh random hex), by plain appends: one Delta commit per table,
with no predicate. Only then does it append one row to the manifest table ``snapshots`` (snapshotId, runId,
snapshotTime, committedTime, tables): that commit is the moment the snapshot exists. Readers
(:func:`read_table`) go through the manifest and keep, for each snapshot id, the rows of its latest
committed run. A run killed before its manifest commit leaves rows no reader sees; re-running the same
snapshot id writes it again and commits it, and then removes every other run's rows of that snapshot (the
killed run's, or the run it replaces) from each table. Until that clean-up ends, the old rows are there
but invisible. Runs of the same snapshot id must not overlap (the default id, the start time, never does).

Which runs to remove is known before any table is asked: each run appends a row to the table ``runs``
(:func:`begin`) before it writes anything else, so a snapshot's first run, the nightly case, finds no other run
there and asks no table (13 queries, 10 to 30 s of a run, before ``runs`` existed). The run that creates ``runs``
also records there every run already found in the tables, so that it names every run with rows in them from then
on (runs of a version without ``runs``, writing into the same tables after it, are not recorded: their killed
rows stay invisible, and are not removed).

The only predicate sent to Delta as text is the clean-up's ``runId IN (...)``, and it holds run ids this
module generated, each checked against :data:`RUN_ID` again before use: no user text reaches it. Snapshot
ids are compared as Column values.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .tables import TableLocation, check_name, check_snapshot_id

RUN_COLUMN = "runId"
RUN_ID = re.compile(r"[0-9a-f]{32}")
MANIFEST = "snapshots"
MANIFEST_SCHEMA = ("snapshotId string, runId string, snapshotTime timestamp, committedTime timestamp, "
                   "tables array<string>")
PARTITION_COLUMNS = ("snapshotId", RUN_COLUMN)
RUNS = "runs"
RUNS_SCHEMA = "snapshotId string, runId string, snapshotTime timestamp, startedTime timestamp"


def new_run_id() -> str:
    return uuid.uuid4().hex


def _load(spark: SparkSession, where: TableLocation, table: str) -> DataFrame:
    return spark.read.format("delta").load(where.name(table)) if where.by_path else spark.table(where.name(table))


def _loaded(spark: SparkSession, where: TableLocation, table: str) -> DataFrame | None:
    """The table, or None when it does not exist; asked through the DataFrame API only (no JVM handle: works
    over Spark Connect), and analysed once: the caller reads the DataFrame it got."""
    if not where.by_path:
        return _load(spark, where, table) if spark.catalog.tableExists(where.name(table)) else None
    from pyspark.errors import AnalysisException

    try:
        df = _load(spark, where, table)
        df.schema  # noqa: B018 - analysing it is the question
    except AnalysisException:
        return None
    return df


def table_exists(spark: SparkSession, where: TableLocation, table: str) -> bool:
    """Whether ``table`` exists at ``where`` (asked as :func:`_loaded` asks)."""
    return _loaded(spark, where, table) is not None


def _save(df: DataFrame, where: TableLocation, table: str, mode: str, **options: str) -> None:
    spark = df.sparkSession
    writer = df.write.format("delta").option("mergeSchema", "true").options(**options)
    if not table_exists(spark, where, table):
        writer = writer.partitionBy(*[c for c in PARTITION_COLUMNS if c in df.columns])
    writer = writer.mode(mode)
    if where.by_path:
        writer.save(where.name(table))
    else:
        writer.saveAsTable(where.name(table))


def append_rows(df: DataFrame, where: TableLocation, table: str, snapshot_id: str, snapshot_time: dt.datetime,
                run_id: str) -> None:
    """Append ``df`` to ``table`` as rows of ``snapshot_id`` written by run ``run_id`` (one Delta commit; the
    table is created on first use). Invisible to readers until :func:`commit`."""
    check_snapshot_id(snapshot_id)
    _check_run_id(run_id)
    out = df.select(F.lit(snapshot_id).alias("snapshotId"),
                    F.lit(snapshot_time).cast("timestamp").alias("snapshotTime"), "*",
                    F.lit(run_id).alias(RUN_COLUMN))
    _save(out, where, table, "append")


def begin(spark: SparkSession, where: TableLocation, snapshot_id: str, snapshot_time: dt.datetime, run_id: str,
          tables: Sequence[str]) -> None:
    """Record that run ``run_id`` of ``snapshot_id`` starts, before it writes any of ``tables``: one row appended to
    the table ``runs``, one Delta commit. When this creates ``runs``, every run already found in ``tables`` is
    recorded in the same commit (``startedTime`` null), so that ``runs`` names every run with rows in them."""
    check_snapshot_id(snapshot_id)
    _check_run_id(run_id)
    row = spark.createDataFrame([(snapshot_id, run_id, snapshot_time, dt.datetime.now(dt.UTC))], RUNS_SCHEMA)
    if not table_exists(spark, where, RUNS):
        row = row.unionByName(_runs_found(spark, where, tables))
    _save(row, where, RUNS, "append")


def _runs_found(spark: SparkSession, where: TableLocation, tables: Sequence[str]) -> DataFrame:
    """Every run with rows in ``tables`` (those that exist), as rows of ``runs``: one query, partition values only."""
    found = spark.createDataFrame([], RUNS_SCHEMA)
    for table in tables:
        if (df := _loaded(spark, where, table)) is not None and RUN_COLUMN in df.columns:
            runs = df.where(F.col(RUN_COLUMN).isNotNull()).select("snapshotId", RUN_COLUMN, "snapshotTime",
                                                                  F.lit(None).cast("timestamp").alias("startedTime"))
            found = found.unionByName(runs)
    return found.distinct()


def replaced_runs(spark: SparkSession, where: TableLocation, snapshot_id: str, run_id: str) -> list[str]:
    """The runs of ``snapshot_id`` other than ``run_id`` recorded in ``runs`` (:func:`begin`): the only runs whose
    rows the tables may hold besides this run's. [] for a snapshot's first run, which need not ask the tables."""
    return _runs_other_than(_load(spark, where, RUNS), snapshot_id, run_id)


def _runs_other_than(df: DataFrame, snapshot_id: str, run_id: str) -> list[str]:
    """The run ids in ``df`` of ``snapshot_id`` but ``run_id``, each checked before it reaches a predicate."""
    check_snapshot_id(snapshot_id)
    _check_run_id(run_id)
    rows = (df.where((F.col("snapshotId") == snapshot_id) & (F.col(RUN_COLUMN) != run_id))
            .select(RUN_COLUMN).distinct().collect())
    return sorted(_check_run_id(r[RUN_COLUMN]) for r in rows)


def commit(spark: SparkSession, where: TableLocation, snapshot_id: str, snapshot_time: dt.datetime, run_id: str,
           tables: Sequence[str], details: Mapping[str, int] | None = None) -> None:
    """Make run ``run_id``'s rows the snapshot ``snapshot_id``: one appended manifest row, one Delta commit.
    ``details``: more columns of the row, each a count (a long; a manifest written before them reads null)."""
    check_snapshot_id(snapshot_id)
    _check_run_id(run_id)
    for t in [*tables, *(details or {})]:
        check_name(t, "table name or manifest column")
    row = (snapshot_id, run_id, snapshot_time, dt.datetime.now(dt.UTC), list(tables), *(details or {}).values())
    schema = ", ".join([MANIFEST_SCHEMA, *(f"{name} long" for name in details or {})])
    _save(spark.createDataFrame([row], schema), where, MANIFEST, "append")


def committed(spark: SparkSession, where: TableLocation) -> DataFrame:
    """``snapshotId``, ``runId`` and ``snapshotTime`` of every committed snapshot: its latest committed run."""
    return _committed_rows(spark, where).select("snapshotId", RUN_COLUMN, "snapshotTime")


def _committed_rows(spark: SparkSession, where: TableLocation) -> DataFrame:
    """:func:`committed`, with the ``tables`` the run wrote (its manifest row's)."""
    if (manifest := _loaded(spark, where, MANIFEST)) is None:
        return spark.createDataFrame([], MANIFEST_SCHEMA).select("snapshotId", RUN_COLUMN, "snapshotTime", "tables")
    latest = F.max_by(F.struct(RUN_COLUMN, "snapshotTime", "tables"), "committedTime")
    return (manifest.groupBy("snapshotId").agg(latest.alias("run"))
            .select("snapshotId", f"run.{RUN_COLUMN}", "run.snapshotTime", "run.tables"))


def committed_runs(spark: SparkSession, where: TableLocation, writing: Sequence[str] = ()) -> dict[str, str]:
    """Each committed snapshot's id -> the id of its latest committed run (:func:`committed`), collected: one query
    of the manifest, for a caller that then reads several tables' rows of some of them (:func:`rows_of_runs`).
    ``writing``: only the runs that wrote every one of these tables (their manifest rows name them): a table a run
    wrote exists, so the caller need not ask Delta for each (a table load, a file listing on a store)."""
    rows = _committed_rows(spark, where).select("snapshotId", RUN_COLUMN, "tables").collect()
    return {r.snapshotId: r[RUN_COLUMN] for r in rows if set(writing) <= set(r.tables or ())}


def rows_of_runs(spark: SparkSession, where: TableLocation, table: str, runs: Mapping[str, str]) -> DataFrame:
    """The rows of ``table`` of some committed snapshots, ``runs``: each one's id -> its committed run's id, as
    :func:`committed_runs` gives them. One scan pruned to those partitions: unlike :func:`read_table`, no query of the
    manifest for each table read. A run writes rows of its own snapshot only, so the snapshots' ids and the runs' ids
    (two flat IN lists, however many snapshots) select exactly those runs' rows."""
    return (_load(spark, where, table)
            .where(F.col("snapshotId").isin(sorted(runs)) & F.col(RUN_COLUMN).isin(sorted(runs.values())))
            .drop(RUN_COLUMN))


def snapshot_tables_written(spark: SparkSession, where: TableLocation, snapshot_id: str) -> list[str]:
    """The tables the committed run of ``snapshot_id`` wrote (its manifest row's ``tables``; [] when it has
    none): a snapshot written before a table existed does not list it."""
    check_snapshot_id(snapshot_id)
    rows = _committed_rows(spark, where).where(F.col("snapshotId") == snapshot_id).select("tables").collect()
    return sorted({t for r in rows for t in (r.tables or [])})


def read_table(spark: SparkSession, where: TableLocation, table: str, snapshot_id: str | None = None) -> DataFrame:
    """The rows of ``table`` in committed snapshots only (of ``snapshot_id`` when given): never a snapshot that
    is half written, being rewritten or abandoned by a killed run. Rows written before the manifest existed
    (no ``runId``) belong to no committed snapshot: run the job again to see them."""
    if snapshot_id is not None:
        check_snapshot_id(snapshot_id)
    df, keys = _load(spark, where, table), committed(spark, where).select("snapshotId", RUN_COLUMN)
    if RUN_COLUMN not in df.columns:
        return df.where(F.lit(False))
    if snapshot_id is not None:
        df, keys = df.where(F.col("snapshotId") == snapshot_id), keys.where(F.col("snapshotId") == snapshot_id)
    return df.join(F.broadcast(keys), ["snapshotId", RUN_COLUMN], "left_semi").drop(RUN_COLUMN)


def run_rows(spark: SparkSession, where: TableLocation, table: str, snapshot_id: str, run_id: str) -> DataFrame:
    """The rows run ``run_id`` appended to ``table`` for ``snapshot_id`` so far, committed or not: what a run reads
    back of its own tables (the analyses across every log dir of the snapshot), never what readers see."""
    check_snapshot_id(snapshot_id)
    _check_run_id(run_id)
    df = _load(spark, where, table)
    return (df.where((F.col("snapshotId") == snapshot_id) & (F.col(RUN_COLUMN) == run_id))
            .drop("snapshotId", "snapshotTime", RUN_COLUMN))


def other_runs(spark: SparkSession, where: TableLocation, table: str, snapshot_id: str, run_id: str) -> list[str]:
    """The runs other than ``run_id`` that wrote rows of ``snapshot_id`` into ``table``: the run this one replaced,
    or runs killed before their commit. A partition-pruned query (the tables are partitioned by snapshot and run),
    which on a first run finds nothing."""
    return _runs_other_than(_load(spark, where, table), snapshot_id, run_id)


def drop_runs(spark: SparkSession, where: TableLocation, table: str, runs: Sequence[str]) -> None:
    """Remove the rows of ``runs`` (ids from :func:`other_runs`) from ``table``: one Delta commit."""
    predicate = f"{RUN_COLUMN} IN ({', '.join(repr(_check_run_id(r)) for r in runs)})"
    schema = _load(spark, where, table).schema
    _save(spark.createDataFrame([], schema), where, table, "overwrite", replaceWhere=predicate)


def clean_up(spark: SparkSession, where: TableLocation, table: str, snapshot_id: str, run_id: str) -> list[str]:
    """After run ``run_id``'s commit of ``snapshot_id``: remove every other run's rows of that snapshot from
    ``table`` (one Delta commit, none when there are none); returns the runs removed."""
    replaced = other_runs(spark, where, table, snapshot_id, run_id)
    if replaced:
        drop_runs(spark, where, table, replaced)
    return replaced


def _check_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        raise ValueError(f"run id {run_id!r}: expected 32 lowercase hex digits")
    return run_id
