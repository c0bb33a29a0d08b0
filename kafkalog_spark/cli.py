"""The `kafkalog` command line. Exit codes: 0 ok, 1 error-severity findings (validate), 2 usage error."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .commands import compaction_preview, dump, nightly, retention_plan, stats


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kafkalog", description="Read Kafka broker log directories offline.")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (dump, stats, retention_plan, compaction_preview, nightly):
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)  # argparse exits with 2 on a usage error
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
