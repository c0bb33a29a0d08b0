"""The Databricks notebook's code, run locally: its cells in order, with the notebook's globals
(spark, dbutils, display) provided by the test and the tables in a local catalog schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.notebook import NOTEBOOK, DBUtils, cells
from tests.helpers.report_page import report_numbers

LEGACY_FIGURES = ["fig-size-histogram", "fig-top-partitions", "fig-growth", "fig-timeline", "fig-retention"]


@pytest.mark.field
def test_notebook_runs_the_nightly_logic(spark, samples: Path) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS kafkalog_nb")
    shown, pages = [], []
    env = {"spark": spark, "display": shown.append, "displayHTML": pages.append,
           "dbutils": DBUtils({"log_dirs": str(samples / "legacy"), "schema": "kafkalog_nb", "snapshot_id": "nb",
                               "kafka_version": "3.9"})}
    for cell in cells(NOTEBOOK.read_text()):
        exec(compile(cell, str(NOTEBOOK), "exec"), env)  # noqa: S102 - the notebook is ours
    from kafkalog_spark import nightly

    summary = shown[0].collect()
    assert {r.topic for r in summary} == {"legacy-v0", "legacy-v1"}
    # legacy-v0's 26 records and legacy-v1's 29 (data/samples/README.md, from kafka-dump-log's goldens)
    assert sum(r.records for r in summary) == spark.table("kafkalog_nb.segment_stats").where(
        "snapshotId = 'nb'").groupBy().sum("records").collect()[0][0] == 26 + 29
    assert len(shown) == 1 + len(env["tables"]) and set(env["tables"]) == set(nightly.TABLES)
    versions = spark.table("kafkalog_nb.topic_configs").where("snapshotId = 'nb'").select("kafkaVersion").distinct()
    assert [r.kafkaVersion for r in versions.collect()] == ["3.9"]
    # the report, inline: its numbers are the snapshot's
    report = report_numbers(pages)
    parts = spark.table("kafkalog_nb.partition_stats").where("snapshotId = 'nb'")
    # every chart but compaction's and the findings' (the legacy dirs have no compacted topic and no finding)
    assert report["pages"] == 1 and report["figures"] == LEGACY_FIGURES
    assert int(report["cards"]["partitions"]) == parts.count() == 2
    assert int(report["cards"]["records"]) == parts.groupBy().sum("records").collect()[0][0] == 26 + 29
