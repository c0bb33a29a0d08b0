"""`kafkalog compaction-preview`: what the log cleaner would do now to each compacted partition, offline.

    kafkalog compaction-preview /var/lib/kafka/data --broker-config server.properties \\
        --topic-config topics.ini --now 2026-11-21T12:00:00Z --set min.cleanable.dirty.ratio=0.1 --json

Topic configs are resolved once by :class:`kafkalog_spark.config.TopicConfigs` (Kafka's defaults,
the broker's server.properties, the internal topics' own configs, the per-topic file, then ``--set``); a topic
is previewed when its cleanup.policy contains compact. ``--json`` prints one JSON object per partition
(JSON Lines), with ``--segments`` also one per segment (``"kind": "segment"``). Exit codes: 0 ok, 2 usage or
configuration error, 3 internal error.
"""

from __future__ import annotations

import argparse

from .arguments import configs_of, parse_time, with_metadata_configs
from .output import add_config_arguments, iso_utc, print_json, print_table, progress, table_columns
from .runner import refused_as_usage, run_on_log_dirs
from .runtime import add_engine_argument, usage_errors

TABLE_COLUMNS = ["topic", "partition", "cleanOrder", "wouldClean", "cleanReason", "dirtyRatio", "firstDirtyOffset",
                 "firstUncleanableOffset", "uncleanableReason", "endOffset", "recordsRemoved", "bytesRemoved",
                 "tombstonesRemoved", "tombstonesKept", "offsetMapFull", "newDeleteHorizon"]
SEGMENT_COLUMNS = ["topic", "partition", "baseOffset", "section", "inPass", "cleanedGroupBaseOffset", "records",
                   "recordsRemoved", "logSize", "bytesRemoved", "tombstonesRemoved", "tombstonesKept",
                   "markersRemoved", "markersKept"]


@usage_errors("kafkalog compaction-preview")
def run(args: argparse.Namespace) -> int:
    def inputs():  # every config layer validated before Spark starts
        return parse_time(args.now, "--now"), configs_of(args, list(args.what_if))

    def work(spark, checked) -> int:
        from ..analysis.compaction import preview_log_dirs

        now_ms, configs = checked
        configs = with_metadata_configs(spark, args, configs)
        preview = refused_as_usage(lambda: preview_log_dirs(
            spark, list(args.log_dirs), configs, now_ms, simulate_all=args.simulate_all, include_records=False,
            topics=args.topics or None))
        progress(f"previewing the log cleaner as of {iso_utc(now_ms)}")
        order = ("logDir", "topic", "partition")
        partitions = [r.asDict(recursive=True) for r in preview.partitions.orderBy(*order).collect()]
        segments = ([r.asDict(recursive=True) for r in preview.segments.orderBy(*order, "baseOffset").collect()]
                    if args.segments else [])
        preview.unpersist()
        if args.json:
            print_json(partitions)
            print_json({"kind": "segment"} | s for s in segments)
        else:
            # the delete horizon a pass would stamp on tombstones: a point in time, printed as one
            print_table([p | {"newDeleteHorizon": p["newDeleteHorizonMs"]} for p in partitions],
                        table_columns(TABLE_COLUMNS, partitions))
            if segments:
                print()
                print_table(segments, table_columns(SEGMENT_COLUMNS, segments))
        return 0

    return run_on_log_dirs(args, inputs, work)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compaction-preview", help="what the log cleaner would do now to each compacted partition",
                       description="Preview the log cleaner's (of --kafka-version) next pass over every "
                                   "compacted partition: first dirty/uncleanable offsets, dirty ratio, whether "
                                   "and in which order it cleans, what each pass removes.")
    p.add_argument("log_dirs", nargs="+", metavar="LOGDIR", help="broker log dirs or partition dirs")
    add_config_arguments(p)
    p.add_argument("--now", metavar="ISO8601|epoch-ms", help="the clean time to assume (default: now)")
    p.add_argument("--topic", action="append", dest="topics", metavar="TOPIC", help="only this topic (repeatable)")
    p.add_argument("--simulate-all", action="store_true",
                   help="also simulate the pass for compacted partitions the cleaner would not pick now")
    p.add_argument("--segments", action="store_true", help="also print one row per segment")
    p.add_argument("--json", action="store_true", help="JSON Lines: one object per partition")
    add_engine_argument(p)
    p.set_defaults(func=run)
