"""kafkalog-spark: read Apache Kafka broker log directories offline, with or without Spark."""

from .findings import Finding, KafkaLogError, Severity
from .log.reader import KafkaLogWarning, read_log

__all__ = ["Finding", "KafkaLogError", "KafkaLogWarning", "Severity", "read_log"]
__version__ = "0.1.0"
