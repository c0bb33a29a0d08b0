"""The offsets a broker loading a log starts from, and where each comes from: the one home of that rule for the
retention plan, the cleaner model (compaction preview, ``log_offsets``) and ``partition_stats``.

As Kafka 3.9 loads a log (``LogLoader``, ``UnifiedLog``'s constructor, ``updateHighWatermark``): the log start
offset is the log-start-offset-checkpoint's entry, raised to the first segment's base offset (a tiered log keeps
the entry: segments below it may be in remote storage; its local log start offset is still raised); the broker
writes an entry only once the start is above the first segment's base, so a file without one means the first
segment's base. The high watermark is replication-offset-checkpoint's entry clamped to [local log start offset,
log end offset]; without one it is taken as the log end offset (a leader that caught up).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum


class OffsetSource(Enum):
    """Where a loaded offset comes from (one vocabulary; each output table keeps its own labels, below)."""

    CHECKPOINT = "checkpoint"  # the root checkpoint file's entry for the partition
    FIRST_SEGMENT = "first_segment"  # log start: the checkpoint file has no entry, as normal
    ASSUMED_FIRST_SEGMENT = "assumed_first_segment"  # log start: no checkpoint file (or not known)
    LOG_END_OFFSET = "log_end_offset"  # high watermark: no entry, taken as the log end offset

    @property
    def retention_label(self) -> str:
        """The label in the retention plan's ``logStartOffsetSource``/``highWatermarkSource`` columns."""
        return "assumed_log_end_offset" if self is OffsetSource.LOG_END_OFFSET else self.value

    @property
    def log_offsets_label(self) -> str:
        """The label in the compaction preview's and ``log_offsets``' ``highWatermarkSource`` columns."""
        return "logEndOffset" if self is OffsetSource.LOG_END_OFFSET else self.value


@dataclass(frozen=True)
class LoadedOffsets:
    log_start_offset: int
    log_start_offset_source: OffsetSource
    local_log_start_offset: int  # the first offset in the local segments (= log start offset unless tiered)
    high_watermark: int
    high_watermark_source: OffsetSource
    log_end_offset: int


def log_end_offset(active_base_offset: int, last_offsets: Iterable[int]) -> int:
    """The next offset to write: after the last batch, or the active segment's base offset when it is empty."""
    return max([active_base_offset] + [o + 1 for o in last_offsets])


def log_start_offset(first_segment_base: int, log_start_checkpoint: int | None, *, remote_log: bool = False,
                     log_start_file: bool | None = True) -> tuple[int, OffsetSource]:
    """The log start offset and its source (``log_start_file``: whether log-start-offset-checkpoint exists; None:
    not known)."""
    if log_start_checkpoint is not None:
        return (log_start_checkpoint if remote_log else max(log_start_checkpoint, first_segment_base),
                OffsetSource.CHECKPOINT)
    return first_segment_base, OffsetSource.FIRST_SEGMENT if log_start_file else OffsetSource.ASSUMED_FIRST_SEGMENT


def loaded_offsets(first_segment_base: int, log_end: int, log_start_checkpoint: int | None,
                   high_watermark_checkpoint: int | None, *, remote_log: bool = False,
                   log_start_file: bool | None = True) -> LoadedOffsets:
    """The offsets at load from the first segment's base, the log end offset and the partition's root checkpoint
    entries (None: no entry). ``log_start_file``: whether log-start-offset-checkpoint exists (None: not known)."""
    start, start_source = log_start_offset(first_segment_base, log_start_checkpoint, remote_log=remote_log,
                                           log_start_file=log_start_file)
    local_start = max(start, first_segment_base)
    if high_watermark_checkpoint is not None:
        hw, hw_source = min(max(high_watermark_checkpoint, local_start), log_end), OffsetSource.CHECKPOINT
    else:
        hw, hw_source = log_end, OffsetSource.LOG_END_OFFSET
    return LoadedOffsets(start, start_source, local_start, hw, hw_source, log_end)
