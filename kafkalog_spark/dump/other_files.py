"""`kafkalog dump` for the files next to `.log`: offset and time indexes (with the tool's checks against
the `.log`, --verify-index-only and --index-sanity-check), transaction indexes and producer snapshots,
as kafka-dump-log prints them (text) or one JSON object per entry."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import numpy as np

from ..findings import Finding, Severity
from ..kafka_versions import KafkaVersion
from ..log.files import open_read
from ..log.offset_index import OFFSET_INDEX_DTYPE, OffsetIndex
from ..log.producer_snapshot import ProducerStateSnapshot
from ..log.time_index import NO_TIMESTAMP, TimeIndex
from ..log.transaction_index import TransactionIndex
from .log_file import DumpOptions, java_long
from .log_walk import INT_MAX, LogWalk
from .tool_errors import ToolCrash, ToolErrors

CORRUPT_INDEX = "org.apache.kafka.storage.internals.log.CorruptIndexException"


def _sibling(absolute_path: str, suffix: str) -> str:
    """new File(file.getAbsoluteFile().getParent(), <name up to the first dot> + suffix)"""
    parent, name = os.path.split(absolute_path)
    return os.path.join(parent, name.split(".")[0] + suffix)


def _open_index(absolute_path: str) -> None:
    """new OffsetIndex/TimeIndex(file, baseOffset, -1, false) as DumpLogSegments opens an index
    (AbstractIndex.createAndAssignMmap): a missing file is created, then refused because the tool passes
    maxIndexSize -1. The tool leaves that empty file behind, so a second run would find an empty index;
    we never write, so every run is the first."""
    try:
        with open_read(absolute_path):
            pass
    except OSError as e:
        raise ToolCrash("java.lang.IllegalArgumentException", "Invalid max index size: -1") from e


def _sanity(index: OffsetIndex | TimeIndex, absolute_path: str) -> None:
    """The index's sanityCheck (storage/.../internals/log/OffsetIndex.java, TimeIndex.java), raising as it does
    at the first condition that fails."""
    failures = index.kafka_sanity_failures()
    if failures:
        raise ToolCrash(CORRUPT_INDEX, failures[0].exception_message(absolute_path))


def dump_index(path: str, absolute_path: str, opts: DumpOptions, errors: ToolErrors) -> Iterator[str]:
    """DumpLogSegments.dumpIndex: each entry printed (unless --verify-index-only) and checked against
    the last offset of the batch at its position in the `.log` (a mismatch goes to stderr later)."""
    base = java_long(os.path.basename(path).split(".")[0])
    log = LogWalk(_sibling(absolute_path, ".log"))
    _open_index(absolute_path)
    index = OffsetIndex.read(path, base_offset=base)
    if index.slot_count == 0:
        yield f"{path} is empty."
        return
    if opts.index_sanity_check:
        _sanity(index, absolute_path)
        yield f"{path} passed sanity check."
        return
    for offset, position in zip(index.offsets.tolist(), index.positions.tolist(), strict=True):
        first = next(log.batches_from(position, opts.max_message_size), None)
        if first is None:  # slice.batches().iterator().next() on no batch
            raise ToolCrash("java.util.NoSuchElementException")
        if first.last_offset != offset:
            errors.add(errors.index_mismatches, absolute_path, (offset, first.last_offset))
        if not opts.verify_index_only:
            yield f"offset: {offset} position: {position}"


def kafka_lookup(index_path: str, base_offset: int, target: int) -> int:
    """The position OffsetIndex.lookup(target) gives, searching the RAW slots (zero tail and disorder
    included) as Kafka's AbstractIndex.indexSlotRangeFor does: a binary search of the hot (last 1024)
    slots or the rest, for the largest slot whose offset is <= target; (base, 0) below the first slot."""
    with open_read(index_path) as f:  # it exists: dump_time_index checked (_open_index)
        raw = np.frombuffer(f.read(), OFFSET_INDEX_DTYPE, count=f.size() // 8)
    n = len(raw)
    offsets = raw["relative_offset"].astype(np.int64) + base_offset

    def search(lo: int, hi: int) -> int:
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if offsets[mid] > target:
                hi = mid - 1
            elif offsets[mid] < target:
                lo = mid
            else:
                return mid
        return lo

    if n == 0 or offsets[0] > target:
        return 0
    hot = max(0, n - 1 - 8192 // 8)
    slot = search(hot, n - 1) if offsets[hot] < target else search(0, hot)
    return int(raw["position"][slot])


def dump_time_index(path: str, absolute_path: str, opts: DumpOptions, errors: ToolErrors) -> Iterator[str]:
    """DumpLogSegments.dumpTimeIndex: each entry printed (unless --verify-index-only) and checked: the
    batch ending at its offset must exist (found through the offset index) and hold that max timestamp,
    and timestamps must increase."""
    base = java_long(os.path.basename(path).split(".")[0])
    log = LogWalk(_sibling(absolute_path, ".log"))
    offset_index = _sibling(absolute_path, ".index")
    _open_index(offset_index)  # opened before the time index itself, so its absence comes first
    _open_index(absolute_path)
    index = TimeIndex.read(path, base_offset=base)
    if opts.index_sanity_check:
        _sanity(index, absolute_path)
        yield f"{path} passed sanity check."
        return
    prev = NO_TIMESTAMP
    for ts, offset in zip(index.dump_timestamps.tolist(), index.dump_offsets.tolist(), strict=True):
        start = kafka_lookup(offset_index, base, offset)
        batch = next((b for b in log.batches_from(start, INT_MAX) if b.last_offset >= offset), None)
        if batch is None:
            errors.add(errors.time_not_found, absolute_path, (offset, -1))
        elif batch.last_offset != offset:
            errors.add(errors.time_not_found, absolute_path, (offset, batch.last_offset))
        else:
            max_ts = max(NO_TIMESTAMP, log.max_record_timestamp(batch))
            if max_ts != ts:
                errors.add(errors.time_mismatches, absolute_path, (ts, max_ts))
            if prev >= ts:
                errors.add(errors.time_out_of_order, absolute_path, (ts, prev))
        if not opts.verify_index_only:
            yield f"timestamp: {ts} offset: {offset}"
        prev = ts


def txn_index_lines(index: TransactionIndex, version: KafkaVersion) -> list[str]:
    """4.x reads entries as the AbortedTxn message, which has no version field: it prints `version: 0`
    for every entry that it reads."""
    lines = index.dump_lines()
    if version == KafkaVersion.V4:
        lines = ["version: 0 " + line.split(" ", 2)[2] for line in lines]
    return lines


def snapshot_lines(snapshot: ProducerStateSnapshot, version: KafkaVersion) -> list[str]:
    """3.9 ends `lastTimestamp: T ` with a space and adds the batch part after it; 4.x puts the space
    before the batch part, so a producer without batch metadata ends its line without one."""
    lines = snapshot.dump_lines()
    if version == KafkaVersion.V4:
        lines = [line.removesuffix(" ") for line in lines]
    return lines


def _index_json(index: OffsetIndex) -> Iterator[dict]:
    for o, p in zip(index.offsets.tolist(), index.positions.tolist(), strict=True):
        yield {"kind": "index", "offset": o, "position": p}


def _time_index_json(index: TimeIndex) -> Iterator[dict]:
    for t, o in zip(index.timestamps.tolist(), index.offsets.tolist(), strict=True):
        yield {"kind": "timeindex", "timestamp": t, "offset": o}


def _txn_index_json(index: TransactionIndex) -> Iterator[dict]:
    for t in index.aborted_txns:
        yield {"kind": "abortedTxn", "version": t.version, "producerId": t.producer_id, "firstOffset": t.first_offset,
               "lastOffset": t.last_offset, "lastStableOffset": t.last_stable_offset}


def _snapshot_json(snapshot: ProducerStateSnapshot) -> Iterator[dict]:
    for p in snapshot.producers:
        yield {"kind": "producer", "producerId": p.producer_id, "producerEpoch": p.producer_epoch,
               "coordinatorEpoch": p.coordinator_epoch, "currentTxnFirstOffset": p.current_txn_first_offset,
               "lastTimestamp": p.timestamp, "firstSequence": p.first_sequence, "lastSequence": p.last_sequence,
               "lastOffset": p.last_offset, "offsetDelta": p.offset_delta, "timestamp": p.timestamp}


READERS = {
    ".index": (OffsetIndex, _index_json),
    ".timeindex": (TimeIndex, _time_index_json),
    ".txnindex": (TransactionIndex, _txn_index_json),
    ".snapshot": (ProducerStateSnapshot, _snapshot_json),
}


def dump_other_file(path: str, opts: DumpOptions, findings: list[Finding], errors: ToolErrors | None = None,
                    absolute_path: str | None = None) -> Iterator[str]:
    """One `.index`, `.timeindex`, `.txnindex` or `.snapshot` file (the suffix is checked by the caller)."""
    errors = ToolErrors(opts.kafka_version) if errors is None else errors
    absolute_path = absolute_path or os.path.join(os.getcwd(), path)
    suffix = "." + path.rsplit(".", 1)[-1]
    reader, as_json = READERS[suffix]
    parsed = reader.read(path)
    findings.extend(f for f in parsed.findings if f.severity != Severity.INFO)
    if opts.as_json:
        yield from (json.dumps(d) for d in as_json(parsed))
    elif suffix == ".index":
        yield from dump_index(path, absolute_path, opts, errors)
    elif suffix == ".timeindex":
        yield from dump_time_index(path, absolute_path, opts, errors)
    elif suffix == ".txnindex":
        yield from txn_index_lines(parsed, opts.kafka_version)
    else:
        yield from snapshot_lines(parsed, opts.kafka_version)
