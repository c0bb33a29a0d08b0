"""The HTML report of a snapshot: what is on the brokers' disks, in charts and sortable tables.

    from kafkalog_spark.report import write_report, snapshot_tables
    write_report(snapshot_tables(spark, TableLocation(warehouse="warehouse")), "report.html")

The report is computed from a snapshot's tables (:func:`snapshot_tables`, or the dict the nightly job returns):
:func:`report_data` aggregates them in Spark (top N and histograms, whatever the fleet's size),
:func:`render_html` draws the page (plotly charts, plotly.js inlined: the file opens without a network), and
:func:`write_report` writes it atomically. In a notebook, ``displayHTML(report_html(tables))`` shows the same
page inline.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..delta import TableLocation, committed, read_table, snapshot_tables_written
from .data import REPORT_TABLES, STATE_REPORT_TABLES, ReportData, report_data
from .page import render_html

__all__ = ["REPORT_TABLES", "ReportData", "latest_snapshot", "previous_snapshot", "render_html", "report_data",
           "report_html", "snapshot_tables", "write_report"]


def latest_snapshot(spark: SparkSession, where: TableLocation) -> str | None:
    """The id of the newest committed snapshot (by snapshot time), None when there is none."""
    row = committed(spark, where).orderBy(F.desc("snapshotTime"), F.desc("snapshotId")).limit(1).collect()
    return row[0].snapshotId if row else None


def previous_snapshot(spark: SparkSession, where: TableLocation, snapshot_id: str) -> str | None:
    """The committed snapshot taken just before ``snapshot_id`` (by snapshot time), None when there is none."""
    snapshots = committed(spark, where)
    at = snapshots.where(F.col("snapshotId") == snapshot_id).select(F.min("snapshotTime")).collect()[0][0]
    if at is None:
        return None
    row = (snapshots.where(F.col("snapshotTime") < at).orderBy(F.desc("snapshotTime"), F.desc("snapshotId"))
           .limit(1).collect())
    return row[0].snapshotId if row else None


def snapshot_tables(spark: SparkSession, where: TableLocation, snapshot_id: str | None = None,
                    names: Mapping[str, str] | None = None) -> dict[str, DataFrame]:
    """The report's tables of one committed snapshot (default: the newest), the internal topics' too when it has
    them. ``names``: table -> its name where
    they were renamed ([tables] of the nightly configuration). With an earlier committed snapshot, its
    partition_stats come too (``previous_partition_stats``: the report's growth since then). ValueError when
    there is no such snapshot."""
    snapshot_id = snapshot_id or latest_snapshot(spark, where)
    if snapshot_id is None:
        raise ValueError("no committed snapshot to report on: run the nightly job first")
    names = names or {}
    tables = {t: read_table(spark, where, names.get(t, t), snapshot_id) for t in REPORT_TABLES}
    written = snapshot_tables_written(spark, where, snapshot_id)
    tables |= {t: read_table(spark, where, names.get(t, t), snapshot_id) for t in STATE_REPORT_TABLES
               if names.get(t, t) in written}
    if tables["partition_stats"].limit(1).count() == 0:
        raise ValueError(f"snapshot {snapshot_id!r}: no committed rows (is the snapshot id right?)")
    before = previous_snapshot(spark, where, snapshot_id)
    if before is not None:
        tables["previous_partition_stats"] = read_table(spark, where, names.get("partition_stats",
                                                                                "partition_stats"), before)
    return tables


def report_html(tables: Mapping[str, DataFrame], title: str = "kafkalog report", **limits: int) -> str:
    """The page for ``tables`` (see :func:`report_data` for ``limits``)."""
    return render_html(report_data(tables, **limits), title)


def write_report(tables: Mapping[str, DataFrame], path: str | os.PathLike[str], title: str = "kafkalog report",
                 **limits: int) -> Path:
    """Write the page to ``path`` (a local or mounted path) atomically: a reader sees the old file or the new one,
    never half of one. Returns the path."""
    page = report_html(tables, title, **limits)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(page)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
