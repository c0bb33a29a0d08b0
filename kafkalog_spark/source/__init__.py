"""The Spark side: the `kafkalog` data source and how to register it on a session."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pyspark.sql import DataFrame, SparkSession

from .datasource import KafkaLogDataSource

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
DECODED_VIEWS = ("records", "batches")


def register(spark: SparkSession) -> None:
    """Register the `kafkalog` source on an existing session (a Databricks notebook has one).

    The source prunes segments and seeks through indexes with the filters Spark pushes to it; Spark
    refuses a Python source that takes filters while Python filter pushdown is off, so this turns it on.
    """
    spark.conf.set(PUSHDOWN_CONF, "true")
    spark.dataSource.register(KafkaLogDataSource)


def read_views(spark: SparkSession, paths: str | Sequence[str], views: Iterable[str],
               **options: object) -> dict[str, DataFrame]:
    """The source's ``views`` of the same log dirs or partition dirs, by name, as the analyses take them.
    Internal topics are included unless ``includeInternal`` says otherwise; options whose value is None are
    left out. The metadata log's KRaft snapshots stay listed (segments view) but their batches and records
    are left out unless ``kraftSnapshots`` says otherwise: they restate the log, not add to it."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    opts = {"includeInternal": "true"} | {k: str(v) for k, v in options.items() if v is not None}
    decoded = {"kraftSnapshots": "false"}
    return {v: spark.read.format("kafkalog").options(**(decoded | opts if v in DECODED_VIEWS else opts))
            .option("view", v).load(paths) for v in views}


__all__ = ["KafkaLogDataSource", "read_views", "register"]
