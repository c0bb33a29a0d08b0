"""A `.log` file read as Kafka's FileRecords does: entry by entry, in bounded chunks.

Memory stays proportional to the chunk size (plus one batch, when a batch is larger than a chunk), never
to the file. The framing rules follow Kafka's FileLogInputStream: fewer than 17 bytes, or fewer than
the declared size, at the end of the file is a partial tail (dump-log: "Found N invalid bytes at the
end"); a size field below 14 is corrupt. Where Kafka would stop, we report a finding and look for the
next v2 batch whose CRC checks out, so the rest of the file is still read.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow.fs as pafs

from ..findings import Finding, Severity
from ..format.compiled_scanners import (
    LOG_OVERHEAD,
    MIN_ENTRY_SIZE,
    SCAN_CORRUPT_SIZE,
    SCAN_PARTIAL,
    find_v2_candidates,
    scan_entries,
)
from ..format.crc import crc32c
from .files import open_read

DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_BATCH_BYTES = 256 * 1024 * 1024
# Bytes read past the end of a range for the entry that straddles it (a larger one is read on its own)
END_SLACK = 1024 * 1024
# Bytes read at a time while looking for the next valid batch after corrupt framing: at least a batch header
# more than the 60 bytes each read overlaps the next by, whatever the chunk size.
RESYNC_READ_BYTES = 64 * 1024


@dataclass(slots=True)
class Chunk:
    """Whole entries read from one file: ``positions`` are relative to ``buf``; ``base`` is buf[0]'s
    position in the file."""

    raw: bytes | memoryview
    base: int
    positions: np.ndarray
    sizes: np.ndarray
    magics: np.ndarray

    @property
    def buf(self) -> np.ndarray:
        return np.frombuffer(self.raw, np.uint8)

    def __len__(self) -> int:
        return len(self.positions)


def _free_store(stores: list[np.ndarray], n: int) -> np.ndarray:
    """A buffer of at least ``n`` bytes from ``stores`` that nothing else refers to, or a new one (kept when
    there are fewer than three)."""
    for store in stores:
        # references: the list, the loop variable and getrefcount's argument
        if len(store) >= n and sys.getrefcount(store) <= 3:
            return store
    store = np.empty(n, np.uint8)
    if len(stores) < 3:
        stores.append(store)
    return store


def _read_into(f: pafs.NativeFile, store: np.ndarray, n: int, pos: int) -> int:
    """Read up to ``n`` bytes at ``pos`` into ``store``; fewer only at the end of the file."""
    f.seek(pos)
    got = 0
    while got < n:
        k = f.readinto(store[got:n])
        if k <= 0:
            break
        got += k
    return got


def require_positive(**values: int) -> None:
    """Sizes and caps that must be at least one byte (a zero chunk would read nothing, forever); a ValueError
    names the first that is not."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number of bytes, at least 1, not {value!r}")


class FileRecords:
    """Reads the entries of one `.log` file (read-only) between byte positions ``start`` and ``end``.

    An entry belongs to the range when it starts in [start, end); the last one may extend past ``end``.
    Findings (truncated tails, corrupt framing, skipped regions) are appended to ``findings``.
    """

    def __init__(self, path: str, filesystem: pafs.FileSystem | None = None, *,
                 chunk_bytes: int = DEFAULT_CHUNK_BYTES, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
                 limit: int | None = None, size: int | None = None):
        require_positive(chunk_bytes=chunk_bytes, max_batch_bytes=max_batch_bytes)
        self.path = path
        # Kafka's FileRecords.slice(0, limit): the file seen as its first `limit` bytes (dump-log --max-bytes)
        self.limit = limit
        self.filesystem = filesystem
        self.size = size  # the file's size as listed: an object store then opens it without a request
        self.chunk_bytes = chunk_bytes
        self.max_batch_bytes = max_batch_bytes
        self.valid_bytes = 0  # bytes of whole entries seen in the last pass (dump-log's validBytes)

    def chunks(self, findings: list[Finding], start: int = 0, end: int | None = None) -> Iterator[Chunk]:
        """The entries starting in [start, end), a chunk at a time.

        Chunks are read into a few buffers reused in turn (fresh memory costs a page fault per 4 KiB, more
        than the copy from the page cache); a buffer is reused only once nothing refers to its previous
        chunk's bytes any more, so a chunk stays valid as long as it is referenced.
        """
        with open_read(self.path, self.filesystem, size=self.size) as f:
            size = f.size() if self.limit is None else min(f.size(), self.limit)
            end = size if end is None else min(end, size)
            pos = start
            self.valid_bytes = 0
            stores: list[np.ndarray] = []
            while pos < end:
                # the last entry may extend past ``end``: read up to END_SLACK beyond it, not a whole chunk
                want = min(self.chunk_bytes, size - pos, end - pos + END_SLACK)
                store = _free_store(stores, want)
                data = memoryview(store)[:_read_into(f, store, want, pos)]
                del store
                buf = np.frombuffer(data, np.uint8)
                positions, sizes, magics, k, stop, status = scan_entries(buf, 0, end - pos)
                if k:
                    self.valid_bytes += int(sizes[:k].sum())
                    yield Chunk(data, pos, positions[:k], sizes[:k], magics[:k])
                at = pos + int(stop)
                pos = at
                if status == SCAN_CORRUPT_SIZE:
                    size_field = int.from_bytes(data[stop + 8:stop + 12], "big", signed=True)
                    findings.append(self._corrupt_size(size_field, at))
                    pos = self._resync(f, at, size, findings)
                elif status == SCAN_PARTIAL:
                    total = self._declared_size(f, at)
                    if size - at < 17 or at + total > size:
                        findings.append(self._tail(at, size))
                        return
                    if total < LOG_OVERHEAD + MIN_ENTRY_SIZE:  # a chunk too small to hold the size field
                        findings.append(self._corrupt_size(total - LOG_OVERHEAD, at))
                        pos = self._resync(f, at, size, findings)
                    elif k == 0:  # one entry larger than a chunk
                        pos = at + total
                        if total > self.max_batch_bytes:
                            findings.append(self._oversized(at, total))
                        else:
                            self.valid_bytes += total
                            yield self._single(f.read_at(total, at), at)
                del data, buf

    # -- framing problems -------------------------------------------------------------------------

    def _declared_size(self, f: pafs.NativeFile, at: int) -> int:
        head = f.read_at(LOG_OVERHEAD, at)
        if len(head) < LOG_OVERHEAD:
            return 1 << 62
        return LOG_OVERHEAD + int.from_bytes(head[8:12], "big", signed=True)

    def _oversized(self, at: int, total: int) -> Finding:
        return Finding(self.path, at, "oversized_batch",
                       f"batch of {total} bytes exceeds the cap of {self.max_batch_bytes} bytes; skipped")

    @staticmethod
    def _single(data: bytes, at: int) -> Chunk:
        return Chunk(data, at, np.zeros(1, np.int64), np.array([len(data)], np.int64),
                     np.array([data[16]], np.uint8).view(np.int8))

    def _tail(self, at: int, size: int) -> Finding:
        return Finding(self.path, at, "truncated_tail",
                       f"Found {size - at} invalid bytes at the end of {self.path.rsplit('/', 1)[-1]}",
                       Severity.WARNING)

    def _corrupt_size(self, size_field: int, at: int) -> Finding:
        return Finding(self.path, at, "corrupt_size",
                       f"Found record size {size_field} smaller than minimum record overhead (14)",
                       Severity.ERROR)

    def _resync(self, f: pafs.NativeFile, at: int, size: int, findings: list[Finding]) -> int:
        """Find the next position after ``at`` holding a v2 batch with a valid CRC; report the gap."""
        pos = at + 1
        while pos < size:
            data = f.read_at(min(max(self.chunk_bytes, RESYNC_READ_BYTES), size - pos), pos)
            buf = np.frombuffer(data, np.uint8)
            for rel in find_v2_candidates(buf, 0, len(buf)):
                rel = int(rel)
                total = LOG_OVERHEAD + int.from_bytes(data[rel + 8:rel + 12], "big")
                if crc32c(memoryview(data)[rel + 21:rel + total]) == int.from_bytes(data[rel + 17:rel + 21], "big"):
                    findings.append(self._skipped(f, at, pos + rel))
                    return pos + rel
            if pos + len(data) >= size:
                break
            pos += len(data) - 60  # candidates need 61 bytes: overlap the next read
        findings.append(self._skipped(f, at, size))
        return size

    def _skipped(self, f: pafs.NativeFile, at: int, until: int) -> Finding:
        region = f.read_at(min(until - at, 1 << 20), at)
        zeros = region.count(0) == len(region)
        what = "zero-filled" if zeros else "unreadable"
        resumed = f"resumed at the next valid batch at {until}" if until < f.size() else "no valid batch follows"
        return Finding(self.path, at, "skipped_region",
                       f"{until - at} {what} bytes skipped from {at} to {until}; {resumed}", Severity.ERROR)
