"""A replica's batch headers (the batches view's columns the comparison reads), as numpy arrays: a replica holds
millions of batches, compared a whole array at a time."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# the batches view's columns it holds, in its fields' order
COLUMNS = ("baseOffset", "lastOffset", "count", "crc", "partitionLeaderEpoch", "segmentBaseOffset", "position")


@dataclass(frozen=True)
class BatchHeaders:
    """A replica's batches in offset order, one array per field (count -1 where Kafka has none: legacy entries)."""

    base: np.ndarray
    last: np.ndarray
    count: np.ndarray
    crc: np.ndarray
    epoch: np.ndarray
    segment: np.ndarray  # the base offset of the segment holding it
    position: np.ndarray  # its byte position in that segment's `.log`

    @classmethod
    def of(cls, columns: dict[str, np.ndarray]) -> BatchHeaders:
        """From unsorted columns named as the batches view names them."""
        order = np.argsort(columns["baseOffset"], kind="stable")
        return cls(*(np.asarray(columns[n], dtype=np.int64)[order] for n in COLUMNS))

    def __len__(self) -> int:
        return len(self.base)

    def at(self, i: int) -> tuple[int, int, int]:
        """(base offset, segment base offset, byte position) of batch ``i``."""
        return int(self.base[i]), int(self.segment[i]), int(self.position[i])
