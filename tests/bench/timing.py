"""Repeat-and-keep-the-best timing on a shared, noisy machine.

Rates use the process's CPU time (user + system) of the fastest repetition: every decoder runs on one
thread, so CPU seconds are "seconds on one core", and unlike wall-clock time they do not grow while
other jobs hold the CPU. Wall-clock times are kept alongside (``cpu_per_wall`` ~1.0 on a quiet machine).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of each repetition (and the CPU seconds of the process alongside)."""

    wall: list[float]
    cpu: list[float]
    records: int
    batches: int
    bytes: int  # file bytes covered by one repetition

    @property
    def best(self) -> float:
        """CPU seconds of the fastest repetition."""
        return min(self.cpu)

    @property
    def median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def best_wall(self) -> float:
        return min(self.wall)

    @property
    def cpu_per_wall(self) -> float:
        """~1.0 when the decoder ran on one core; above 1 it used helper threads."""
        return sum(self.cpu) / sum(self.wall)

    @property
    def records_per_s(self) -> float:
        return self.records / self.best

    @property
    def mb_per_s(self) -> float:
        return self.bytes / 1e6 / self.best

    def as_dict(self) -> dict[str, object]:
        return {"records": self.records, "batches": self.batches, "bytes": self.bytes,
                "cpu_s": [round(c, 4) for c in self.cpu], "wall_s": [round(w, 4) for w in self.wall],
                "best_cpu_s": round(self.best, 4), "median_cpu_s": round(self.median, 4),
                "best_wall_s": round(self.best_wall, 4), "cpu_per_wall": round(self.cpu_per_wall, 3),
                "records_per_s": round(self.records_per_s), "mb_per_s": round(self.mb_per_s, 1),
                "records_per_wall_s": round(self.records / self.best_wall)}


def measure(fn: Callable[[], tuple[int, int]], nbytes: int, reps: int) -> Timing:
    """Time ``fn`` (returning (records, batches)) ``reps`` times; every run must return the same counts."""
    walls: list[float] = []
    cpus: list[float] = []
    counts: tuple[int, int] | None = None
    for _ in range(reps):
        c0, t0 = time.process_time(), time.perf_counter()
        got = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        if counts is not None and got != counts:
            raise AssertionError(f"repetitions disagree: {got} != {counts}")
        counts = got
    assert counts is not None
    return Timing(walls, cpus, counts[0], counts[1], nbytes)
