"""kafkalog-spark: read Apache Kafka broker log directories offline, with or without Spark."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .findings import Finding, KafkaLogError, Severity

if TYPE_CHECKING:
    from .log.reader import KafkaLogWarning, read_log

# The decoder's names load on first use (PEP 562): importing the package for anything else, as the Spark source's
# planning does in a Python process of its own several times a run, would otherwise compile-load numba and the
# decoder core (most of a second each time) for nothing.
_DECODER = frozenset({"KafkaLogWarning", "read_log"})


def __getattr__(name: str) -> Any:
    if name in _DECODER:
        from .log import reader

        return getattr(reader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(spark) -> None:
    """Register the ``kafkalog`` Spark source on ``spark`` (a classic or a Spark Connect session, e.g. a
    Databricks notebook's). Spark is imported only here: the decoder works without it."""
    from .source import register as register_source

    register_source(spark)


__all__ = ["Finding", "KafkaLogError", "KafkaLogWarning", "Severity", "read_log", "register"]
__version__ = "0.1.0"
