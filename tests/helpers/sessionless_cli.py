"""`kafkalog` with every way to a Spark session closed: a Spark session, a JVM gateway or the local engine's
server started in this process is written to the file named by ``$KAFKALOG_TEST_SESSION_MARKER`` and then
refused. A test runs a command through it and reads the file: a usage mistake must be caught before any of them.

Run as ``python -m tests.helpers.sessionless_cli ARGS...`` (the arguments of ``kafkalog``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

MARKER_ENV = "KAFKALOG_TEST_SESSION_MARKER"


def _refused(what: str) -> Callable:
    def refuse(*args: object, **kwargs: object) -> None:
        with open(os.environ[MARKER_ENV], "a") as marker:
            marker.write(f"{what}\n")
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


if __name__ == "__main__":
    close_session_doors()
    from kafkalog_spark.cli import main

    sys.exit(main(sys.argv[1:]))
