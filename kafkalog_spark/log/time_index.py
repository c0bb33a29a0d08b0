"""The time index (``.timeindex``): sparse map from timestamps to offsets, for offsetsForTimes and retention.

Kafka's TimeIndex writes 12-byte big-endian entries: int64 timestamp, int32 offset relative to the base
offset (from the file name). An entry (T, O) means "the largest timestamp seen up to offset O is T", so
timestamps strictly increase. Like the offset index it is preallocated zero-filled and trimmed on roll,
close and recovery; dump-log stops at the first slot i > 0 whose relative offset is 0. We also end the
valid entries at a timestamp lower than the previous one (Kafka never appends such an entry), but
:meth:`TimeIndex.dump_lines` keeps dump-log's own rule so its output matches byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..findings import Finding, Severity
from .offset_index import IndexFile, SanityFailure, first_violation_findings

ENTRY_SIZE = 12
TIME_INDEX_DTYPE = np.dtype([("timestamp", ">i8"), ("relative_offset", ">i4")])
NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP


class TimestampOffset(NamedTuple):
    """One time index entry (Kafka's TimestampOffset)."""

    timestamp: int
    offset: int


@dataclass(slots=True)
class TimeIndex(IndexFile):
    KIND = "timeindex"
    NAME = "time index"
    ENTRY_SIZE = ENTRY_SIZE

    """A parsed ``.timeindex`` file.

    ``timestamps``/``offsets`` (int64 numpy arrays, absolute offsets) hold the valid entries.
    ``slot_count`` is Kafka's ``entries`` (length // 12); ``dump_count`` how many entries dump-log prints
    (up to the first slot i > 0 at the base offset); ``entry_count`` the valid entries, which also end
    at a decreasing timestamp. ``tail_start`` is the byte after the dump-log entries when slots follow,
    and ``has_zero_tail`` whether those are all zero.
    """

    path: str
    base_offset: int
    length: int = 0
    slot_count: int = 0
    timestamps: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    offsets: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    dump_timestamps: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    dump_offsets: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    tail_start: int | None = None
    tail_all_zero: bool = False
    first_slot: TimestampOffset | None = None  # raw slot 0 and the last raw slot, as Kafka's sanityCheck
    last_slot: TimestampOffset | None = None  # sees them (zero tail included)
    findings: list[Finding] = field(default_factory=list)

    def _parse(self, data: bytes) -> None:
        self.length = len(data)
        n = len(data) // ENTRY_SIZE
        self.slot_count = n
        raw = np.frombuffer(data, TIME_INDEX_DTYPE, count=n)
        ts = raw["timestamp"].astype(np.int64)
        off = raw["relative_offset"].astype(np.int64) + self.base_offset
        if n:
            self.first_slot = TimestampOffset(int(ts[0]), int(off[0]))
            self.last_slot = TimestampOffset(int(ts[-1]), int(off[-1]))
        zeros = np.flatnonzero(raw["relative_offset"][1:] == 0)
        dump_end = int(zeros[0]) + 1 if len(zeros) else n
        drops = np.flatnonzero(np.diff(ts[:dump_end]) < 0)
        valid = int(drops[0]) + 1 if len(drops) else dump_end
        self.dump_timestamps, self.dump_offsets = ts[:dump_end], off[:dump_end]
        self.timestamps, self.offsets = ts[:valid], off[:valid]
        if valid < dump_end:
            self.findings.append(Finding(
                self.path, valid * ENTRY_SIZE, "timeindex_timestamp_decreasing",
                f"entry {valid}: timestamp {int(ts[valid])} is lower than the previous {int(ts[valid - 1])};"
                f" the valid entries end here ({dump_end - valid} more up to the zero-offset rule)",
                Severity.ERROR))
        if dump_end < n:
            self._record_tail(data, dump_end, n)

    @property
    def entry_count(self) -> int:
        return len(self.timestamps)

    @property
    def dump_count(self) -> int:
        return len(self.dump_timestamps)

    def entry(self, i: int) -> TimestampOffset:
        return TimestampOffset(int(self.timestamps[i]), int(self.offsets[i]))

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """Kafka's TimeIndex.lookup: the valid entry with the largest timestamp <= target, else
        (NO_TIMESTAMP, base offset); the offset from which to scan for the first record at or after
        the target timestamp."""
        slot = int(np.searchsorted(self.timestamps, target_timestamp, side="right")) - 1
        if slot < 0:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self.entry(slot)

    def kafka_sanity_failures(self) -> list[SanityFailure]:
        """Kafka's TimeIndex.sanityCheck, in its order, on the raw file: the last RAW slot's timestamp not below
        the first slot's, its offset not below the base offset, the length a multiple of 12.

        Kafka's check reads the last RAW slot, so an untrimmed zero tail fails it (timestamp 0 < first):
        our finding is then a warning when the zero tail explains it, an error otherwise.
        """
        out = []
        first, last = self.first_slot, self.last_slot
        if first is not None and last is not None:
            last_pos = (self.slot_count - 1) * ENTRY_SIZE
            why = " (Kafka's sanity check fails" + (", because of the zero tail)" if self.has_zero_tail else ")")
            corrupt = "Corrupt time index found, time index file ({path}) has non-zero size but the last "
            if last.timestamp < first.timestamp:
                out.append(SanityFailure(
                    "timeindex_last_timestamp_before_first", last_pos,
                    f"last timestamp {last.timestamp} is below the first {first.timestamp}{why}",
                    f"{corrupt}timestamp is {last.timestamp} which is less than the first timestamp {first.timestamp}",
                    Severity.WARNING if self.has_zero_tail else Severity.ERROR))
            if last.offset < self.base_offset:
                out.append(SanityFailure(
                    "timeindex_last_offset_below_base", last_pos,
                    f"last offset {last.offset} is below the base offset {self.base_offset}{why}",
                    f"{corrupt}offset is {last.offset} which is less than the first offset {self.base_offset}"))
        return out + self._length_failure()

    def sanity_check(self) -> list[Finding]:
        """:meth:`kafka_sanity_failures` as findings, plus ordering over the valid entries: timestamps strictly
        increasing, offsets non-decreasing and not below the base."""
        out = [f.finding(self.path) for f in self.kafka_sanity_failures()]
        out.extend(first_violation_findings(
            self.path, np.flatnonzero(self.offsets < self.base_offset), ENTRY_SIZE,
            "timeindex_offset_below_base", "offset is below the base offset (negative relative offset)"))
        out.extend(first_violation_findings(
            self.path, np.flatnonzero(np.diff(self.timestamps) <= 0) + 1, ENTRY_SIZE,
            "timeindex_timestamps_not_increasing", "timestamp not greater than the previous entry's"))
        out.extend(first_violation_findings(
            self.path, np.flatnonzero(np.diff(self.offsets) < 0) + 1, ENTRY_SIZE,
            "timeindex_offsets_decreasing", "offset lower than the previous entry's"))
        return out

    def dump_lines(self) -> list[str]:
        """kafka-dump-log's stdout for this file, without the ``Dumping <file>`` header: one
        ``timestamp: T offset: O`` line per slot up to dump-log's zero-offset rule (it does not stop at
        a decreasing timestamp, it only reports it on stderr). An empty file prints nothing."""
        return [f"timestamp: {t} offset: {o}"
                for t, o in zip(self.dump_timestamps.tolist(), self.dump_offsets.tolist(), strict=True)]
