"""Which transactions are aborted while the cleaner reads a range of the log (Kafka 3.9's
``CleanedTransactionMetadata``, fed by ``log.collectAbortedTransactions``): data batches of an aborted
transaction never reach the offset map and are dropped by the pass; an ABORT marker may go once no batch of
its transaction is left, a COMMIT marker once no batch of its transaction is left either.

Whether a batch is aborted is Kafka's one rule (:mod:`kafkalog_spark.log.aborted_transactions`), the same
the source's read_committed and the segment statistics apply. The cleaner collects the aborted transactions
overlapping each range it cleans; every batch it looks at lies in such a range, so looking them up among all
of the partition's aborted transactions gives the same answer.
"""

from __future__ import annotations

from ...log.aborted_transactions import AbortedTransactions
from .model_input import AbortedTxn, Batch


class CleanedTransactionMetadata:
    def __init__(self, aborted: list[AbortedTxn]):
        self._aborted = AbortedTransactions((t.producer_id, t.first_offset, t.last_offset) for t in aborted)
        self._observed: set[tuple[int, int]] = set()  # (producer id, first offset) of aborted txns with a batch seen
        self.ongoing_committed: set[int] = set()

    def on_control_batch(self, b: Batch) -> bool:
        """True when the marker may be discarded."""
        if not b.records:
            return True  # an empty control batch was already cleaned
        if b.control_type == "ABORT":
            txn = self._aborted.find(b.producer_id, b.last_offset)
            return txn is None or (b.producer_id, txn[0]) not in self._observed
        if b.control_type == "COMMIT":
            present = b.producer_id in self.ongoing_committed
            self.ongoing_committed.discard(b.producer_id)
            return not present
        return False

    def on_batch(self, b: Batch) -> bool:
        """True when the batch belongs to an aborted transaction."""
        if not b.is_transactional:
            return False
        txn = self._aborted.find(b.producer_id, b.last_offset)
        if txn is not None:
            self._observed.add((b.producer_id, txn[0]))
            return True
        self.ongoing_committed.add(b.producer_id)
        return False
