"""The Databricks notebook's code, run locally: its cells in order, with the notebook's globals
(spark, dbutils, display) provided by the test and the tables in a local catalog schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report_page import report_numbers

NOTEBOOK = Path(__file__).resolve().parent.parent / "jobs" / "databricks_nightly.py"


class Widgets:
    def __init__(self, values: dict[str, str]):
        self.values = values

    def text(self, name: str, default: str) -> None:
        self.values.setdefault(name, default)

    def dropdown(self, name: str, default: str, choices: list[str]) -> None:
        assert default in choices and self.values.setdefault(name, default) in choices

    def get(self, name: str) -> str:
        return self.values[name]


class DBUtils:
    def __init__(self, values: dict[str, str]):
        self.widgets = Widgets(values)


def cells(source: str) -> list[str]:
    body = source.split("\n", 1)[1]  # "# Databricks notebook source"
    return [c for c in body.split("# COMMAND ----------") if c.strip() and "# MAGIC" not in c]


@pytest.mark.field
def test_notebook_runs_the_nightly_logic(spark, samples: Path) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS kafkalog_nb")
    shown, pages = [], []
    env = {"spark": spark, "display": shown.append, "displayHTML": pages.append,
           "dbutils": DBUtils({"log_dirs": str(samples / "legacy"), "schema": "kafkalog_nb", "snapshot_id": "nb",
                               "kafka_version": "3.9"})}
    for cell in cells(NOTEBOOK.read_text()):
        exec(compile(cell, str(NOTEBOOK), "exec"), env)  # noqa: S102 - the notebook is ours
    summary = shown[0].collect()
    assert {r.topic for r in summary} == {"legacy-v0", "legacy-v1"}
    assert sum(r.records for r in summary) == spark.table("kafkalog_nb.segment_stats").where(
        "snapshotId = 'nb'").groupBy().sum("records").collect()[0][0] > 0
    assert len(shown) == 1 + len(env["tables"])
    versions = spark.table("kafkalog_nb.topic_configs").where("snapshotId = 'nb'").select("kafkaVersion").distinct()
    assert [r.kafkaVersion for r in versions.collect()] == ["3.9"]
    # the report, inline: its numbers are the snapshot's
    report = report_numbers(pages)
    parts = spark.table("kafkalog_nb.partition_stats").where("snapshotId = 'nb'")
    assert report["pages"] == 1 and report["figures"]
    assert int(report["cards"]["partitions"]) == parts.count() == 2
    assert int(report["cards"]["records"]) == parts.groupBy().sum("records").collect()[0][0]
