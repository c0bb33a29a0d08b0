"""What every command shares at run time: how a mistake ends (one line, exit 2) and how Spark starts.

Exit codes of every command: 0 ok; 1 findings at or above the gate (``validate``); 2 a usage or environment
error (a bad option, a missing path, a bad config), named in one line; 3 an internal error (a bug, or Spark
failing), one line unless ``--debug``; 130 interrupted.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tomllib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .arguments import UsageError

if TYPE_CHECKING:
    from ..delta import TableLocation

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

_PATH_ERRORS = (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError)

Command = Callable[..., int]  # run(args: argparse.Namespace, ...) -> exit code


def usage_message(e: BaseException) -> str | None:
    """The one line for a usage or environment error; None when ``e`` is not one (then it is a bug)."""
    from ..config import ConfigError
    from ..log.object_stores import ObjectStoreError

    if isinstance(e, UsageError | ConfigError | ObjectStoreError):
        message = str(e)
    elif isinstance(e, tomllib.TOMLDecodeError):
        message = f"invalid TOML: {e}"
    elif isinstance(e, _PATH_ERRORS):
        message = f"{e.filename}: {e.strerror}" if e.filename else str(e)
    else:
        return None
    return " ".join(line.strip() for line in message.splitlines())  # one line, whatever the parser said


def usage_errors(prog: str) -> Callable[[Command], Command]:
    """Make a command's run function end a usage error in one ``<prog>: error: ...`` line and exit 2 (a
    traceback only with ``--debug``), also when it is called without the CLI's ``main``."""

    def wrap(run: Command) -> Command:
        @functools.wraps(run)
        def checked(args: argparse.Namespace, *rest: Any, **options: Any) -> int:
            try:
                return run(args, *rest, **options)
            except Exception as e:
                message = usage_message(e)
                if message is None or getattr(args, "debug", False):
                    raise
                command = getattr(args, "command", None)  # demo shares nightly's run function
                print(f"{f'kafkalog {command}' if command else prog}: error: {message}", file=sys.stderr)
                return EXIT_USAGE

        return checked

    return wrap


# --engine auto picks the local engine below this many bytes of files under the LOGDIRs. Measured on a 2-core
# machine (README, Benchmarks): the local engine answers stats and validate on the 2.3 MB sample log dir in
# seconds where a Spark session first takes tens of seconds to start; it keeps no cache (each check decodes
# again), so past some size Spark's cached views win.
AUTO_LOCAL_BYTES = 64 * 1024 * 1024
ENGINES = ("auto", "local", "spark")


def add_engine_argument(p: argparse.ArgumentParser) -> None:
    """``--engine``, for the read-only commands whose analyses the local engine runs."""
    p.add_argument("--engine", choices=ENGINES, default="auto",
                   help="where the analyses run: 'local' in this process with Sail, no JVM (pysail, in the [spark] "
                        "and [local] extras); 'spark' a local Spark session (or --remote); 'auto' (the default) local "
                        f"when the LOGDIRs hold less than {AUTO_LOCAL_BYTES // 2**20} MiB of files (or the report's "
                        "tables are a warehouse on this machine), Sail is installed and there is no --remote, else "
                        "spark")


def input_bytes(paths: list[str], limit: int | None = None) -> int | None:
    """The bytes of the files under ``paths`` (globs expanded), counting up to just past ``limit``; None when a
    path is not on this machine's file system (a URI of another one), where only Spark reads it."""
    from ..log.files import expand_paths
    from .arguments import local_path

    total = 0
    for path in expand_paths(paths):
        local = local_path(path)
        if local is None:
            return None
        for root, _dirs, files in os.walk(local):
            for name in files:
                try:
                    total += os.stat(os.path.join(root, name), follow_symlinks=False).st_size
                except OSError:
                    continue  # a file gone or unreadable is the source's finding, not the size's problem
                if limit is not None and total > limit:
                    return total
    return total


def choose_engine(args: argparse.Namespace, tables: TableLocation | None = None) -> str:
    """``local`` or ``spark`` for a command's ``--engine`` (commands without the option run on Spark): over the
    LOGDIRs, or over the Delta ``tables`` of a snapshot when given. A choice that cannot work is a usage error,
    raised before anything starts."""
    from ..session import classic_session_running, sail
    from .arguments import local_path

    engine = getattr(args, "engine", "spark")
    remote = getattr(args, "remote", None)
    # Sail reads Delta tables by path on this machine (deletion vectors, column mapping and checkpoints included),
    # a snapshot's tables in a second or two where a Spark session with Delta takes tens of seconds to start; a
    # catalog's tables, or a warehouse in an object store with its credentials in Spark's settings, are Spark's
    on_this_machine = tables is None or (tables.by_path and local_path(tables.warehouse) is not None)
    if engine == "local":
        if not on_this_machine:
            raise UsageError("--engine local reads the tables of a warehouse on this machine's file system: "
                             f"{tables.description} is read with Spark (--engine spark)")
        if remote is not None:
            raise UsageError("--engine local runs in this process: it cannot be combined with --remote")
        if not sail.available():
            raise UsageError("--engine local needs Sail (pysail): pip install 'kafkalog-spark[local]'")
        if classic_session_running():
            raise UsageError("--engine local: this process already runs a classic Spark session, and a process "
                             "holds either that or Spark Connect sessions (use --engine spark)")
        return "local"
    # auto: a classic session already running here (a notebook's, a test's) is paid for, and excludes this engine
    if engine == "spark" or remote is not None or not sail.available() or classic_session_running():
        return "spark"
    if tables is not None:
        return "local" if on_this_machine else "spark"
    size = input_bytes(list(getattr(args, "log_dirs", []) or []), AUTO_LOCAL_BYTES)
    return "local" if size is not None and size < AUTO_LOCAL_BYTES else "spark"


def engine_description(engine: str, args: argparse.Namespace) -> str:
    """How a progress line names where the work runs."""
    if engine == "local":
        return "the local engine (Sail, in this process)"
    return "a Spark Connect session" if getattr(args, "remote", None) is not None else "a local Spark session"


def spark_session(args: argparse.Namespace, app_name: str, *, delta: bool = False, engine: str | None = None,
                  extra: dict[str, str] | None = None, starting: dict[str, str] | None = None):
    """The commands' one way to a Spark session: local, or ``--remote`` Spark Connect, or on the local engine
    (``engine``, or the command's ``--engine`` as :func:`choose_engine` resolves it; with ``delta``, only when
    ``engine`` says so: Sail reads Delta tables, but the commands that write them write with Spark). Unless
    ``--verbose``, Spark's logging and its console progress bar are off (the bar has no newline of its own and
    glued itself onto the first line of the output): the session sets both from ``quiet`` (a Connect server keeps
    its own). ``extra`` and ``starting``: more settings (:func:`~kafkalog_spark.session.local_session`)."""
    from ..session import local_session

    quiet = not getattr(args, "verbose", False)
    if (engine or ("spark" if delta else choose_engine(args))) == "local":
        from ..session.sail import sail_session

        return sail_session(quiet=quiet)
    return local_session(app_name, delta=delta, remote=getattr(args, "remote", None), quiet=quiet, extra=extra,
                         starting=starting)
