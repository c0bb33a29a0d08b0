"""`kafkalog consumer-positions`, `kafkalog open-transactions`, `kafkalog catalog-checks`: what the internal
topics say, offline, checked against the data on disk; each a CI gate like validate.

    kafkalog consumer-positions /var/lib/kafka/data --fail-on warning
    kafkalog open-transactions /var/lib/kafka/data --now 2026-11-25T06:00:00Z --json
    kafkalog catalog-checks /var/lib/kafka/data-1 /var/lib/kafka/data-2

The LOGDIRs are one broker's log dirs, analysed together (its `__consumer_offsets` partitions may sit in another
dir than the partitions they commit for). Exit codes: 0 ok, 1 a finding at or above ``--fail-on`` (default
error), 2 usage error, 3 internal error.
"""

from __future__ import annotations

import argparse

from .arguments import configs_of, parse_time, with_metadata_configs
from .output import add_config_arguments, iso_utc, print_json, print_table, progress
from .runner import add_fail_on, gate, refused_as_usage, run_on_log_dirs
from .runtime import add_engine_argument, usage_errors
from .stats import FINDING_COLUMNS

COLUMNS = {
    "consumer-positions": ["group", "topic", "partition", "committedOffset", "logStartOffset", "logEndOffset",
                           "lag", "position"],
    "open-transactions": ["topic", "partition", "producerId", "transactionalId", "firstOffset", "startTimestamp",
                          "timeoutMs", "status", "reason", "lastStableOffset"],
    "catalog-checks": ["topic", "partition", "dirKind", "topicId", "catalogTopicId", "status", "dir"],
}


# command -> its table (kafkalog_spark.analysis.state_checks)
TABLES = {"consumer-positions": "consumer_positions", "open-transactions": "open_transactions",
          "catalog-checks": "catalog_checks"}
_DATA_VIEWS = ["records", "batches", "segments"]  # and partition_files: the data partitions' log_offsets


def _log_offsets(configs, now_ms: int):
    """log_offsets of one cluster's dirs, decoded from their data views."""
    from ..analysis.log_offsets import log_offsets

    def of(_dirs: list[str], views: dict):
        return log_offsets(views["records"], views["batches"], views["segments"], views["partition_files"],
                           configs, now_ms)
    return of


def run(args: argparse.Namespace) -> int:
    return usage_errors(f"kafkalog {args.command}")(_run)(args)


def _run(args: argparse.Namespace) -> int:
    from ..analysis.state_checks import FINDINGS_ORDER, ORDER
    from ..nightly.pipeline import state_tables_by_cluster

    table = TABLES[args.command]

    def inputs():
        return parse_time(args.now, "--now"), configs_of(args)

    def work(spark, checked) -> int:
        now_ms, configs = checked
        configs = with_metadata_configs(spark, args, configs)
        progress(f"{args.command} as of {iso_utc(now_ms)}")

        def analysed() -> tuple[list[dict], list[dict]]:
            # each cluster on its own, as the nightly job's cluster tables (the rows printed without clusterId)
            data = [] if table == "catalog_checks" else _DATA_VIEWS
            rows, findings = state_tables_by_cluster(spark, args.log_dirs, [table], now_ms,
                                                     _log_offsets(configs, now_ms), data)[table]
            rows = rows.drop("clusterId").orderBy(*ORDER[table])
            return ([r.asDict(recursive=True) for r in rows.collect()],
                    [r.asDict() for r in findings.orderBy(*FINDINGS_ORDER).collect()])

        rows, found = refused_as_usage(analysed)  # an analysis refusing its inputs: a usage mistake, one line
        if args.json:
            print_json(rows)
            print_json({"kind": "finding"} | f for f in found)
        else:
            print_table(rows, COLUMNS[args.command])
            if found:
                print()
                print_table(found, FINDING_COLUMNS)
        return gate(found, args.fail_on)

    return run_on_log_dirs(args, inputs, work)


_HELP = {
    "consumer-positions": "each group's committed offset against its partition's log start and end",
    "open-transactions": "transactions open in the data partitions, and which hang",
    "catalog-checks": "partition dirs against the cluster metadata's topics",
}


def add_parser(sub: argparse._SubParsersAction) -> None:
    for name, text in _HELP.items():
        p = sub.add_parser(name, help=text, description=f"{text[0].upper()}{text[1:]}, offline, from the log dirs "
                                                        "of one broker; exit 1 on findings at or above --fail-on.")
        p.add_argument("log_dirs", nargs="+", metavar="LOGDIR", help="one broker's log dirs")
        add_config_arguments(p, what_if=False)
        add_engine_argument(p)
        p.add_argument("--now", metavar="ISO8601|epoch-ms", help="the time to judge at (default: now)")
        p.add_argument("--json", action="store_true", help="JSON Lines: the rows, then the findings "
                                                           '("kind": "finding")')
        add_fail_on(p, "the lowest severity that fails the run (exit 1; default: error)")
        p.set_defaults(func=run)
