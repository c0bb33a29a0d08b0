"""The Spark side: the `kafkalog` data source and how to register it on a session."""

from __future__ import annotations

from pyspark.sql import SparkSession

from .datasource import KafkaLogDataSource

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def register(spark: SparkSession) -> None:
    """Register the `kafkalog` source on an existing session (a Databricks notebook has one).

    The source prunes segments and seeks through indexes with the filters Spark pushes to it; Spark
    refuses a Python source that takes filters while Python filter pushdown is off, so this turns it on.
    """
    spark.conf.set(PUSHDOWN_CONF, "true")
    spark.dataSource.register(KafkaLogDataSource)


__all__ = ["KafkaLogDataSource", "register"]
