"""Producer state snapshots (``NNNN.snapshot``): the idempotence/transaction state at offset NNNN.

The broker writes one on roll and shutdown so it need not replay the whole log on restart; the name is
the next offset (exclusive). Kafka's ProducerStateManager.writeSnapshot lays it out as: int16 version
(1), uint32 CRC-32C over bytes [6, EOF), int32 entry count, then 46-byte big-endian entries (producerId
int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta int32, timestamp int64,
coordinatorEpoch int32, currentTxnFirstOffset int64, -1 = none). On load Kafka validates the layout,
the version and the CRC, in that order, and discards a snapshot that fails (it rebuilds state from the
log instead); here each failure is a finding and the entries are still exposed for inspection.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Self

import numpy as np
import pyarrow.fs as pafs

from ..findings import Finding, Severity
from ..format.crc import crc32c
from .files import read_capped
from .offset_index import offset_from_file_name

HEADER_SIZE = 10  # version (2) + crc (4) + entry count (4)
CRC_OFFSET = 2
ENTRIES_OFFSET = 6  # the CRC covers [6, EOF)
ENTRY_SIZE = 46
SNAPSHOT_VERSION = 1
SNAPSHOT_ENTRY_DTYPE = np.dtype([
    ("producer_id", ">i8"), ("producer_epoch", ">i2"), ("last_sequence", ">i4"), ("last_offset", ">i8"),
    ("offset_delta", ">i4"), ("timestamp", ">i8"), ("coordinator_epoch", ">i4"),
    ("current_txn_first_offset", ">i8"),
])
DEFAULT_MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024
_INT_MAX = 2**31 - 1


def _int32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def decrement_sequence(sequence: int, decrement: int) -> int:
    """Kafka's DefaultRecordBatch.decrementSequence: sequences wrap from Int.MAX to 0."""
    if sequence < decrement:
        return _int32(_INT_MAX - _int32(decrement - sequence) + 1)
    return _int32(sequence - decrement)


@dataclass(frozen=True, slots=True)
class ProducerSnapshotEntry:
    """One producer's state. ``last_offset`` < 0 means no batch metadata (Kafka then keeps none)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int  # -1: no ongoing transaction

    @property
    def first_sequence(self) -> int:
        return decrement_sequence(self.last_sequence, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(slots=True)
class ProducerStateSnapshot:
    """A parsed producer snapshot. ``offset`` comes from the file name; ``entries`` is a structured numpy
    array (see :data:`SNAPSHOT_ENTRY_DTYPE`) of the whole entries present, ``valid`` is what Kafka's
    readSnapshot would decide (layout, version and CRC all good)."""

    path: str
    offset: int | None
    length: int = 0
    version: int | None = None
    stored_crc: int | None = None
    computed_crc: int | None = None
    declared_count: int | None = None
    entries: np.ndarray = field(default_factory=lambda: np.empty(0, SNAPSHOT_ENTRY_DTYPE))
    layout_ok: bool = False
    findings: list[Finding] = field(default_factory=list)

    @classmethod
    def read(cls, path: str, filesystem: pafs.FileSystem | None = None, *,
             max_bytes: int = DEFAULT_MAX_SNAPSHOT_BYTES) -> Self:
        """Read and verify a snapshot; never raises (problems are ``findings``)."""
        findings: list[Finding] = []
        offset = offset_from_file_name(path)
        if offset is None:
            findings.append(Finding(path, -1, "snapshot_bad_file_name", "file name does not start with an "
                                    "offset (expected NNNNNNNNNNNNNNNNNNNN.snapshot)", Severity.ERROR))
        snap = cls(path, offset, findings=findings)
        data = read_capped(path, filesystem, max_bytes, findings, too_large_kind="snapshot_too_large")
        if data is not None:
            snap._parse(data)
        return snap

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> Self:
        snap = cls(path, offset_from_file_name(path))
        snap._parse(data)
        return snap

    def _parse(self, data: bytes) -> None:
        self.length = n = len(data)
        if n < HEADER_SIZE:
            self.findings.append(Finding(self.path, n, "snapshot_truncated",
                                         f"{n} bytes: shorter than the {HEADER_SIZE}-byte header",
                                         Severity.ERROR))
            if n >= 2:
                self.version = int(np.frombuffer(data, ">i2", 1)[0])
            return
        self.version = int(np.frombuffer(data, ">i2", 1)[0])
        self.stored_crc = int(np.frombuffer(data, ">u4", 1, CRC_OFFSET)[0])
        self.computed_crc = crc32c(memoryview(data)[ENTRIES_OFFSET:])
        count = self.declared_count = int(np.frombuffer(data, ">i4", 1, ENTRIES_OFFSET)[0])
        whole = (n - HEADER_SIZE) // ENTRY_SIZE
        layout_ok = True
        if count < 0:
            layout_ok = False
            self.findings.append(Finding(self.path, ENTRIES_OFFSET, "snapshot_bad_count",
                                         f"negative entry count {count}", Severity.ERROR))
            count = 0
        elif count > whole:
            layout_ok = False
            self.findings.append(Finding(
                self.path, HEADER_SIZE + whole * ENTRY_SIZE, "snapshot_truncated",
                f"{count} entries declared but only {whole} whole entries present ({n} bytes)",
                Severity.ERROR))
            count = whole
        elif n > HEADER_SIZE + count * ENTRY_SIZE:
            extra = n - HEADER_SIZE - count * ENTRY_SIZE
            self.findings.append(Finding(
                self.path, HEADER_SIZE + count * ENTRY_SIZE, "snapshot_trailing_bytes",
                f"{extra} bytes after the {count} declared entries (Kafka ignores them; they are in the CRC)",
                Severity.WARNING))
        self.layout_ok = layout_ok
        self.entries = np.frombuffer(data, SNAPSHOT_ENTRY_DTYPE, count, HEADER_SIZE)
        if self.version != SNAPSHOT_VERSION:
            self.findings.append(Finding(self.path, 0, "snapshot_unknown_version",
                                         f"version {self.version}, expected {SNAPSHOT_VERSION}",
                                         Severity.ERROR))
        if self.stored_crc != self.computed_crc:
            self.findings.append(Finding(
                self.path, CRC_OFFSET, "snapshot_crc_mismatch",
                f"stored CRC-32C {self.stored_crc}, computed {self.computed_crc} "
                f"over bytes [{ENTRIES_OFFSET}, {n})",
                Severity.ERROR))

    @property
    def crc_ok(self) -> bool:
        return self.stored_crc is not None and self.stored_crc == self.computed_crc

    @property
    def valid(self) -> bool:
        """Whether Kafka's readSnapshot would accept the file."""
        return self.layout_ok and self.version == SNAPSHOT_VERSION and self.crc_ok

    @property
    def producers(self) -> list[ProducerSnapshotEntry]:
        e = self.entries
        cols = [e[name].tolist() for name in SNAPSHOT_ENTRY_DTYPE.names]
        return [ProducerSnapshotEntry(*row) for row in zip(*cols, strict=True)]

    def __len__(self) -> int:
        return len(self.entries)

    def dump_lines(self) -> list[str]:
        """kafka-dump-log's stdout for this file (DumpLogSegments.dumpProducerIdSnapshot), without the
        ``Dumping <file>`` header. A snapshot Kafka rejects prints nothing on stdout (the reason goes to
        stderr). currentTxnFirstOffset prints as Java's OptionalLong; the batch part (firstSequence
        from lastSequence and offsetDelta) only when lastOffset >= 0, else the line ends in a space."""
        if not self.valid:
            return []
        lines = []
        for p in self.producers:
            txn = (f"OptionalLong[{p.current_txn_first_offset}]" if p.current_txn_first_offset >= 0
                   else "OptionalLong.empty")
            line = (f"producerId: {p.producer_id} producerEpoch: {p.producer_epoch} "
                    f"coordinatorEpoch: {p.coordinator_epoch} currentTxnFirstOffset: {txn} "
                    f"lastTimestamp: {p.timestamp} ")
            if p.last_offset >= 0:
                line += (f"firstSequence: {p.first_sequence} lastSequence: {p.last_sequence} "
                         f"lastOffset: {p.last_offset} offsetDelta: {p.offset_delta} "
                         f"timestamp: {p.timestamp}")
            lines.append(line)
        return lines
