"""Whether the native bridges may be used: ``KAFKALOG_SPARK_NATIVE=0`` turns them all off for the process,
:func:`python_only` for one thread (the differential tests run both paths in one process)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

ENABLED = os.environ.get("KAFKALOG_SPARK_NATIVE", "1") != "0"


class _Switch(threading.local):
    on = True


_switch = _Switch()


@contextmanager
def python_only() -> Iterator[None]:
    """Within the block, this thread decodes with the Python path only (as ``KAFKALOG_SPARK_NATIVE=0``)."""
    before = _switch.on
    _switch.on = False
    try:
        yield
    finally:
        _switch.on = before


def native_on() -> bool:
    """False within :func:`python_only`."""
    return _switch.on
