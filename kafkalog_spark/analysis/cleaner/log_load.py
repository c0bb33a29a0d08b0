"""The offsets a broker loading this log starts from (Kafka 3.9's ``UnifiedLog``): the log start offset, the
log end offset, the high watermark and the last stable offset (``UnifiedLog.lastStableOffset``, from
``ProducerStateManager.firstUnstableOffset``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..loaded_offsets import loaded_offsets, log_end_offset
from .log_segments import LogSegments
from .model_input import Batch, PartitionInput
from .producer_state import ProducerState, load_producer_state


@dataclass(frozen=True)
class LogOffsets:
    log_start: int
    log_end: int
    high_watermark: int
    high_watermark_source: str  # checkpoint (replication-offset-checkpoint) or logEndOffset
    last_stable: int


def load_offsets(inp: PartitionInput, segs: LogSegments, ordered: list[Batch],
                 now_ms: int) -> tuple[LogOffsets, ProducerState]:
    """The log's offsets at load and the producer state rebuilt on the way (it bounds the last stable
    offset)."""
    log_end = log_end_offset(segs.active.base_offset, (b.last_offset for b in ordered))
    loaded = loaded_offsets(segs.bases[0], log_end, inp.log_start_checkpoint, inp.high_watermark_checkpoint)
    log_start, hw = loaded.log_start_offset, loaded.high_watermark
    hw_source = loaded.high_watermark_source.log_offsets_label
    state = load_producer_state(inp, ordered, log_start, log_end, now_ms)
    # Transactions completed during replay count as unstable until their marker is below the high watermark.
    unstable = list(state.open_txns.values()) + [first for first, marker in state.unreplicated if marker >= hw]
    first_unstable = max(min(unstable), log_start) if unstable else None
    lso = first_unstable if first_unstable is not None and first_unstable < hw else hw
    return LogOffsets(log_start, log_end, hw, hw_source, lso), state
