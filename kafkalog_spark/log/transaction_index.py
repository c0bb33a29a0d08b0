"""The transaction index (``.txnindex``): the aborted transactions whose ABORT marker is in this segment.

Consumers in read_committed mode fetch these to drop aborted records. Kafka's TransactionIndex writes
34-byte big-endian entries (int16 version 0, int64 producerId, firstOffset, lastOffset,
lastStableOffset), appends only, never preallocates, and ignores a partial entry at the end (its
iterator stops when fewer than 34 bytes remain). lastOffset strictly increases: Kafka refuses to append
one that does not. The file may be absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Self

import numpy as np
import pyarrow.fs as pafs

from ..findings import Finding, Severity
from .files import read_capped
from .offset_index import base_offset_for, first_violation_findings

ENTRY_SIZE = 34
CURRENT_VERSION = 0
TXN_INDEX_DTYPE = np.dtype([("version", ">i2"), ("producer_id", ">i8"), ("first_offset", ">i8"),
                            ("last_offset", ">i8"), ("last_stable_offset", ">i8")])
DEFAULT_MAX_TXN_INDEX_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """One aborted transaction: records of ``producer_id`` in [first_offset, last_offset] are aborted;
    ``last_stable_offset`` is the partition's LSO when the abort was written. ``position`` is the
    entry's byte offset in the file."""

    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    position: int


@dataclass(slots=True)
class TransactionIndex:
    """A parsed ``.txnindex`` file; ``aborted_txns`` in file order (whole entries only)."""

    path: str
    base_offset: int
    length: int = 0
    entries: np.ndarray = field(default_factory=lambda: np.empty(0, TXN_INDEX_DTYPE))
    findings: list[Finding] = field(default_factory=list)

    @classmethod
    def read(cls, path: str, filesystem: pafs.FileSystem | None = None, *, base_offset: int | None = None,
             max_bytes: int = DEFAULT_MAX_TXN_INDEX_BYTES) -> Self:
        """Read and check a transaction index; never raises. A missing file is an INFO finding: Kafka only
        creates it when a segment holds an abort marker."""
        findings: list[Finding] = []
        base = base_offset_for(path, base_offset, findings, "txnindex_bad_file_name")
        idx = cls(path, base, findings=findings)
        data = read_capped(path, filesystem, max_bytes, findings, missing_severity=Severity.INFO,
                           too_large_kind="txnindex_too_large")
        if data is not None:
            idx._parse(data)
        return idx

    @classmethod
    def from_bytes(cls, data: bytes, path: str, base_offset: int) -> Self:
        idx = cls(path, base_offset)
        idx._parse(data)
        return idx

    def _parse(self, data: bytes) -> None:
        self.length = len(data)
        n = len(data) // ENTRY_SIZE
        self.entries = np.frombuffer(data, TXN_INDEX_DTYPE, count=n)
        if len(data) % ENTRY_SIZE:
            self.findings.append(Finding(
                self.path, n * ENTRY_SIZE, "txnindex_partial_tail",
                f"{len(data) % ENTRY_SIZE} bytes after the last whole {ENTRY_SIZE}-byte entry"
                " (Kafka ignores them: an interrupted append)", Severity.WARNING))
        self.findings.extend(self.check())

    @property
    def aborted_txns(self) -> list[AbortedTxn]:
        e = self.entries
        return [AbortedTxn(*row, position=i * ENTRY_SIZE)
                for i, row in enumerate(zip(e["version"].tolist(), e["producer_id"].tolist(),
                                            e["first_offset"].tolist(), e["last_offset"].tolist(),
                                            e["last_stable_offset"].tolist(), strict=True))]

    def __len__(self) -> int:
        return len(self.entries)

    def check(self) -> list[Finding]:
        """Version 0; firstOffset <= lastOffset; lastOffset strictly increasing; and Kafka's
        TransactionIndex.sanityCheck: no lastOffset below the segment's base offset."""
        e = self.entries
        last = e["last_offset"].astype(np.int64)
        out = first_violation_findings(self.path, np.flatnonzero(e["version"] != CURRENT_VERSION), ENTRY_SIZE,
                                       "txnindex_unknown_version", f"version is not {CURRENT_VERSION}")
        out += first_violation_findings(self.path, np.flatnonzero(e["first_offset"] > e["last_offset"]),
                                        ENTRY_SIZE, "txnindex_first_after_last", "firstOffset > lastOffset")
        out += first_violation_findings(self.path, np.flatnonzero(np.diff(last) <= 0) + 1, ENTRY_SIZE,
                                        "txnindex_last_offsets_not_increasing",
                                        "lastOffset not greater than the previous entry's")
        out += first_violation_findings(self.path, np.flatnonzero(last < self.base_offset), ENTRY_SIZE,
                                        "txnindex_last_offset_below_base",
                                        f"lastOffset below the base offset {self.base_offset}"
                                        " (Kafka's sanity check fails)")
        return out

    def sanity_check(self) -> list[Finding]:
        """Same as :meth:`check` (named like the index readers' method)."""
        return self.check()

    def dump_lines(self) -> list[str]:
        """kafka-dump-log's stdout for this file, without the ``Dumping <file>`` header.

        Mirrors two quirks of Kafka's AbortedTxn: ``version()`` reads only the FIRST byte of the int16
        version, and the iterator throws on a version byte above 0, which ends dump-log's output there.
        """
        e = self.entries
        lines = []
        raw = e.view(np.uint8).reshape(-1, ENTRY_SIZE) if len(e) else np.empty((0, ENTRY_SIZE), np.uint8)
        version_bytes = raw[:, 0].astype(np.int8).tolist()
        names = ("producer_id", "first_offset", "last_offset", "last_stable_offset")
        cols = [e[name].tolist() for name in names]
        for vb, pid, first, last, lso in zip(version_bytes, *cols, strict=True):
            if vb > CURRENT_VERSION:
                break
            lines.append(f"version: {vb} producerId: {pid} firstOffset: {first} lastOffset: {last} "
                         f"lastStableOffset: {lso}")
        return lines
