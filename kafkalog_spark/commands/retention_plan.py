"""`kafkalog retention-plan`: which segments the broker's retention would delete, offline, and why.

    kafkalog retention-plan LOGDIR... [--broker-config server.properties] [--topic-config FILE]
                            [--as-of ISO8601|epoch-ms] [--set key=value ...] [--topics a,b] [--json]

Configs are layered as the broker does (see kafkalog_spark.config); ``--set`` is a what-if on top of them,
printed next to the current plan. Exit codes: 0 ok, 2 usage error (a bad config names the option, key and
value), 3 internal error.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from .arguments import configs_of, parse_time, with_metadata_configs
from .output import add_config_arguments, iso_utc, print_json, print_table, several_log_dirs, table_columns
from .runner import run_on_log_dirs
from .runtime import add_engine_argument, usage_errors

PROG = "kafkalog retention-plan"
TABLE_COLUMNS = ["topic", "partition", "baseOffset", "size", "largestTimestamp", "deletable", "rule", "reason",
                 "eligibleAt"]
WHAT_IF_TABLE_COLUMNS = ["whatIfDeletable", "whatIfRule", "whatIfReason"]


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "retention-plan", help="predict which segments retention deletes (time, size, log start offset rules)",
        description="Predict, offline, which segments a Kafka broker's retention deletes and the new log start "
                    "offsets, with the broker's own rules. --set key=value shows a what-if next to the current plan.")
    p.add_argument("log_dirs", nargs="+", metavar="LOGDIR", help="broker log dirs or partition dirs")
    add_config_arguments(p)
    p.add_argument("--as-of", metavar="ISO8601|epoch-ms", help="when retention runs (default: now)")
    p.add_argument("--topics", metavar="T1,T2", help="only these topics")
    p.add_argument("--include-internal", action="store_true", help="also plan internal topics")
    p.add_argument("--json", action="store_true", help="JSON Lines: one object per segment")
    add_engine_argument(p)
    p.set_defaults(func=run)
    return p


def parse_as_of(text: str | None) -> int:
    return parse_time(text, "--as-of")


def _summary(rows: list[dict], what_if: bool, out) -> None:
    several_dirs = several_log_dirs(rows)  # then each line names its log dir too
    partitions: dict[tuple[str, str, int], list[dict]] = {}
    remote: dict[tuple[str, str, int], list[dict]] = {}
    for r in rows:  # a replica in each of several log dirs is a log of its own; a tiered one has a remote tier too
        (remote if r.get("tier") == "remote" else partitions).setdefault(
            (r["logDir"], r["topic"], r["partition"]), []).append(r)
    print(file=out)
    for (log_dir, topic, partition), rs in partitions.items():
        first = rs[0]
        gone = [r for r in rs if r["deletable"]]
        name = f"{log_dir}/{topic}-{partition}" if several_dirs else f"{topic}-{partition}"
        # a tiered partition's local rules move its local log start offset (the remote tier's line, its log start)
        start, label = ((min(r["baseOffset"] for r in rs), "local log start offset") if first["remoteStorage"]
                        else (first["logStartOffset"], "log start offset"))
        line = (f"{name}: {len(gone)} of {len(rs)} segment(s) deletable, "
                f"{sum(r['size'] for r in gone)} of {sum(r['size'] for r in rs)} bytes; {label} "
                f"{start} -> {first['newLogStartOffset']}")
        if first["rollsActiveSegment"]:
            line += " (the broker rolls a new active segment first)"
        if what_if:
            alt = [r for r in rs if r["whatIfDeletable"]]
            line += (f"; what-if: {len(alt)} segment(s), {sum(r['size'] for r in alt)} bytes, log start offset "
                     f"-> {first['whatIfNewLogStartOffset']}")
        print(line, file=out)
        if remote.get((log_dir, topic, partition)):
            rem = remote[(log_dir, topic, partition)]
            gone = [r for r in rem if r["deletable"]]
            print(f"    remote tier: {len(gone)} of {len(rem)} segment(s) deletable, "
                  f"{sum(r['size'] for r in gone)} of {sum(r['size'] for r in rem)} bytes; log start offset -> "
                  f"{rem[0]['newLogStartOffset']}", file=out)
        notes = list(dict.fromkeys(n for r in rs for n in (r["assumptions"] or [])))
        for n in notes:
            print(f"    assumption: {n}", file=out)


@usage_errors(PROG)
def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout

    def inputs():  # every config layer validated before Spark starts
        as_of = parse_as_of(args.as_of)
        return as_of, configs_of(args), configs_of(args, args.what_if) if args.what_if else None

    def work(spark, checked) -> int:
        from ..analysis.retention import retention_plan, retention_what_if
        from ..source import read_views

        as_of, configs, what_if_configs = checked
        configs, what_if_configs = with_metadata_configs(spark, args, configs, what_if_configs)
        # the views as the nightly job reads them (a KRaft snapshot's batches restate the metadata log: left out)
        read = read_views(spark, args.log_dirs, ("segments", "batches", "partition_files"),
                          includeInternal=str(args.include_internal).lower(), topics=args.topics or None)
        views = (read["segments"], read["batches"], read["partition_files"])
        # the remote tier, as __remote_log_metadata says: which local segments of a tiered topic are copied
        remote = read_views(spark, args.log_dirs, ["remote_log_segments"])["remote_log_segments"]
        if what_if_configs is not None:
            plan = retention_what_if(*views, configs, what_if_configs, as_of, remote_segments=remote)
        else:
            plan = retention_plan(*views, configs, as_of, remote_segments=remote)
        rows = [r.asDict() for r in plan.orderBy("logDir", "topic", "partition", "baseOffset").collect()]
        if args.json:
            print_json(rows, out)
            return 0
        what_if = ", ".join(args.what_if)
        print(f"retention plan as of {iso_utc(as_of)}" + (f"; what-if: {what_if}" if what_if else ""), file=out)
        table = [r | {"eligibleAt": r["eligibleAtMs"]} for r in rows]  # print_table shows times as ISO 8601
        tiers = ["tier"] if any(r["tier"] == "remote" for r in rows) else []  # a tiered topic's remote segments
        print_table(table, table_columns(TABLE_COLUMNS + tiers + (WHAT_IF_TABLE_COLUMNS if what_if else []), rows),
                    out)
        _summary(rows, bool(what_if), out)
        return 0

    return run_on_log_dirs(args, inputs, work, app_name="kafkalog-retention-plan")
