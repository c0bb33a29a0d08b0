"""The `kafkalog` command line.

Exit codes (the same for every command):

    0    ok
    1    findings at or above the gate (validate --fail-on, default error)
    2    usage or environment error: a bad option, a missing path, a bad config; one line names it
    3    internal error: a bug or a Spark failure; one line, the traceback with --debug
    130  interrupted (Ctrl-C)

Global options (before or after the command): --version, --debug, --quiet, --verbose, --remote URL, and for
object stores --store-endpoint URL, --store-region REGION, --store-anonymous.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import __version__
from .commands import (
    compaction_preview,
    compare_replicas,
    dump,
    internal_state,
    nightly,
    report,
    retention_plan,
    stats,
)
from .commands.output import set_progress
from .commands.runtime import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, usage_message
from .log.object_stores import StoreOptions, configure

EPILOG = ("exit codes: 0 ok, 1 findings at or above the gate (validate), 2 usage or environment error, "
          "3 internal error, 130 interrupted")


class _Parser(argparse.ArgumentParser):
    """argparse, with its error in two lines: the usage on one line, then ``<prog>: error: <message>``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        usage = " ".join(self.format_usage().split())
        self.exit(EXIT_USAGE, f"{usage}\n{self.prog}: error: {message}\n")


def _global_options(p: argparse.ArgumentParser, top: bool) -> None:
    # Below the command the defaults are SUPPRESS: an option given before the command must survive the
    # subparser, which otherwise writes its own defaults over it.
    def default(value: object) -> object:
        return value if top else argparse.SUPPRESS

    g = p.add_argument_group("global options")
    g.add_argument("--version", action="version", version=f"kafkalog {__version__}")
    g.add_argument("--debug", action="store_true", default=default(False),
                   help="print the full traceback of an error")
    g.add_argument("-q", "--quiet", action="store_true", default=default(False), help="no progress lines")
    g.add_argument("-v", "--verbose", action="store_true", default=default(False),
                   help="progress lines even when stderr is no terminal, and Spark's warnings")
    g.add_argument("--remote", metavar="URL", default=default(None),
                   help="run on a Spark Connect server, e.g. sc://host:15002 (default: a local session)")
    s = p.add_argument_group("object stores (s3://, gs://, abfss://): credentials come from each cloud's own "
                             "environment and config files")
    s.add_argument("--store-endpoint", metavar="URL", default=default(None),
                   help="an S3-compatible server (or a GCS or Azure emulator), e.g. http://127.0.0.1:9000 "
                        "(default: AWS_ENDPOINT_URL, or the cloud's own)")
    s.add_argument("--store-region", metavar="REGION", default=default(None),
                   help="the bucket's region (default: AWS_REGION, the profile's, or the SDK's)")
    s.add_argument("--store-anonymous", action="store_true", default=default(False),
                   help="read public buckets without credentials")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kafkalog", description="Read Kafka broker log directories offline.", epilog=EPILOG,
                     allow_abbrev=False)
    _global_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (dump, stats, retention_plan, compaction_preview, internal_state, compare_replicas, nightly, report):
        command.add_parser(sub)
    for p in sub.choices.values():
        p.allow_abbrev = False  # a prefix of an option is a mistake, not a guess
        p.epilog = p.epilog or EPILOG
        _global_options(p, top=False)
    return parser


def _one_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()  # Spark's messages carry the JVM's stack trace
    return lines[0][:500] if lines else ""


def _silence_stdout() -> None:
    """After ``| head`` closed stdout: point it at devnull, or the interpreter's final flush fails again and
    prints a BrokenPipeError of its own (the recipe of Python's signal module documentation)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # stdout is no real file (captured by a test, say)
        pass


def run(args: argparse.Namespace) -> int:
    """Run the parsed command, every way it can end turned into an exit code and at most one line."""
    prog = f"kafkalog {args.command}"
    try:
        code = args.func(args)
        sys.stdout.flush()  # a reader that has gone away shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:
        if args.debug:
            raise
        message = usage_message(e)
        if message is not None:
            print(f"{prog}: error: {message}", file=sys.stderr)
            return EXIT_USAGE
        print(f"{prog}: internal error: {type(e).__name__}: {_one_line(e)} (run with --debug for the traceback)",
              file=sys.stderr)
        return EXIT_INTERNAL


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # a usage error exits 2 here, --help and --version exit 0
    if args.quiet and args.verbose:
        parser.error("--quiet and --verbose exclude each other")
    if args.remote is not None and not args.remote.startswith(("sc://", "local")):
        parser.error(f"--remote {args.remote}: expected a Spark Connect URL such as sc://host:15002")
    set_progress(args.quiet, args.verbose)
    configure(StoreOptions(args.store_endpoint, args.store_region, args.store_anonymous))
    return run(args)


def nightly_job(argv: Sequence[str] | None = None) -> int:
    """``kafkalog nightly`` with ``argv`` (default: this process's arguments): the entry point of ``jobs/nightly.py``
    under spark-submit, where it runs in the session spark-submit configured (its master, Delta's jars). Its
    progress lines are printed unless ``--quiet``: a job's log is no terminal, and wants them."""
    argv = list(sys.argv[1:] if argv is None else argv)
    quiet = any(a in ("-q", "--quiet") for a in argv)
    return main(["nightly", *([] if quiet else ["--verbose"]), *argv])


if __name__ == "__main__":
    sys.exit(main())
