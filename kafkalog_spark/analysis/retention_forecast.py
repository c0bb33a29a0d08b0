"""Retention forecast: what the broker's retention deletes over the next days, per partition and day.

The plan of :mod:`~kafkalog_spark.analysis.retention` is run at ``as_of_ms`` and at each of the next ``days``
days (the same rules, :func:`~kafkalog_spark.analysis.retention.plan_partition`), on the segments as they are
now: the forecast assumes nothing new is written, so it shows what ages out, not what new data will push out by
size. One row per partition and day (:data:`FORECAST_SCHEMA`); with ``what_if_configs`` the same under the
alternative configuration, side by side.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from ..config.topic_configs import ConfigSource
from .grouping_keys import LOG_DIR, PARTITION
from .retention import partition_planner

DAY_MS = 86_400_000
FORECAST_DAYS = 14

FORECAST_SCHEMA = StructType([
    StructField("logDir", StringType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("day", IntegerType()),  # 0: the plan at as_of_ms; d: at as_of_ms + d days
    StructField("asOfMs", LongType()),
    StructField("segments", IntegerType()),  # live segments now
    StructField("bytes", LongType()),  # their .log bytes
    StructField("deletableSegments", IntegerType()),  # deletable by asOfMs (cumulative)
    StructField("bytesReclaimed", LongType()),
    StructField("newLogStartOffset", LongType()),
    StructField("whatIfDeletableSegments", IntegerType()),  # the same under the what-if configs; null without
    StructField("whatIfBytesReclaimed", LongType()),
    StructField("whatIfNewLogStartOffset", LongType()),
])


def _totals(rows: list[dict]) -> tuple[int, int, int | None]:
    gone = [r for r in rows if r["deletable"]]
    return len(gone), sum(r["bytesReclaimed"] for r in gone), rows[0]["newLogStartOffset"] if rows else None


def retention_forecast(segments: DataFrame, batches: DataFrame | None, partition_files: DataFrame,
                       configs: ConfigSource, as_of_ms: int, days: int = FORECAST_DAYS,
                       what_if_configs: ConfigSource | None = None, *,
                       summary: DataFrame | None = None, remote_segments: DataFrame | None = None) -> DataFrame:
    """Per partition and day 0..``days``: segments and bytes deletable by then (:data:`FORECAST_SCHEMA`).

    Inputs are those of :func:`~kafkalog_spark.analysis.retention.retention_plan` (the ``segments``,
    ``batches`` and ``partition_files`` views, the topics' effective configs; ``summary``, the batches'
    :func:`~.batch_summary.batch_summary` when the caller has it; ``remote_segments``, the remote tier)."""
    if days < 0:
        raise ValueError(f"forecast days {days}: expected 0 or more")
    inputs, planner = partition_planner(segments, batches, partition_files, configs, what_if_configs,
                                        summary=summary, remote_segments=remote_segments)
    what_if = what_if_configs is not None

    def forecast_group(table):
        import pyarrow as pa

        from ..schemas import arrow_schema

        records = table.to_pylist()
        size = sum(r["size"] or 0 for r in records)
        out = []
        for day in range(days + 1):
            at = int(as_of_ms) + day * DAY_MS
            n, reclaimed, new_lso = _totals(planner(records, at, False))
            alt = _totals(planner(records, at, True)) if what_if else (None, None, None)
            first = records[0]
            out.append({LOG_DIR: first[LOG_DIR], "topic": first["topic"], "partition": first["partition"], "day": day,
                        "asOfMs": at, "segments": len(records), "bytes": size, "deletableSegments": n,
                        "bytesReclaimed": reclaimed, "newLogStartOffset": new_lso, "whatIfDeletableSegments": alt[0],
                        "whatIfBytesReclaimed": alt[1], "whatIfNewLogStartOffset": alt[2]})
        return pa.Table.from_pylist(out, schema=arrow_schema(FORECAST_SCHEMA))

    return inputs.groupBy(*PARTITION).applyInArrow(forecast_group, schema=FORECAST_SCHEMA)
