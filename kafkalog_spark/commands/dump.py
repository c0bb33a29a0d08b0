"""`kafkalog dump`: what kafka-dump-log prints for the given files, or JSON Lines."""

from __future__ import annotations

import argparse
import json
import sys

from ..dump import DumpOptions, dump_log_file, dump_other_file
from ..findings import Finding
from .inputs import check_paths
from .runtime import usage_errors


@usage_errors("kafkalog dump")
def run(args: argparse.Namespace) -> int:
    check_paths(args.files, "FILE")  # all of them before the first line: no half dump, then an error
    opts = DumpOptions(args.deep_iteration, args.print_data_log, args.json)
    findings: list[Finding] = []
    for name in args.files:
        if not args.json:
            print(f"Dumping {name}")
        lines = dump_log_file(name, opts, findings) if name.endswith(".log") else dump_other_file(name, opts, findings)
        for line in lines:
            print(line)
    for f in findings:
        if f.kind != "truncated_tail":  # dump-log prints that one on stdout, and so did we
            print(json.dumps({"kind": "finding"} | f.as_dict()) if args.json else str(f), file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dump", help="print what kafka-dump-log prints for the given files")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--deep-iteration", action="store_true", help="print every record, not only batches")
    p.add_argument("--print-data-log", action="store_true", help="print keys and values (implies deep)")
    p.add_argument("--json", action="store_true", help="JSON Lines: one object per batch and per record")
    p.set_defaults(func=run)
