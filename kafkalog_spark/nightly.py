"""The nightly job: read broker log dirs, compute the analyses, write them as one snapshot into Delta.

The job only wires configuration to the analyses (functions of DataFrames, in
:mod:`kafkalog_spark.analysis`) and to the snapshot writer (:mod:`kafkalog_spark.delta`).
Configuration comes from a TOML file (``conf/nightly.toml``) with command-line overrides.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sys
import tomllib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import reduce
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .config import ConfigError, TopicConfigs
from .delta import (
    IDENTIFIER,
    MANIFEST,
    RUNS,
    TableLocation,
    append_rows,
    begin,
    check_name,
    check_snapshot_id,
    clean_up,
    commit,
    new_run_id,
    read_table,
    replaced_runs,
    run_rows,
)
from .kafka_versions import LATEST, KafkaVersion, parse_kafka_version
from .log.files import expand_paths
from .source.options import parse_size

VIEWS = ("segments", "batches", "record_stats", "index", "partition_files")  # and part of the records
# Tables of each log dir on its own (a logDir column), then tables of each cluster's log dirs together: what its
# internal topics say (group offsets, transactions, the metadata) against the partitions on all of its brokers.
DIR_TABLES = ("segment_stats", "partition_stats", "log_dir_stats", "index_findings", "retention_plan",
              "retention_forecast", "compaction_preview", "compaction_preview_segments", "topic_configs",
              "log_offsets")
CLUSTER_TABLES = ("consumer_positions", "open_transactions", "catalog_checks")
TABLES = DIR_TABLES + CLUSTER_TABLES


@dataclass(frozen=True)
class NightlyConfig:
    log_dirs: tuple[str, ...]
    location: TableLocation
    include_internal: bool = True
    snapshot_id: str | None = None  # default: the run's UTC time, e.g. 2026-11-21T02:00:00Z
    table_names: dict[str, str] = field(default_factory=lambda: {t: t for t in TABLES})
    broker_config: str | None = None  # a broker's server.properties
    topic_config: str | None = None  # per-topic overrides (see kafkalog_spark.config)
    max_split_bytes: str = "128m"
    kafka_version: KafkaVersion = LATEST  # whose config keys, defaults and ranges (and cleaner) apply
    what_if: tuple[str, ...] = ()  # key=value configs the retention forecast also runs under, side by side
    report: str | None = None  # where to write the HTML report of the snapshot (None: no report)

    def __post_init__(self) -> None:
        """Refuse a bad snapshot id or table name however the configuration was made (TOML, CLI, the Python API,
        the notebook's widgets), before any work: both reach Delta."""
        if self.snapshot_id is not None:
            check_snapshot_id(self.snapshot_id)
        names = [check_name(self.table_names.get(t, t), f"table name for {t}") for t in TABLES]
        if len(set(names)) < len(names) or {MANIFEST, RUNS} & set(names):
            raise ValueError(f"table names {names}: each table needs its own name, and {MANIFEST!r} (the manifest) "
                             f"and {RUNS!r} (every run started) are the job's own tables")

    @classmethod
    def load(cls, path: str | None = None, **overrides) -> NightlyConfig:
        """From a TOML file (sections [input], [output], [snapshot], [configs], [tables]), then overrides. A
        mistake in the file (bad TOML, an unknown section or key, a value of the wrong type or range) raises
        :class:`~kafkalog_spark.config.ConfigError` naming the section and key."""
        doc = _read_toml(path) if path else {}
        base = Path(path).parent if path else Path.cwd()  # relative paths are relative to the file

        def rel(p: str | None) -> str | None:
            if p is None or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", p) or Path(p).is_absolute():
                return p  # a URI (s3://, file:, dbfs:/Volumes/...) or an absolute path: as given
            return os.path.normpath(base / p)

        inp, out, cfg, snap, tables, report = (_section(doc, name) for name in _FILE_KEYS)
        warehouse = _value(out, "output", "warehouse", str)
        # an overriding location (--warehouse, --schema) replaces the file's, which then may name none
        location = overrides.pop("location", None)
        if location is None:
            catalog, schema = (_value(out, "output", key, str) for key in ("catalog", "schema"))
            for key, name in (("catalog", catalog), ("schema", schema)):
                if name is not None:
                    check_identifier(name, f"[output] {key}")
            try:
                location = TableLocation(warehouse=rel(warehouse) if warehouse else None, catalog=catalog,
                                         schema=schema)
            except ValueError as e:
                raise ConfigError(f"[output]: {e}", key="[output]") from None
        snapshot_id = _value(snap, "snapshot", "id", str) or None
        if snapshot_id is not None:
            _checked("[snapshot] id", check_snapshot_id, snapshot_id)
        max_split_bytes = str(_value(inp, "input", "max_split_bytes", (str, int), "128m"))
        _checked("[input] max_split_bytes", parse_size, max_split_bytes, "[input] max_split_bytes")
        config = cls(
            log_dirs=tuple(rel(p) for p in _paths(inp, "input", "log_dirs")),
            location=location,
            include_internal=_value(inp, "input", "include_internal", bool, True),
            snapshot_id=snapshot_id,
            table_names={t: _table_name(tables, t) for t in TABLES},
            broker_config=rel(_value(cfg, "configs", "broker_properties", str)),
            topic_config=rel(_value(cfg, "configs", "topic_overrides", str)),
            max_split_bytes=max_split_bytes,
            kafka_version=_kafka_version(cfg.get("kafka_version")),
            what_if=tuple(_strings(cfg, "configs", "what_if")),
            report=rel(_value(report, "report", "path", str) or None),
        )
        return replace(config, **{k: v for k, v in overrides.items() if v is not None})


# The TOML file's sections and their keys: anything else is a typo, which would otherwise be ignored in silence.
_FILE_KEYS = {
    "input": ("log_dirs", "include_internal", "max_split_bytes"),
    "output": ("warehouse", "catalog", "schema"),
    "configs": ("kafka_version", "broker_properties", "topic_overrides", "what_if"),
    "snapshot": ("id",),
    "tables": TABLES,
    "report": ("path",),
}
_IDENTIFIER = IDENTIFIER  # the delta layer's rule for table, schema and catalog names
_TYPE_NAMES = {str: "a string", bool: "true or false", int: "a whole number", list: "a list"}


def _read_toml(path: str) -> dict:
    """The file's TOML; an unknown top-level key or section is an error. A FIFO is never opened (it would
    block), a missing file raises FileNotFoundError."""
    file = Path(path)
    if file.exists() and not file.is_file():
        raise ConfigError(f"{path}: not a regular file")
    try:
        doc = tomllib.loads(file.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    unknown = sorted(set(doc) - set(_FILE_KEYS))
    if unknown:
        raise ConfigError(f"unknown section or key {unknown[0]!r}: expected the sections "
                          f"{', '.join(f'[{s}]' for s in _FILE_KEYS)}", key=unknown[0])
    return doc


def _section(doc: dict, name: str) -> dict:
    section = doc.get(name, {})
    if not isinstance(section, dict):
        raise ConfigError(f"[{name}]: expected a section ([{name}] on a line of its own), not {section!r}", key=name)
    unknown = sorted(set(section) - set(_FILE_KEYS[name]))
    if unknown:
        raise ConfigError(f"[{name}] {unknown[0]}: unknown key; expected one of {', '.join(_FILE_KEYS[name])}",
                          key=unknown[0])
    return section


def _value(section: dict, name: str, key: str, types: type | tuple[type, ...], default: object = None) -> object:
    """``section[key]`` if it has one of ``types`` (bool is no int here), else ConfigError naming it."""
    value = section.get(key, default)
    types = types if isinstance(types, tuple) else (types,)
    if value is None or (type(value) in types):
        return value
    expected = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
    raise ConfigError(f"[{name}] {key} = {value!r}: expected {expected}", key=key, value=str(value))


def _strings(section: dict, name: str, key: str, example: str = '"retention.ms=86400000"') -> list[str]:
    """A list of non-empty strings; a single string would otherwise be read as one item per character."""
    items = _value(section, name, key, list, [])
    if not all(isinstance(p, str) and p.strip() for p in items):
        raise ConfigError(f"[{name}] {key} = {items!r}: expected a list of strings, e.g. [{example}]", key=key)
    return items


def _paths(section: dict, name: str, key: str) -> list[str]:
    return _strings(section, name, key, '"/var/lib/kafka/data"')


def check_identifier(name: str, key: str) -> str:
    """``name`` if it is a plain identifier (a table name, a catalog, a schema: a path component and an unquoted
    SQL name alike), else ConfigError naming ``key``."""
    if not _IDENTIFIER.fullmatch(name):
        raise ConfigError(f"{key} {name!r}: expected 1 to 128 letters, digits and _ (not starting with a digit)",
                          key=key, value=name)
    return name


def _table_name(tables: dict, table: str) -> str:
    return check_identifier(_value(tables, "tables", table, str, table), f"[tables] {table}")


def _checked(key: str, check: Callable[..., object], *args: object) -> None:
    """``check(*args)``, its ValueError made a ConfigError naming ``key``."""
    try:
        check(*args)
    except ValueError as e:
        message = str(e)
        raise ConfigError(message if message.startswith(key) else f"{key}: {message}", key=key) from None


def _kafka_version(value: object) -> KafkaVersion:
    """[configs] kafka_version: "3.9" or "4.x" (3.9.2, 4, 4.4.0 ... too); absent: the newest."""
    if value is None:
        return LATEST
    try:
        return parse_kafka_version(str(value))
    except ValueError as e:
        raise ConfigError(f"[configs] kafka_version: {e}", key="kafka_version") from None


def read_cached_views(spark: SparkSession, log_dirs: Sequence[str], include_internal: bool = True,
                      max_split_bytes: str = "128m", configs: TopicConfigs | None = None) -> dict[str, DataFrame]:
    """The source's views over ``log_dirs``, cached: every analysis reads them again. The records are decoded once,
    into their aggregates (the record_stats view, computed in the tasks that decode them); the records view holds
    only what the analyses read record by record: the control records (the tasks decode the control batches
    alone) and the records of the compacted topics (``configs``' cleanup.policy; None: Kafka's defaults), without
    their values and headers (:func:`~kafkalog_spark.analysis.record_sizes.without_payloads`)."""
    from .analysis.compaction import compacted_topics
    from .analysis.record_sizes import without_payloads
    from .analysis.topic_configs import topics_of
    from .source import control_records
    from .source import read_views as source_views

    options = {"includeInternal": str(include_internal).lower(), "maxSplitBytes": max_split_bytes}
    views = {name: df.persist() for name, df in source_views(spark, log_dirs, VIEWS, **options).items()}
    compacted = compacted_topics(configs, topics_of(views["segments"]))
    records = control_records(source_views(spark, log_dirs, ["records"], **options)["records"])
    if compacted:
        whole = source_views(spark, log_dirs, ["records"], topics=",".join(compacted), **options)["records"]
        records = whole.unionByName(records.where(~F.col("topic").isin(compacted)))
    views["records"] = without_payloads(records).persist()
    return views


def topic_configs(config: NightlyConfig) -> TopicConfigs:
    """The effective configs of every topic, resolved once: Kafka's defaults < server.properties < topic overrides,
    by the rules of ``config.kafka_version``. Every analysis takes this one object."""
    return TopicConfigs(config.broker_config, config.topic_config, kafka_version=config.kafka_version)


def what_if_configs(config: NightlyConfig, configs: TopicConfigs) -> TopicConfigs | None:
    """``configs`` with the configuration's what-if on top (None without one); a bad key or value raises
    ConfigError naming it, before any work."""
    if not config.what_if:
        return None
    try:
        return configs.with_what_if(config.what_if)
    except ValueError as e:
        raise ConfigError(f"[configs] what_if: {e}", key="what_if") from None


def compute(spark: SparkSession, views: dict[str, DataFrame], configs: TopicConfigs, log_dirs: Sequence[str],
            now_ms: int, what_if_configs: TopicConfigs | None = None) -> dict[str, DataFrame]:
    """Every table of the job for ``views`` of ``log_dirs``; ``what_if_configs``: the configs the retention
    forecast also runs under (:func:`what_if_configs`)."""
    from .analysis.compaction import compaction_preview
    from .analysis.index_validation import index_findings
    from .analysis.log_offsets import log_offsets
    from .analysis.partition_input import collect_partition_context
    from .analysis.partition_stats import log_dir_stats, partition_stats
    from .analysis.retention import retention_plan
    from .analysis.retention_forecast import retention_forecast
    from .analysis.segment_stats import segment_stats
    from .analysis.topic_configs import topic_configs as topic_configs_table
    from .analysis.topic_configs import topics_of

    # the per-partition context both the compaction preview and log_offsets run on, collected once
    context = collect_partition_context(views["segments"], views["partition_files"])
    compaction = compaction_preview(views["records"], views["batches"], views["segments"], views["partition_files"],
                                    configs, now_ms, include_records=False, context=context)
    # each log dir's topics with their effective configs (the configs are per topic, the table per log dir)
    dir_topics = views["segments"].where("problem is null").select("logDir", "topic").distinct()
    topic_rows = topic_configs_table(spark, configs, topics_of(views["segments"])).join(dir_topics, "topic")
    segments = segment_stats(views["segments"], views["batches"], views["record_stats"], configs)
    partitions = partition_stats(segments, views["partition_files"])
    return {
        "segment_stats": segments,
        "partition_stats": partitions,
        "log_dir_stats": log_dir_stats(partitions, views["segments"]),
        "index_findings": index_findings(spark, views, log_dirs=log_dirs),
        "retention_plan": retention_plan(views["segments"], views["batches"], views["partition_files"], configs,
                                         now_ms),
        "retention_forecast": retention_forecast(views["segments"], views["batches"], views["partition_files"],
                                                 configs, now_ms,
                                                 what_if_configs=what_if_configs),
        "compaction_preview": compaction.partitions,
        "compaction_preview_segments": compaction.segments,
        "topic_configs": topic_rows,
        "log_offsets": log_offsets(views["records"], views["batches"], views["segments"], views["partition_files"],
                                   configs, now_ms, context=context),
    }


def compute_cluster(spark: SparkSession, log_dirs: Sequence[str], log_offsets: DataFrame, now_ms: int
                    ) -> dict[str, DataFrame]:
    """The :data:`CLUSTER_TABLES` of one cluster's ``log_dirs`` (all of its brokers' dirs that were read):
    ``log_offsets``, the rows of the ``log_offsets`` table of those dirs, stands for the data partitions, so they
    are not decoded again; the internal topics' views and the partition dirs are read here."""
    from .analysis.catalog_checks import partition_dirs
    from .analysis.index_validation import log_dirs_of
    from .analysis.state_checks import STATE_VIEWS, state_table
    from .source import read_views as source_views

    views = source_views(spark, log_dirs, ["partition_files", *STATE_VIEWS.values()])
    dirs = partition_dirs(spark, views["partition_files"], log_dirs_of(log_dirs))
    return {name: state_table(name, views[STATE_VIEWS[name]], log_offsets, dirs, now_ms)[0]
            for name in CLUSTER_TABLES}


def cluster_tables(spark: SparkSession, log_dirs: Sequence[str], log_offsets: DataFrame, now_ms: int,
                   include_internal: bool = True) -> dict[str, DataFrame]:
    """The :data:`CLUSTER_TABLES` of ``log_dirs``, each cluster's (:func:`~kafkalog_spark.log.log_dir.
    group_by_cluster`) computed on its own and marked by a ``clusterId`` column; empty without
    ``include_internal`` (the internal topics are not to be read)."""
    from .analysis.state_checks import SCHEMAS
    from .log.log_dir import containing_log_dir, group_by_cluster

    if not include_internal:
        return {name: spark.createDataFrame([], SCHEMAS[name]).select(F.lit(None).cast("string").alias("clusterId"),
                                                                     "*") for name in CLUSTER_TABLES}
    per_cluster = []
    for cluster, dirs in group_by_cluster(list(log_dirs)).items():
        own = log_offsets.where(F.col("logDir").isin([containing_log_dir(d) for d in dirs]))
        tables = compute_cluster(spark, dirs, own, now_ms)
        per_cluster.append({name: df.select(F.lit(cluster).cast("string").alias("clusterId"), "*")
                            for name, df in tables.items()})
    return {name: reduce(DataFrame.unionByName, (t[name] for t in per_cluster)) for name in CLUSTER_TABLES}


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


def run(spark: SparkSession, config: NightlyConfig, now: Callable[[], dt.datetime] | None = None, *,
        after_commit: Callable[[str], None] | None = None) -> dict[str, DataFrame]:
    """Compute every table and write them as one snapshot, all-or-nothing; returns the snapshot's tables as
    readers see them (:func:`kafkalog_spark.delta.read_table`).

    All log dirs are read and analysed in one job; each row says its log dir (``logDir``): several brokers' log
    dirs hold replicas of the same partitions, which must not be merged, and every analysis keys partitions by
    log dir (:mod:`kafkalog_spark.analysis.keys`). The rows are appended to every table (:data:`PARALLEL_WRITES`
    tables at once), then the manifest commit makes the snapshot visible, then the rows of runs it replaces are
    removed (see :mod:`kafkalog_spark.delta.snapshots`). A run killed anywhere leaves the previous state visible;
    running the same snapshot id again completes it. ``after_commit`` is called with the name of each Delta commit
    made, from the thread that made it (``runs`` first, the table's name, ``snapshots``, ``clean-up <table>``: that
    one also when there was nothing to remove), and with ``report`` once the report (``config.report``) is
    written: it is written last, from the committed snapshot."""
    started = (now or (lambda: dt.datetime.now(dt.UTC)))()
    snapshot_id = check_snapshot_id(config.snapshot_id or started.strftime("%Y-%m-%dT%H:%M:%SZ"))
    names = [config.table_names[name] for name in TABLES]
    done = after_commit or (lambda _: None)
    run_id = new_run_id()
    configs = topic_configs(config)  # a bad config file or value fails here, before any work
    alternative = what_if_configs(config, configs)
    log_dirs = expand_paths(config.log_dirs)  # globs and file:/dbfs:/Volumes URIs, as the readers take them
    if not log_dirs:
        raise ValueError("nightly: no log dirs to read")
    where = config.location

    def append(tables: dict[str, DataFrame], name: str) -> Callable[[], None]:
        def write() -> None:
            append_rows(tables[name], where, config.table_names[name], snapshot_id, started, run_id)
            done(name)
        return write

    def clean(table: str, replaced: bool) -> Callable[[], None]:
        def remove_other_runs() -> None:
            if replaced:  # else no other run of the snapshot was recorded: the table holds none of its rows
                clean_up(spark, where, table, snapshot_id, run_id)
            done(f"clean-up {table}")
        return remove_other_runs

    begin(spark, where, snapshot_id, started, run_id, names)  # before any table: a killed run is recorded
    done(RUNS)
    cached: list[DataFrame] = []
    try:
        tables = analyse(spark, log_dirs, started, configs, alternative, cached,
                         include_internal=config.include_internal, max_split_bytes=config.max_split_bytes)
        _in_parallel([append(tables, name) for name in DIR_TABLES])
    finally:
        for v in cached:
            v.unpersist()
    # Then each cluster's dirs together, from this run's own log_offsets rows: the data is not decoded again.
    offsets = run_rows(spark, where, config.table_names["log_offsets"], snapshot_id, run_id)
    tables = cluster_tables(spark, log_dirs, offsets, int(started.timestamp() * 1000), config.include_internal)
    _in_parallel([append(tables, name) for name in CLUSTER_TABLES])
    commit(spark, where, snapshot_id, started, run_id, names)  # only once every table's rows are in
    done(MANIFEST)
    replaced = bool(replaced_runs(spark, where, snapshot_id, run_id))
    _in_parallel([clean(table, replaced) for table in names])
    tables = {name: read_table(spark, config.location, table, snapshot_id) for name, table in zip(TABLES, names,
                                                                                                    strict=True)}
    if config.report:
        from .report import write_report

        write_report(tables, config.report)  # from the committed snapshot, as any reader of the tables sees it
        done("report")
    return tables


# Delta commits the job makes at once. Each table's write is a Spark job and a commit to a table of its own, so
# they do not conflict; on a few cores most of a small table's time is the driver's (planning, the Delta log),
# which the other writes' tasks overlap.
PARALLEL_WRITES = 4


def _in_parallel(writes: Sequence[Callable[[], None]], threads: int = PARALLEL_WRITES) -> None:
    """Run ``writes`` on ``threads`` threads, started in their order. The first failure cancels the writes not
    yet started and is raised once the started ones have ended (each ends in a whole commit or none)."""
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="kafkalog-write") as pool:
        futures = [pool.submit(write) for write in writes]
        try:
            for future in futures:
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def analyse(spark: SparkSession, log_dirs: Sequence[str], started: dt.datetime, configs: TopicConfigs,
            alternative: TopicConfigs | None, cached: list[DataFrame], *, include_internal: bool = True,
            max_split_bytes: str = "128m") -> dict[str, DataFrame]:
    """Every table over ``log_dirs``, read in one job, each row marked by its ``logDir``, as of ``started``
    (``alternative``: the forecast's what-if configs). The views it caches are appended to ``cached``: unpersist
    them once the tables are used."""
    views = read_cached_views(spark, log_dirs, include_internal, max_split_bytes, configs)
    cached += views.values()
    tables = compute(spark, views, configs, log_dirs, int(started.timestamp() * 1000), alternative)
    # partition_stats and log_dir_stats are built on segment_stats: cached, it is computed once, not per table
    cached.append(tables["segment_stats"].persist())
    return {name: _log_dir_first(tables[name]) for name in DIR_TABLES}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nightly", description="kafkalog-spark nightly job")
    p.add_argument("--config", default=None, help="TOML job configuration (see conf/nightly.toml)")
    p.add_argument("--log-dir", action="append", dest="log_dirs", help="a broker log dir (repeatable)")
    p.add_argument("--warehouse", help="directory of the Delta tables (local path or URI)")
    p.add_argument("--schema", help="catalog schema for the tables, e.g. main.kafkalog (instead of --warehouse)")
    p.add_argument("--snapshot-id", help="replace this snapshot's rows (default: the run's UTC time)")
    p.add_argument("--report", metavar="FILE.html", help="also write the HTML report of the snapshot there")
    p.add_argument("--set", dest="what_if", action="append", metavar="key=value",
                   help="what-if config the retention forecast also runs under (repeatable; replaces [configs] "
                        "what_if), e.g. --set retention.ms=86400000")
    return p


def table_location(warehouse: str | None, schema: str | None) -> TableLocation | None:
    """``--warehouse`` or ``--schema [catalog.]schema`` as a location (None: neither given), the names checked
    (:func:`check_identifier`) before Spark would fail to parse them; both given is a ValueError."""
    if not (warehouse or schema):
        return None
    catalog, _, name = (schema or "").rpartition(".")
    if schema:
        for part in (catalog, name) if catalog else (name,):
            check_identifier(part, "--schema")
    return TableLocation(warehouse=warehouse, catalog=catalog or None, schema=name or None)


def config_from_args(args: argparse.Namespace) -> NightlyConfig:
    if args.snapshot_id is not None:
        _checked("--snapshot-id", check_snapshot_id, args.snapshot_id)
    overrides: dict = {"snapshot_id": args.snapshot_id, "location": table_location(args.warehouse, args.schema),
                       "report": args.report, "what_if": tuple(args.what_if) if args.what_if else None}
    if args.log_dirs:
        overrides["log_dirs"] = tuple(args.log_dirs)
    return NightlyConfig.load(args.config, **overrides)


def main(argv: Sequence[str] | None = None) -> int:
    """spark-submit entry point: uses the session spark-submit (or Databricks) provides."""
    from .source import register

    try:
        config = config_from_args(build_parser().parse_args(argv))
    except (ValueError, OSError, tomllib.TOMLDecodeError) as e:  # a usage mistake: one line, exit 2
        print(f"nightly: error: {e}", file=sys.stderr)
        return 2
    spark = SparkSession.builder.getOrCreate()
    register(spark)
    tables = run(spark, config)
    summary(tables).show(200, truncate=False)
    return 0
