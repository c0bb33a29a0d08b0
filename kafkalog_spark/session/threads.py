"""Several Spark actions of one session at once, from threads of the driver.

On a few cores much of a small action's time is the driver's (planning, a Delta table's log and file listing), which
another action's tasks overlap. Spark runs the jobs of several threads of one session side by side, classic or over
Connect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def in_parallel(calls: Sequence[Callable[[], T]], threads: int, name: str = "kafkalog") -> list[T]:
    """The results of ``calls``, run on ``threads`` threads, started in their order. The first failure cancels the
    calls not yet started and is raised once the started ones have ended."""
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name) as pool:
        futures = [pool.submit(call) for call in calls]
        try:
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()
            raise
