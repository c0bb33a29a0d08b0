"""The replicas of one partition and which of them leads: partition dirs of the same topic id and partition on
brokers of one cluster (``meta.properties``' cluster.id; ``node.id`` names the broker). A topic deleted and created
again has a new id, so its dirs are never compared with its predecessor's; ``-delete`` and ``-future`` dirs are no
replicas (the source does not list them as partitions).

The leader is the one the cluster's metadata last recorded (PartitionRecord, PartitionChangeRecord), when its log
dir is among those read. With no leader (-1: its last replica shut down), the replica the controller elects when
the brokers return is one of the ISR it kept (on Kafka 4.x, of the eligible leader replicas too, KIP-966: the ISR
is emptied by the shutdowns and its last members kept there), the one that led last: of those read, the highest
latest epoch. Without metadata, or with the leader's dir not read, the replica with the highest latest epoch in its
``leader-epoch-checkpoint`` (the last to lead), then the longest log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .fetcher_truncation import ReplicaLog

if TYPE_CHECKING:
    from .batch_headers import BatchHeaders

LEADER_FROM_METADATA = "metadata"
LEADER_FROM_ISR = "metadata-isr"
LEADER_FROM_EPOCHS = "highest-epoch"


@dataclass
class Replica:
    log_dir: str
    broker_id: int | None
    log: ReplicaLog | None  # None until its context is read
    high_watermark: int | None
    compacted: bool = False
    batches: BatchHeaders | None = None  # its batch headers, in offset order
    records: dict[int, tuple[str | None, str | None]] = field(default_factory=dict)  # offset -> key, value hashes

    def sort_key(self) -> tuple:
        """Highest latest epoch, then the longest log, then the lowest broker id, then the log dir: a total order."""
        latest = self.log.epochs.latest_epoch()
        return (-(latest if latest is not None else -1), -self.log.log_end_offset,
                self.broker_id if self.broker_id is not None else 1 << 31, self.log_dir)


@dataclass(frozen=True)
class PartitionLeadership:
    """What the cluster's metadata last recorded for the partition (None fields: no metadata read)."""

    leader: int | None = None
    leader_epoch: int | None = None
    isr: tuple[int, ...] = ()  # with the eligible leader replicas (4.x): whom a leaderless partition is led by next


def choose_leader(replicas: Sequence[Replica], leadership: PartitionLeadership) -> tuple[Replica | None, str | None]:
    """The replica the others are compared with, and where that choice came from (:data:`LEADER_FROM_METADATA`,
    :data:`LEADER_FROM_ISR` or :data:`LEADER_FROM_EPOCHS`); (None, None) without replicas."""
    if not replicas:
        return None, None
    by_broker = {r.broker_id: r for r in replicas if r.broker_id is not None}
    if leadership.leader is not None and leadership.leader >= 0 and leadership.leader in by_broker:
        return by_broker[leadership.leader], LEADER_FROM_METADATA
    if leadership.leader == -1:
        in_isr = [r for r in replicas if r.broker_id in leadership.isr]
        if in_isr:
            return min(in_isr, key=Replica.sort_key), LEADER_FROM_ISR
    return min(replicas, key=Replica.sort_key), LEADER_FROM_EPOCHS
