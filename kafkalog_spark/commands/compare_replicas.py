"""`kafkalog compare-replicas`: the replicas of each partition on several brokers, side by side, from the brokers'
log dirs: where each follower would truncate when it fetches from its leader again, the records that drops, and
how many of them it had acknowledged.

    kafkalog compare-replicas /copies/broker-1/data /copies/broker-2/data /copies/broker-3/data
    kafkalog compare-replicas --json 'gs://backups/2026-11-28/broker-*/data'

Exit codes: 0 when every replica is consistent or only behind its leader, 1 when one diverges (a finding of the
catalogue's replica_* kinds at or above ``--fail-on``, default error), 2 usage error, 3 internal error.
"""

from __future__ import annotations

import argparse

from .arguments import configs_of, with_metadata_configs
from .output import add_config_arguments, print_json, print_table, progress, row_dicts
from .runner import add_fail_on, gate, refused_as_usage, run_on_log_dirs
from .runtime import add_engine_argument, usage_errors
from .stats import FINDING_COLUMNS

COLUMNS = ["topic", "partition", "brokerId", "status", "logEndOffset", "highWatermark", "latestEpoch",
           "leaderBrokerId", "truncationOffset", "droppedRecords", "acknowledgedRecordsLost", "mismatches"]


@usage_errors("kafkalog compare-replicas")
def run(args: argparse.Namespace) -> int:
    def inputs():
        return configs_of(args)

    def work(spark, checked) -> int:
        from ..analysis.replicas.replica_comparison import ORDER
        from ..analysis.state_checks import FINDINGS_ORDER
        from ..nightly.pipeline import replica_table, replica_views

        configs = with_metadata_configs(spark, args, checked)
        progress("comparing the replicas of each partition")

        def analysed() -> tuple[list[dict], list[dict]]:
            views = replica_views(spark, args.log_dirs, args.include_internal)
            rows, findings = replica_table(spark, args.log_dirs, views, configs)
            return (row_dicts(rows.orderBy(*ORDER)),
                    [r.asDict() for r in findings.orderBy(*FINDINGS_ORDER).collect()])

        rows, found = refused_as_usage(analysed)
        if not args.all:  # a partition read on one broker only has nothing to compare
            rows = [r for r in rows if r["replicasRead"] > 1]
        if args.json:
            print_json(rows)
            print_json({"kind": "finding"} | f for f in found)
        else:
            print_table(rows, COLUMNS)
            if found:
                print()
                print_table(found, FINDING_COLUMNS)
        return gate(found, args.fail_on)

    return run_on_log_dirs(args, inputs, work)


def add_parser(sub: argparse._SubParsersAction) -> None:
    text = "each partition's replicas on several brokers against their leader"
    p = sub.add_parser("compare-replicas", help=text,
                       description=f"Compare {text}, offline: where each would truncate on rejoining, the records "
                                   "it drops and how many it had acknowledged; exit 1 when one diverges.")
    p.add_argument("log_dirs", nargs="+", metavar="LOGDIR", help="the log dirs of the brokers to compare")
    add_config_arguments(p, what_if=False)
    add_engine_argument(p)
    p.add_argument("--no-internal", dest="include_internal", action="store_false",
                   help="skip internal topics, the cluster metadata included (each partition's leader is then the "
                        "replica with the highest leader epoch)")
    p.add_argument("--all", action="store_true", help="also partitions read on one broker only")
    p.add_argument("--json", action="store_true", help='JSON Lines: the rows, then the findings ("kind": "finding")')
    add_fail_on(p, "the lowest severity that fails the run (exit 1; default: error)")
    p.set_defaults(func=run)
