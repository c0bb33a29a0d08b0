"""What every command shares at run time: how a mistake ends (one line, exit 2) and how Spark starts.

Exit codes of every command: 0 ok; 1 findings at or above the gate (``validate``); 2 a usage or environment
error (a bad option, a missing path, a bad config), named in one line; 3 an internal error (a bug, or Spark
failing), one line unless ``--debug``; 130 interrupted.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tomllib
from collections.abc import Callable
from typing import Any

from .inputs import UsageError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

_PATH_ERRORS = (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError)

Command = Callable[..., int]  # run(args: argparse.Namespace, ...) -> exit code


def usage_message(e: BaseException) -> str | None:
    """The one line for a usage or environment error; None when ``e`` is not one (then it is a bug)."""
    from ..config import ConfigError

    if isinstance(e, UsageError | ConfigError):
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


def spark_session(args: argparse.Namespace, app_name: str, *, delta: bool = False):
    """The commands' one way to a Spark session: local, or ``--remote`` Spark Connect. Unless ``--verbose``,
    Spark's logging and its console progress bar are off (the bar has no newline of its own and glued
    itself onto the first line of the output): the session sets both from ``quiet`` (a Connect server
    keeps its own)."""
    from ..session import local_session

    return local_session(app_name, delta=delta, remote=getattr(args, "remote", None),
                         quiet=not getattr(args, "verbose", False))
