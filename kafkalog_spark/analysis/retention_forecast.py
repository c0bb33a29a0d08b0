"""Retention forecast: what the broker's retention deletes over the next days, per partition and day.

The plan of :mod:`~kafkalog_spark.analysis.retention` is run at ``as_of_ms`` and at each of the next ``days``
days (the same rules, :func:`~kafkalog_spark.analysis.retention.plan_partition`), on the segments as they are
now: the forecast assumes nothing new is written, so it shows what ages out, not what new data will push out by
size. One row per partition and day (:data:`FORECAST_SCHEMA`); with ``what_if_configs`` the same under the
alternative configuration, side by side. A tiered partition's remote tier (given the ``remote_log_segments`` view)
is forecast the same way, by :mod:`~kafkalog_spark.analysis.remote_retention`'s rules, in the ``remote...``
columns.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from ..config.topic_configs import ConfigSource
from .grouping_keys import LOG_DIR, PARTITION
from .local_rows import apply_in_arrow_on_driver
from .retention import has_remote_tier, partition_planner, plan_records, retention_plan
from .topic_config_table import topics_of

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
    # a tiered partition's remote tier (:mod:`.remote_retention`): its segments now, and what the leader deletes of
    # them by then; null for a partition without one
    StructField("remoteSegments", IntegerType()),
    StructField("remoteBytes", LongType()),
    StructField("remoteDeletableSegments", IntegerType()),
    StructField("remoteBytesReclaimed", LongType()),
    StructField("remoteNewLogStartOffset", LongType()),
    StructField("whatIfRemoteDeletableSegments", IntegerType()),
    StructField("whatIfRemoteBytesReclaimed", LongType()),
])
REMOTE_COLUMNS = [f.name for f in FORECAST_SCHEMA.fields if f.name.startswith(("remote", "whatIfRemote"))]
_LOCAL_SCHEMA = StructType([f for f in FORECAST_SCHEMA.fields if f.name not in REMOTE_COLUMNS])
_REMOTE_SCHEMA = StructType([f for f in FORECAST_SCHEMA.fields if f.name in (*PARTITION, "day", *REMOTE_COLUMNS)])


def _totals(rows: list[dict]) -> tuple[int, int, int | None]:
    gone = [r for r in rows if r["deletable"]]
    return len(gone), sum(r["bytesReclaimed"] for r in gone), rows[0]["newLogStartOffset"] if rows else None


def retention_forecast(segments: DataFrame, batches: DataFrame | None, partition_files: DataFrame,
                       configs: ConfigSource, as_of_ms: int, days: int = FORECAST_DAYS,
                       what_if_configs: ConfigSource | None = None, *,
                       summary: DataFrame | None = None, remote_segments: DataFrame | None = None,
                       plan: DataFrame | None = None, topics: Sequence[str] | None = None) -> DataFrame:
    """Per partition and day 0..``days``: segments and bytes deletable by then (:data:`FORECAST_SCHEMA`).

    Inputs are those of :func:`~kafkalog_spark.analysis.retention.retention_plan` (the ``segments``,
    ``batches`` and ``partition_files`` views, the topics' effective configs; ``summary``, the batches'
    :func:`~.batch_summary.batch_summary` when the caller has it; ``remote_segments``, the remote tier; ``plan``,
    the retention plan at ``as_of_ms`` when the caller has it, whose local rows the remote tier's forecast reads;
    ``topics``, the segments view's, :func:`~.topic_config_table.topics_of`)."""
    if days < 0:
        raise ValueError(f"forecast days {days}: expected 0 or more")
    tiered = has_remote_tier(remote_segments)  # else no partition has a highest copied offset
    topics = topics_of(segments) if topics is None else topics
    inputs, planner = partition_planner(segments, batches, partition_files, configs, what_if_configs,
                                        summary=summary, remote_segments=remote_segments if tiered else None,
                                        topics=topics)
    what_if = what_if_configs is not None

    def forecast_group(table):
        import pyarrow as pa

        from ..schemas import arrow_schema

        records = plan_records(table.to_pylist())
        if not records:  # a partition with files and no live segment
            return arrow_schema(_LOCAL_SCHEMA).empty_table()
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
        return pa.Table.from_pylist(out, schema=arrow_schema(_LOCAL_SCHEMA))

    local = apply_in_arrow_on_driver(inputs, PARTITION, forecast_group, _LOCAL_SCHEMA)
    if not tiered:
        return local.select(*local.columns, *[F.lit(None).cast(f.dataType).alias(f.name)
                                              for f in FORECAST_SCHEMA.fields if f.name in REMOTE_COLUMNS])
    if plan is None:
        plan = retention_plan(segments, batches, partition_files, configs, as_of_ms, summary=summary, topics=topics)
    remote = _remote_forecast(plan.where(F.col("tier") == "local"), segments, partition_files, configs, as_of_ms,
                              days, what_if_configs, remote_segments, topics)
    return local.join(remote, [*PARTITION, "day"], "left").select(*[f.name for f in FORECAST_SCHEMA.fields])


def _remote_forecast(local_plan: DataFrame, segments: DataFrame, partition_files: DataFrame, configs: ConfigSource,
                     as_of_ms: int, days: int, what_if_configs: ConfigSource | None,
                     remote_segments: DataFrame, topics: Sequence[str]) -> DataFrame:
    """Per tiered partition and day, its remote tier's plan (:func:`~.remote_retention.remote_planner`) totals;
    ``local_plan``: the local rows of the retention plan at ``as_of_ms``; ``topics``: the segments view's."""
    from .remote_retention import remote_inputs, remote_planner
    from .retention import retention_params

    params = {False: retention_params(configs, topics)}
    if what_if_configs is not None:
        params[True] = retention_params(what_if_configs, topics)

    def forecast_group(table):
        import pyarrow as pa

        from ..schemas import arrow_schema

        records = table.to_pylist()
        plan, first = remote_planner(records), records[0]
        out = []
        for day in range(days + 1):
            at = int(as_of_ms) + day * DAY_MS
            n, reclaimed, new_lso = _totals(plan(params[False][first["topic"]], at))
            alt = _totals(plan(params[True][first["topic"]], at)) if True in params else (None, None, None)
            out.append({LOG_DIR: first[LOG_DIR], "topic": first["topic"], "partition": first["partition"], "day": day,
                        "remoteSegments": len(records), "remoteBytes": sum(r["segmentSizeInBytes"] for r in records),
                        "remoteDeletableSegments": n, "remoteBytesReclaimed": reclaimed,
                        "remoteNewLogStartOffset": new_lso, "whatIfRemoteDeletableSegments": alt[0],
                        "whatIfRemoteBytesReclaimed": alt[1]})
        return pa.Table.from_pylist(out, schema=arrow_schema(_REMOTE_SCHEMA))

    inputs = remote_inputs(local_plan, remote_segments, segments, partition_files)
    return inputs.groupBy(*PARTITION).applyInArrow(forecast_group, schema=_REMOTE_SCHEMA)
