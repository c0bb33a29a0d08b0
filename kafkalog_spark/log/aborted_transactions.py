"""What is aborted: Kafka's one rule, used by every reader of transactional data here.

A transaction of producer P that ended with an ABORT marker at offset L, and whose first record was at
offset F, is listed in the `.txnindex` of the segment holding the marker as (P, F, L). A record is aborted
when it is a transactional data record of P with F <= offset <= L for such an entry: a producer has at most
one transaction open at a time, so nothing else of P's lies in that range. This is the range form of what
the consumer does while fetching (``CompletedFetch``: aborted transactions queued by first offset, a
producer's batches skipped from F until its ABORT marker) and of the cleaner's
``CleanedTransactionMetadata``.

Callers: the source's ``read_committed`` isolation, the segment statistics' aborted-record counts and the
compaction preview's model of the cleaner.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

import numpy as np


class AbortedTransactions:
    """The aborted transactions of one partition, as ``(producerId, firstOffset, lastOffset)`` triples."""

    __slots__ = ("_by_producer",)

    def __init__(self, entries: Iterable[tuple[int, int, int]] = ()):
        by_producer: dict[int, list[tuple[int, int]]] = {}
        for producer_id, first, last in entries:
            by_producer.setdefault(int(producer_id), []).append((int(first), int(last)))
        self._by_producer = {pid: sorted(r) for pid, r in by_producer.items()}

    def __bool__(self) -> bool:
        return bool(self._by_producer)

    def find(self, producer_id: int, offset: int) -> tuple[int, int] | None:
        """The (firstOffset, lastOffset) of ``producer_id``'s aborted transaction holding ``offset``, if any."""
        ranges = self._by_producer.get(producer_id)
        if not ranges:
            return None
        i = bisect_right(ranges, (offset, np.iinfo(np.int64).max)) - 1
        if i >= 0 and ranges[i][0] <= offset <= ranges[i][1]:
            return ranges[i]
        return None

    def is_aborted(self, producer_id: int, offset: int, transactional: bool = True) -> bool:
        """Whether a data record (or batch, by any of its offsets) is aborted."""
        return transactional and self.find(producer_id, offset) is not None

    def mask(self, producer_ids: np.ndarray, offsets: np.ndarray, transactional: np.ndarray) -> np.ndarray:
        """The rule over arrays of records: True where the record is aborted (control records are never
        passed as aborted data: give ``transactional`` False for them)."""
        out = np.zeros(len(offsets), dtype=bool)
        if not self._by_producer:
            return out
        transactional = np.asarray(transactional, dtype=bool)
        producer_ids = np.asarray(producer_ids)
        offsets = np.asarray(offsets, dtype=np.int64)
        for pid in np.unique(producer_ids[transactional]):
            ranges = self._by_producer.get(int(pid))
            if not ranges:
                continue
            r = np.array(ranges, np.int64)
            rows = np.flatnonzero(transactional & (producer_ids == pid))
            i = np.searchsorted(r[:, 0], offsets[rows], side="right") - 1
            hit = (i >= 0) & (offsets[rows] <= r[np.maximum(i, 0), 1])
            out[rows[hit]] = True
        return out
