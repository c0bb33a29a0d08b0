"""kafkalog-spark: read Apache Kafka broker log directories offline, with or without Spark."""

from .findings import Finding, KafkaLogError, Severity
from .log.reader import KafkaLogWarning, read_log


def register(spark) -> None:
    """Register the ``kafkalog`` Spark source on ``spark`` (a classic or a Spark Connect session, e.g. a
    Databricks notebook's). Spark is imported only here: the decoder works without it."""
    from .source import register as register_source

    register_source(spark)


__all__ = ["Finding", "KafkaLogError", "KafkaLogWarning", "Severity", "read_log", "register"]
__version__ = "0.1.0"
