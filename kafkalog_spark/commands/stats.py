"""`kafkalog stats` and `kafkalog validate`: the nightly job's logic on a local Spark session, printed.

validate is a CI gate: exit 1 when a finding at or above ``--fail-on`` (default: error) exists, 0 otherwise
(2: usage error), and ``--junit FILE`` writes a JUnit XML report (see :mod:`.junit`) so CI systems show the
checks natively.
"""

from __future__ import annotations

import argparse

from .arguments import check_output_file, check_path, configs_of, local_path, with_metadata_configs
from .junit import junit_xml, partitions_read
from .output import add_config_arguments, print_json, print_table, progress, row_dicts, table_columns
from .runner import add_fail_on, gate, run_on_log_dirs
from .runtime import EXIT_OK, add_engine_argument, usage_errors

STATS_COLUMNS = ["topic", "partition", "baseOffset", "tier", "isActive", "records", "batches", "logSize", "firstOffset",
                 "lastOffset", "maxTimestamp", "codecMix", "rollReason"]
FINDING_COLUMNS = ["severity", "check", "topic", "partition", "baseOffset", "file", "position", "detail"]


@usage_errors("kafkalog stats")
def run_stats(args: argparse.Namespace) -> int:
    from ..analysis.segment_stats import segment_stats
    from ..source import read_views

    def work(spark, configs) -> int:
        configs = with_metadata_configs(spark, args, configs)
        progress("computing segment statistics")
        v = read_views(spark, args.log_dirs, ("segments", "batches", "record_stats"),
                       includeInternal=str(args.include_internal).lower(), **remote_storage(args))
        stats = segment_stats(v["segments"], v["batches"], v["record_stats"], configs)  # by log dir: replicas apart
        rows = row_dicts(stats.orderBy("logDir", "topic", "partition", "baseOffset"))
        if args.json:
            print_json(rows)
        else:
            print_table(rows, table_columns(STATS_COLUMNS, rows))
        return EXIT_OK

    def inputs():
        remote_storage(args)
        return configs_of(args)  # each topic's roll limits

    return run_on_log_dirs(args, inputs, work)


@usage_errors("kafkalog validate")
def run_validate(args: argparse.Namespace) -> int:
    from ..analysis.index_validation import validate
    from ..session.sail import is_sail

    def inputs() -> None:
        remote_storage(args)
        if args.junit:
            check_output_file(args.junit, "--junit")

    def work(spark, _: None) -> int:
        progress("validating indexes, CRCs and files")
        findings = validate(spark, args.log_dirs, records=True, includeInternal=str(args.include_internal).lower(),
                            **remote_storage(args))
        order = ("logDir", "topic", "partition", "baseOffset", "file", "position")
        rows = [r.asDict() for r in findings.orderBy(*order).collect()]
        partitions = partitions_read(spark, args.log_dirs, args.include_internal) if args.junit else set()
        if not is_sail(spark):  # Sail caches nothing (and refuses the call)
            spark.catalog.clearCache()
        shown = [r for r in rows if args.all or r["severity"] != "info"]
        if args.json:
            print_json(shown)
        elif shown:
            print_table(shown, FINDING_COLUMNS)
        if args.junit:
            with open(local_path(args.junit) or args.junit, "wb") as f:  # a file: URI names a local file
                f.write(junit_xml(rows, partitions, args.fail_on))
        return gate(rows, args.fail_on)

    return run_on_log_dirs(args, inputs, work)


def remote_storage(args: argparse.Namespace) -> dict[str, str]:
    """The source option of ``--remote-storage`` (checked: a directory, or a URI of an object store)."""
    if args.remote_storage is None:
        return {}
    return {"remoteStorage": check_path(args.remote_storage, "--remote-storage", "dir")}


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("log_dirs", nargs="+", metavar="LOGDIR", help="broker log dirs or partition dirs")
    p.add_argument("--remote-storage", metavar="DIR",
                   help="a tiered storage's remote store in the layout of Kafka's LocalTieredStorage (a directory "
                        "or an object-store prefix): the tiered partitions' remote segments are read too, ahead of "
                        "their local ones (the `tier` column), as __remote_log_metadata in LOGDIR says")
    p.add_argument("--json", action="store_true", help="JSON Lines instead of a table")
    p.add_argument("--no-internal", dest="include_internal", action="store_false",
                   help="skip internal topics (__consumer_offsets, ...)")
    add_engine_argument(p)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stats", help="per-segment statistics")
    _common(p)
    add_config_arguments(p, what_if=False)  # without the topics' configs, roll reasons use Kafka's defaults
    p.set_defaults(func=run_stats)
    p = sub.add_parser("validate", help="check indexes, CRCs and files; exit 1 on findings at or above --fail-on")
    _common(p)
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report: one test case per check and "
                                                   "partition")
    p.add_argument("--all", action="store_true", help="print info findings too")
    add_fail_on(p, "the lowest severity that fails the run (exit 1) and its test cases (default: error)")
    p.set_defaults(func=run_validate)
