"""`kafkalog report`: one self-contained HTML file (charts and sortable tables) of a snapshot.

    kafkalog report (--warehouse DIR | --schema [CATALOG.]SCHEMA | --config FILE) [--snapshot-id ID] [-o FILE]
    kafkalog report LOGDIR... [--broker-config ...] [--topic-config ...] [--set key=value] [--as-of T] [-o FILE]

From the Delta tables of a committed snapshot (default: the newest), or straight from log dirs through the
nightly job's analyses (nothing is written but the page). ``--set`` adds a what-if to the retention forecast.
Exit codes: 0 ok, 2 usage error, 3 internal error.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from .arguments import (
    UsageError,
    check_log_dirs,
    check_output_file,
    configs_of,
    local_path,
    parse_time,
    with_metadata_configs,
)
from .output import add_config_arguments, progress
from .runner import log_dir_session
from .runtime import EXIT_OK, add_engine_argument, choose_engine, engine_description, spark_session, usage_errors

PROG = "kafkalog report"
DEFAULT_OUTPUT = "kafkalog-report.html"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "report", help="write an HTML report (charts, sortable tables) of a snapshot or of log dirs",
        description="Write one self-contained HTML file: summary, segment timelines, retention forecast (with a "
                    "what-if), compaction and findings. From the Delta tables of a snapshot (--warehouse, --schema "
                    "or --config), or straight from LOGDIRs.")
    p.add_argument("log_dirs", nargs="*", metavar="LOGDIR", help="broker log dirs (instead of the Delta tables)")
    p.add_argument("-o", "--output", default=DEFAULT_OUTPUT, metavar="FILE.html",
                   help=f"the HTML file to write (default: {DEFAULT_OUTPUT})")
    tables = p.add_argument_group("from the Delta tables")
    tables.add_argument("--config", help="the nightly job's TOML configuration: its [output] and [tables]")
    tables.add_argument("--warehouse", help="directory of the Delta tables")
    tables.add_argument("--schema", help="catalog schema of the tables, e.g. main.kafkalog")
    tables.add_argument("--snapshot-id", help="the snapshot to report on (default: the newest committed)")
    logs = p.add_argument_group("from log dirs")
    add_config_arguments(logs)
    logs.add_argument("--as-of", metavar="ISO8601|epoch-ms", help="the report's time (default: now)")
    logs.add_argument("--include-internal", action="store_true", help="also report internal topics")
    add_engine_argument(p)
    p.add_argument("--top", type=int, default=20, metavar="N", help="topics and partitions in charts (default 20)")
    p.add_argument("--title", default="kafkalog report", help="the page's title")
    p.set_defaults(func=run)
    return p


def _from_tables(args: argparse.Namespace):
    from ..nightly import table_location
    from ..report import snapshot_tables
    from ..session.warehouse_store import warehouse_confs
    from .nightly_config import load_config_file

    if args.warehouse and args.schema:
        raise UsageError("--warehouse and --schema: give one of them, not both")
    location = table_location(args.warehouse, args.schema)
    if args.config:
        config = load_config_file(args.config, {"location": location})
        location, names = config.location, config.table_names
    elif location is None:
        raise UsageError("give LOGDIRs, or the tables' --warehouse, --schema or --config")
    else:
        names = None  # the nightly job's own names
    engine = choose_engine(args, location)
    if engine == "local":  # Sail reads the tables by their local path (a file: URI is Hadoop's name for it)
        location = dataclasses.replace(location, warehouse=local_path(location.warehouse))
    spark = spark_session(args, "kafkalog-report", delta=True, engine=engine,
                          extra=warehouse_confs(location.warehouse))
    progress(f"reading snapshot {args.snapshot_id or '(newest)'} of the tables on {engine_description(engine, args)}")
    try:
        return snapshot_tables(spark, location, args.snapshot_id, names)
    except ValueError as e:  # no such snapshot, a malformed snapshot id
        raise UsageError(f"{location.description}: {e}") from None


@contextmanager
def _from_log_dirs(args: argparse.Namespace) -> Iterator[dict]:
    """The report's tables computed from the LOGDIRs, as the nightly job computes them; the views cached for them
    are unpersisted when the block ends."""
    from pyspark.sql import functions as F

    from ..log.files import expand_paths
    from ..nightly import CLUSTER_TABLES, analysed, cluster_tables
    from ..report import REPORT_TABLES

    if args.warehouse or args.schema or args.config or args.snapshot_id:
        raise UsageError("LOGDIRs, or the tables (--warehouse, --schema, --config, --snapshot-id): not both")
    check_log_dirs(args.log_dirs, "LOGDIR", getattr(args, "remote", None))
    configs = configs_of(args)
    alternative = configs_of(args, args.what_if) if args.what_if else None
    started = dt.datetime.fromtimestamp(parse_time(args.as_of, "--as-of") / 1000, dt.UTC)
    spark = log_dir_session(args, app_name="kafkalog-report", verb="analysing")
    configs, alternative = with_metadata_configs(spark, args, configs, alternative)

    def clusters(views: dict, _replica_records: object, tables: dict) -> dict:
        # the groups' positions and open transactions, each cluster's (as the nightly job)
        return cluster_tables(spark, expand_paths(args.log_dirs), tables["log_offsets"],
                              int(started.timestamp() * 1000), views=views) if args.include_internal else {}

    with analysed(spark, args.log_dirs, started, configs, alternative,
                  include_internal=args.include_internal, more=clusters) as tables:
        shown = {name: tables[name] for name in [*REPORT_TABLES, *CLUSTER_TABLES] if name in tables}
        stamp = {"snapshotId": "(log dirs)", "snapshotTime": started}
        yield {name: df.select(*(F.lit(v).alias(k) for k, v in stamp.items()), "*") for name, df in shown.items()}


@usage_errors(PROG)
def run(args: argparse.Namespace) -> int:
    from ..report import write_report

    if args.top < 1:
        raise UsageError(f"--top {args.top}: expected 1 or more")
    check_output_file(args.output, "--output")
    if args.what_if and not args.log_dirs:
        raise UsageError("--set needs LOGDIRs: the what-if forecast of a snapshot is the nightly job's "
                         "[configs] what_if")
    with _from_log_dirs(args) if args.log_dirs else nullcontext(_from_tables(args)) as tables:
        progress("computing the report")
        path = write_report(tables, args.output, args.title, top=args.top)
    print(f"wrote {path}")
    return EXIT_OK
