"""`kafkalog nightly` (the nightly job on a local Spark session) and `kafkalog demo` (the same on the
sample corpus, with a readable summary)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .output import print_table, progress

DEMO_CONFIG = Path("conf") / "nightly.toml"


def run_nightly(args: argparse.Namespace) -> int:
    from ..nightly import config_from_args, run, summary
    from ..session import local_session

    config = config_from_args(args)
    progress(f"snapshot of {len(config.log_dirs)} log dir(s) into {config.location.name('<table>')}")
    spark = local_session("kafkalog-nightly")
    tables = run(spark, config)
    rows = [r.asDict() for r in summary(tables).collect()]
    print_table(rows, ["logDir", "topic", "segments", "bytes", "records", "error", "warning", "info"])
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    from ..nightly import build_parser

    for name, help_, default in (("nightly", "run the nightly job into Delta tables", None),
                                 ("demo", "the nightly job on data/samples into ./warehouse", str(DEMO_CONFIG))):
        p = sub.add_parser(name, help=help_, parents=[build_parser()], add_help=False, conflict_handler="resolve")
        p.set_defaults(func=run_nightly, config=default)
