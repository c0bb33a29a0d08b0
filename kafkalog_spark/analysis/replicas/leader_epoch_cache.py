"""A replica's leader-epoch lineage, as Kafka's ``LeaderEpochFileCache`` (storage/internals/epoch) answers it: the
entries of ``leader-epoch-checkpoint`` (epoch -> the first offset written in it), in increasing epoch and offset."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


@dataclass(frozen=True)
class EpochEntry:
    epoch: int
    start_offset: int


class LeaderEpochFileCache:
    """The lineage of one replica. Entries out of order (a damaged file) keep Kafka's map semantics: one entry per
    epoch, looked up by epoch."""

    def __init__(self, entries: Iterable[EpochEntry | tuple[int, int]]) -> None:
        by_epoch: dict[int, EpochEntry] = {}
        for e in entries:
            entry = e if isinstance(e, EpochEntry) else EpochEntry(*e)
            by_epoch[entry.epoch] = entry
        self._entries = [by_epoch[k] for k in sorted(by_epoch)]
        self._epochs = [e.epoch for e in self._entries]

    @property
    def entries(self) -> list[EpochEntry]:
        return list(self._entries)

    def latest_epoch(self) -> int | None:
        return self._epochs[-1] if self._epochs else None

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) for ``requested_epoch``: the largest epoch at or below it and the start offset of the
        first larger epoch, or the log end offset when the latest epoch is asked for; (``requested_epoch``, the first
        larger epoch's start) when it is below every epoch known; undefined (-1, -1) above every epoch (Kafka's
        ``endOffsetFor``, which a leader answers OffsetsForLeaderEpoch and a fetch's last fetched epoch with)."""
        if requested_epoch == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self._epochs and self._epochs[-1] == requested_epoch:
            return requested_epoch, log_end_offset
        higher = bisect_right(self._epochs, requested_epoch)
        if higher == len(self._epochs):
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        floor = higher - 1
        if floor < 0:
            return requested_epoch, self._entries[higher].start_offset
        return self._entries[floor].epoch, self._entries[higher].start_offset

    def truncate_from_end(self, end_offset: int) -> LeaderEpochFileCache:
        """The lineage after the log is truncated to ``end_offset``: the entries starting at or after it removed."""
        kept = list(self._entries)
        while end_offset >= 0 and kept and kept[-1].start_offset >= end_offset:  # Kafka's truncateFromEnd
            kept.pop()
        return LeaderEpochFileCache(kept)
