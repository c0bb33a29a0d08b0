"""The `kafkalog` command line. Exit codes: 0 ok, 1 findings of error severity (validate), 2 usage error."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .dump import DumpOptions, dump_log_file
from .findings import Finding


def _dump(args: argparse.Namespace) -> int:
    from .dump_files import dump_other_file

    opts = DumpOptions(args.deep_iteration, args.print_data_log, args.json)
    findings: list[Finding] = []
    out = sys.stdout
    for name in args.files:
        if not args.json:
            print(f"Dumping {name}", file=out)
        if name.endswith(".log"):
            lines = dump_log_file(name, opts, findings)
        else:
            lines = dump_other_file(name, opts, findings)
        for line in lines:
            print(line, file=out)
    for f in findings:
        if f.kind != "truncated_tail":  # dump-log prints that one on stdout, like we did above
            print(json.dumps({"kind": "finding"} | f.as_dict()) if args.json else str(f), file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kafkalog", description="Read Kafka broker log directories offline.")
    sub = parser.add_subparsers(dest="command", required=True)

    dump = sub.add_parser("dump", help="print what kafka-dump-log prints for the given files")
    dump.add_argument("files", nargs="+", metavar="FILE")
    dump.add_argument("--deep-iteration", action="store_true", help="print every record, not only batches")
    dump.add_argument("--print-data-log", action="store_true", help="print keys and values (implies deep)")
    dump.add_argument("--json", action="store_true", help="JSON Lines: one object per batch and per record")
    dump.set_defaults(func=_dump)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # argparse exits with 2 on a usage error
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
