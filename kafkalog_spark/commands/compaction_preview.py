"""`kafkalog compaction-preview`: what the log cleaner would do now to each compacted partition, offline.

    kafkalog compaction-preview /var/lib/kafka/data --broker-config server.properties \\
        --topic-config topics.ini --now 2026-11-21T12:00:00Z --set min.cleanable.dirty.ratio=0.1 --json

Topic configs are resolved once by :class:`kafkalog_spark.config.TopicConfigs` (Kafka's defaults,
the broker's server.properties, the internal topics' own configs, the per-topic file, then ``--set``); a topic
is previewed when its cleanup.policy contains compact. ``--json`` prints one JSON object per partition
(JSON Lines), with ``--segments`` also one per segment (``"kind": "segment"``). Exit codes: 0 ok, 2 usage or
configuration error.
"""

from __future__ import annotations

import argparse
import sys

from .output import add_config_arguments, parse_time, print_json, print_table, progress

TABLE_COLUMNS = ["topic", "partition", "cleanOrder", "wouldClean", "cleanReason", "dirtyRatio", "firstDirtyOffset",
                 "firstUncleanableOffset", "uncleanableReason", "endOffset", "recordsRemoved", "bytesRemoved",
                 "tombstonesRemoved", "tombstonesKept", "offsetMapFull"]
SEGMENT_COLUMNS = ["topic", "partition", "baseOffset", "section", "inPass", "cleanedGroupBaseOffset", "records",
                   "recordsRemoved", "logSize", "bytesRemoved", "tombstonesRemoved", "tombstonesKept",
                   "markersRemoved", "markersKept"]


def run(args: argparse.Namespace) -> int:
    from ..config import ConfigError, TopicConfigs

    try:
        now_ms = parse_time(args.now, "--now")
        # every layer validated before Spark starts
        configs = TopicConfigs(args.broker_config, args.topic_config, list(args.what_if))
    except (ConfigError, ValueError, OSError) as e:
        print(f"kafkalog compaction-preview: {e}", file=sys.stderr)
        return 2

    from ..analysis.compaction import preview_log_dirs
    from ..session import local_session

    progress(f"reading {len(args.log_dirs)} log dir(s) with a local Spark session")
    spark = local_session("kafkalog-cli", delta=False, extra={"spark.ui.showConsoleProgress": "false"})
    try:
        preview = preview_log_dirs(spark, list(args.log_dirs), configs, now_ms, simulate_all=args.simulate_all,
                                   include_records=False, topics=args.topics or None)
    except (ConfigError, ValueError) as e:
        print(f"kafkalog compaction-preview: {e}", file=sys.stderr)
        return 2
    progress("previewing the log cleaner")
    partitions = [r.asDict(recursive=True) for r in preview.partitions.orderBy("topic", "partition").collect()]
    segments = ([r.asDict(recursive=True) for r in preview.segments.orderBy("topic", "partition", "baseOffset")
                 .collect()] if args.segments else [])
    preview.unpersist()
    if args.json:
        print_json(partitions)
        print_json({"kind": "segment"} | s for s in segments)
    else:
        print_table(partitions, TABLE_COLUMNS)
        if segments:
            print()
            print_table(segments, SEGMENT_COLUMNS)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compaction-preview", help="what the log cleaner would do now to each compacted partition",
                       description="Preview the Kafka 3.9 log cleaner's next pass over every compacted partition: "
                                   "first dirty/uncleanable offsets, dirty ratio, whether and in which order it "
                                   "cleans, what each pass removes.")
    p.add_argument("log_dirs", nargs="+", metavar="LOGDIR", help="broker log dirs or partition dirs")
    add_config_arguments(p)
    p.add_argument("--now", metavar="ISO8601|epoch-ms", help="the clean time to assume (default: now)")
    p.add_argument("--topic", action="append", dest="topics", metavar="TOPIC", help="only this topic (repeatable)")
    p.add_argument("--simulate-all", action="store_true",
                   help="also simulate the pass for compacted partitions the cleaner would not pick now")
    p.add_argument("--segments", action="store_true", help="also print one row per segment")
    p.add_argument("--json", action="store_true", help="JSON Lines: one object per partition")
    p.set_defaults(func=run)
