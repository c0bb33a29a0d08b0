"""Each offset and time index entry of a segment checked against the segment's batches (what ``kafka-dump-log
--verify-index-only`` does, classified): one segment's entries and batch headers in memory at once, in numpy. The
one home of these rules: the task that reads a segment runs them on its batches and its indexes
(:func:`segment_entry_findings`), and :mod:`kafkalog_spark.analysis.index_entries` on the index view's entries and
the batches view's rows of a segment, grouped.

Offset index entry (offset O, position P; the file position is slot * 8):

- ``index_position_beyond_log``: error: P >= the ``.log`` size.
- ``index_position_not_batch_boundary``: error: no batch starts at P (mid-batch, between batches, or in an
  unreadable region).
- ``index_offset_before_batch``: error: O is below the first offset of the batch at P (a lookup of O
  would start reading after it).
- ``index_offset_inside_batch``: O lies inside the batch at P (or inside a later batch of the same append)
  but is not its last offset: info for magic 0/1 (pre-0.11 brokers indexed an append's first offset),
  warning for magic 2 (no broker writes that, though lookups stay correct).
- ``index_multi_batch_append``: info: O is the lastOffset of a later batch among those from P up to the next
  entry's position: one append of several batches (followers, the cleaner, before KAFKA-806) indexed as a
  whole; dump-log reports it as a "Mismatch" although it is legitimate.
- ``index_offset_not_in_append``: error: O falls in no batch from P up to the next entry's position.
- Equal to the lastOffset of the batch at P: correct (nothing reported). The entry (base offset, 0) in slot
  0 is dump-log's reading of an empty slot and is skipped (it is harmless: a lookup starts at byte 0).

Time index entry (timestamp T, offset O; the file position is slot * 12):

- ``timeindex_timestamp_mismatch``: error: the batch ending at O has maxTimestamp != T (dump-log: "Found
  timestamp mismatch").
- ``timeindex_offset_inside_batch``: warning: O is inside a batch (not its last offset) whose maxTimestamp is
  T (dump-log: "indexed offsets not found"; lookups by time stay correct).
- ``timeindex_offset_not_in_log``: error: no batch of the segment holds O.
- Out-of-order timestamps are the reader's ``timeindex_timestamps_not_increasing`` (see segment_checks).
- The entry (0, base offset) in slot 0 is dump-log's reading of an empty slot: skipped.

``segment_log_missing``: warning: index entries for a segment without a ``.log`` (the broker deletes such
orphaned index files when it loads the log); reported only when the orphaned index has entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..findings import Finding, finding_row
from . import offset_index, time_index

OFFSET_ENTRY, TIME_ENTRY = offset_index.ENTRY_SIZE, time_index.ENTRY_SIZE
BATCH_COLUMNS = ["position", "size", "baseOffset", "lastOffset", "magic", "maxTimestamp"]


@dataclass
class SegmentBatches:
    """One segment's batch headers in file order; ``first`` is the base offset, or for a legacy compressed
    wrapper (base not decoded) the previous batch's last offset + 1."""

    base_offset: int
    pos: np.ndarray
    end: np.ndarray
    first: np.ndarray
    last: np.ndarray
    magic: np.ndarray
    max_ts: np.ndarray

    @classmethod
    def from_arrow(cls, base_offset: int, t: pa.Table) -> SegmentBatches:
        t = t.sort_by("position")
        col = {c: t.column(c).to_numpy(zero_copy_only=False) for c in ("position", "size", "lastOffset", "magic")}
        last = col["lastOffset"].astype(np.int64)
        prev_next = np.concatenate([[base_offset], last[:-1] + 1]) if len(last) else last
        base = t.column("baseOffset")
        first = np.where(base.is_null().to_numpy(zero_copy_only=False), prev_next,
                         base.fill_null(0).to_numpy(zero_copy_only=False)).astype(np.int64)
        pos = col["position"].astype(np.int64)
        return cls(base_offset, pos, pos + col["size"].astype(np.int64), first, last,
                   col["magic"].astype(np.int64), t.column("maxTimestamp").fill_null(-1).to_numpy().astype(np.int64))

    def describe(self, j: int) -> str:
        return f"the batch at {int(self.pos[j])} (offsets {int(self.first[j])}..{int(self.last[j])})"

    def holding(self, offset: int, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Indexes (in [lo, hi)) of batches whose offset range holds ``offset``."""
        sl = slice(lo, hi)
        return np.flatnonzero((self.first[sl] <= offset) & (offset <= self.last[sl])) + lo


def _lookup(values: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For sorted ``values``: the index where each target is (clipped into range) and whether it is there."""
    if not len(values):
        return np.zeros(len(targets), np.int64), np.zeros(len(targets), bool)
    at = np.minimum(np.searchsorted(values, targets), len(values) - 1)
    return at, values[at] == targets


def _row(key: dict, severity: str, check: str, file: str, position: int, expected: str, found: str,
         detail: str) -> dict:
    return finding_row(key.get("topic"), key.get("partition"), severity, check, file, position=position,
                       base_offset=key.get("baseOffset"), expected=expected, found=found, detail=detail,
                       log_dir=key.get("logDir"))


def offset_entry_findings(key: dict, b: SegmentBatches, file: str, slots: np.ndarray, offsets: np.ndarray,
                          positions: np.ndarray, log_size: int) -> list[dict]:
    n = len(b.pos)
    at, boundary = _lookup(b.pos, positions)
    good = boundary.copy()
    good[boundary] = b.last[at[boundary]] == offsets[boundary]
    noop = (slots == 0) & (offsets == b.base_offset) & (positions == 0)
    next_pos = np.append(positions[1:], np.iinfo(np.int64).max)
    out = []
    for e in np.flatnonzero(~good & ~noop):
        slot, o, p = int(slots[e]), int(offsets[e]), int(positions[e])

        def add(severity: str, check: str, expected: str, detail: str, slot=slot, o=o, p=p) -> None:
            out.append(_row(key, severity, check, file, slot * OFFSET_ENTRY, expected, f"offset {o} at position {p}",
                            f"entry {slot}: {detail}"))

        if p < 0 or p >= log_size:
            add("error", "index_position_beyond_log", f"position < {log_size} (the .log size)",
                f"position {p} is outside the {log_size}-byte .log: a lookup of offset {o} reads nothing")
            continue
        k = int(at[e])
        if not boundary[e]:
            j = int(np.searchsorted(b.pos, p)) - 1
            where = (f"inside {b.describe(j)}" if j >= 0 and p < b.end[j]
                     else "after the last readable batch" if j == n - 1 else "between batches (an unreadable region)")
            add("error", "index_position_not_batch_boundary", "the start of a batch",
                f"position {p} is {where}: a lookup of offset {o} would parse garbage")
            continue
        expected = f"offset {int(b.last[k])} (last offset of {b.describe(k)})"
        if o < b.first[k]:
            add("error", "index_offset_before_batch", expected,
                f"offset {o} is below {b.describe(k)}: lookups of offsets {o}..{int(b.first[k]) - 1} start too late")
        elif o < b.last[k]:
            legacy = b.magic[k] < 2
            add("info" if legacy else "warning", "index_offset_inside_batch", expected,
                f"offset {o} is inside {b.describe(k)}, not its last offset; "
                + ("pre-0.11 brokers indexed the first offset of an append (dump-log reports a Mismatch)" if legacy
                   else "no broker writes that for magic 2 (lookups stay correct)"))
        else:
            hi = int(np.searchsorted(b.pos, next_pos[e]))
            ends = np.flatnonzero(b.last[k + 1:hi] == o) + k + 1
            inside = b.holding(o, k + 1, hi)
            if len(ends):
                add("info", "index_multi_batch_append", expected,
                    f"offset {o} is the last offset of {b.describe(int(ends[0]))}, {int(ends[0]) - k} batch(es) "
                    "further: a multi-batch append (follower or cleaner, before KAFKA-806) indexed as a whole; "
                    "dump-log --verify-index-only reports it as a Mismatch, but lookups are correct")
            elif len(inside):
                add("warning", "index_offset_inside_batch", expected,
                    f"offset {o} is inside {b.describe(int(inside[0]))} of the same append, not its last offset")
            else:
                anywhere = b.holding(o)
                where = (f"it is in {b.describe(int(anywhere[0]))}, past the next entry's position"
                         if len(anywhere) else "no batch of the segment holds it")
                add("error", "index_offset_not_in_append", expected,
                    f"offset {o} is in no batch from position {p} up to the next entry: {where}")
    return out


def time_entry_findings(key: dict, b: SegmentBatches, file: str, slots: np.ndarray, timestamps: np.ndarray,
                        offsets: np.ndarray) -> list[dict]:
    order = np.argsort(b.last, kind="stable")
    at, ends = _lookup(b.last[order], offsets)
    j = order[at] if len(order) else at
    good = ends.copy()
    good[ends] = b.max_ts[j[ends]] == timestamps[ends]
    noop = (slots == 0) & (timestamps == 0) & (offsets == b.base_offset)
    out = []
    for e in np.flatnonzero(~good & ~noop):
        slot, t, o = int(slots[e]), int(timestamps[e]), int(offsets[e])
        found = f"timestamp {t} at offset {o}"
        if ends[e]:
            k = int(j[e])
            out.append(_row(key, "error", "timeindex_timestamp_mismatch", file, slot * TIME_ENTRY,
                            f"timestamp {int(b.max_ts[k])} (maxTimestamp of {b.describe(k)})", found,
                            f"entry {slot}: the batch ending at offset {o} has another max timestamp "
                            "(dump-log: Found timestamp mismatch); lookups by time return wrong offsets"))
            continue
        inside = b.holding(o)
        if len(inside):
            k = int(inside[0])
            same = int(b.max_ts[k]) == t
            out.append(_row(key, "warning" if same else "error",
                            "timeindex_offset_inside_batch" if same else "timeindex_timestamp_mismatch",
                            file, slot * TIME_ENTRY, f"offset {int(b.last[k])} with timestamp {int(b.max_ts[k])} "
                            f"({b.describe(k)})", found,
                            f"entry {slot}: offset {o} is inside {b.describe(k)}, not its last offset "
                            "(dump-log: indexed offset not found in the log)"))
        else:
            out.append(_row(key, "error", "timeindex_offset_not_in_log", file, slot * TIME_ENTRY,
                            "the last offset of a batch of the segment", found,
                            f"entry {slot}: no batch of the segment holds offset {o} "
                            "(dump-log: indexed offset not found in the log)"))
    return out


@dataclass(frozen=True)
class IndexEntries:
    """The valid entries of one index file of a segment: an offset index's offsets and positions, or a time index's
    timestamps and offsets, by slot."""

    file: str
    index_type: str  # "offset" or "time"
    slots: np.ndarray
    offsets: np.ndarray
    positions: np.ndarray | None = None  # offset index
    timestamps: np.ndarray | None = None  # time index


def segment_entry_findings(key: dict, batches: pa.Table | None, indexes: Sequence[IndexEntries],
                           log_size: int | None) -> list[dict]:
    """The findings (rows of :data:`~kafkalog_spark.schemas.INDEX_FINDINGS`) of one segment's index entries
    (``indexes``, each file's) against its batch rows (``batches``: the batches view's :data:`BATCH_COLUMNS`,
    problem rows left out); ``key``: its ``logDir``, ``topic``, ``partition`` and ``baseOffset``; ``log_size``:
    its `.log`'s size, None when it has none (``segment_log_missing``, once, for the first file with entries)."""
    indexes = sorted((i for i in indexes if len(i.slots)), key=lambda i: (i.file, i.index_type))
    if not indexes:
        return []
    if log_size is None:
        return [_row(key, "warning", "segment_log_missing", indexes[0].file, -1, "a .log file for the index", "none",
                     "index files without their .log (the broker deletes such orphaned files when it loads)")]
    b = SegmentBatches.from_arrow(key["baseOffset"], batches if batches is not None else _no_batches())
    rows: list[dict] = []
    for entries in indexes:
        if entries.index_type == "offset":
            rows += offset_entry_findings(key, b, entries.file, entries.slots, entries.offsets, entries.positions,
                                          log_size)
        else:
            rows += time_entry_findings(key, b, entries.file, entries.slots, entries.timestamps, entries.offsets)
    return rows


def _no_batches() -> pa.Table:
    return pa.table({c: pa.array([], t) for c, t in (("position", pa.int64()), ("size", pa.int32()),
                                                      ("baseOffset", pa.int64()), ("lastOffset", pa.int64()),
                                                      ("magic", pa.int8()), ("maxTimestamp", pa.int64()))})


def read_entries(index_file: tuple[str, int | None] | None, time_index_file: tuple[str, int | None] | None,
                 findings: list[Finding] | None = None) -> list[IndexEntries]:
    """The valid entries of a segment's `.index` and `.timeindex` (those it has, each a path and its size as
    listed, None when not listed), as the index view gives them; the readers' findings go to ``findings`` when
    given."""
    out = []
    if index_file:
        path, size = index_file
        index = offset_index.OffsetIndex.read(path, size=size)
        out.append(IndexEntries(path, "offset", np.arange(len(index.offsets), dtype=np.int64),
                                index.offsets.astype(np.int64), positions=index.positions.astype(np.int64)))
        if findings is not None:
            findings.extend(index.findings)
    if time_index_file:
        path, size = time_index_file
        index = time_index.TimeIndex.read(path, size=size)
        out.append(IndexEntries(path, "time", np.arange(len(index.offsets), dtype=np.int64),
                                index.offsets.astype(np.int64), timestamps=index.timestamps.astype(np.int64)))
        if findings is not None:
            findings.extend(index.findings)
    return out
