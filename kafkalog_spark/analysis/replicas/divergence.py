"""One follower against its leader: where it truncates on fetching again (:mod:`.fetcher_truncation`), what that
drops (offset ranges by the epoch they were written in, records, and how many of them sat below the follower's own
high watermark: acknowledged to producers, then lost), and whether what it keeps is the leader's.

What it keeps is checked batch by batch against the leader's (base and last offset, CRC), and separately the
partitionLeaderEpoch, which the CRC does not cover. Below the larger of the two log start offsets nothing is
compared (one side may have deleted it). A compacted topic is compared record by record instead (offset, key and
value hashes, where both still hold the offset): each broker runs its own cleaner, so their batches differ once
either has cleaned, without any record differing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .fetcher_truncation import truncation_offset
from .replica_set import Replica

# a batch header as the analysis reads it: base offset, last offset, record count, crc, partitionLeaderEpoch,
# segment base offset, byte position
BASE, LAST, COUNT, CRC, EPOCH, SEGMENT, POSITION = range(7)

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
    first_mismatch: tuple | None = None  # the follower's batch header (or (offset, segment, position) of a record)
    epoch_mismatches: int = 0
    dropped_ranges: list[dict] = field(default_factory=list)
    dropped_records: int = 0
    acknowledged_lost: int = 0
    first_dropped: tuple | None = None  # the follower's first batch header that truncation cuts


def compare(follower: Replica, leader: Replica) -> Divergence:
    """``follower`` against ``leader`` (each with its batch headers by base offset, and its records when the
    topic is compacted)."""
    cut = truncation_offset(follower.log, leader.log)
    start = max(follower.log.log_start_offset, leader.log.log_start_offset,
                *(r.batches[0][BASE] for r in (follower, leader) if r.batches))
    by_records = follower.compacted or leader.compacted
    d = Divergence(BEHIND, cut.offset, cut.epoch, start, "records" if by_records else "batches")
    if by_records:
        _compare_records(d, follower, leader, start, cut.offset)
    else:
        _compare_batches(d, follower, leader, start, cut.offset)
    _dropped(d, follower, cut.offset)
    if d.mismatches or cut.offset < follower.log.log_end_offset:
        d.status = DIVERGENT
    elif follower.log.log_end_offset >= leader.log.log_end_offset:
        d.status = CONSISTENT
    return d


def _compare_batches(d: Divergence, follower: Replica, leader: Replica, start: int, end: int) -> None:
    theirs = {b[BASE]: b for b in leader.batches}
    for b in follower.batches:
        if b[BASE] < start or b[LAST] >= end:
            continue
        other = theirs.get(b[BASE])
        if other is not None and other[LAST] == b[LAST] and other[CRC] == b[CRC]:
            d.compared += 1
            d.epoch_mismatches += other[EPOCH] != b[EPOCH]
            continue
        d.mismatches += 1
        if d.first_mismatch is None:
            d.first_mismatch = b


def _compare_records(d: Divergence, follower: Replica, leader: Replica, start: int, end: int) -> None:
    for offset in sorted(follower.records):
        if offset < start or offset >= end or offset not in leader.records:
            continue
        d.compared += 1
        if follower.records[offset] != leader.records[offset]:
            d.mismatches += 1
            if d.first_mismatch is None:
                d.first_mismatch = _batch_of(follower, offset)


def _batch_of(replica: Replica, offset: int) -> tuple | None:
    return next((b for b in replica.batches if b[BASE] <= offset <= b[LAST]), None)


def _dropped(d: Divergence, follower: Replica, cut: int) -> None:
    """The follower's records at or after ``cut``, as ranges by the epoch they were written in; those below its
    high watermark counted apart (acknowledged)."""
    hw = follower.high_watermark if follower.high_watermark is not None else -1
    for b in follower.batches:
        if b[LAST] < cut:
            continue
        first = max(b[BASE], cut)
        if follower.compacted:  # offsets thin out after cleaning: the records themselves
            offsets = [o for o in follower.records if first <= o <= b[LAST]]
            records, acked = len(offsets), sum(1 for o in offsets if o < hw)
        else:
            records = b[LAST] - first + 1 if b[COUNT] is None or first > b[BASE] else b[COUNT]
            acked = max(0, min(b[LAST], hw - 1) - first + 1)
        if d.first_dropped is None:
            d.first_dropped = b
        d.dropped_records += records
        d.acknowledged_lost += min(acked, records)
        last = d.dropped_ranges[-1] if d.dropped_ranges else None
        if last is not None and last["epoch"] == b[EPOCH] and last["lastOffset"] + 1 >= first:
            last["lastOffset"], last["records"] = b[LAST], last["records"] + records
        else:
            d.dropped_ranges.append({"epoch": b[EPOCH], "firstOffset": first, "lastOffset": b[LAST],
                                     "records": records})
