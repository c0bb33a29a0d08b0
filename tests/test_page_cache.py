"""A run on a broker's host leaves the page cache as it found it, and runs at low CPU and idle I/O priority.

The pages of a segment that were not cached before a read are dropped after it; those that were (a consumer's hot
tail) stay. Checked with the kernel's own answer (mincore) on files of a real broker's corpus, read through the
`kafkalog` source in Spark's Python workers; and the priorities, as a child process started after them sees them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafkalog_spark.log.page_cache import left_as_found, uncached_ranges
from kafkalog_spark.source import read_views

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mincore and posix_fadvise: Linux")


def _uncached(path: Path) -> int:
    """How many bytes of ``path`` are not in the page cache (whole pages)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return sum(length for _, length in uncached_ranges(fd, 0, os.fstat(fd).st_size))
    finally:
        os.close(fd)


def _drop(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


@pytest.fixture
def big_segment(tmp_path: Path) -> Path:
    """A copy of a real segment, grown to several MiB by repeating its batches (a disk file, not tmpfs)."""
    from tests.helpers.corpus import BROKER

    part = tmp_path / "log" / "big-0"
    part.mkdir(parents=True)
    source = max(BROKER.glob("*/*.log"), key=lambda p: p.stat().st_size)
    data = source.read_bytes()
    (part / "00000000000000000000.log").write_bytes(data * max(1, (4 << 20) // max(1, len(data))))
    with open(part / "00000000000000000000.log", "rb+") as f:
        os.fsync(f.fileno())
    shutil.copy(BROKER / "meta.properties", tmp_path / "log" / "meta.properties")
    if _uncached(part / "00000000000000000000.log") == 0:
        _drop(part / "00000000000000000000.log")
    if _uncached(part / "00000000000000000000.log") == 0:
        pytest.skip("this file system keeps every page cached (tmpfs?)")
    return part / "00000000000000000000.log"


def test_pages_read_that_were_not_cached_are_dropped_and_cached_ones_stay(big_segment: Path) -> None:
    size = big_segment.stat().st_size
    _drop(big_segment)
    assert _uncached(big_segment) >= size - 4096
    with left_as_found(str(big_segment)):
        big_segment.read_bytes()
        assert _uncached(big_segment) == 0  # read: in the cache
    assert _uncached(big_segment) >= size - 4096  # dropped again, as found
    with open(big_segment, "rb") as f:  # a consumer reads the first half
        f.read(size // 2)
    cached_before = size - _uncached(big_segment)
    with left_as_found(str(big_segment)):
        big_segment.read_bytes()
    assert size - _uncached(big_segment) >= cached_before - 4096 > 0  # the consumer's pages stay


def test_the_source_leaves_the_page_cache_as_found_with_drop_cache(spark, big_segment: Path) -> None:
    log_dir = str(big_segment.parent.parent)
    _drop(big_segment)
    rows = read_views(spark, log_dir, ["batches"], dropCache="true")["batches"].count()
    assert rows > 0 and _uncached(big_segment) >= big_segment.stat().st_size - 4096
    read_views(spark, log_dir, ["batches"])["batches"].count()  # without it: the pages stay cached
    assert _uncached(big_segment) < big_segment.stat().st_size // 2


def test_lower_priority_reaches_the_processes_started_after_it() -> None:
    code = ("import os, subprocess, sys\n"
            "from kafkalog_spark.session.priority import io_priority_class, lower_priority\n"
            "before = os.nice(0)\n"
            "print(lower_priority())\n"
            "child = 'import os; from kafkalog_spark.session.priority import io_priority_class as c; "
            "print(os.nice(0), c())'\n"
            "print(before, subprocess.run([sys.executable, '-c', child], capture_output=True, text=True).stdout)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    missing, (before, child_nice, child_class) = out[0], out[1].split()
    assert int(child_nice) == min(19, int(before) + 10)
    if missing == "[]":
        assert child_class == "3"  # idle


def test_a_polite_session_has_a_small_driver_heap_and_python_workers_that_end_with_their_task(tmp_path: Path) -> None:
    """The settings a polite run starts its Spark with (POLITE_SPARK) reach the JVM it starts: the heap's maximum
    as the JVM itself reports it, and two tasks run one after the other in Python workers of their own (a worker
    is not kept for the next task)."""
    code = ("import os\n"
            "from kafkalog_spark.session import local_session\n"
            "from kafkalog_spark.session.priority import POLITE_SPARK\n"
            "spark = local_session('polite', master='local[1]', delta=False, starting=POLITE_SPARK)\n"
            "heap = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory()\n"
            "pids = spark.sparkContext.parallelize(range(2), 2).map(lambda _: os.getpid()).collect()\n"
            "print(heap, *pids)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    heap, first, second = (int(v) for v in out.stdout.split()[-3:])
    assert 256 << 20 < heap <= 512 << 20, heap  # Spark's default driver heap is 1 GiB
    assert first != second, "the first task's Python worker ran the second task too"
