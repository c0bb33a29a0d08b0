"""Replicas of one partition on several brokers, compared offline (Kafka's replication rules, one file per class):

- :mod:`.leader_epoch_cache`: ``LeaderEpochFileCache``, a replica's epoch -> start offset lineage
  (``leader-epoch-checkpoint``) and the end offset of an epoch in it;
- :mod:`.fetcher_truncation`: where a follower truncates when it fetches from the leader again
  (``AbstractFetcherThread`` with the leader's diverging-epoch check, KIP-101/KIP-279/KIP-320);
- :mod:`.replica_set`: which partition dirs are replicas of one partition, and which of them leads;
- :mod:`.batch_headers`: a replica's batch headers as arrays;
- :mod:`.divergence`: one follower against its leader (truncation, what it drops, what differs below);
- :mod:`.replica_comparison`: the analysis over the views, one row per partition and replica.
"""
