"""A partition's live segments as the cleaner looks them up (Kafka 3.9's ``LogSegments.values`` / ``floor`` /
``nonActiveLogSegmentsFrom``), the batches each one holds, and ``LogSegment.largestTimestamp``."""

from __future__ import annotations

from bisect import bisect_right

from .model_input import Batch, Segment


class LogSegments:
    def __init__(self, segments: list[Segment]):
        self.list = sorted(segments, key=lambda s: s.base_offset)
        self.bases = [s.base_offset for s in self.list]

    def floor_index(self, offset: int) -> int | None:
        i = bisect_right(self.bases, offset) - 1
        return i if i >= 0 else None

    def values(self, start: int, end: int) -> list[Segment]:
        """Segments from the one holding ``start`` to the one holding ``end - 1`` (LogSegments.values)."""
        if start >= end:
            return []
        i = self.floor_index(start)
        lo = 0 if i is None else i
        return [s for s in self.list[lo:] if s.base_offset < end]

    @property
    def active(self) -> Segment:
        return self.list[-1]

    def non_active_from(self, start: int) -> list[Segment]:
        if start > self.active.base_offset:
            return []
        return self.values(start, self.active.base_offset)


def place_batches(batches: list[Batch], segments: LogSegments) -> tuple[list[Batch], dict[int, list[Batch]]]:
    """The batches of live segments in log order, and the same batches by their segment's base offset
    (every live segment has an entry). Batches of segments that are no longer live are dropped."""
    live = set(segments.bases)
    ordered = sorted((b for b in batches if b.segment in live), key=lambda b: (b.segment, b.position))
    by_segment: dict[int, list[Batch]] = {b: [] for b in segments.bases}
    for b in ordered:
        by_segment[b.segment].append(b)
    return ordered, by_segment


def largest_timestamp(seg: Segment, batches: list[Batch]) -> int:
    """LogSegment.largestTimestamp: the time index's last timestamp, else the file's mtime. Without a
    .timeindex file the broker rebuilds it on load, so the batches' largest timestamp stands in."""
    if seg.time_index_size is not None:
        ts = seg.max_indexed_timestamp if seg.max_indexed_timestamp is not None else -1
    else:
        ts = max((b.max_timestamp for b in batches), default=-1)
    return ts if ts >= 0 else seg.mtime_ms
