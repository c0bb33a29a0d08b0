"""`kafkalog` with every way to a Spark session closed: a Spark session, a JVM gateway or the local engine's
server started in this process is recorded and then refused. A test runs a command through it and reads the
record: a usage mistake must be caught before any of them.

One process serves many commands (:class:`SessionlessCli`): pyspark's import is paid once, not per command. Each
command gets a fresh record, its own stdout and stderr, and its exit code as ``python -m kafkalog_spark.cli``
would end (an uncaught exception: its traceback and 1).

Run as ``python -m tests.helpers.sessionless_cli``: one JSON request per line on stdin (``{"argv": [...]}``), one
JSON answer per line on stdout (``{"code", "out", "err", "sessions"}``)."""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import traceback
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout

from .corpus import ROOT

_attempts: list[str] = []  # the doors knocked at by the command being run


def _refused(what: str) -> Callable:
    def refuse(*args: object, **kwargs: object) -> None:
        _attempts.append(what)
        raise RuntimeError(f"{what} was called")

    return refuse


def close_session_doors() -> None:
    """Replace each function through which a session can start (classic, Spark Connect, the JVM gateway, Sail)."""
    import pyspark.context
    import pyspark.java_gateway
    from pyspark.sql import SparkSession

    SparkSession.Builder.getOrCreate = _refused("SparkSession.Builder.getOrCreate")
    SparkSession.Builder.create = _refused("SparkSession.Builder.create")
    pyspark.java_gateway.launch_gateway = _refused("launch_gateway")
    pyspark.context.launch_gateway = _refused("launch_gateway")
    try:
        from pysail.spark import SparkConnectServer
    except ImportError:  # without the local engine there is no Sail server to start
        return
    SparkConnectServer.start = _refused("SparkConnectServer.start")


def run_command(argv: list[str]) -> dict:
    """``kafkalog argv`` in this process: its exit code, output, and the session doors it knocked at."""
    from kafkalog_spark.cli import main

    _attempts.clear()
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse's exits
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # what Python prints and returns for an uncaught exception
            traceback.print_exc()
            code = 1
    return {"code": code, "out": out.getvalue(), "err": err.getvalue(), "sessions": list(_attempts)}


def serve() -> None:
    close_session_doors()
    answers = sys.stdout
    for line in sys.stdin:
        answers.write(json.dumps(run_command(json.loads(line)["argv"])) + "\n")
        answers.flush()


class SessionlessCli:
    """A process serving ``kafkalog`` commands with every session door closed; a command that has not answered
    within ``timeout`` seconds fails the test instead of hanging it."""

    timeout = 300

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}  # tests.helpers from any cwd
        self._process = subprocess.Popen([sys.executable, "-m", "tests.helpers.sessionless_cli"], env=env,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)

    def run(self, *argv: str) -> tuple[int, str, str, list[str]]:
        """Exit code, stdout, stderr, and each attempt to start a Spark session, a JVM or the local engine."""
        self._process.stdin.write(json.dumps({"argv": list(argv)}) + "\n")
        self._process.stdin.flush()
        # one answer per request, so nothing is left buffered between them: the pipe itself says when it is ready
        if not select.select([self._process.stdout], [], [], self.timeout)[0]:
            self._process.kill()
            raise TimeoutError(f"kafkalog {' '.join(argv)}: no answer within {self.timeout} s")
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the sessionless CLI ended with exit {self._process.wait()}")
        answer = json.loads(line)
        return answer["code"], answer["out"], answer["err"], answer["sessions"]

    def close(self) -> None:
        self._process.stdin.close()
        self._process.wait(timeout=60)


if __name__ == "__main__":
    serve()
