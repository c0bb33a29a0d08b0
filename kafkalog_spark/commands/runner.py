"""The sequence every command that reads LOGDIRs shares, in one place: the log dirs checked, then the command's
own inputs (configs, times: everything a mistake can be found in before Spark starts), then the engine chosen and
said, the session started, the command's work on it; and the gate of the commands that end on findings.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TypeVar

from pyspark.sql import SparkSession

from .arguments import UsageError, check_log_dirs
from .junit import SEVERITY_RANK
from .output import progress
from .runtime import EXIT_FINDINGS, EXIT_OK, choose_engine, engine_description, spark_session

Inputs = TypeVar("Inputs")


def run_on_log_dirs(args: argparse.Namespace, inputs: Callable[[], Inputs],
                    work: Callable[[SparkSession, Inputs], int], *, app_name: str = "kafkalog-cli",
                    verb: str = "reading") -> int:
    """``work(spark, inputs())`` for ``args.log_dirs``: the log dirs checked first, then ``inputs`` (the command's
    other checks), all before the engine is chosen and the session starts; returns ``work``'s exit code."""
    check_log_dirs(args.log_dirs, "LOGDIR", getattr(args, "remote", None))
    checked = inputs()
    return work(log_dir_session(args, app_name=app_name, verb=verb), checked)


def log_dir_session(args: argparse.Namespace, *, app_name: str = "kafkalog-cli", verb: str = "reading"
                    ) -> SparkSession:
    """The session for ``args.log_dirs``, once they and the rest were checked: the engine chosen (``--engine``),
    said on one progress line, started."""
    engine = choose_engine(args)
    progress(f"{verb} {len(args.log_dirs)} log dir(s) with {engine_description(engine, args)}")
    return spark_session(args, app_name, engine=engine)


def refused_as_usage(analysis: Callable[[], Inputs]) -> Inputs:
    """``analysis()``, a ValueError of an analysis refusing its inputs (named in its message) made a usage error."""
    try:
        return analysis()
    except ValueError as e:
        raise UsageError(str(e)) from e


def add_fail_on(p: argparse.ArgumentParser, help_text: str) -> None:
    p.add_argument("--fail-on", choices=list(SEVERITY_RANK), default="error", help=help_text)


def gate(findings: Sequence[dict], fail_on: str) -> int:
    """The findings counted on a progress line, and the exit code: 1 when one is at or above ``fail_on``."""
    counts = {s: sum(f["severity"] == s for f in findings) for s in SEVERITY_RANK}
    progress(f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info finding(s)")
    threshold = SEVERITY_RANK[fail_on]
    return EXIT_FINDINGS if any(SEVERITY_RANK[f["severity"]] >= threshold for f in findings) else EXIT_OK
