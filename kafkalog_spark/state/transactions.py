"""What `__transaction_state` says about transactional ids: every version of each id's TransactionMetadata,
the latest (what the transaction coordinator loads) flagged."""

from __future__ import annotations

from typing import Any

from ..format.internal_topics import TXN_STATES
from .groups import latest_by_key, millis_or_none
from .internal_records import InternalRecord

TRANSACTION_LOG = "TransactionLog"
ONGOING_STATES = ("Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence")  # markers not yet all written


def transaction_rows(records: list[InternalRecord]) -> list[dict[str, Any]]:
    """One row per version of a transactional id's metadata (schema ``TRANSACTIONS``)."""
    latest = {id(r) for r in latest_by_key(records, (TRANSACTION_LOG,)).values()}
    rows = []
    for r in records:
        d = r.decoded
        if d.key_type != TRANSACTION_LOG or d.error is not None:
            continue
        v = d.value or {}
        status = v.get("TransactionStatus")
        rows.append({
            "transactionalId": d.key["TransactionalId"], "producerId": v.get("ProducerId"),
            "producerEpoch": v.get("ProducerEpoch"),
            "previousProducerId": None if v.get("PreviousProducerId", -1) < 0 else v["PreviousProducerId"],
            "state": None if status is None else (TXN_STATES[status] if 0 <= status < len(TXN_STATES)
                                                  else f"unknown({status})"),
            "partitions": [{"topic": p["Topic"], "partition": i}
                           for p in v.get("TransactionPartitions") or [] for i in p["PartitionIds"]],
            "timeoutMs": v.get("TransactionTimeoutMs"),
            "startTimestamp": millis_or_none(v.get("TransactionStartTimestampMs")),
            "lastUpdateTimestamp": millis_or_none(v.get("TransactionLastUpdateTimestampMs")),
            "isTombstone": d.value is None, "isLatest": id(r) in latest,
            "recordOffset": r.offset, "recordTimestamp": r.timestamp_ms, "segmentBaseOffset": r.segment_base_offset})
    return rows
