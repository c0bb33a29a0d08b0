"""Reading a broker's segments without evicting what its consumers read: the page cache left as found.

A run on a broker host reads every new segment once. The pages of a file range that were not in the page cache
before a read are dropped after it (``posix_fadvise(POSIX_FADV_DONTNEED)``); pages that were there (a consumer's
hot tail) are left alone. Which pages were there is asked with ``mincore(2)`` on a mapping of the range that
touches no page. Local files on Linux only: elsewhere (an object store, a platform without ``mincore``) nothing
is asked and nothing dropped.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_PROT_READ, _MAP_SHARED = 1, 1
READ_AHEAD = 1 << 20  # what the kernel may read past a range's end (its read-ahead): dropped too, if not cached


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux") or not hasattr(os, "posix_fadvise"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                          ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    return libc


_LIBC = _libc()


def uncached_ranges(fd: int, start: int, end: int) -> list[tuple[int, int]] | None:
    """The page-aligned ``(offset, length)`` ranges of bytes [start, end) of the open file ``fd`` that are not in
    the page cache; None when it cannot be told."""
    if _LIBC is None:
        return None
    page = mmap.PAGESIZE
    first = start - start % page
    length = end - first
    if length <= 0:
        return []
    address = _LIBC.mmap(None, length, _PROT_READ, _MAP_SHARED, fd, first)
    if address in (None, ctypes.c_void_p(-1).value):
        return None
    try:
        pages = (length + page - 1) // page
        vector = ctypes.create_string_buffer(pages)
        if _LIBC.mincore(address, length, vector) != 0:
            return None
        resident = vector.raw
    finally:
        _LIBC.munmap(address, length)
    ranges: list[tuple[int, int]] = []
    for i in range(pages):
        if not resident[i] & 1:
            offset = first + i * page
            if ranges and ranges[-1][0] + ranges[-1][1] == offset:
                ranges[-1] = (ranges[-1][0], ranges[-1][1] + page)
            else:
                ranges.append((offset, page))
    return ranges


@contextmanager
def left_as_found(path: str, start: int = 0, end: int | None = None) -> Iterator[None]:
    """Read bytes [start, end) of the local file ``path`` inside the block: the pages of that range that were
    not cached before it (and of the :data:`READ_AHEAD` after it) are dropped from the page cache after it (a file
    that cannot be opened: nothing done, its reader reports it)."""
    try:  # never blocks: a FIFO named like a segment opens at once, and is left to its reader to report
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        yield
        return
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            yield
            return
        size = status.st_size
        ranges = uncached_ranges(fd, start, size if end is None else min(end + READ_AHEAD, size))
        yield
        for offset, length in ranges or ():
            os.posix_fadvise(fd, offset, length, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
