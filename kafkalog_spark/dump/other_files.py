"""`kafkalog dump` for the files next to `.log`: offset and time indexes, transaction indexes and
producer snapshots, as kafka-dump-log prints them (text) or one JSON object per entry."""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..findings import Finding, Severity
from ..log.offset_index import OffsetIndex
from ..log.producer_snapshot import ProducerStateSnapshot
from ..log.time_index import TimeIndex
from ..log.transaction_index import TransactionIndex
from .log_file import DumpOptions


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


def dump_other_file(path: str, opts: DumpOptions, findings: list[Finding]) -> Iterator[str]:
    suffix = "." + path.rsplit(".", 1)[-1]
    if suffix not in READERS:
        findings.append(Finding(path, -1, "unknown_file", f"Ignoring unknown file {path}", Severity.WARNING))
        return
    reader, as_json = READERS[suffix]
    parsed = reader.read(path)
    findings.extend(f for f in parsed.findings if f.severity != Severity.INFO)
    if opts.as_json:
        yield from (json.dumps(d) for d in as_json(parsed))
    else:
        yield from parsed.dump_lines()
