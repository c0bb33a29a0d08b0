"""A run that yields to the broker on its host: low CPU priority and idle I/O priority for this process and every
process it starts afterwards (the Spark JVM and its Python workers inherit both), and a small memory footprint."""

from __future__ import annotations

import ctypes
import os
import platform
import sys

NICENESS = 10  # added to the process's own (never lowered)
# The Spark a polite run starts for itself: a 512 MiB driver heap (Spark's default is 1 GiB), and Python workers that
# end with their task rather than wait for the next: Spark keeps a daemon per kind of Python worker (the tasks', and
# each of the Python data source's planning steps), each keeping its idle workers, 13 alive at once in a run over
# 1 GB on two cores, against 10 (docs/benchmarks.md, "Memory of a polite run"). Workers started without the daemon
# (spark.python.use.daemon=false) were fewer still, 3, but each one started afresh must connect back to the JVM
# within a timeout, and a niced one on a busy host did not: the run failed ("Python worker failed to connect back").
POLITE_SPARK = {"spark.driver.memory": "512m", "spark.python.worker.reuse": "false"}
_IOPRIO_SET = {"x86_64": 251, "aarch64": 30}  # the ioprio_set system call's number
_IOPRIO_GET = {"x86_64": 252, "aarch64": 31}
_IOPRIO_WHO_PROCESS, _IOPRIO_CLASS_IDLE, _IOPRIO_CLASS_SHIFT = 1, 3, 13


def lower_priority() -> list[str]:
    """Lower this process's CPU priority (``nice`` +:data:`NICENESS`) and make its I/O class idle (Linux's
    ``ioprio_set``, as ``ionice -c 3``: it waits while other processes use the disk, under the schedulers that
    honour I/O classes, BFQ and CFQ). Start the Spark session after it. Returns what could not be done."""
    os.nice(NICENESS)
    number = _IOPRIO_SET.get(platform.machine())
    if not sys.platform.startswith("linux") or number is None:
        return ["idle I/O priority (Linux on x86_64 or aarch64 only)"]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(number, _IOPRIO_WHO_PROCESS, 0, _IOPRIO_CLASS_IDLE << _IOPRIO_CLASS_SHIFT) != 0:
        return [f"idle I/O priority ({os.strerror(ctypes.get_errno())})"]
    return []


def io_priority_class() -> int | None:
    """This process's I/O priority class (3: idle), or None where it cannot be asked."""
    number = _IOPRIO_GET.get(platform.machine())
    if not sys.platform.startswith("linux") or number is None:
        return None
    value = ctypes.CDLL(None, use_errno=True).syscall(number, _IOPRIO_WHO_PROCESS, 0)
    return None if value < 0 else value >> _IOPRIO_CLASS_SHIFT
