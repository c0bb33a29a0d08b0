"""What the report shows, computed in Spark from the tables of one snapshot and brought to the driver small.

Every figure of the page comes from here: a fleet of any size arrives as totals, the top N rows, and
histograms, never one row per partition or segment (:class:`ReportData`). Only DataFrame operations, so it runs
on a classic session and over Spark Connect alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from ..analysis.grouping_keys import PARTITION as PARTITION_KEYS

Rows = list[dict[str, Any]]
SEVERITIES = ("error", "warning", "info")
# The tables the report reads, by the nightly job's names.
REPORT_TABLES = ("partition_stats", "segment_stats", "index_findings", "retention_forecast", "compaction_preview")
# The internal topics' tables and tiered_storage: shown when the snapshot has them (earlier snapshots do not).
STATE_REPORT_TABLES = ("consumer_positions", "open_transactions", "replica_comparison", "tiered_storage")
# The forecast days a table shows (the chart shows every day of the forecast).
FORECAST_COLUMNS_DAYS = (0, 1, 7)


@dataclass
class ReportData:
    """The report's numbers: plain rows (dicts), small whatever the fleet's size."""

    summary: dict[str, Any]
    topics: Rows  # per log dir and topic, the largest first (top_topics of them)
    topic_count: int
    size_histogram: Rows  # partitions per size bucket (powers of two)
    top_partitions: Rows  # the largest partitions
    growth: Rows  # the partitions that grow fastest (write rate over their records' span; since the last snapshot)
    previous_snapshot: str | None  # the snapshot growth is measured against, if any
    timeline: Rows  # segments of the largest partitions (timeline_partitions of them)
    roll_reasons: Rows  # per topic, segments by roll reason
    forecast_days: Rows  # per day: bytes and segments deletable (all topics), current and what-if
    forecast_topics: Rows  # per topic and day, the topics that free the most
    forecast_table: Rows  # per topic: bytes now and deletable at FORECAST_COLUMNS_DAYS and the horizon
    has_what_if: bool
    compaction: Rows  # compacted partitions, the dirtiest first
    compaction_count: int
    findings_by_check: Rows
    findings: Rows  # the first max_findings, errors first
    finding_count: int
    groups: Rows = field(default_factory=list)  # committed positions, the groups that reset first, then by lag
    group_position_count: int = 0
    transactions: Rows = field(default_factory=list)  # open transactions, the hanging ones first
    transaction_count: int = 0
    replicas: Rows = field(default_factory=list)  # followers against their leaders, the divergent ones first
    replica_count: int = 0  # replicas of partitions read on more than one broker, leaders aside
    tiered: Rows = field(default_factory=list)  # per tiered topic: local and remote bytes, copy lag, deletions
    limits: dict[str, int] = field(default_factory=dict)


def _rows(df: DataFrame) -> Rows:
    return [r.asDict(recursive=True) for r in df.collect()]


def _severity_order(col: str = "severity") -> Column:
    return F.when(F.col(col) == "error", 0).when(F.col(col) == "warning", 1).otherwise(2)


def _summary(tables: Mapping[str, DataFrame]) -> dict[str, Any]:
    parts = tables["partition_stats"]
    totals = parts.agg(F.countDistinct("logDir").alias("logDirs"), F.countDistinct("topic").alias("topics"),
                       F.count("*").alias("partitions"), F.sum("segments").alias("segments"),
                       F.sum("logBytes").alias("bytes"), F.sum("records").alias("records"),
                       F.min("snapshotId").alias("snapshotId"), F.min("snapshotTime").alias("snapshotTime")
                       ).collect()[0].asDict()
    by_severity = {r.severity: r["count"] for r in tables["index_findings"].groupBy("severity").count().collect()}
    totals.update({s: by_severity.get(s, 0) for s in SEVERITIES})
    for key in ("segments", "bytes", "records"):
        totals[key] = totals[key] or 0
    if "consumer_positions" in tables:
        totals["groupsResetting"] = (tables["consumer_positions"]
                                     .where(F.col("position").isin("below_log_start", "beyond_log_end"))
                                     .select("clusterId", "group").distinct().count())
    if "open_transactions" in tables:
        totals["hangingTransactions"] = tables["open_transactions"].where(F.col("status") == "hanging").count()
    if "replica_comparison" in tables:
        totals["divergentReplicas"] = tables["replica_comparison"].where(F.col("status") == "divergent").count()
    return totals


def _replicas(comparison: DataFrame, max_rows: int) -> tuple[Rows, int]:
    """Followers of partitions read on several brokers: those that diverge first (the most acknowledged records
    lost, then the most dropped), then those behind, then the consistent ones."""
    followers = comparison.where((F.col("replicasRead") > 1) & (F.col("status") != "leader"))
    rank = F.when(F.col("status") == "divergent", 0).when(F.col("status") == "behind", 1).otherwise(2)
    rows = followers.orderBy(rank, F.desc_nulls_last("acknowledgedRecordsLost"), F.desc_nulls_last("droppedRecords"),
                             "clusterId", "topic", "partition", "brokerId", "logDir")
    out = rows.select("clusterId", "topic", "partition", "brokerId", "logDir", "status", "leaderBrokerId",
                      "logEndOffset", "highWatermark", "truncationOffset", "droppedRecords", "acknowledgedRecordsLost",
                      "mismatches")
    return _rows(out.limit(max_rows)), followers.count()


def _tiered(tiered: DataFrame, forecast: DataFrame, horizon: int, max_rows: int) -> Rows:
    """Per log dir and tiered topic: its local and remote bytes, what is not uploaded yet and for how long, offsets in
    neither tier, and the bytes each tier's retention deletes now and by the forecast's horizon; the largest copy
    lag first."""
    keys = ["logDir", "topic"]
    per_topic = tiered.groupBy(*keys).agg(
        F.count("*").alias("partitions"), F.sum("localBytes").alias("localBytes"),
        F.sum("remoteBytes").alias("remoteBytes"), F.sum("copyLagBytes").alias("copyLagBytes"),
        F.sum("copyLagSegments").alias("copyLagSegments"), F.max("copyLagMs").alias("copyLagMs"),
        F.sum("missingOffsets").alias("missingOffsets"))
    at = forecast.where(F.col("day").isin(0, horizon)).groupBy(*keys).agg(*[
        F.sum(F.when(F.col("day") == day, F.col(column))).alias(alias)
        for day, column, alias in ((0, "bytesReclaimed", "localDeletableNow"),
                                   (horizon, "bytesReclaimed", "localDeletableAtHorizon"),
                                   (0, "remoteBytesReclaimed", "remoteDeletableNow"),
                                   (horizon, "remoteBytesReclaimed", "remoteDeletableAtHorizon"))])
    rows = per_topic.join(at, keys, "left").orderBy(F.desc_nulls_last("copyLagBytes"), F.desc("remoteBytes"), *keys)
    return _rows(rows.limit(max_rows))


def _groups(positions: DataFrame, max_rows: int) -> tuple[Rows, int]:
    """Committed positions: those that make a group reset first, then the largest lag."""
    resets = F.when(F.col("position") == "ok", 1).otherwise(0)
    rows = positions.orderBy(resets, F.desc_nulls_last("lag"), "clusterId", "group", "topic", "partition")
    out = rows.select("clusterId", "group", "topic", "partition", "committedOffset", "logStartOffset", "logEndOffset",
                      "lag", "position", F.expr("unix_millis(commitTimestamp)").alias("commitTimestamp"))
    return _rows(out.limit(max_rows)), positions.count()


def _transactions(open_txns: DataFrame, max_rows: int) -> tuple[Rows, int]:
    """Open transactions, the hanging ones first, the longest open first."""
    hanging = F.when(F.col("status") == "hanging", 0).otherwise(1)
    rows = open_txns.orderBy(hanging, F.desc_nulls_last("openMs"), "clusterId", "topic", "partition", "firstOffset")
    out = rows.select("clusterId", "topic", "partition", "transactionalId", "producerId", "firstOffset",
                      F.expr("unix_millis(startTimestamp)").alias("startTimestamp"), "openMs", "timeoutMs", "status",
                      "reason", "lastStableOffset", "blockedOffsets")
    return _rows(out.limit(max_rows)), open_txns.count()


def _topics(tables: Mapping[str, DataFrame], top: int) -> tuple[Rows, int]:
    keys = ["logDir", "topic"]
    per_topic = tables["partition_stats"].groupBy(*keys).agg(
        F.count("*").alias("partitions"), F.sum("segments").alias("segments"), F.sum("logBytes").alias("bytes"),
        F.sum("records").alias("records"), F.min("minTimestamp").alias("minTimestamp"),
        F.max("maxTimestamp").alias("maxTimestamp"))
    findings = tables["index_findings"].groupBy(*keys).pivot("severity", list(SEVERITIES)).count()
    joined = per_topic.join(findings, keys, "left").fillna(0, subset=list(SEVERITIES))
    return _rows(joined.orderBy(F.desc("bytes"), *keys).limit(top)), per_topic.count()


def _size_histogram(parts: DataFrame) -> Rows:
    bucket = F.when(F.col("logBytes") > 0, F.floor(F.log2("logBytes")).cast("int")).otherwise(F.lit(-1))
    return _rows(parts.groupBy(bucket.alias("bucket")).agg(F.count("*").alias("partitions"),
                                                             F.sum("logBytes").alias("bytes")).orderBy("bucket"))


DAY_MS = 86_400_000


def _growth(parts: DataFrame, previous: DataFrame | None, top: int) -> Rows:
    """Per partition: its write rate (bytes on disk over the time its records span, per day) and, given the previous
    snapshot's partition_stats, how many bytes it gained since; the fastest growing first."""
    span = F.col("maxTimestamp") - F.col("minTimestamp")
    rows = parts.select(*PARTITION_KEYS, F.col("logBytes").alias("bytes"), "minTimestamp", "maxTimestamp",
                        F.when(span > 0, F.col("logBytes").cast("double") * DAY_MS / span).alias("bytesPerDay"))
    order = [F.desc_nulls_last("bytesPerDay")]
    if previous is not None:
        before = previous.select(*PARTITION_KEYS, F.col("logBytes").alias("previousBytes"))
        rows = (rows.join(before, PARTITION_KEYS, "left")
                .withColumn("bytesSincePrevious", F.col("bytes") - F.coalesce(F.col("previousBytes"), F.lit(0))))
        order = [F.desc("bytesSincePrevious"), *order]
    return _rows(rows.orderBy(*order, *PARTITION_KEYS).limit(top))


def _timeline(segments: DataFrame, partitions: Rows, max_segments: int) -> Rows:
    if not partitions:
        return []
    wanted = segments.sparkSession.createDataFrame([(p["logDir"], p["topic"], p["partition"]) for p in partitions],
                                                   "logDir string, topic string, partition int")
    newest = F.row_number().over(Window.partitionBy(*PARTITION_KEYS).orderBy(F.desc("baseOffset")))
    chosen = (segments.join(F.broadcast(wanted), PARTITION_KEYS, "left_semi")
              .select(*PARTITION_KEYS, "baseOffset", "isActive", "logSize", "records", "minTimestamp",
                      "maxTimestamp", "rollReason")
              .withColumn("newest", newest).where(F.col("newest") <= max_segments).drop("newest"))
    return _rows(chosen.orderBy(*PARTITION_KEYS, "baseOffset"))


def _roll_reasons(segments: DataFrame, top: int) -> Rows:
    reason = F.coalesce(F.col("rollReason"), F.when(F.col("isActive"), "active").otherwise("unknown"))
    counts = segments.groupBy("topic", reason.alias("reason")).count()
    totals = counts.groupBy("topic").agg(F.sum("count").alias("segments"),
                                         F.map_from_entries(F.collect_list(F.struct("reason", "count")))
                                         .alias("reasons"))
    return _rows(totals.orderBy(F.desc("segments"), "topic").limit(top))


def _forecast(forecast: DataFrame, top: int, horizon_days: int) -> tuple[Rows, Rows, Rows]:
    sums = [F.sum(c).alias(c) for c in ("bytes", "segments", "bytesReclaimed", "deletableSegments",
                                         "whatIfBytesReclaimed", "whatIfDeletableSegments")]
    days = _rows(forecast.groupBy("day").agg(F.min("asOfMs").alias("asOfMs"), *sums).orderBy("day"))
    per_topic = forecast.groupBy("topic", "day").agg(*sums)
    at_horizon = per_topic.where(F.col("day") == horizon_days)
    tops = [r.topic for r in at_horizon.orderBy(F.desc("bytesReclaimed"), F.desc("bytes"), "topic").limit(top)
            .select("topic").collect()]
    chosen = per_topic.where(F.col("topic").isin(tops))
    topics = _rows(chosen.orderBy("topic", "day"))
    marks = sorted({d for d in FORECAST_COLUMNS_DAYS if d <= horizon_days} | {horizon_days})
    table = []
    for topic in tops:
        by_day = {r["day"]: r for r in topics if r["topic"] == topic}
        row = {"topic": topic, "bytes": by_day[0]["bytes"], "segments": by_day[0]["segments"]}
        for d in marks:
            row[f"day{d}"] = by_day[d]["bytesReclaimed"]
            row[f"whatIfDay{d}"] = by_day[d]["whatIfBytesReclaimed"]
        row["segmentsAtHorizon"] = by_day[horizon_days]["deletableSegments"]
        row["whatIfSegmentsAtHorizon"] = by_day[horizon_days]["whatIfDeletableSegments"]
        table.append(row)
    return days, topics, table


def _compaction(preview: DataFrame, top: int) -> tuple[Rows, int]:
    compacted = preview.where(F.col("cleanupPolicy").contains("compact"))
    cols = [*PARTITION_KEYS, "cleanupPolicy", "dirtyRatio", "minCleanableDirtyRatio", "wouldClean", "cleanReason",
            "uncleanableReason", "cleanBytes", "cleanableBytes", "totalBytes", "bytesRemoved", "recordsRemoved",
            "tombstonesRemoved", "supersededRemoved"]
    rows = _rows(compacted.select(*cols).orderBy(F.desc_nulls_last("dirtyRatio"), *PARTITION_KEYS).limit(top))
    return rows, compacted.count()


def _findings(findings: DataFrame, top: int) -> tuple[Rows, Rows, int]:
    by_check = _rows(findings.groupBy("severity", "check").count()
                     .orderBy(_severity_order(), F.desc("count"), "check"))
    cols = ["severity", "check", *PARTITION_KEYS, "baseOffset", "file", "position", "expected", "found", "detail"]
    first = _rows(findings.select(*cols).orderBy(_severity_order(), "logDir", "topic", "partition", "file",
                                                 "position").limit(top))
    return by_check, first, findings.count()


def report_data(tables: Mapping[str, DataFrame], *, top: int = 20, timeline_partitions: int = 8,
                timeline_segments: int = 200, max_rows: int = 500) -> ReportData:
    """The report's numbers from a snapshot's tables (the nightly job's, by name: ``partition_stats``,
    ``segment_stats``, ``index_findings``, ``retention_forecast``, ``compaction_preview``).

    With ``consumer_positions``, ``open_transactions`` and ``replica_comparison`` (:data:`STATE_REPORT_TABLES`),
    the groups' positions, the open transactions and the replicas compared too. ``top``: topics and partitions
    shown in charts; ``timeline_partitions``: the largest partitions drawn segment by segment, at most
    ``timeline_segments`` (the newest) each; ``max_rows``: rows in a table. With a ``previous_partition_stats``
    table (the snapshot before, see :func:`~kafkalog_spark.report.snapshot_tables`), growth is also measured
    since that snapshot."""
    # Each table is read by several aggregations: read it once (a Delta table's read replays its log and joins
    # the snapshot manifest each time).
    cached = {name: tables[name].persist() for name in (*REPORT_TABLES, *STATE_REPORT_TABLES) if name in tables}
    if "previous_partition_stats" in tables:
        cached["previous_partition_stats"] = tables["previous_partition_stats"]
    try:
        return _report_data(cached, top, timeline_partitions, timeline_segments, max_rows)
    finally:
        for df in cached.values():
            df.unpersist()


def _report_data(tables: Mapping[str, DataFrame], top: int, timeline_partitions: int, timeline_segments: int,
                 max_rows: int) -> ReportData:
    parts = tables["partition_stats"]
    largest = _rows(parts.select(*PARTITION_KEYS, "segments", F.col("logBytes").alias("bytes"), "records",
                                 "minTimestamp", "maxTimestamp", "logStartOffset", "logEndOffset")
                    .orderBy(F.desc("bytes"), *PARTITION_KEYS).limit(top))
    topics, topic_count = _topics(tables, max_rows)
    forecast = tables["retention_forecast"]
    horizon, what_if = forecast.agg(F.max("day"), F.max(F.col("whatIfBytesReclaimed").isNotNull())).collect()[0]
    horizon, what_if = horizon or 0, bool(what_if)
    days, forecast_topics, forecast_table = _forecast(forecast, top, horizon)
    compaction, compaction_count = _compaction(tables["compaction_preview"], max_rows)
    by_check, findings, finding_count = _findings(tables["index_findings"], max_rows)
    groups, group_count = _groups(tables["consumer_positions"], max_rows) if "consumer_positions" in tables else ([], 0)
    txns, txn_count = (_transactions(tables["open_transactions"], max_rows) if "open_transactions" in tables
                       else ([], 0))
    replicas, replica_count = (_replicas(tables["replica_comparison"], max_rows) if "replica_comparison" in tables
                               else ([], 0))
    tiered = (_tiered(tables["tiered_storage"], forecast, horizon, max_rows)
              if "tiered_storage" in tables and "remoteBytesReclaimed" in forecast.columns else [])
    previous = tables.get("previous_partition_stats")
    previous_id = previous.select(F.min("snapshotId")).collect()[0][0] if previous is not None else None
    return ReportData(
        summary=_summary(tables), topics=topics, topic_count=topic_count, size_histogram=_size_histogram(parts),
        top_partitions=largest, growth=_growth(parts, previous if previous_id else None, top),
        previous_snapshot=previous_id,
        timeline=_timeline(tables["segment_stats"], largest[:timeline_partitions], timeline_segments),
        roll_reasons=_roll_reasons(tables["segment_stats"], max_rows), forecast_days=days,
        forecast_topics=forecast_topics, forecast_table=forecast_table, has_what_if=what_if,
        compaction=compaction, compaction_count=compaction_count, findings_by_check=by_check, findings=findings,
        finding_count=finding_count, groups=groups, group_position_count=group_count, transactions=txns,
        transaction_count=txn_count, replicas=replicas, replica_count=replica_count, tiered=tiered,
        limits={"top": top, "timeline_partitions": timeline_partitions, "timeline_segments": timeline_segments,
                "max_rows": max_rows, "horizon_days": horizon})
