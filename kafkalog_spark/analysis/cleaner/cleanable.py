"""Whether Kafka 3.9's cleaner picks this log now, and which range it may clean (``LogCleanerManager``):
``cleanableOffsets`` (the first dirty offset, the first uncleanable offset and what bounds it),
``calculateCleanableBytes`` and ``LogToClean`` (clean and cleanable bytes, the dirty ratio),
``maxCompactionDelay``, and the filter of ``grabFilthiestCompactedLog`` that says why a log is or is not
picked."""

from __future__ import annotations

from .log_load import LogOffsets
from .log_segments import LogSegments, largest_timestamp
from .model_input import Batch, PartitionInput
from .results import PartitionResult
from .settings import LONG_MAX, CleanerSettings


def choose_log(inp: PartitionInput, res: PartitionResult, segs: LogSegments, by_segment: dict[int, list[Batch]],
               offsets: LogOffsets, now_ms: int) -> tuple[int, int]:
    """Fills the choice into ``res``; returns (first dirty offset, first uncleanable offset): the pass
    cleans the segments between them."""
    s = inp.settings
    first_dirty, uncleanable = _cleanable_offsets(inp, res, segs, by_segment, offsets, now_ms)
    first_uncleanable = _cleanable_bytes(res, segs, first_dirty, uncleanable)
    res.max_compaction_delay_ms = _max_compaction_delay(s, segs, by_segment, first_dirty, now_ms)
    _pick(res, s)
    return first_dirty, first_uncleanable


def _cleanable_offsets(inp: PartitionInput, res: PartitionResult, segs: LogSegments,
                       by_segment: dict[int, list[Batch]], offsets: LogOffsets, now_ms: int) -> tuple[int, int]:
    """LogCleanerManager.cleanableOffsets: (first dirty offset, uncleanable offset)."""
    s = inp.settings
    active = segs.active
    res.checkpoint_dirty_offset = inp.cleaner_checkpoint
    first_dirty = inp.cleaner_checkpoint if inp.cleaner_checkpoint is not None else offsets.log_start
    if first_dirty < offsets.log_start or first_dirty > offsets.log_end:
        first_dirty, res.first_dirty_reset = offsets.log_start, True
    limits = {"activeSegment": active.base_offset, "lastStableOffset": offsets.last_stable}  # ties: the first names it
    if s.min_compaction_lag_ms > 0:
        for seg in segs.non_active_from(first_dirty):
            if largest_timestamp(seg, by_segment[seg.base_offset]) > now_ms - s.min_compaction_lag_ms:
                limits["minCompactionLag"] = seg.base_offset
                break
    low = min(limits.values())
    uncleanable = max(first_dirty, low)
    res.uncleanable_reason = next(k for k, v in limits.items() if v == low)
    if uncleanable > low:
        res.uncleanable_reason = "firstDirtyOffset"
    res.first_dirty_offset, res.uncleanable_offset = first_dirty, uncleanable
    return first_dirty, uncleanable


def _cleanable_bytes(res: PartitionResult, segs: LogSegments, first_dirty: int, uncleanable: int) -> int:
    """LogToClean / calculateCleanableBytes; returns the first uncleanable segment's base offset."""
    first_unclean_seg = next(iter(segs.non_active_from(uncleanable)), segs.active)
    first_uncleanable = first_unclean_seg.base_offset
    res.first_uncleanable_offset = first_uncleanable
    res.clean_bytes = sum(x.log_size for x in segs.values(-1, first_dirty))
    res.cleanable_bytes = sum(x.log_size for x in segs.values(min(first_dirty, first_uncleanable), first_uncleanable))
    res.total_bytes = res.clean_bytes + res.cleanable_bytes
    res.dirty_ratio = res.cleanable_bytes / res.total_bytes if res.total_bytes > 0 else None
    return first_uncleanable


def _max_compaction_delay(s: CleanerSettings, segs: LogSegments, by_segment: dict[int, list[Batch]],
                          first_dirty: int, now_ms: int) -> int:
    """LogCleanerManager.maxCompactionDelay: how long past max.compaction.lag.ms the oldest dirty record is."""
    firsts = [by_segment[x.base_offset][0].max_timestamp for x in segs.non_active_from(first_dirty)
              if by_segment[x.base_offset]]
    earliest = min((t for t in firsts if t > 0), default=LONG_MAX)
    clean_until = now_ms - max(s.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest < clean_until else 0


def _pick(res: PartitionResult, s: CleanerSettings) -> None:
    """Whether the cleaner would clean the log now (``would_clean``) and why (``clean_reason``)."""
    if not s.compact:
        res.clean_reason = "notCompacted"
    elif res.total_bytes <= 0:
        res.clean_reason = "nothingCleanable"  # LogToClean.totalBytes is 0 (only an active segment): skipped
    elif res.max_compaction_delay_ms > 0 and res.cleanable_bytes > 0:
        res.would_clean, res.clean_reason = True, "maxCompactionLag"
    elif res.dirty_ratio is not None and res.dirty_ratio > s.min_cleanable_dirty_ratio:
        res.would_clean, res.clean_reason = True, "dirtyRatio"
    elif res.cleanable_bytes <= 0:
        res.clean_reason = "nothingCleanable"
    else:
        res.clean_reason = "belowMinCleanableDirtyRatio"
    if res.would_clean and (not s.cleaner_enabled or s.cleaner_threads < 1):
        res.would_clean, res.clean_reason = False, "cleanerDisabled"
    if res.would_clean and s.map_slots * s.dedupe_load_factor <= 1:
        res.would_clean, res.clean_reason = False, "offsetMapTooSmall"  # Cleaner's require(slots * lf > 1)
