"""The Spark side: the `kafkalog` data source and how to register it on a session."""

from __future__ import annotations

from pyspark.sql import SparkSession

from .datasource import KafkaLogDataSource


def register(spark: SparkSession) -> None:
    """Register the `kafkalog` source on an existing session (a Databricks notebook has one)."""
    spark.dataSource.register(KafkaLogDataSource)


__all__ = ["KafkaLogDataSource", "register"]
