"""The replication rules the replica comparison applies, alone: a replica's epoch lineage as Kafka's
LeaderEpochFileCache answers ``endOffsetFor`` (its javadoc's cases), and where a follower truncates when it fetches
from its leader again (AbstractFetcherThread's getOffsetTruncationState after the leader's diverging-epoch answer,
repeated until both name one epoch). The real brokers' truncations are the oracle of tests/test_replica_comparison.py.
"""

from __future__ import annotations

from kafkalog_spark.analysis.replicas.fetcher_truncation import ReplicaLog, truncation_offset
from kafkalog_spark.analysis.replicas.leader_epoch_cache import LeaderEpochFileCache
from kafkalog_spark.analysis.replicas.replica_set import (
    LEADER_FROM_EPOCHS,
    LEADER_FROM_ISR,
    LEADER_FROM_METADATA,
    PartitionLeadership,
    Replica,
    choose_leader,
)


def log(entries: list[tuple[int, int]], end: int, start: int = 0) -> ReplicaLog:
    return ReplicaLog(LeaderEpochFileCache(entries), start, end)


def test_end_offset_for_an_epoch_as_kafka_answers_it() -> None:
    cache = LeaderEpochFileCache([(0, 0), (1, 10), (2, 20)])
    assert cache.end_offset_for(2, 30) == (2, 30)  # the latest epoch: the log end offset
    assert cache.end_offset_for(1, 30) == (1, 20)  # the next epoch's start
    assert cache.end_offset_for(0, 30) == (0, 10)
    assert cache.end_offset_for(3, 30) == (-1, -1)  # above every epoch: undefined
    assert cache.end_offset_for(-1, 30) == (-1, -1)
    gaps = LeaderEpochFileCache([(2, 20), (4, 40)])
    assert gaps.end_offset_for(1, 50) == (1, 20)  # below every epoch: the first epoch's start, the epoch asked
    assert gaps.end_offset_for(3, 50) == (2, 40)  # an epoch it never had: the largest below, ended where 4 began
    assert gaps.truncate_from_end(40).entries == LeaderEpochFileCache([(2, 20)]).entries
    assert gaps.truncate_from_end(41).latest_epoch() == 4


def test_a_prefix_of_the_leader_is_not_truncated() -> None:
    leader = log([(0, 0), (1, 10)], 30)
    cut = truncation_offset(log([(0, 0), (1, 10)], 25), leader)
    assert (cut.offset, cut.rounds) == (25, 0)
    cut = truncation_offset(log([(0, 0)], 8), leader)  # behind by a whole epoch, still a prefix
    assert (cut.offset, cut.rounds) == (8, 0)


def test_the_old_leader_truncates_where_the_new_leaders_epoch_began() -> None:
    """Broker A led epoch 1 from offset 10 and wrote to 40 alone; B, which had replicated up to 25, was elected
    uncleanly in epoch 2 and wrote on: A keeps its log up to 25."""
    old_leader = log([(0, 0), (1, 10)], 40)
    new_leader = log([(0, 0), (1, 10), (2, 25)], 35)
    cut = truncation_offset(old_leader, new_leader)
    assert (cut.offset, cut.epoch, cut.rounds) == (25, 1, 1)


def test_divergence_over_several_epochs_walks_back_to_the_largest_common_one() -> None:
    """KIP-279: A holds epochs 0, 1, 3; the leader 0, 1, 2, 4, epoch 1 ending at 20 on it. A first learns that
    epoch 3 is unknown (the leader answers epoch 2, ended at 35), cuts to the end of its own epoch 1 (30), asks for
    epoch 1 and cuts to 20."""
    follower = log([(0, 0), (1, 10), (3, 30)], 45)
    leader = log([(0, 0), (1, 10), (2, 20), (4, 35)], 50)
    cut = truncation_offset(follower, leader)
    assert (cut.offset, cut.epoch, cut.rounds) == (20, 1, 2)


def test_a_follower_ahead_in_the_leaders_own_epoch_is_cut_to_its_end() -> None:
    cut = truncation_offset(log([(0, 0), (2, 10)], 50), log([(0, 0), (2, 10)], 40))
    assert (cut.offset, cut.epoch) == (40, 2)


def test_a_follower_without_epochs_keeps_at_most_the_leaders_end() -> None:
    assert truncation_offset(log([], 50), log([(0, 0)], 40)).offset == 40
    assert truncation_offset(log([], 30), log([(0, 0)], 40)).offset == 30


def replica(broker: int, entries: list[tuple[int, int]], end: int) -> Replica:
    return Replica(f"/b{broker}", broker, log(entries, end), end)


def test_the_leader_is_the_metadatas_then_the_isrs_then_the_highest_epoch() -> None:
    a, b, c = replica(1, [(0, 0), (3, 9)], 12), replica(2, [(0, 0), (5, 10)], 11), replica(3, [(0, 0)], 30)
    assert choose_leader([a, b, c], PartitionLeadership(3, 6, (3,))) == (c, LEADER_FROM_METADATA)
    # no leader (its last replica shut down): of the ISR kept, the one that led last
    assert choose_leader([a, b, c], PartitionLeadership(-1, 7, (1, 3))) == (a, LEADER_FROM_ISR)
    assert choose_leader([a, b, c], PartitionLeadership()) == (b, LEADER_FROM_EPOCHS)
    # the metadata's leader is not among the dirs read: the highest epoch stands in
    assert choose_leader([a, c], PartitionLeadership(2, 6, (2,))) == (a, LEADER_FROM_EPOCHS)
