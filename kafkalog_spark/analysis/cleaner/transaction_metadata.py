"""Which transactions are aborted while a range of the log is read (Kafka 3.9's
``CleanedTransactionMetadata``, fed by ``log.collectAbortedTransactions``): data batches of an aborted
transaction never reach the offset map and are dropped by the pass; a marker may go once its transaction
has no batch left."""

from __future__ import annotations

import heapq

from .inputs import AbortedTxn, Batch


class CleanedTransactionMetadata:
    def __init__(self, aborted: list[AbortedTxn]):
        self._all = aborted
        self._queue: list[tuple[int, int, AbortedTxn]] = []
        self._seq = 0
        self.ongoing_committed: set[int] = set()
        self.ongoing_aborted: dict[int, list] = {}  # pid -> [txn, last observed batch offset or None]

    def add_range(self, start: int, end: int) -> None:
        """log.collectAbortedTransactions(start, end): aborted txns overlapping [start, end)."""
        for t in self._all:
            if t.last_offset >= start and t.first_offset < end:
                self._seq += 1
                heapq.heappush(self._queue, (t.first_offset, self._seq, t))

    def _consume_up_to(self, offset: int) -> None:
        while self._queue and self._queue[0][0] <= offset:
            t = heapq.heappop(self._queue)[2]
            self.ongoing_aborted.setdefault(t.producer_id, [t, None])

    def on_control_batch(self, b: Batch) -> bool:
        """True when the marker may be discarded."""
        self._consume_up_to(b.last_offset)
        if not b.records:
            return True  # an empty control batch was already cleaned
        if b.control_type == "ABORT":
            meta = self.ongoing_aborted.pop(b.producer_id, None)
            return not (meta is not None and meta[1] is not None)
        if b.control_type == "COMMIT":
            present = b.producer_id in self.ongoing_committed
            self.ongoing_committed.discard(b.producer_id)
            return not present
        return False

    def on_batch(self, b: Batch) -> bool:
        """True when the batch belongs to an aborted transaction."""
        self._consume_up_to(b.last_offset)
        if not b.is_transactional:
            return False
        meta = self.ongoing_aborted.get(b.producer_id)
        if meta is not None:
            meta[1] = b.last_offset
            return True
        self.ongoing_committed.add(b.producer_id)
        return False
