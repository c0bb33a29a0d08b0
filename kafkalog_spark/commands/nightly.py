"""`kafkalog nightly` (the nightly job on a local Spark session) and `kafkalog demo` (the same on the
sample corpus, with a readable summary)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .arguments import UsageError, add_kafka_version
from .nightly_config import load_config
from .output import print_table, progress
from .runtime import spark_session, usage_errors

# The demo's configuration and corpus ship inside the package (kafkalog_spark/demo), so `kafkalog demo` works
# from any directory; its tables go to ./warehouse of the directory it runs in.
DEMO_CONFIG = Path(__file__).resolve().parent.parent / "demo" / "nightly.toml"
DEMO_WAREHOUSE = "warehouse"


@usage_errors("kafkalog nightly")
def run_nightly(args: argparse.Namespace) -> int:
    from ..nightly import run, summary
    from ..session import where_it_runs
    from ..session.priority import POLITE_SPARK
    from ..session.warehouse_store import warehouse_confs

    config = load_config(args)  # every path and config checked before Spark starts
    if config.polite:  # before the JVM starts: it and its Python workers inherit the priorities
        from ..session.priority import lower_priority

        for what in lower_priority():
            progress(f"polite: no {what}")
    progress(f"snapshot of {len(config.log_dirs)} log dir(s) into {config.location.description}")
    spark = spark_session(args, "kafkalog-nightly", delta=True, extra=warehouse_confs(config.location.warehouse),
                          starting=POLITE_SPARK if config.polite else None)
    progress(f"on {where_it_runs(spark)}")
    tables = run(spark, config, progress=progress)
    rows = [r.asDict() for r in summary(tables).collect()]
    print_table(rows, ["logDir", "topic", "segments", "bytes", "records", "error", "warning", "info"])
    if config.report:
        print(f"report: {config.report}")
    return 0


@usage_errors("kafkalog fleet")
def run_fleet(args: argparse.Namespace) -> int:
    from ..nightly import run_fleet, summary
    from ..nightly.fleet import NoFleet, broker_locations
    from ..session.warehouse_store import warehouse_confs

    config = load_config(args, log_dirs=False)
    if not broker_locations(config.location):  # before Spark starts
        raise UsageError(f"{config.location.description}: no broker's warehouse in it (brokers/*/, written by "
                         "`kafkalog nightly --fleet --warehouse` the same path on each broker)")
    spark = spark_session(args, "kafkalog-fleet", delta=True, extra=warehouse_confs(config.location.warehouse))
    try:
        tables = run_fleet(spark, config, progress=progress)
    except NoFleet as e:  # the brokers' warehouses hold no committed snapshot
        raise UsageError(str(e)) from e
    rows = [r.asDict() for r in summary(tables).collect()]
    print_table(rows, ["logDir", "topic", "segments", "bytes", "records", "error", "warning", "info"])
    if config.report:
        print(f"report: {config.report}")
    return 0


def _add_fleet_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fleet", help="join the latest snapshots of every broker's `nightly --fleet` runs into one "
                                     "fleet snapshot",
                       description="Reads the warehouse the brokers' `kafkalog nightly --fleet` runs write into: each "
                                   "log dir's latest committed snapshot, copied into one snapshot (fleet-<time>) with "
                                   "the replica comparison and the cluster tables computed over all of them. Reads "
                                   "no log dir.")
    p.add_argument("--config", default=None, help="TOML job configuration (its [input] log_dirs are not read)")
    p.add_argument("--warehouse", help="directory of the Delta tables (local path or URI)")
    p.add_argument("--schema", help="catalog schema for the tables, e.g. main.kafkalog (instead of --warehouse)")
    p.add_argument("--snapshot-id", help="the fleet snapshot's id (default: fleet-<UTC time>)")
    p.add_argument("--report", metavar="FILE.html", help="also write the HTML report of the fleet snapshot there")
    p.add_argument("--max-age-hours", type=float, metavar="HOURS",
                   help="leave out a broker whose latest snapshot is older than this (it stopped reporting), and "
                        "name it (default: the configuration's [output] fleet_max_age_hours, else 168: a week)")
    add_kafka_version(p, default_help="the configuration's [configs] kafka_version, else the newest")
    p.set_defaults(func=run_fleet, kafka_version=None, log_dirs=None)


def _add_job_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default=None, help="TOML job configuration (see conf/nightly.toml)")
    p.add_argument("--log-dir", action="append", dest="log_dirs", help="a broker log dir (repeatable)")
    p.add_argument("--warehouse", help="directory of the Delta tables (local path or URI)")
    p.add_argument("--schema", help="catalog schema for the tables, e.g. main.kafkalog (instead of --warehouse)")
    p.add_argument("--snapshot-id", help="replace this snapshot's rows (default: the run's UTC time)")
    p.add_argument("--report", metavar="FILE.html", help="also write the HTML report of the snapshot there")
    p.add_argument("--polite", action="store_true",
                   help="on a broker's host: low CPU and idle I/O priority, and the page cache left as found (the "
                        "segments read that were not cached are dropped from it after reading)")
    p.add_argument("--fleet", action="store_true",
                   help="one broker's run into a warehouse shared by the fleet: also store what `kafkalog fleet` "
                        "reads, and name the broker in the default snapshot id")
    p.add_argument("--remote-storage", metavar="DIR",
                   help="a tiered storage's remote store in the layout of Kafka's LocalTieredStorage (a directory or "
                        "an object-store prefix): segment_stats and index_findings cover the remote segments too")
    p.add_argument("--full", action="store_true",
                   help="decode every segment (by default a segment the previous snapshot of its log dir decoded, "
                        "unchanged since, is read back from the warehouse)")
    p.add_argument("--set", dest="what_if", action="append", metavar="key=value",
                   help="what-if config the retention forecast also runs under (repeatable; replaces [configs] "
                        "what_if), e.g. --set retention.ms=86400000")


def add_parser(sub: argparse._SubParsersAction) -> None:
    demo = {"config": str(DEMO_CONFIG), "warehouse": os.path.abspath(DEMO_WAREHOUSE),
            "report": os.path.abspath(os.path.join(DEMO_WAREHOUSE, "report.html"))}
    for name, help_, defaults in (("nightly", "run the nightly job into Delta tables", {"config": None}),
                                  ("demo", "the nightly job on the demo corpus shipped with kafkalog-spark into "
                                           "./warehouse", demo)):
        p = sub.add_parser(name, help=help_)
        _add_job_arguments(p)
        # not given: [configs] kafka_version of the file decides (else the newest)
        add_kafka_version(p, default_help="the configuration's [configs] kafka_version, else the newest")
        p.set_defaults(func=run_nightly, kafka_version=None, **defaults)
    _add_fleet_parser(sub)
