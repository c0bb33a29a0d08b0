"""The offset index (``.index``): sparse map from offsets to byte positions in the segment's ``.log``.

Kafka's OffsetIndex (storage/internals/log) writes 8-byte big-endian entries: int32 offset relative to
the segment's base offset (taken from the file name), int32 byte position in the ``.log``. The file is
preallocated zero-filled to ``segment.index.bytes`` and trimmed on roll, close and recovery, so the
active segment of a copied live directory, or any segment after a crash, keeps a zero tail. We apply the
rule kafka-dump-log applies (valid entries end at the first slot i > 0 whose relative offset is 0) and
report what Kafka's sanityCheck would reject, plus ordering problems it does not look for.

Everything is read-only and vectorised with numpy: a preallocated 10 MiB index decodes in milliseconds.
This module also holds :func:`read_capped`, the shared "read a small input file into memory, turning
every failure into a finding" step used by the other index, snapshot and checkpoint readers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple, Self

import numpy as np
import pyarrow.fs as pafs

from ..findings import Finding, Severity
from .files import read_capped

ENTRY_SIZE = 8
OFFSET_INDEX_DTYPE = np.dtype([("relative_offset", ">i4"), ("position", ">i4")])
# segment.index.bytes is an int in Kafka, so no index can exceed 2 GiB; default cap well above the
# 10 MiB default while keeping a stray huge file from exhausting memory.
DEFAULT_MAX_INDEX_BYTES = 512 * 1024 * 1024
# How many individual ordering violations to name before summarising (a shuffled index could
# otherwise produce a million findings).
MAX_ORDER_FINDINGS = 5

# Kafka's name, or a remote copy's in LocalTieredStorage: "<base offset>-<segment id>.<kind>"
_BASE_NAME = re.compile(r"^(\d+)(?:-[A-Za-z0-9_-]{22})?\.")


def base_name(path: str) -> str:
    """The file name of a local path or URI (``s3://b/dir/x.index`` -> ``x.index``)."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def offset_from_file_name(path: str) -> int | None:
    """Kafka's offsetFromFile: the digits before the first ``.`` of the name (or before a remote copy's
    ``-<segment id>``); ``None`` if not a number."""
    m = _BASE_NAME.match(base_name(path))
    return int(m[1]) if m else None


def base_offset_for(path: str, base_offset: int | None, findings: list[Finding], kind: str) -> int:
    """The segment base offset: given, or parsed from the file name (a finding and 0 when it is not)."""
    if base_offset is not None:
        return base_offset
    parsed = offset_from_file_name(path)
    if parsed is None:
        findings.append(Finding(path, -1, kind,
                                "file name does not start with a base offset (expected "
                                "NNNNNNNNNNNNNNNNNNNN.<suffix>); assuming base offset 0", Severity.ERROR))
        return 0
    return parsed


def first_violation_findings(path: str, bad_slots: np.ndarray, entry_size: int, kind: str, what: str,
                             severity: Severity = Severity.ERROR) -> list[Finding]:
    """Findings for the first few slots where an ordering rule breaks; the last one summarises the rest."""
    out: list[Finding] = []
    total = len(bad_slots)
    for i, slot in enumerate(bad_slots[:MAX_ORDER_FINDINGS]):
        last_listed = i == MAX_ORDER_FINDINGS - 1 and total > MAX_ORDER_FINDINGS
        more = f" ({total - MAX_ORDER_FINDINGS} more not listed)" if last_listed else ""
        out.append(Finding(path, int(slot) * entry_size, kind, f"entry {int(slot)}: {what}{more}", severity))
    return out


class SanityFailure(NamedTuple):
    """One condition of Kafka's index sanityCheck that fails: our finding (kind, position, detail, severity) and
    the CorruptIndexException message Kafka throws (``{path}`` standing for the index's absolute path), so that
    validation and ``kafkalog dump --index-sanity-check`` apply the one check."""

    kind: str
    position: int
    detail: str
    exception: str
    severity: Severity = Severity.ERROR

    def finding(self, path: str) -> Finding:
        return Finding(path, self.position, self.kind, self.detail, self.severity)

    def exception_message(self, absolute_path: str) -> str:
        return self.exception.replace("{path}", absolute_path)


class IndexFile:
    """``read``/``from_bytes`` shared by the offset and time indexes: read (capped), ``_parse``, then the
    class's ``sanity_check``. ``KIND`` prefixes the finding kinds (``index_too_large``, ...)."""

    __slots__ = ()
    KIND = "index"
    NAME = "index"  # as Kafka's messages name it
    ENTRY_SIZE = 8

    def _length_failure(self) -> list[SanityFailure]:
        """The last condition of both sanityChecks: the length a multiple of the entry size."""
        length, size = self.length, self.ENTRY_SIZE
        if not length % size:
            return []
        return [SanityFailure(
            f"{self.KIND}_length_not_multiple", self.slot_count * size,
            f"{self.NAME} is {length} bytes, not a multiple of {size}: {length % size} trailing bytes (Kafka's sanity "
            "check fails)",
            f"{self.NAME.capitalize()} file {{path}} is corrupt, found {length} bytes which is neither positive nor a "
            f"multiple of {size}")]

    @classmethod
    def read(cls, path: str, filesystem: pafs.FileSystem | None = None, *, base_offset: int | None = None,
             max_bytes: int = DEFAULT_MAX_INDEX_BYTES, size: int | None = None) -> Self:
        """Read and check an index; never raises on bad or missing content (see ``findings``). ``size``: the file's
        size as listed, if known (a store then opens it without asking)."""
        findings: list[Finding] = []
        base = base_offset_for(path, base_offset, findings, f"{cls.KIND}_bad_file_name")
        idx = cls(path, base, findings=findings)
        data = read_capped(path, filesystem, max_bytes, findings, too_large_kind=f"{cls.KIND}_too_large", size=size)
        if data is None:
            return idx
        idx._parse(data)
        findings.extend(idx.sanity_check())
        return idx

    @classmethod
    def from_bytes(cls, data: bytes, path: str, base_offset: int) -> Self:
        """Parse an index already in memory (``path`` only names it in findings and dump output)."""
        idx = cls(path, base_offset)
        idx._parse(data)
        idx.findings.extend(idx.sanity_check())
        return idx


    def _record_tail(self, data: bytes, first_slot: int, slots: int) -> None:
        """The slots from ``first_slot`` on are past the valid entries: report them (zeros or not)."""
        self.tail_start = first_slot * self.ENTRY_SIZE
        tail = zero_tail_finding(self.path, data, self.tail_start, slots * self.ENTRY_SIZE, self.KIND,
                                 self.ENTRY_SIZE)
        self.tail_all_zero = tail.kind == f"{self.KIND}_zero_tail"
        self.findings.append(tail)

    @property
    def has_zero_tail(self) -> bool:
        return self.tail_start is not None and self.tail_all_zero

    @property
    def zero_tail_start(self) -> int | None:
        """Byte where the zero tail begins, ``None`` without one."""
        return self.tail_start if self.has_zero_tail else None

    def __len__(self) -> int:
        return self.entry_count


class OffsetPosition(NamedTuple):
    """One offset index entry (Kafka's OffsetPosition): absolute offset, byte position in the .log."""

    offset: int
    position: int


@dataclass(slots=True)
class OffsetIndex(IndexFile):
    """A parsed ``.index`` file.

    ``offsets``/``positions`` hold the valid entries (absolute offsets, byte positions; int64 numpy
    arrays). ``slot_count`` is what Kafka calls ``entries`` (file length // 8, zero tail included),
    ``entry_count`` the valid entries as dump-log counts them. ``tail_start`` is the byte where the slots
    after the valid entries begin (``None`` when the entries run to the end of the file);
    ``has_zero_tail`` says whether those slots are all zero (a preallocated, untrimmed index). As in
    dump-log, slot 0 always counts as an entry, so an all-zero file has one entry (base offset, 0).
    """

    path: str
    base_offset: int
    length: int = 0
    slot_count: int = 0
    offsets: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    positions: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    tail_start: int | None = None
    tail_all_zero: bool = False
    last_slot_offset: int | None = None  # Kafka's lastOffset: the LAST RAW slot, zero tail or not
    loaded: bool = False  # False when the file could not be read (see findings)
    findings: list[Finding] = field(default_factory=list)

    def _parse(self, data: bytes) -> None:
        self.loaded = True
        self.length = len(data)
        n = len(data) // ENTRY_SIZE
        self.slot_count = n
        raw = np.frombuffer(data, OFFSET_INDEX_DTYPE, count=n)
        rel = raw["relative_offset"]
        # dump-log's rule: a slot after the first whose offset equals the base offset ends the entries.
        zeros = np.flatnonzero(rel[1:] == 0)
        valid = int(zeros[0]) + 1 if len(zeros) else n
        self.offsets = rel[:valid].astype(np.int64) + self.base_offset
        self.positions = raw["position"][:valid].astype(np.int64)
        if n:
            self.last_slot_offset = self.base_offset + int(rel[-1])
        if valid < n:
            self._record_tail(data, valid, n)

    @property
    def entry_count(self) -> int:
        return len(self.offsets)

    def entry(self, i: int) -> OffsetPosition:
        """The i-th valid entry."""
        return OffsetPosition(int(self.offsets[i]), int(self.positions[i]))

    def lookup(self, target_offset: int) -> OffsetPosition:
        """Kafka's OffsetIndex.lookup: the valid entry with the largest offset <= target, else
        (base offset, 0), i.e. where a reader must start scanning the .log for that offset."""
        slot = int(np.searchsorted(self.offsets, target_offset, side="right")) - 1
        if slot < 0:
            return OffsetPosition(self.base_offset, 0)
        return self.entry(slot)

    def kafka_sanity_failures(self) -> list[SanityFailure]:
        """Kafka's OffsetIndex.sanityCheck, in its order, on the raw file as Kafka sees it: the last slot's offset
        not below the base offset, the length a multiple of 8."""
        out = []
        if self.slot_count and self.last_slot_offset is not None and self.last_slot_offset < self.base_offset:
            out.append(SanityFailure(
                "index_last_offset_below_base", (self.slot_count - 1) * ENTRY_SIZE,
                f"last offset {self.last_slot_offset} is below the base offset {self.base_offset} (Kafka's sanity "
                "check fails)",
                f"Corrupt index found, index file {{path}} has non-zero size but the last offset is "
                f"{self.last_slot_offset} which is less than the base offset {self.base_offset}"))
        return out + self._length_failure()

    def sanity_check(self) -> list[Finding]:
        """:meth:`kafka_sanity_failures` as findings, plus ordering checks over the valid entries: offsets and
        positions strictly increasing, neither negative."""
        out = [f.finding(self.path) for f in self.kafka_sanity_failures()]
        out.extend(first_violation_findings(
            self.path, np.flatnonzero(self.offsets < self.base_offset), ENTRY_SIZE, "index_offset_below_base",
            "offset is below the base offset (negative relative offset)"))
        out.extend(first_violation_findings(
            self.path, np.flatnonzero(self.positions < 0), ENTRY_SIZE, "index_position_negative",
            "negative position"))
        out.extend(first_violation_findings(
            self.path, np.flatnonzero(np.diff(self.offsets) <= 0) + 1, ENTRY_SIZE,
            "index_offsets_not_increasing", "offset not greater than the previous entry's"))
        out.extend(first_violation_findings(
            self.path, np.flatnonzero(np.diff(self.positions) <= 0) + 1, ENTRY_SIZE,
            "index_positions_not_increasing", "position not greater than the previous entry's"))
        return out

    def dump_lines(self, log_size: int | None = None) -> list[str]:
        """kafka-dump-log's stdout for this file, without the ``Dumping <file>`` header.

        dump-log prints ``<file> is empty.`` when the file has no slot at all, else one line per entry
        up to the zero tail. For each entry it also reads the first batch at that position; when that
        fails (17 bytes of ``.log`` or fewer left there, e.g. an all-zero index over an empty log) it dies
        with an exception and prints nothing more: pass ``log_size`` (the ``.log`` file's size) to
        mirror that.
        """
        if not self.loaded:
            return []  # dump-log fails on a file it cannot open (stderr only)
        if self.slot_count == 0:
            return [f"{self.path} is empty."]
        lines = []
        for off, pos in zip(self.offsets.tolist(), self.positions.tolist(), strict=True):
            if log_size is not None and (pos < 0 or log_size - pos <= 17):
                break
            lines.append(f"offset: {off} position: {pos}")
        return lines


def zero_tail_finding(path: str, data: bytes, start: int, end: int, prefix: str, entry_size: int) -> Finding:
    """Describe the slots after the valid entries: all zeros (preallocated, left by an unclean shutdown
    or a copy of a live directory: a warning, normal for the active segment) or not (an error: data
    after the entries that Kafka's dump ignores)."""
    tail = np.frombuffer(data, np.uint8, count=end - start, offset=start)
    nz = np.flatnonzero(tail)
    slots = (end - start) // entry_size
    if len(nz) == 0:
        return Finding(path, start, f"{prefix}_zero_tail",
                       f"{slots} zero-filled slots after the last entry (preallocated index not trimmed: "
                       "normal for the active segment of a live copy, else an unclean shutdown)",
                       Severity.WARNING)
    first = start + int(nz[0])
    return Finding(path, first, f"{prefix}_nonzero_tail",
                   f"the entries end at byte {start}, but the {slots} slots from there on are not all zero"
                   f" (first non-zero byte at {first}); dump-log ignores them", Severity.ERROR)
