"""One follower against its leader: where it truncates on fetching again (:mod:`.fetcher_truncation`), what that
drops (offset ranges by the epoch they were written in, records, and how many of them sat below the follower's own
high watermark: acknowledged to producers, then lost), and whether what it keeps is the leader's.

What it keeps is checked batch by batch against the leader's (base and last offset, CRC), and separately the
partitionLeaderEpoch, which the CRC does not cover. Below the larger of the two log start offsets nothing is
compared (one side may have deleted it). A compacted topic is compared record by record instead (offset, key and
value hashes, where both still hold the offset): each broker runs its own cleaner, so their batches differ once
either has cleaned, without any record differing. Batch headers are numpy arrays: a replica holds millions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .batch_headers import BatchHeaders
from .fetcher_truncation import truncation_offset
from .replica_set import Replica

CONSISTENT, BEHIND, DIVERGENT, LEADER = "consistent", "behind", "divergent", "leader"


@dataclass
class Divergence:
    status: str
    truncation_offset: int
    truncation_epoch: int | None
    compared_from: int
    compared_by: str  # batches or records
    compared: int = 0  # batches (or records) found on both sides and compared
    mismatches: int = 0
    first_mismatch: tuple[int, int, int] | None = None  # (offset, segment, position) in the follower
    epoch_mismatches: int = 0
    dropped_ranges: list[dict] = field(default_factory=list)
    dropped_records: int = 0
    acknowledged_lost: int = 0
    first_dropped: tuple[int, int, int] | None = None  # the follower's first batch that truncation cuts


def compare(follower: Replica, leader: Replica) -> Divergence:
    """``follower`` against ``leader`` (each with its batch headers, and its records when the topic is
    compacted)."""
    cut = truncation_offset(follower.log, leader.log)
    f, lead = follower.batches, leader.batches
    start = max(follower.log.log_start_offset, leader.log.log_start_offset,
                *(int(b.base[0]) for b in (f, lead) if len(b)))
    by_records = follower.compacted or leader.compacted
    d = Divergence(BEHIND, cut.offset, cut.epoch, start, "records" if by_records else "batches")
    if by_records:
        _compare_records(d, follower, leader, start, cut.offset)
    else:
        _compare_batches(d, f, lead, start, cut.offset)
    _dropped(d, follower, cut.offset)
    if d.mismatches or cut.offset < follower.log.log_end_offset:
        d.status = DIVERGENT
    elif follower.log.log_end_offset >= leader.log.log_end_offset:
        d.status = CONSISTENT
    return d


def _compare_batches(d: Divergence, f: BatchHeaders, lead: BatchHeaders, start: int, end: int) -> None:
    """The follower's batches wholly in [start, end) against the leader's batch of the same base offset."""
    mine = np.flatnonzero((f.base >= start) & (f.last < end))
    if not len(mine):
        return
    at = np.searchsorted(lead.base, f.base[mine])
    inside = at < len(lead)
    at = np.where(inside, at, 0)
    same = (inside & (lead.base[at] == f.base[mine]) & (lead.last[at] == f.last[mine]) & (lead.crc[at] == f.crc[mine])
            if len(lead) else np.zeros(len(mine), dtype=bool))
    d.compared = int(same.sum())
    d.mismatches = int(len(mine) - d.compared)
    if len(lead):
        d.epoch_mismatches = int((same & (lead.epoch[at] != f.epoch[mine])).sum())
    if d.mismatches:
        d.first_mismatch = f.at(int(mine[np.flatnonzero(~same)[0]]))


def _compare_records(d: Divergence, follower: Replica, leader: Replica, start: int, end: int) -> None:
    for offset in sorted(follower.records):
        if offset < start or offset >= end or offset not in leader.records:
            continue
        d.compared += 1
        if follower.records[offset] != leader.records[offset]:
            d.mismatches += 1
            if d.first_mismatch is None:
                d.first_mismatch = _batch_of(follower.batches, offset)


def _batch_of(b: BatchHeaders, offset: int) -> tuple[int, int, int] | None:
    """(offset, segment, position) of the batch holding ``offset``."""
    i = int(np.searchsorted(b.base, offset, side="right")) - 1
    return (offset, int(b.segment[i]), int(b.position[i])) if i >= 0 and b.last[i] >= offset else None


def _dropped(d: Divergence, follower: Replica, cut: int) -> None:
    """The follower's records at or after ``cut``, as ranges by the epoch they were written in; those below its
    high watermark counted apart (acknowledged)."""
    b = follower.batches
    hw = follower.high_watermark if follower.high_watermark is not None else -1
    cut_at = np.flatnonzero(b.last >= cut)
    if not len(cut_at):
        return
    d.first_dropped = b.at(int(cut_at[0]))
    first = np.maximum(b.base[cut_at], cut)
    last = b.last[cut_at]
    if follower.compacted:  # offsets thin out after cleaning: the records themselves
        offsets = np.array(sorted(o for o in follower.records if o >= cut), dtype=np.int64)
        lo, hi = np.searchsorted(offsets, first), np.searchsorted(offsets, last, side="right")
        records = hi - lo
        acked = np.searchsorted(offsets, np.minimum(last, hw - 1), side="right") - lo
    else:
        whole = (first == b.base[cut_at]) & (b.count[cut_at] >= 0)
        records = np.where(whole, b.count[cut_at], last - first + 1)
        acked = np.minimum(last, hw - 1) - first + 1
    acked = np.clip(acked, 0, records)
    d.dropped_records, d.acknowledged_lost = int(records.sum()), int(acked.sum())
    epochs = b.epoch[cut_at]
    # runs of contiguous batches of one epoch: usually one or two for a replica that diverged
    breaks = np.flatnonzero((epochs[1:] != epochs[:-1]) | (first[1:] > last[:-1] + 1)) + 1
    for lo, hi in zip(np.r_[0, breaks], np.r_[breaks, len(cut_at)], strict=True):
        d.dropped_ranges.append({"epoch": int(epochs[lo]), "firstOffset": int(first[lo]),
                                 "lastOffset": int(last[hi - 1]), "records": int(records[lo:hi].sum())})
