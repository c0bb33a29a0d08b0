"""Where a follower's log is truncated when it fetches from the leader again, as Kafka's replica fetcher decides it
(core ``AbstractFetcherThread``, the leader's check in ``Partition.fetchRecords``; KIP-101, KIP-279, KIP-320).

The follower fetches from its log end offset with the last epoch it holds. The leader answers with a diverging
epoch when it never had that epoch, or had it end before the follower's log end: its ``endOffsetFor`` of the epoch.
The follower then truncates to the end of that epoch in its own lineage (``getOffsetTruncationState``); when its own
answer is an older epoch it truncates there and asks again, until both name the same epoch: the largest epoch both
hold, cut at the smaller of their end offsets for it. A follower without epochs (never the case for a v2 log
written by Kafka 0.11+) falls back to the leader's log end offset, as the out-of-range path does.
"""

from __future__ import annotations

from dataclasses import dataclass

from .leader_epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochFileCache


@dataclass(frozen=True)
class ReplicaLog:
    """What the fetcher reads of one replica: its lineage, log start and log end offset."""

    epochs: LeaderEpochFileCache
    log_start_offset: int
    log_end_offset: int


@dataclass(frozen=True)
class Truncation:
    """``offset``: the follower's log end after truncation (its log end offset when nothing is cut);
    ``epoch``: the epoch both agreed on (None when there was no divergence or no epoch to agree on);
    ``rounds``: the diverging answers it took (0: the follower's log is a prefix of the leader's)."""

    offset: int
    epoch: int | None
    rounds: int


def truncation_offset(follower: ReplicaLog, leader: ReplicaLog) -> Truncation:
    """Where ``follower`` truncates to when it fetches from ``leader`` (both as their files hold them)."""
    epochs, end, rounds, agreed = follower.epochs, follower.log_end_offset, 0, None
    # each round removes at least the follower's latest epoch: bounded by its number of epochs
    for _ in range(len(epochs.entries) + 2):
        last = epochs.latest_epoch()
        if last is None:
            # no epoch to send: a fetch past the leader's end is out of range, and the follower resets to it
            return Truncation(min(end, leader.log_end_offset), agreed, rounds)
        leader_epoch, leader_end = leader.epochs.end_offset_for(last, leader.log_end_offset)
        if not (leader_epoch < last or leader_end < end):
            return Truncation(end, agreed, rounds)  # the leader holds the follower's log as it is
        rounds += 1
        if leader_end == UNDEFINED_EPOCH_OFFSET:
            # the leader knows no epoch at or below the follower's: Kafka falls back to the high watermark, which
            # is not known here either; the leader's end is the most a follower can keep
            return Truncation(min(end, leader.log_end_offset), None, rounds)
        if leader_epoch == UNDEFINED_EPOCH:
            return Truncation(min(leader_end, end), None, rounds)
        own_epoch, own_end = epochs.end_offset_for(leader_epoch, end)
        if own_end == UNDEFINED_EPOCH_OFFSET:
            # the follower tracked no epoch at or below the leader's answer: the leader's offset decides
            return Truncation(min(leader_end, end), leader_epoch, rounds)
        if own_epoch != leader_epoch:
            # an epoch the follower never had: cut to the end of its own older one and ask again
            end = min(own_end, end)
            epochs = epochs.truncate_from_end(end)
            continue
        agreed = leader_epoch
        return Truncation(min(own_end, leader_end, end), agreed, rounds)
    return Truncation(end, agreed, rounds)
