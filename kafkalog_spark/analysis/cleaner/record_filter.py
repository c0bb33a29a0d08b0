"""What the pass does to one batch (Kafka's ``Cleaner.cleanInto``: its ``RecordFilter`` with
``checkBatchRetention`` and ``shouldRetainRecord``, and ``MemoryRecords.filterTo`` that rewrites the batch):
which records stay and why, whether an emptied batch is kept, the delete horizon it gets, and the bytes of the
rebuilt batch."""

from __future__ import annotations

from .model_input import BATCH_OVERHEAD, Batch, Record, varint_size
from .producer_state import ProducerState
from .results import (
    ABORTED,
    BEYOND_MAP,
    KEYLESS,
    LATEST,
    MARKER_REMOVED,
    MARKER_RETAINED,
    SUPERSEDED,
    TOMBSTONE_EXPIRED,
    TOMBSTONE_RETAINED,
    PartitionResult,
    RecordFate,
    SegmentResult,
)
from .transaction_metadata import CleanedTransactionMetadata


def clean_batch(b: Batch, txns: CleanedTransactionMetadata, state: ProducerState, offset_map: dict[str, int],
                latest: int, retain_legacy: bool, now_ms: int, new_horizon: int, round_end: int, r: SegmentResult,
                res: PartitionResult | None, segment: int) -> tuple[list[Record] | None, int | None]:
    """Cleaner.cleanInto's RecordFilter on one batch. ``round_end``: the round's upper bound
    (:func:`.versions.round_upper_bound`). Returns (retained records, or None when the batch is dropped; the
    delete horizon the written batch carries)."""
    can_discard = txns.on_control_batch(b) if b.is_control else txns.on_batch(b)
    if b.is_control:
        discard_records = can_discard and b.delete_horizon_ms is not None and b.delete_horizon_ms <= now_ms
    else:
        discard_records = can_discard
    last_of_producer = False
    entry = state.producers.get(b.producer_id) if b.producer_id >= 0 else None
    if entry is not None:
        if entry.last_data_offset >= 0:
            last_of_producer = b.last_offset == entry.last_data_offset
        else:
            last_of_producer = b.is_control and b.producer_epoch == entry.producer_epoch
    if last_of_producer or b.last_offset + 1 == round_end:  # batch.nextOffset() == the round's upper bound
        retention = "RETAIN_EMPTY"
    else:
        retention = "DELETE" if discard_records else "DELETE_EMPTY"
    marker_for_empty_txn = can_discard and b.is_control

    kept: list[Record] = []
    contains_tombstones = False
    decisions: list[tuple[Record, bool, str]] = []
    for x in b.records:
        if retention == "DELETE" or discard_records:
            keep, why = False, (MARKER_REMOVED if b.is_control else ABORTED)
        elif b.is_control:
            keep, why = True, MARKER_RETAINED
        elif x.offset > latest:
            keep, why = True, BEYOND_MAP
        elif x.key_hash is None:
            keep, why = False, KEYLESS
        else:
            found = offset_map.get(x.key_hash, -1)
            if x.offset < found:
                keep, why = False, SUPERSEDED
            elif x.has_value:
                keep, why = True, LATEST
            else:
                if b.magic >= 2:
                    retain = b.delete_horizon_ms is None or now_ms < b.delete_horizon_ms
                else:
                    retain = retain_legacy
                keep, why = (True, TOMBSTONE_RETAINED) if retain else (False, TOMBSTONE_EXPIRED)
        if keep:
            kept.append(x)
            if not x.has_value and not b.is_control:
                contains_tombstones = True
        decisions.append((x, keep, why))

    horizon = b.delete_horizon_ms
    if kept:
        if b.magic >= 2 and (contains_tombstones or marker_for_empty_txn) and b.delete_horizon_ms is None:
            horizon = new_horizon
            r.delete_horizons_set += 1
        out: list[Record] | None = kept
    elif retention == "RETAIN_EMPTY" and b.magic >= 2:
        out, horizon = [], None  # DefaultRecordBatch.writeEmptyHeader: no delete horizon
    else:
        out, horizon = None, None

    for x, keep, why in decisions:
        tomb = not x.has_value and not b.is_control
        if keep:
            r.records_kept += 1
            if b.is_control:
                r.markers_kept += 1
            elif tomb:
                r.tombstones_kept += 1
        else:
            r.records_removed += 1
            if b.is_control:
                r.markers_removed += 1
            elif why == ABORTED:
                r.aborted_removed += 1
            elif why == KEYLESS:
                r.keyless_removed += 1
            elif why == SUPERSEDED:
                r.superseded_removed += 1
            if tomb:
                r.tombstones_removed += 1
        if res is not None:
            res.fates.append(RecordFate(segment, b.base_offset, x.offset, x.key_hash, tomb, b.is_control,
                                        b.control_type, keep, why, horizon if keep else None))
    return out, horizon


def rebuilt_size(b: Batch, kept: list[Record], horizon: int | None) -> int:
    """Bytes of the batch MemoryRecords.filterTo rebuilds from the retained records (exact for
    uncompressed v2; compressed and legacy batches are estimated from the share of records kept)."""
    if b.magic >= 2 and not b.compressed and all(x.body_without_timestamp is not None for x in kept):
        base_ts = horizon if horizon is not None and horizon >= 0 else kept[0].timestamp
        total = BATCH_OVERHEAD
        for x in kept:
            body = x.body_without_timestamp + varint_size(x.timestamp - base_ts)
            total += varint_size(body) + body
        return total

    def raw(x: Record) -> int:
        if x.legacy_size is not None:
            return x.legacy_size
        if x.body_without_timestamp is not None:
            return x.body_without_timestamp + 2
        return 1

    before = sum(raw(x) for x in b.records) or 1
    payload = b.size - (BATCH_OVERHEAD if b.magic >= 2 else 0)
    share = sum(raw(x) for x in kept) / before
    return (BATCH_OVERHEAD if b.magic >= 2 else 0) + round(payload * share)
