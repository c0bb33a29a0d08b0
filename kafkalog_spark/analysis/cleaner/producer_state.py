"""Producer state as a broker loading the log rebuilds it (Kafka 3.9's ``ProducerStateManager``: the latest
usable snapshot, expired producers dropped, then the batches after it replayed): which producers are still
active, for the cleaner's RETAIN_EMPTY rule, and the transactions that bound the last stable offset."""

from __future__ import annotations

from dataclasses import dataclass

from .model_input import Batch, PartitionInput, ProducerEntry


@dataclass
class ProducerState:
    producers: dict[int, ProducerEntry]
    open_txns: dict[int, int]  # producer id -> first offset of its open transaction
    unreplicated: list[tuple[int, int]]  # (first offset, marker offset) of txns completed during replay


def load_producer_state(inp: PartitionInput, ordered: list[Batch], log_start: int, log_end: int,
                        now_ms: int) -> ProducerState:
    """Latest producer snapshot in (logStartOffset, logEndOffset], entries not expired at ``now``, then
    the batches from the snapshot offset to the log end replayed (no snapshot: from the log start)."""
    expiry = inp.settings.producer_id_expiration_ms
    usable = [o for o in inp.snapshots if log_start < o <= log_end]
    producers: dict[int, ProducerEntry] = {}
    replay_from = log_start
    if usable:
        replay_from = max(usable)
        for e in inp.snapshots[replay_from]:
            if e.current_txn_first_offset < 0 and now_ms - e.last_timestamp >= expiry:
                continue  # isProducerExpired at load
            producers[e.producer_id] = ProducerEntry(e.producer_id, e.producer_epoch, e.last_data_offset,
                                                     e.last_timestamp, e.current_txn_first_offset)
    completed: list[tuple[int, int]] = []
    for b in ordered:
        if b.producer_id < 0 or b.base_offset < replay_from:
            continue
        e = producers.get(b.producer_id)
        if e is None:
            e = producers[b.producer_id] = ProducerEntry(b.producer_id, b.producer_epoch, -1, -1)
        if e.producer_epoch != b.producer_epoch:  # maybeUpdateProducerEpoch clears the batch metadata
            e.producer_epoch = b.producer_epoch
            e.last_data_offset = -1
        e.last_timestamp = b.max_timestamp
        if b.is_control:
            if b.control_type in ("COMMIT", "ABORT"):
                if e.current_txn_first_offset >= 0:
                    completed.append((e.current_txn_first_offset, b.last_offset))
                e.current_txn_first_offset = -1
        else:
            e.last_data_offset = b.last_offset
            if b.is_transactional and e.current_txn_first_offset < 0:
                e.current_txn_first_offset = b.base_offset
    # The periodic expiry (producer.id.expiration.check.interval.ms) drops idle producers without an
    # open transaction; at ``now`` they are gone.
    active = {pid: e for pid, e in producers.items()
              if e.current_txn_first_offset >= 0 or now_ms - e.last_timestamp < expiry}
    open_txns = {pid: e.current_txn_first_offset for pid, e in producers.items() if e.current_txn_first_offset >= 0}
    return ProducerState(active, open_txns, completed)
