"""The cleaning pass over one partition (Kafka's ``Cleaner.doClean`` / ``cleanSegments`` / ``cleanInto``):
the offset map over the dirty range, the segments below its end offset merged in groups and each batch
filtered, with the delete horizons the pass uses; or, when no pass runs, every record as it is."""

from __future__ import annotations

from .grouping import group_segments
from .log_segments import LogSegments
from .model_input import BATCH_OVERHEAD, Batch, PartitionInput, Segment
from .offset_map import build_offset_map
from .producer_state import ProducerState
from .record_filter import clean_batch, rebuilt_size
from .results import NO_PASS, NOT_IN_PASS, GroupResult, PartitionResult, RecordFate, SegmentResult
from .transaction_metadata import CleanedTransactionMetadata
from .versions import round_upper_bound


def _section(seg: Segment, first_dirty: int, first_uncleanable: int, nxt: int | None) -> str:
    if seg.is_active:
        return "active"
    if seg.base_offset >= first_uncleanable:
        return "uncleanable"
    if nxt is not None and nxt <= first_dirty:
        return "clean"
    return "cleanable"


def _segment_results(res: PartitionResult, segs: LogSegments, by_segment: dict[int, list[Batch]], first_dirty: int,
                     first_uncleanable: int) -> dict[int, SegmentResult]:
    """Each live segment's section and counts before any pass, everything kept."""
    out = {}
    for i, seg in enumerate(segs.list):
        nxt = segs.list[i + 1].base_offset if i + 1 < len(segs.list) else None
        r = SegmentResult(seg.base_offset, nxt, seg.is_active, _section(seg, first_dirty, first_uncleanable, nxt),
                          log_size=seg.log_size)
        for b in by_segment[seg.base_offset]:
            r.batches += 1
            r.records += len(b.records)
            if b.is_control:
                r.markers += len(b.records)
            else:
                r.tombstones += sum(1 for x in b.records if not x.has_value)
        r.records_kept = r.records
        r.bytes_after = seg.log_size
        out[seg.base_offset] = r
    res.segments = list(out.values())
    return out


def no_pass(res: PartitionResult, segs: LogSegments, by_segment: dict[int, list[Batch]], first_dirty: int,
            first_uncleanable: int, keep_fates: bool) -> None:
    """The partition as it stays when no pass runs: every record kept."""
    results = _segment_results(res, segs, by_segment, first_dirty, first_uncleanable)
    for r in results.values():
        r.tombstones_kept, r.markers_kept = r.tombstones, r.markers
    if keep_fates:
        for seg in segs.list:
            for b in by_segment[seg.base_offset]:
                for x in b.records:
                    res.fates.append(RecordFate(seg.base_offset, b.base_offset, x.offset, x.key_hash,
                                                not x.has_value and not b.is_control, b.is_control, b.control_type,
                                                True, NO_PASS, b.delete_horizon_ms))


def simulate_pass(inp: PartitionInput, res: PartitionResult, segs: LogSegments, by_segment: dict[int, list[Batch]],
                  state: ProducerState, first_dirty: int, first_uncleanable: int, now_ms: int,
                  keep_fates: bool) -> None:
    """Cleaner.doClean over [first dirty, first uncleanable): fills the pass into ``res``."""
    s = inp.settings
    res.pass_simulated = True
    offset_map, latest = build_offset_map(inp, res, segs, by_segment, first_dirty, first_uncleanable)
    res.offset_map_entries = len(offset_map)
    end_offset = latest + 1
    res.end_offset = end_offset
    clean = segs.values(0, first_dirty)
    legacy_horizon = clean[-1].mtime_ms - s.delete_retention_ms if clean else 0
    res.legacy_delete_horizon_ms = legacy_horizon
    new_horizon = now_ms + s.delete_retention_ms
    round_end = round_upper_bound(s.kafka_version, first_uncleanable, res.high_watermark)
    results = _segment_results(res, segs, by_segment, first_dirty, first_uncleanable)
    txns = CleanedTransactionMetadata(inp.aborted_txns)
    in_pass = segs.values(0, end_offset)
    groups = group_segments(in_pass, s.segment_bytes, s.segment_index_bytes, first_uncleanable)
    for gi, group in enumerate(groups):
        for seg in group:
            r = results[seg.base_offset]
            r.in_pass, r.group_base_offset, r.group_index = True, group[0].base_offset, gi
            r.records_kept = r.bytes_after = 0
            batches = by_segment[seg.base_offset]
            retain_legacy = seg.mtime_ms > legacy_horizon
            for b in batches:
                kept_records, horizon = clean_batch(b, txns, state, offset_map, latest, retain_legacy, now_ms,
                                                    new_horizon, round_end, r, res if keep_fates else None,
                                                    seg.base_offset)
                if kept_records is None:
                    r.batches_removed += 1
                elif not kept_records:
                    r.empty_batches_retained += 1
                    r.bytes_after += BATCH_OVERHEAD
                elif len(kept_records) == len(b.records) and horizon == b.delete_horizon_ms:
                    r.bytes_after += b.size
                else:
                    r.bytes_after += rebuilt_size(b, kept_records, horizon)
    if any(r.delete_horizons_set for r in results.values()):
        res.new_delete_horizon_ms = new_horizon
    for group in groups:
        rs = [results[x.base_offset] for x in group]
        res.groups.append(GroupResult(
            group[0].base_offset, group[-1].base_offset, len(group), sum(x.log_size for x in group),
            sum(x.bytes_after for x in rs), sum((x.index_size or 0) // 8 * 8 for x in group),
            sum((x.time_index_size or 0) // 12 * 12 for x in group)))
    if keep_fates:
        for seg in segs.list:
            if results[seg.base_offset].in_pass:
                continue
            for b in by_segment[seg.base_offset]:
                for x in b.records:
                    res.fates.append(RecordFate(seg.base_offset, b.base_offset, x.offset, x.key_hash,
                                                not x.has_value and not b.is_control, b.is_control, b.control_type,
                                                True, NOT_IN_PASS, b.delete_horizon_ms))
        res.fates.sort(key=lambda f: f.offset)
    for r in results.values():
        if not r.in_pass:
            r.tombstones_kept, r.markers_kept = r.tombstones, r.markers
