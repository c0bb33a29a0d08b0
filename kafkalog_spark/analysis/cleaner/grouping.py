"""Which source segments the pass merges into one cleaned segment (Kafka 3.9's ``Cleaner.groupSegmentsBySize``):
a group stays within segment.bytes, within segment.index.bytes for both indexes, and its offsets within an
int of its base offset."""

from __future__ import annotations

from .model_input import Segment
from .settings import INT_MAX


def group_segments(segments: list[Segment], max_size: int, max_index_size: int,
                   first_uncleanable: int) -> list[list[Segment]]:
    """Cleaner.groupSegmentsBySize."""
    def idx(size: int | None, entry: int) -> int:
        return (size or 0) // entry * entry  # AbstractIndex.sizeInBytes: whole entries

    groups: list[list[Segment]] = []
    rest = list(segments)
    while rest:
        head = rest.pop(0)
        group = [head]
        log_size, index_size, time_size = head.log_size, idx(head.index_size, 8), idx(head.time_index_size, 12)
        while rest:
            nxt = rest[0]
            last_offset = rest[1].base_offset - 1 if len(rest) > 1 else first_uncleanable - 1
            if not (log_size + nxt.log_size <= max_size
                    and index_size + idx(nxt.index_size, 8) <= max_index_size
                    and time_size + idx(nxt.time_index_size, 12) <= max_index_size
                    and (nxt.log_size == 0 or last_offset - group[-1].base_offset <= INT_MAX)):
                break
            group.append(rest.pop(0))
            log_size += nxt.log_size
            index_size += idx(nxt.index_size, 8)
            time_size += idx(nxt.time_index_size, 12)
        groups.append(group)
    return groups
