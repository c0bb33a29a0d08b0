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
from dataclasses import dataclass, field, replace
from functools import reduce
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .config import TopicConfigs
from .delta import TableLocation, check_snapshot_id, read_snapshot, write_snapshot
from .kafka_versions import LATEST, KafkaVersion, parse_kafka_version
from .log.files import expand_paths

VIEWS = ("segments", "batches", "records", "index", "partition_files")
TABLES = ("segment_stats", "partition_stats", "log_dir_stats", "index_findings", "retention_plan",
          "compaction_preview", "compaction_preview_segments", "topic_configs")


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

    @classmethod
    def load(cls, path: str | None = None, **overrides) -> NightlyConfig:
        """From a TOML file (sections [input], [output], [snapshot], [configs], [tables]), then overrides."""
        doc = tomllib.loads(Path(path).read_text()) if path else {}
        base = Path(path).parent if path else Path.cwd()  # relative paths are relative to the file

        def rel(p: str | None) -> str | None:
            if p is None or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", p) or Path(p).is_absolute():
                return p  # a URI (s3://, file:, dbfs:/Volumes/...) or an absolute path: as given
            return os.path.normpath(base / p)

        inp, out, cfg = doc.get("input", {}), doc.get("output", {}), doc.get("configs", {})
        warehouse = out.get("warehouse")
        # an overriding location (--warehouse, --schema) replaces the file's, which then may name none
        location = overrides.pop("location", None) or TableLocation(
            warehouse=rel(warehouse) if warehouse else None, catalog=out.get("catalog"), schema=out.get("schema"))
        config = cls(
            log_dirs=tuple(rel(p) for p in inp.get("log_dirs", [])),
            location=location,
            include_internal=inp.get("include_internal", True),
            snapshot_id=doc.get("snapshot", {}).get("id") or None,
            table_names={t: doc.get("tables", {}).get(t, t) for t in TABLES},
            broker_config=rel(cfg.get("broker_properties")),
            topic_config=rel(cfg.get("topic_overrides")),
            max_split_bytes=str(inp.get("max_split_bytes", "128m")),
            kafka_version=_kafka_version(cfg.get("kafka_version")),
        )
        return replace(config, **{k: v for k, v in overrides.items() if v is not None})


def _kafka_version(value: object) -> KafkaVersion:
    """[configs] kafka_version: "3.9" or "4.x" (3.9.2, 4, 4.4.0 ... too); absent: the newest."""
    if value is None:
        return LATEST
    try:
        return parse_kafka_version(str(value))
    except ValueError as e:
        raise ValueError(f"[configs] kafka_version: {e}") from None


def read_views(spark: SparkSession, config: NightlyConfig, log_dirs: Sequence[str]) -> dict[str, DataFrame]:
    """The source's views over ``log_dirs``, cached: every analysis reads them again."""
    from .source import read_views as source_views

    views = source_views(spark, log_dirs, VIEWS, includeInternal=str(config.include_internal).lower(),
                         maxSplitBytes=config.max_split_bytes)
    return {name: df.persist() for name, df in views.items()}


def topic_configs(config: NightlyConfig) -> TopicConfigs:
    """The effective configs of every topic, resolved once: Kafka's defaults < server.properties < topic overrides,
    by the rules of ``config.kafka_version``. Every analysis takes this one object."""
    return TopicConfigs(config.broker_config, config.topic_config, kafka_version=config.kafka_version)


def compute(spark: SparkSession, views: dict[str, DataFrame], configs: TopicConfigs, log_dirs: Sequence[str],
            now_ms: int) -> dict[str, DataFrame]:
    from .analysis.compaction import compaction_preview
    from .analysis.index_validation import index_findings
    from .analysis.partition_stats import log_dir_stats, partition_stats
    from .analysis.retention import retention_plan
    from .analysis.segment_stats import segment_stats
    from .analysis.topic_configs import topic_configs as topic_configs_table
    from .analysis.topic_configs import topics_of

    compaction = compaction_preview(views["records"], views["batches"], views["segments"], views["partition_files"],
                                    configs, now_ms, include_records=False)
    segments = segment_stats(views["segments"], views["batches"], views["records"], views["partition_files"],
                             configs)
    partitions = partition_stats(segments, views["partition_files"])
    return {
        "segment_stats": segments,
        "partition_stats": partitions,
        "log_dir_stats": log_dir_stats(partitions, views["segments"]),
        "index_findings": index_findings(spark, views, log_dirs=log_dirs),
        "retention_plan": retention_plan(views["segments"], views["batches"], views["partition_files"], configs,
                                         now_ms),
        "compaction_preview": compaction.partitions,
        "compaction_preview_segments": compaction.segments,
        "topic_configs": topic_configs_table(spark, configs, topics_of(views["segments"])),
    }


def summary(tables: dict[str, DataFrame]) -> DataFrame:
    """Per log dir and topic: segments, bytes, records, and findings by severity."""
    keys = ["logDir", "topic"]
    per_topic = tables["partition_stats"].groupBy(*keys).agg(
        F.sum("segments").alias("segments"), F.sum("logBytes").alias("bytes"), F.sum("records").alias("records"))
    findings = (tables["index_findings"].groupBy(*keys).pivot("severity", ["error", "warning", "info"]).count()
                .fillna(0))
    return per_topic.join(findings, keys, "left").fillna(0).orderBy(*keys)


def _with_log_dir(df: DataFrame, log_dir: str) -> DataFrame:
    return df if "logDir" in df.columns else df.select(F.lit(log_dir).alias("logDir"), "*")


def run(spark: SparkSession, config: NightlyConfig, now: Callable[[], dt.datetime] | None = None
        ) -> dict[str, DataFrame]:
    """Compute every table and write it as one snapshot; returns the snapshot's tables as written.

    Each log dir is analysed on its own (a ``logDir`` column says which): several brokers' log dirs hold
    replicas of the same partitions, which must not be merged."""
    started = (now or (lambda: dt.datetime.now(dt.UTC)))()
    snapshot_id = check_snapshot_id(config.snapshot_id or started.strftime("%Y-%m-%dT%H:%M:%SZ"))
    cached: list[DataFrame] = []
    per_dir: list[dict[str, DataFrame]] = []
    try:
        configs = topic_configs(config)  # a bad config file or value fails here, before any work
        for log_dir in expand_paths(config.log_dirs):  # globs and file:/dbfs:/Volumes URIs, as the readers take them
            views = read_views(spark, config, [log_dir])
            cached += views.values()
            tables = compute(spark, views, configs, [log_dir], int(started.timestamp() * 1000))
            per_dir.append({name: _with_log_dir(df, log_dir) for name, df in tables.items()})
        for name in TABLES:
            df = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), (t[name] for t in per_dir))
            write_snapshot(df, config.location, config.table_names[name], snapshot_id, started)
    finally:
        for v in cached:
            v.unpersist()
    return {name: read_snapshot(spark, config.location, config.table_names[name], snapshot_id) for name in TABLES}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nightly", description="kafkalog-spark nightly job")
    p.add_argument("--config", default=None, help="TOML job configuration (see conf/nightly.toml)")
    p.add_argument("--log-dir", action="append", dest="log_dirs", help="a broker log dir (repeatable)")
    p.add_argument("--warehouse", help="directory of the Delta tables (local path or URI)")
    p.add_argument("--schema", help="catalog schema for the tables, e.g. main.kafkalog (instead of --warehouse)")
    p.add_argument("--snapshot-id", help="replace this snapshot's rows (default: the run's UTC time)")
    return p


def config_from_args(args: argparse.Namespace) -> NightlyConfig:
    overrides: dict = {"snapshot_id": args.snapshot_id}
    if args.log_dirs:
        overrides["log_dirs"] = tuple(args.log_dirs)
    if args.warehouse or args.schema:
        catalog, _, schema = (args.schema or "").rpartition(".")
        overrides["location"] = TableLocation(warehouse=args.warehouse, catalog=catalog or None,
                                              schema=schema or None)
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
