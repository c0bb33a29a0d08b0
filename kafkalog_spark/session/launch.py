"""The driver JVM of a local session, launched with what it prints while it starts held back.

A session with Delta starts spark-submit with ``spark.jars.packages``; resolving them through Ivy prints about 20
lines to stderr on every start (the resolution report), and 200 or more on the first (every module found and
downloaded). None of it is an answer to the user, so a quiet session holds the JVM's stderr back until its gateway
is up: then the held lines are dropped and everything after passes through as before, but for the lines of
:data:`NOISE`, which say nothing to a user on every run. If the JVM exits before its
gateway is up (a package that cannot be resolved, a bad setting), the held lines are written out, since they say
why. This is pyspark's own launch (:func:`pyspark.java_gateway.launch_gateway`, which takes the ``Popen`` arguments)
with the JVM's stderr through a pipe of ours; a session started by spark-submit or one already running is not
touched.
"""

from __future__ import annotations

import os
import threading

from pyspark import SparkConf, SparkContext

# What libraries inside Spark print straight to the JVM's stderr (no logger to quieten), the same line on every run:
# DataSketches' memory library, on its first use in a JVM (segment_stats' HLL estimates), on any Java after 11.
NOISE = frozenset({
    b"Warning: Java versions > Java 11 can only operate in restricted mode where no off-heap operations are allowed!\n",
})


class _HeldStderr:
    """The reading end of the JVM's stderr: lines held while ``holding``, written to this process's stderr (its file
    descriptor, as the JVM's own writes went) once released, but for :data:`NOISE`."""

    def __init__(self, read_fd: int) -> None:
        self._lock = threading.Lock()
        self._held: list[bytes] = []
        self._holding = True
        self._thread = threading.Thread(target=self._pump, args=(read_fd,), name="kafkalog-jvm-stderr", daemon=True)
        self._thread.start()

    def _pump(self, read_fd: int) -> None:
        with os.fdopen(read_fd, "rb", buffering=0) as pipe:
            for line in iter(pipe.readline, b""):
                with self._lock:
                    if self._holding:
                        self._held.append(line)
                        continue
                if line not in NOISE:
                    _write(line)

    def drain(self, timeout_s: float) -> None:
        """Wait for the pipe's end (the JVM has exited): every line it wrote is read."""
        self._thread.join(timeout_s)

    def release(self, show_held: bool) -> None:
        with self._lock:
            self._holding = False
            held, self._held = self._held, []
            if show_held:
                _write(b"".join(held))


def _write(data: bytes) -> None:
    while data:
        data = data[os.write(2, data):]


def launch_quietly(settings: dict[str, str]) -> None:
    """Launch this process's driver JVM for a session of ``settings`` (the builder's: master, app name and the
    rest, as ``spark.*`` keys), its start-up output held back (see the module); the session built next with the
    same settings joins it. Nothing when a JVM is already up (this process's or spark-submit's)."""
    from pyspark.java_gateway import launch_gateway

    with SparkContext._lock:
        if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
            return
        conf = SparkConf(loadDefaults=False)
        for key, value in settings.items():
            conf.set(key, value)
        read_fd, write_fd = os.pipe()
        stderr = _HeldStderr(read_fd)
        try:
            gateway = launch_gateway(conf, popen_kwargs={"stderr": write_fd})
        except BaseException:
            os.close(write_fd)
            stderr.drain(timeout_s=10)
            stderr.release(show_held=True)  # why it did not start: a package not found, a bad option
            raise
        os.close(write_fd)  # the JVM holds its own copy: the pipe ends when the JVM exits
        stderr.release(show_held=False)
        SparkContext._gateway = gateway
        SparkContext._jvm = gateway.jvm
