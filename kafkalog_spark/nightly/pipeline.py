"""The nightly job's tables: what it computes from the source's views of the log dirs, one DataFrame per table.

Functions of DataFrames and configs, wiring the analyses (:mod:`kafkalog_spark.analysis`); nothing here writes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import reduce

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..config import TopicConfigs
from .incremental import BATCH_FINDINGS_VIEW, CACHE_TABLES, ENTRY_FINDINGS_VIEW, SUMMARY_VIEW, Reuse

VIEWS = ("segments", "batches", "record_stats", "index", "partition_files")  # and part of the records
# Tables of each log dir on its own (a logDir column), with replica_comparison, which sets the replicas of each
# partition in those dirs side by side; then tables of each cluster's log dirs together: what its internal topics
# say (group offsets, transactions, the metadata) against the partitions on all of its brokers.
DIR_TABLES = ("segment_stats", "partition_stats", "log_dir_stats", "index_findings", "retention_plan",
              "retention_forecast", "compaction_preview", "compaction_preview_segments", "topic_configs",
              "log_offsets", "replica_comparison", "tiered_storage")
CLUSTER_TABLES = ("consumer_positions", "open_transactions", "catalog_checks")
TABLES = DIR_TABLES + CLUSTER_TABLES


LISTING_VIEWS = ("segments", "partition_files")  # the views that read listings and small files, read first


def read_cached_views(spark: SparkSession, log_dirs: Sequence[str], include_internal: bool = True,
                      max_split_bytes: str = "128m", configs: TopicConfigs | None = None, *,
                      reuse: Reuse | None = None, polite: bool = False,
                      remote_storage: str | None = None) -> dict[str, DataFrame]:
    """The source's views over ``log_dirs``, cached: every analysis reads them again. Each segment is read and its
    records decoded once (the decoded view, cached as ``decoded``: :func:`~kafkalog_spark.source.decoded_views`
    splits it into the batches, record_stats and records views), the records into their aggregates (the
    record_stats view, computed in the tasks that decode them); the records view holds only what the analyses read
    record by record: the control records and the records of the compacted topics (``configs``' cleanup.policy;
    None: Kafka's defaults), without their values and headers
    (:func:`~kafkalog_spark.analysis.record_sizes.without_payloads`).

    The views also hold, per segment, what the task that reads it computes (the decoded view's parts): as
    ``batch_summary`` (:data:`~.incremental.SUMMARY_VIEW`), the batches' aggregates
    (:data:`~kafkalog_spark.schemas.BATCH_SUMMARY`), as ``batch_findings`` (:data:`~.incremental.BATCH_FINDINGS_VIEW`),
    their findings among themselves (:mod:`kafkalog_spark.log.batch_checks`), and, as ``index_entry_findings``
    (:data:`~.incremental.ENTRY_FINDINGS_VIEW`), the findings of its index entries
    (:mod:`kafkalog_spark.log.index_entry_checks`; the index view holds the entries of the segments without a `.log`
    only, which :func:`~kafkalog_spark.analysis.index_validation.index_findings` checks).

    ``reuse``: an incremental run's (:class:`~.incremental.Reuse`): it decides from the listing which segments to decode
    (and whose index entries to read), and gives the other segments' rows and per-segment rows, read back from the
    warehouse (cached until ``reuse.unpersist()``); the views then also hold, under the names of
    :data:`~.incremental.CACHE_TABLES`, what this run keeps for the next. ``polite``: the segments read leave the page
    cache as found (:mod:`kafkalog_spark.log.page_cache`).
    ``remote_storage``: the views of the tiered partitions hold their remote segments too
    (:mod:`kafkalog_spark.source.remote_tier`), rows marked by ``tier``."""
    from ..analysis.compaction import compacted_topics
    from ..analysis.record_sizes import without_payloads
    from ..analysis.topic_config_table import topics_of
    from ..session import collected, parallelism
    from ..source import decoded_views
    from ..source import read_views as source_views
    from ..source.views import BATCH_FINDINGS_PART, BATCH_SUMMARY_PART, ENTRY_FINDINGS_PART

    tasks = parallelism(spark)

    def cache(df: DataFrame) -> DataFrame:
        # A view's partitions are the source's input splits: a few hundred on a broker of thousands of segments. Each
        # analysis over a cached view then runs as many tasks, each paying Spark's fixed cost per task (its
        # deserialization, its generated code, a Delta writer's statistics tracker), which was most of the job on a
        # broker's many small partitions; cached as one partition a core, they are read with as many tasks. Not in a
        # polite run: its Python workers end with their task (session.priority), and a coalesced task reads split
        # after split of the source, each in a worker of its own that lives until the task ends (48 workers alive at
        # once, 14 GiB, on the 4 GB incremental set)
        return (df.coalesce(tasks) if tasks and not polite else df).persist()

    options = {"includeInternal": str(include_internal).lower(), "maxSplitBytes": max_split_bytes,
               "dropCache": str(polite).lower()}
    if remote_storage:  # the views that list and decode segments hold the remote tier too (the others ignore it)
        options["remoteStorage"] = remote_storage
    listing = source_views(spark, log_dirs, LISTING_VIEWS, **options)
    # a row per segment file: collected once, the driver answers the many queries that select from it (the topics,
    # the incremental plan, the partitions' context, the replicas) without a Spark job
    views = {"segments": collected(listing["segments"]), "partition_files": cache(listing["partition_files"])}
    compacted = compacted_topics(configs, topics_of(views["segments"]))
    decode = reuse.decode_options(views["segments"], views["partition_files"], compacted) if reuse else None
    # the index entries of the segments without a `.log` only (the tasks that read a segment check its entries); the
    # segments view has every index's problem rows
    orphans = options | {"segmentFiles": "[]"}
    views["index"] = cache(source_views(spark, log_dirs, ["index"], **orphans)["index"])
    # one read of each segment for the three views that decode them: cached, each view a selection of it
    views["decoded"] = cache(source_views(spark, log_dirs, ["decoded"], **options, **(decode or {}))["decoded"])
    decoded = decoded_views(views["decoded"])
    # computed by the tasks that read the segments
    summary, segment_entries = decoded.pop(BATCH_SUMMARY_PART), decoded.pop(ENTRY_FINDINGS_PART)
    segment_batches = decoded.pop(BATCH_FINDINGS_PART)
    if compacted:  # their records whole, the others' control records
        whole = source_views(spark, log_dirs, ["records"], topics=",".join(compacted), **options,
                             **(decode or {}))["records"]
        records = whole.unionByName(decoded["records"].where(~F.col("topic").isin(compacted)))
        decoded["records"] = cache(without_payloads(records))  # read on their own: cached
    else:
        decoded["records"] = without_payloads(decoded["records"])
    # per segment, what the analyses derive from its files alone: its index entries' findings, its batches'
    # aggregates (which the segment statistics, the retention plans and the checks read) and their findings among
    # themselves; an incremental run computes them for the segments it decodes and reads the others' back
    per_segment = {ENTRY_FINDINGS_VIEW: segment_entries, SUMMARY_VIEW: summary, BATCH_FINDINGS_VIEW: segment_batches}
    if reuse:  # each part: the rows decoded now and those read back (one scan of the table, cached)
        parts = reuse.with_reused(decoded | per_segment, compacted, cache)
        decoded, per_segment = {v: parts[v] for v in decoded}, {v: parts[v] for v in per_segment}
    views |= decoded | per_segment  # each part a selection of what is cached: no view cached again
    if reuse:
        views |= reuse.tables()
    # the remote tier's segments, as __remote_log_metadata says (the tiered partitions' accounting)
    views["remote_log_segments"] = cache(source_views(spark, log_dirs, ["remote_log_segments"],
                                                      **options)["remote_log_segments"])
    if include_internal:  # the cluster metadata's topics: each partition's leader, the topics' cleanup.policy
        views["topic_catalog"] = cache(source_views(spark, log_dirs, ["topic_catalog"], **options)["topic_catalog"])
    return views


def replica_views(spark: SparkSession, log_dirs: Sequence[str], include_internal: bool) -> dict[str, DataFrame]:
    """What :func:`replica_table` reads of ``log_dirs`` when nothing else is computed from them: the batch headers,
    the segments and partition files and, with ``include_internal``, the cluster metadata's topics (the compacted
    topics' records are read by :func:`replica_table`)."""
    from ..source import read_views as source_views

    views = source_views(spark, log_dirs, ["batches", "segments", "partition_files"],
                         includeInternal=str(include_internal).lower())
    if include_internal:
        views["topic_catalog"] = source_views(spark, log_dirs, ["topic_catalog"])["topic_catalog"]
    return views


def replica_table(spark: SparkSession, log_dirs: Sequence[str], views: dict[str, DataFrame],
                  configs: TopicConfigs) -> tuple[DataFrame, DataFrame]:
    """The ``replica_comparison`` table of ``log_dirs`` and its findings, from their views (``batches``,
    ``segments``, ``partition_files``, ``topic_catalog`` when the metadata is to be read, and the ``records`` a
    job already read, reduced or not); each dir's broker from its ``meta.properties``. The compacted topics
    (``configs``', those the cluster metadata records as compact and those a log cleaner has compacted) are
    compared by their records: those ``views`` lacks are read here."""
    rows, findings, _ = compared_replicas(views, log_dir_brokers(log_dirs), configs, _records_reader(spark, log_dirs))
    return rows, findings


def log_dir_brokers(log_dirs: Sequence[str]) -> dict[str, tuple[str | None, int | None]]:
    """Each log dir of ``log_dirs`` (as the views' ``logDir`` names it): its (cluster id, broker id)."""
    from ..log.log_dir import broker_identity, containing_log_dir

    return {d: broker_identity(d) for d in dict.fromkeys(containing_log_dir(d) for d in log_dirs)}


def _records_reader(spark: SparkSession, log_dirs: Sequence[str]) -> Callable[[list[str]], DataFrame | None]:
    """The records (without payloads) of some topics, read from ``log_dirs``."""
    from ..analysis.record_sizes import without_payloads
    from ..source import read_views as source_views

    def read(topics: list[str]) -> DataFrame | None:
        return without_payloads(source_views(spark, log_dirs, ["records"], topics=",".join(topics))["records"])
    return read


def compared_replicas(views: dict[str, DataFrame], brokers: dict[str, tuple[str | None, int | None]],
                      configs: TopicConfigs, more_records: Callable[[list[str]], DataFrame | None],
                      ) -> tuple[DataFrame, DataFrame, DataFrame | None]:
    """:func:`replica_table`'s rows and findings from the views of some log dirs and each one's broker
    (``brokers``); ``more_records(topics)`` gives the records of the compacted topics ``views``' records lack.
    Also returns those records (None when none were asked for)."""
    from ..analysis.compaction import compacted_topics
    from ..analysis.record_sizes import without_payloads
    from ..analysis.replicas.replica_comparison import (
        compacted_replicas,
        replica_comparison,
        replica_findings,
        replica_members,
    )

    members = replica_members(views["segments"], views["partition_files"], views.get("topic_catalog"), brokers)
    by_configs = set(compacted_topics(configs, sorted({m["topic"] for m in members})))
    compacted = by_configs | set(compacted_replicas(members))
    records = without_payloads(views["records"]) if "records" in views else None
    missing = sorted(compacted - by_configs if records is not None else compacted)
    more = more_records(missing) if missing else None
    if more is not None:  # compact by the metadata's configs or cleaned (or, with no records read yet, any)
        records = more if records is None else records.where(~F.col("topic").isin(missing)).unionByName(more)
    rows = replica_comparison(views["batches"], records, members, compacted)
    return rows, replica_findings(rows), more


def local_tier(views: dict[str, DataFrame]) -> dict[str, DataFrame]:
    """``views`` without the remote tier's rows (those read with a remote store have a ``tier`` column; a listing's
    problem rows have none)."""
    return {name: df.where(F.col("tier").isNull() | (F.col("tier") == "local")) if "tier" in df.columns else df
            for name, df in views.items()}


def compute(spark: SparkSession, views: dict[str, DataFrame], configs: TopicConfigs, log_dirs: Sequence[str],
            now_ms: int, what_if_configs: TopicConfigs | None = None, *,
            replica_records: list[DataFrame] | None = None,
            cached: list[DataFrame] | None = None) -> dict[str, DataFrame]:
    """Every table of the job for ``views`` of ``log_dirs``; ``what_if_configs``: the configs the retention
    forecast also runs under (:func:`what_if_configs`). ``replica_records``, when given, gets the records the
    replica comparison read beyond ``views`` (if it read any); ``cached``, when given, the DataFrames the tables
    share that are cached (the caller unpersists them once the tables are written; else they stay cached). Views
    read with a remote store: segment_stats and index_findings cover the remote tier, the other tables are the local
    log's (retention plans the remote tier from __remote_log_metadata)."""
    from ..analysis.compaction import compaction_preview
    from ..analysis.index_validation import index_findings
    from ..analysis.log_offsets import log_offsets
    from ..analysis.partition_input import collect_partition_context
    from ..analysis.partition_stats import log_dir_stats, partition_stats
    from ..analysis.retention import has_remote_tier, retention_plan
    from ..analysis.retention_forecast import retention_forecast
    from ..analysis.segment_stats import segment_stats
    from ..analysis.tiered_storage import tiered_findings, tiered_storage
    from ..analysis.topic_config_table import topic_configs as topic_configs_table
    from ..analysis.topic_config_table import topics_of

    whole, views = views, local_tier(views)
    # the per-partition context both the compaction preview and log_offsets run on, collected once
    context = collect_partition_context(views["segments"], views["partition_files"])
    compaction = compaction_preview(views["records"], views["batches"], views["segments"], views["partition_files"],
                                    configs, now_ms, include_records=False, context=context)
    if cached is not None and compaction.cached is not None:
        cached.append(compaction.cached)
    # each log dir's topics with their effective configs (the configs are per topic, the table per log dir)
    dir_topics = views["segments"].where("problem is null").select("logDir", "topic").distinct()
    topics = topics_of(views["segments"])
    topic_rows = topic_configs_table(spark, configs, topics).join(dir_topics, "topic")
    replicas, replica_problems, more = compared_replicas(views, log_dir_brokers(log_dirs), configs,
                                                         _records_reader(spark, log_dirs))
    if replica_records is not None and more is not None:
        replica_records.append(more)
    summary = views.get(SUMMARY_VIEW)  # read_cached_views' (else each analysis aggregates the batches itself)
    # the remote tier (tiered partitions: what is copied), asked once whether it has a segment: without one, the
    # plans and forecasts leave it out, and without a tiered topic either, no partition is tiered
    metadata = views["remote_log_segments"]
    remote = metadata if has_remote_tier(metadata) else None
    tiered_topics = [t for t in topics if configs[t].remote_log_enabled]
    plan = retention_plan(views["segments"], views["batches"], views["partition_files"], configs, now_ms,
                          summary=summary, remote_segments=remote, topics=topics)
    tiered = tiered_storage(views["segments"], metadata, views["partition_files"], tiered_topics, now_ms)
    interval = configs["-"]["remote.log.manager.task.interval.ms"]
    tiered_problems = tiered_findings(tiered, metadata, plan, interval, now_ms)
    if remote is None and not tiered_topics:
        tiered, tiered_problems = (spark.createDataFrame([], df.schema) for df in (tiered, tiered_problems))
    # the remote tier's topics too when it was read (its segments view then holds more than the local one)
    segments = segment_stats(whole["segments"], whole["batches"], whole["record_stats"], configs,
                             summary=whole.get(SUMMARY_VIEW),
                             topics=topics if whole["segments"] is views["segments"] else None)
    partitions = partition_stats(segments, views["partition_files"])
    return {
        "segment_stats": segments,
        "partition_stats": partitions,
        "log_dir_stats": log_dir_stats(partitions, views["segments"]),
        "index_findings": index_findings(spark, whole, log_dirs=log_dirs,
                                         entry_rows=whole.get(ENTRY_FINDINGS_VIEW),
                                         batch_rows=whole.get(BATCH_FINDINGS_VIEW)).unionByName(replica_problems)
                                         .unionByName(tiered_problems),
        "retention_plan": plan,
        "retention_forecast": retention_forecast(views["segments"], views["batches"], views["partition_files"],
                                                 configs, now_ms, what_if_configs=what_if_configs, summary=summary,
                                                 remote_segments=remote, plan=plan, topics=topics),
        "compaction_preview": compaction.partitions,
        "compaction_preview_segments": compaction.segments,
        "topic_configs": topic_rows,
        "log_offsets": log_offsets(views["records"], views["batches"], views["segments"], views["partition_files"],
                                   configs, now_ms, context=context, summary=summary),
        "replica_comparison": replicas,
        "tiered_storage": tiered,
    }


def state_tables_by_cluster(spark: SparkSession, log_dirs: Sequence[str], names: Sequence[str], now_ms: int,
                            log_offsets_of: Callable[[list[str], dict[str, DataFrame]], DataFrame | None],
                            data_views: Sequence[str] = (), *,
                            in_hand: Mapping[str, DataFrame] | None = None) -> dict[str, tuple[DataFrame, DataFrame]]:
    """The internal-state tables ``names`` (of :data:`CLUSTER_TABLES`) and their findings over ``log_dirs``, each
    cluster's dirs (:func:`~kafkalog_spark.log.log_dir.group_by_cluster`) on their own, rows marked by a
    ``clusterId`` column: an internal topic speaks of its own cluster's partitions, and two clusters' groups or
    topics of the same name are not one. ``log_offsets_of(dirs, views)`` gives the rows of the ``log_offsets``
    table of one cluster's ``dirs`` from its views (the internal topics', ``partition_files`` and
    ``data_views``). ``in_hand``: views of all of ``log_dirs`` already read (cached, say), taken instead of
    reading them again."""
    from ..analysis.catalog_checks import partition_dirs
    from ..analysis.index_validation import log_dirs_of
    from ..analysis.state_checks import STATE_VIEWS
    from ..log.log_dir import containing_log_dir, group_by_cluster
    from ..source import read_views as source_views

    wanted = list(dict.fromkeys(["partition_files", *data_views, *(STATE_VIEWS[name] for name in names)]))
    in_hand = in_hand or {}
    per_cluster: list[dict[str, tuple[DataFrame, DataFrame]]] = []
    for cluster, dirs in group_by_cluster(list(log_dirs)).items():
        own = F.col("logDir").isin(list(dict.fromkeys(containing_log_dir(d) for d in dirs)))
        views = {view: in_hand[view].where(own) for view in wanted if view in in_hand}
        to_read = [view for view in wanted if view not in views]
        views |= source_views(spark, dirs, to_read) if to_read else {}
        offsets = log_offsets_of(dirs, views) if set(names) - {"catalog_checks"} else None
        found = partition_dirs(spark, views["partition_files"], log_dirs_of(dirs)) if "catalog_checks" in names \
            else None
        per_cluster.append(state_tables(cluster, names, views, offsets, found, now_ms))
    return union_per_cluster(per_cluster, names)


def state_tables(cluster: str | None, names: Sequence[str], views: dict[str, DataFrame], log_offsets: DataFrame | None,
                 partition_dirs: DataFrame | None, now_ms: int) -> dict[str, tuple[DataFrame, DataFrame]]:
    """The internal-state tables ``names`` of one cluster's log dirs and their findings, from their views (the
    internal topics' of :data:`~kafkalog_spark.analysis.state_checks.STATE_VIEWS`), their ``log_offsets`` rows and
    their ``partition_dirs`` (:func:`~kafkalog_spark.analysis.catalog_checks.partition_dirs`); the rows marked by a
    ``clusterId`` column."""
    from ..analysis.state_checks import STATE_VIEWS, state_table

    marked = {}
    for name in names:
        rows, findings = state_table(name, views[STATE_VIEWS[name]], log_offsets, partition_dirs, now_ms)
        marked[name] = (rows.select(F.lit(cluster).cast("string").alias("clusterId"), "*"), findings)
    return marked


def union_per_cluster(per_cluster: Sequence[dict[str, tuple[DataFrame, DataFrame]]],
                      names: Sequence[str]) -> dict[str, tuple[DataFrame, DataFrame]]:
    """Each table of ``names`` (and its findings): the rows of every cluster's :func:`state_tables`."""
    return {name: (reduce(DataFrame.unionByName, (t[name][0] for t in per_cluster)),
                   reduce(DataFrame.unionByName, (t[name][1] for t in per_cluster))) for name in names}


def cluster_tables(spark: SparkSession, log_dirs: Sequence[str], log_offsets: DataFrame, now_ms: int,
                   include_internal: bool = True, *,
                   views: Mapping[str, DataFrame] | None = None) -> dict[str, DataFrame]:
    """The :data:`CLUSTER_TABLES` of ``log_dirs`` (:func:`state_tables_by_cluster`); ``log_offsets``, the rows of
    the ``log_offsets`` table of those dirs, stands for the data partitions, so they are not decoded again. Empty
    without ``include_internal`` (the internal topics are not to be read). ``views``: the views of ``log_dirs``
    read already (:func:`analysed`'s): those the tables read (``partition_files``, ``topic_catalog``) are taken
    from them, the local log's rows (not read again); the others are read."""
    from ..log.log_dir import containing_log_dir

    if not include_internal:
        return no_cluster_tables(spark)

    def own(dirs: list[str], _views: dict[str, DataFrame]) -> DataFrame:
        return log_offsets.where(F.col("logDir").isin([containing_log_dir(d) for d in dirs]))

    tables = state_tables_by_cluster(spark, log_dirs, CLUSTER_TABLES, now_ms, own,
                                     in_hand=local_tier(dict(views)) if views else None)
    return {name: rows for name, (rows, _) in tables.items()}


def no_cluster_tables(spark: SparkSession) -> dict[str, DataFrame]:
    """The :data:`CLUSTER_TABLES` without rows: the internal topics are not to be read."""
    from ..analysis.state_checks import SCHEMAS

    return {name: spark.createDataFrame([], SCHEMAS[name]).select(F.lit(None).cast("string").alias("clusterId"), "*")
            for name in CLUSTER_TABLES}


def summary(tables: dict[str, DataFrame]) -> DataFrame:
    """Per log dir and topic: segments, bytes, records, and findings by severity."""
    keys = ["logDir", "topic"]
    per_topic = tables["partition_stats"].groupBy(*keys).agg(
        F.sum("segments").alias("segments"), F.sum("logBytes").alias("bytes"), F.sum("records").alias("records"))
    findings = (tables["index_findings"].groupBy(*keys).pivot("severity", ["error", "warning", "info"]).count()
                .fillna(0))
    return per_topic.join(findings, keys, "left").fillna(0).orderBy(*keys)


def _log_dir_first(df: DataFrame) -> DataFrame:
    """The tables' column order: ``logDir`` first, as readers of older snapshots know them."""
    return df.select("logDir", *[c for c in df.columns if c != "logDir"])


# what a caller of analysed() may add to the tables from the views, the records the replica comparison read and the
# tables
MoreTables = Callable[[dict[str, DataFrame], "DataFrame | None", dict[str, DataFrame]], dict[str, DataFrame]]


@contextmanager
def analysed(spark: SparkSession, log_dirs: Sequence[str], started: dt.datetime, configs: TopicConfigs,
             alternative: TopicConfigs | None = None, *, include_internal: bool = True,
             max_split_bytes: str = "128m", reuse: Reuse | None = None, polite: bool = False,
             more: MoreTables | None = None, remote_storage: str | None = None,
             keep: Callable[[dict[str, DataFrame]], None] | None = None) -> Iterator[dict[str, DataFrame]]:
    """Every table of :data:`DIR_TABLES` over ``log_dirs``, read in one job, each row marked by its ``logDir``, as
    of ``started`` (``alternative``: the forecast's what-if configs). The views it caches to compute them are
    unpersisted when the block ends: use the tables inside it. ``more(views, replica_records, tables)``: more tables
    computed from the cached views and the tables (the cluster tables, a broker's inputs to the fleet step,
    :mod:`.fleet`). ``remote_storage``: the tiered partitions' remote store, whose segments segment_stats and
    index_findings cover too. With ``reuse``, the tables it keeps for the next run (:data:`CACHE_TABLES`) are among
    those yielded, unless ``keep`` is given and the run read rows back from them: ``keep(tables)`` then writes them
    once the block ends without error, after the caches built on the rows read back are dropped (a run that read
    none back has no such cache: its kept tables are yielded, to be written with the others)."""
    views = read_cached_views(spark, log_dirs, include_internal, max_split_bytes, configs, reuse=reuse,
                              polite=polite, remote_storage=remote_storage)
    cached = list(views.values())
    read = len(cached)  # the views; the tables' caches follow
    try:
        read_more: list[DataFrame] = []
        tables = compute(spark, views, configs, log_dirs, int(started.timestamp() * 1000), alternative,
                         replica_records=read_more, cached=cached)
        # index_findings holds the replica comparison's findings and the tiered partitions' (from the retention plan),
        # and the cluster tables read log_offsets: cached, each is computed once, not per table (the statistics are
        # local data already)
        cached += [tables[name].persist() for name in ("replica_comparison", "retention_plan", "tiered_storage",
                                                       "log_offsets")]
        out = {name: _log_dir_first(tables[name]) for name in DIR_TABLES}
        kept = {name: views[name] for name in CACHE_TABLES if name in views}
        last = keep is not None and reuse is not None and reuse.reads_back
        yield (out | ({} if last else kept) | (more(views, read_more[0] if read_more else None, out) if more else {}))
        if last:
            # After a Delta write, Spark plans again every cached query that reads the table written (a Spark job
            # each, Delta's file listing), and a table being written meanwhile computes again the caches it reads:
            # what was cached on the rows read back goes first. What the kept tables read stays cached.
            for df in reversed(cached[read:]):
                df.unpersist()
            del cached[read:]
            reuse.unpersist_read_back()
            keep(kept)
    finally:
        # the later ones first: uncaching a DataFrame makes Spark plan again every cached one built on it
        for df in reversed(cached):
            df.unpersist()
        if reuse:
            reuse.unpersist()
