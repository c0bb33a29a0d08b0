"""`kafkalog stats` and `kafkalog validate`: the nightly job's logic on a local Spark session, printed.

validate is a CI gate: exit 1 when an error-severity finding exists, 0 otherwise (2: usage error), and
``--junit FILE`` writes a JUnit XML report so CI systems show the findings natively.
"""

from __future__ import annotations

import argparse
import sys
from xml.etree import ElementTree as ET

from .output import add_config_arguments, print_json, print_table, progress

STATS_COLUMNS = ["topic", "partition", "baseOffset", "isActive", "records", "batches", "logSize", "firstOffset",
                 "lastOffset", "codecMix", "rollReason"]
FINDING_COLUMNS = ["severity", "check", "topic", "partition", "baseOffset", "file", "position", "detail"]


def _session(args: argparse.Namespace):
    from ..session import local_session

    progress(f"reading {len(args.log_dirs)} log dir(s) with a local Spark session")
    return local_session("kafkalog-cli", delta=False, extra={"spark.ui.showConsoleProgress": "false"})


def run_stats(args: argparse.Namespace) -> int:
    from ..analysis.segment_stats import segment_stats
    from ..config import ConfigError, TopicConfigs
    from ..source import read_views

    try:
        configs = TopicConfigs(args.broker_config, args.topic_config)  # the roll limits of each topic
    except ConfigError as e:
        print(f"kafkalog stats: {e}", file=sys.stderr)
        return 2
    spark = _session(args)
    rows: list[dict] = []
    for log_dir in args.log_dirs:  # each on its own: replicas of one partition stay apart
        progress(f"computing segment statistics of {log_dir}")
        v = read_views(spark, log_dir, ("segments", "batches", "records", "partition_files"),
                       includeInternal=str(args.include_internal).lower())
        stats = segment_stats(v["segments"], v["batches"], v["records"], v["partition_files"], configs)
        rows += [{"logDir": log_dir} | r.asDict(recursive=True)
                 for r in stats.orderBy("topic", "partition", "baseOffset").collect()]
    if args.json:
        print_json(rows)
    else:
        print_table(rows, STATS_COLUMNS)
    return 0


def junit_xml(rows: list[dict]) -> bytes:
    """One test case per check and file; a failure per error finding, warnings and info as output."""
    suite = ET.Element("testsuite", name="kafkalog validate", tests=str(len(rows)),
                       failures=str(sum(r["severity"] == "error" for r in rows)))
    for r in rows:
        case = ET.SubElement(suite, "testcase", classname=f"{r['topic']}-{r['partition']}", name=f"{r['check']}")
        text = f"{r['file']} at byte {r['position']}: {r['detail']}"
        if r["severity"] == "error":
            ET.SubElement(case, "failure", message=r["detail"] or r["check"]).text = text
        else:
            ET.SubElement(case, "system-out").text = f"{r['severity']}: {text}"
    return ET.tostring(suite, encoding="utf-8", xml_declaration=True)


def run_validate(args: argparse.Namespace) -> int:
    from ..analysis.index_validation import validate

    spark = _session(args)
    progress("validating indexes, CRCs and files")
    findings = validate(spark, args.log_dirs, records=True, includeInternal=str(args.include_internal).lower())
    rows = [r.asDict() for r in findings.orderBy("topic", "partition", "baseOffset", "file", "position").collect()]
    spark.catalog.clearCache()
    shown = [r for r in rows if args.all or r["severity"] != "info"]
    if args.json:
        print_json(shown)
    elif shown:
        print_table(shown, FINDING_COLUMNS)
    errors = sum(r["severity"] == "error" for r in rows)
    progress(f"{errors} error(s), {sum(r['severity'] == 'warning' for r in rows)} warning(s), "
             f"{sum(r['severity'] == 'info' for r in rows)} info finding(s)")
    if args.junit:
        with open(args.junit, "wb") as f:
            f.write(junit_xml(rows))
    return 1 if errors else 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("log_dirs", nargs="+", metavar="LOGDIR", help="broker log dirs or partition dirs")
    p.add_argument("--json", action="store_true", help="JSON Lines instead of a table")
    p.add_argument("--no-internal", dest="include_internal", action="store_false",
                   help="skip internal topics (__consumer_offsets, ...)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stats", help="per-segment statistics")
    _common(p)
    add_config_arguments(p, what_if=False)  # without the topics' configs, roll reasons use Kafka's defaults
    p.set_defaults(func=run_stats)
    p = sub.add_parser("validate", help="check indexes, CRCs and files; exit 1 on error-severity findings")
    _common(p)
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report")
    p.add_argument("--all", action="store_true", help="print info findings too")
    p.set_defaults(func=run_validate)
