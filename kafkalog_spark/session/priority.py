"""A run that yields to the broker on its host: low CPU priority and idle I/O priority for this process and every
process it starts afterwards (the Spark JVM and its Python workers inherit both)."""

from __future__ import annotations

import ctypes
import os
import platform
import sys

NICENESS = 10  # added to the process's own (never lowered)
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
