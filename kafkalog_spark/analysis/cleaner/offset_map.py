"""The dedupe pass over the dirty range (Kafka 3.9's ``Cleaner.buildOffsetMap``): the latest offset of each
key, as the ``SkimpyOffsetMap`` of one cleaner thread holds it, and how far the map reaches before it is full."""

from __future__ import annotations

from .log_segments import LogSegments
from .model_input import Batch, PartitionInput
from .results import PartitionResult
from .transaction_metadata import CleanedTransactionMetadata


def build_offset_map(inp: PartitionInput, res: PartitionResult, segs: LogSegments, by_segment: dict[int, list[Batch]],
                     start: int, end: int) -> tuple[dict[str, int], int]:
    """Cleaner.buildOffsetMap: MD5(key) -> latest offset over [start, end); returns (map, latestOffset).

    The walk goes on past a full map only to count the keys a full pass would need (dirtyDistinctKeys)."""
    capacity = inp.settings.map_capacity
    offset_map: dict[str, int] = {}
    wanted: set[str] = set()
    latest = -1
    full = False
    txns = CleanedTransactionMetadata(inp.aborted_txns)
    dirty = segs.values(start, end)
    for i, seg in enumerate(dirty):
        next_start = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
        for b in by_segment[seg.base_offset]:
            if b.is_control:
                txns.on_control_batch(b)
            elif not txns.on_batch(b):  # aborted batches never reach the map
                for x in b.records:
                    if x.key_hash is not None and x.offset >= start:
                        wanted.add(x.key_hash)
                        if full:
                            continue
                        if len(offset_map) >= capacity:  # checked before every put, even of a known key
                            full = True
                            res.offset_map_full, res.offset_map_full_at_offset = True, x.offset
                            continue
                        offset_map[x.key_hash] = x.offset
                        latest = x.offset
            if b.last_offset >= start and not full:
                latest = b.last_offset
        if not full:
            latest = next_start - 1  # fast-forward over offset gaps to the segment's end
    res.dirty_distinct_keys = len(wanted)
    return offset_map, latest
