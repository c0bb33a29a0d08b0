"""The catalogue of finding kinds: every problem kafkalog-spark reports, by its stable name.

A finding's ``kind`` (the ``check`` column of ``index_findings``, the ``problem.kind`` of a view's row) is
always one of these names, so a CI gate or a query can rely on the vocabulary. Each kind has a default
severity; where the context changes it (a zero-filled index tail is normal on the active segment), the
meaning says how. :class:`~kafkalog_spark.findings.Finding` refuses a kind that is not listed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"  # data is damaged or unreadable: a reader could not trust what it got
    WARNING = "warning"  # suspicious, but Kafka itself tolerates it (e.g. a truncated tail)
    INFO = "info"  # worth knowing, normal for some topics (e.g. offset gaps after compaction)


E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO  # noqa: E741


@dataclass(frozen=True, slots=True)
class FindingKind:
    name: str
    severity: Severity  # the default; see ``meaning`` for the contexts that change it
    meaning: str
    source: str  # which part reports it: the file reader of a file kind, or a validation check


# (name, default severity, source, meaning). Grouped by what reports them, in the order of the layers.
_TABLE: list[tuple[str, Severity, str, str]] = [
    # Any file
    ("missing_file", E, "files", "a file the listing named is gone (info for an absent `.txnindex`, which is "
     "optional)"),
    ("unreadable_file", E, "files", "the file cannot be opened or read, or is not a regular file (a FIFO, socket, "
     "device or directory named like a Kafka file: never opened), or a directory cannot be listed"),
    ("file_too_large", E, "files", "a small file (index, checkpoint, snapshot) is larger than its cap: not read"),
    ("unknown_file", W, "dump", "`kafkalog dump` was given a file kind it does not know: skipped, as dump-log does"),
    # .log files: framing (FileRecords) and batches
    ("truncated_tail", W, ".log", "bytes after the last whole batch (dump-log: `Found N invalid bytes at the end`); "
     "a warning on the active segment, an error on a closed one (validation)"),
    ("corrupt_size", E, ".log", "a batch size field below the 14-byte minimum (zero-filled or damaged region)"),
    ("skipped_region", E, ".log", "bytes skipped after a corrupt size until the next batch whose CRC checks out"),
    ("oversized_batch", E, ".log", "a batch larger than the reader's cap: skipped"),
    ("batch_too_small", E, ".log", "a v2 batch smaller than its 61-byte header"),
    ("unknown_magic", E, ".log", "an entry whose magic byte is not 0, 1 or 2: skipped"),
    ("batch_crc_invalid", E, ".log", "a batch (or legacy message) whose stored CRC does not match its content "
     "(consumers fail with CorruptRecordException)"),
    ("unknown_codec", E, ".log", "a batch whose compression codec id is not one Kafka knows"),
    ("corrupt_message", E, ".log", "a legacy (magic 0/1) message that cannot be parsed"),
    ("decompression_failed", E, ".log", "a batch's compressed payload cannot be decompressed (or exceeds the cap)"),
    ("record_decode_failed", E, ".log", "a record inside a batch cannot be decoded (lengths, varints, headers)"),
    # .index / .timeindex (OffsetIndex, TimeIndex)
    ("index_bad_file_name", E, ".index", "the file name does not start with a 20-digit base offset"),
    ("index_too_large", E, ".index", "the offset index is larger than its cap: not read"),
    ("index_length_not_multiple", E, ".index", "the file length is not a multiple of 8 (Kafka's sanity check "
     "fails)"),
    ("index_last_offset_below_base", E, ".index", "the last entry's offset is below the base offset"),
    ("index_offset_below_base", E, ".index", "an entry's offset is below the base offset"),
    ("index_position_negative", E, ".index", "an entry's position is negative"),
    ("index_offsets_not_increasing", E, ".index", "an entry's offset is not above the previous entry's"),
    ("index_positions_not_increasing", E, ".index", "an entry's position is not above the previous entry's"),
    ("index_zero_tail", W, ".index", "zero-filled slots after the last entry (preallocated, not trimmed): info on "
     "the active segment, a warning on a closed one"),
    ("index_nonzero_tail", E, ".index", "non-zero bytes after the last entry, which dump-log ignores"),
    ("timeindex_bad_file_name", E, ".timeindex", "the file name does not start with a 20-digit base offset"),
    ("timeindex_too_large", E, ".timeindex", "the time index is larger than its cap: not read"),
    ("timeindex_length_not_multiple", E, ".timeindex", "the file length is not a multiple of 12 (Kafka's sanity "
     "check fails)"),
    ("timeindex_last_timestamp_before_first", E, ".timeindex", "the last entry's timestamp is below the first's "
     "(a warning where a zero tail causes it)"),
    ("timeindex_last_offset_below_base", E, ".timeindex", "the last entry's offset is below the base offset"),
    ("timeindex_offset_below_base", E, ".timeindex", "an entry's offset is below the base offset"),
    ("timeindex_timestamp_decreasing", E, ".timeindex", "a timestamp lower than the previous one ends the valid "
     "entries"),
    ("timeindex_timestamps_not_increasing", E, ".timeindex", "a timestamp not above the previous entry's "
     "(dump-log: `Found out of order timestamp`)"),
    ("timeindex_offsets_decreasing", E, ".timeindex", "an entry's offset is lower than the previous entry's"),
    ("timeindex_zero_tail", W, ".timeindex", "zero-filled slots after the last entry: info on the active segment, "
     "a warning on a closed one"),
    ("timeindex_nonzero_tail", E, ".timeindex", "non-zero bytes after the last entry, which dump-log ignores"),
    # .txnindex (TransactionIndex)
    ("txnindex_bad_file_name", E, ".txnindex", "the file name does not start with a 20-digit base offset"),
    ("txnindex_too_large", E, ".txnindex", "the transaction index is larger than its cap: not read"),
    ("txnindex_partial_tail", W, ".txnindex", "bytes after the last whole 34-byte entry (an interrupted append; "
     "Kafka ignores them)"),
    ("txnindex_unknown_version", E, ".txnindex", "an entry whose version is not 0"),
    ("txnindex_first_after_last", E, ".txnindex", "an aborted transaction whose firstOffset is above its "
     "lastOffset"),
    ("txnindex_last_offsets_not_increasing", E, ".txnindex", "an entry's lastOffset is not above the previous "
     "entry's"),
    ("txnindex_last_offset_below_base", E, ".txnindex", "an entry's lastOffset is below the base offset (Kafka's "
     "sanity check fails)"),
    # .snapshot (ProducerStateSnapshot)
    ("snapshot_bad_file_name", E, ".snapshot", "the file name does not start with a 20-digit offset"),
    ("snapshot_too_large", E, ".snapshot", "the producer snapshot is larger than its cap: not read"),
    ("snapshot_truncated", E, ".snapshot", "the file ends inside the header or an entry"),
    ("snapshot_bad_count", E, ".snapshot", "the entry count is negative or does not fit the file"),
    ("snapshot_trailing_bytes", W, ".snapshot", "bytes after the last entry the count announces"),
    ("snapshot_unknown_version", E, ".snapshot", "a snapshot version Kafka does not write"),
    ("snapshot_crc_mismatch", E, ".snapshot", "the stored CRC-32C does not match the entries (Kafka discards the "
     "snapshot and rebuilds producer state)"),
    # checkpoint and metadata files
    ("checkpoint_too_large", E, "checkpoint", "a checkpoint or meta.properties larger than its cap: not read"),
    ("checkpoint_not_utf8", E, "checkpoint", "bytes that are not UTF-8"),
    ("checkpoint_empty", I, "checkpoint", "an empty file or one without a count line: Kafka reads no entries"),
    ("checkpoint_bad_version", E, "checkpoint", "an unknown version line"),
    ("checkpoint_count_mismatch", E, "checkpoint", "the count line does not match the entry lines"),
    ("quorum_state_malformed", E, "quorum-state", "the KRaft `quorum-state` file is not the JSON object "
     "FileQuorumStateStore writes (leaderId, leaderEpoch, votedId, data_version)"),
    ("checkpoint_malformed", E, "checkpoint", "a line that is not a valid entry (Kafka fails the log dir)"),
    ("checkpoint_duplicate_entry", W, "checkpoint", "a topic-partition listed twice: the later line wins"),
    ("leader_epoch_not_monotonic", W, "leader-epoch-checkpoint", "epochs or start offsets that do not increase"),
    ("partition_metadata_bad_topic_id", E, "partition.metadata", "the topic id is not a base64 Uuid, or the zero "
     "Uuid"),
    ("meta_properties_bad_version", E, "meta.properties", "a version other than 0 or 1"),
    ("meta_properties_missing_key", E, "meta.properties", "node.id or cluster.id missing (required in version 1)"),
    ("meta_properties_bad_value", E, "meta.properties", "a node id that is not an int, or a directory id that is "
     "not a Uuid"),
    # internal topics (records of __consumer_offsets, __transaction_state, __share_group_state, __cluster_metadata)
    ("internal_record_unknown", W, "internal topics", "a record type or version this Kafka version's schemas do not "
     "know (written by a newer broker?): left out of the state views, raw bytes in the records view"),
    ("internal_record_undecodable", E, "internal topics", "a record whose bytes do not fit its schema: left out of the "
     "state views, raw bytes in the records view"),
    # offline consumer positions, transactions and the topic catalog (analyses of the internal topics)
    ("group_offset_below_log_start", W, "consumer_positions", "a group's committed offset is below the partition's "
     "log start offset: the group resets (auto.offset.reset) when it resumes, skipping or re-reading records"),
    ("group_offset_beyond_log_end", W, "consumer_positions", "a group's committed offset is beyond the partition's "
     "log end offset (the log was truncated or replaced, or the offset was set by hand): the group resets"),
    ("transaction_open", I, "open_transactions", "a transaction open in a data partition at the snapshot time, within "
     "its timeout; it holds back the last stable offset (read_committed consumers wait)"),
    ("transaction_hanging", E, "open_transactions", "a transaction open in a data partition past its timeout at the "
     "snapshot time, or one the transaction coordinator no longer has as ongoing: it pins the last stable offset "
     "until it is aborted (kafka-transactions abort)"),
    ("partition_topic_id_unknown", E, "catalog_checks", "a partition dir whose topic id (`partition.metadata`) the "
     "cluster metadata does not know: the broker will not serve it (a stray partition)"),
    ("partition_topic_id_mismatch", E, "catalog_checks", "a partition dir whose topic id is not the id the cluster "
     "metadata has for its topic name (a topic deleted and created again)"),
    ("deleted_topic_on_disk", W, "catalog_checks", "a partition dir of a topic the cluster metadata deleted, not yet "
     "removed (normal for file.delete.delay.ms after a deletion)"),
    # replicas of a partition on several brokers compared (replica_comparison)
    ("replica_divergent", E, "replica_comparison", "a replica holds records its partition's leader does not: it "
     "truncates them when it fetches from the leader again (after an unclean leader election, a lost disk, a "
     "restore); the finding names its first batch that goes"),
    ("replica_acknowledged_records_lost", E, "replica_comparison", "of a divergent replica's records, some were below "
     "its own high watermark: acknowledged to producers (acks=all) and not on the leader, so lost"),
    ("replica_batches_differ", E, "replica_comparison", "below the offset a replica truncates to, a batch differs "
     "from the leader's (offsets or CRC; for a compacted topic, a record's key or value): Kafka never repairs it"),
    ("replica_leader_epoch_differs", W, "replica_comparison", "a batch both replicas hold with the same CRC but "
     "another partitionLeaderEpoch (which the CRC does not cover)"),
    # tiered storage: the remote tier (__remote_log_metadata) against the local one
    ("remote_copy_not_finished", W, "tiered_storage", "a segment's copy to remote storage started "
     "(COPY_SEGMENT_STARTED) more than three of the broker's remote log manager task intervals before the run and "
     "has not finished: a failed or stuck upload (the broker copies it again under another id)"),
    ("remote_delete_not_finished", W, "tiered_storage", "a remote segment's deletion started "
     "(DELETE_SEGMENT_STARTED) more than three task intervals before the run and has not finished: its remote files "
     "may remain"),
    ("remote_log_gap", E, "tiered_storage", "offsets above the log start offset that neither tier holds: the remote "
     "log (its copied segments) ends below the local log start offset"),
    ("local_retention_waits_for_copy", W, "tiered_storage", "local segments past local retention that stay on disk "
     "because they are not copied to remote storage yet: the disk does not shrink until the copy"),
    # tiered storage: the remote store (the source's remoteStorage) against __remote_log_metadata
    ("remote_segment_missing", E, "remote_storage", "a remote segment __remote_log_metadata says is copied "
     "(COPY_SEGMENT_FINISHED) has no `.log` in the remote store: fetches of its offsets fail"),
    ("remote_segment_size_mismatch", E, "remote_storage", "a remote segment's `.log` in the remote store has "
     "another size than __remote_log_metadata records for it"),
    ("remote_segment_not_in_metadata", W, "remote_storage", "files of a remote segment that __remote_log_metadata "
     "does not hold (an upload that failed and was never cleaned up, a deletion finished in the metadata but not "
     "in the store, a deleted topic's leftovers): bytes the broker will never read or delete"),
    ("remote_log_metadata_missing", W, "remote_storage", "a remote store given without __remote_log_metadata in "
     "the paths: the store's segments are read as listed, whatever their state"),
    ("unknown_remote_file", W, "remote_storage", "a file in the remote store that is not named as LocalTieredStorage "
     "names its files: not read"),
    # validation: segments and batches
    ("batch_offsets_not_increasing", E, "validate", "a batch's first offset is not above the previous batch's "
     "last"),
    ("segment_overlap", E, "validate", "a segment holds offsets at or past the next segment's base offset"),
    ("segment_first_offset_below_name", E, "validate", "the first batch starts below the file name's offset"),
    ("segment_first_offset_above_name", I, "validate", "the first batch starts above the file name's offset "
     "(normal after compaction)"),
    ("segment_offset_gap", I, "validate", "offsets between two segments that no segment holds (normal after "
     "compaction)"),
    ("segment_log_missing", W, "validate", "index entries for a segment without a `.log` (the broker deletes such "
     "files on load)"),
    ("index_file_missing", W, "validate", "a live `.log` without its `.index` or `.timeindex` (rebuilt on load)"),
    ("stray_temp_file", W, "validate", "a `.deleted`, `.cleaned` or `.swap` segment file, or a `.checkpoint.part` / "
     "`.checkpoint.deleted` KRaft snapshot: an unfinished delete, clean, swap or snapshot write"),
    ("timeindex_last_not_max_timestamp", E, "validate", "a closed segment's last time index entry differs from its "
     "largest batch timestamp (a warning when the time index is empty)"),
    # validation: index entries against the batches (kafka-dump-log --verify-index-only, classified)
    ("index_position_beyond_log", E, "validate", "an offset index position at or past the `.log` size"),
    ("index_position_not_batch_boundary", E, "validate", "no batch starts at an offset index entry's position"),
    ("index_offset_before_batch", E, "validate", "an offset index entry's offset is below the batch at its position"),
    ("index_offset_inside_batch", W, "validate", "an offset index entry inside a batch, not its last offset (info "
     "for magic 0/1, which indexed an append's first offset)"),
    ("index_multi_batch_append", I, "validate", "an entry for the last offset of a multi-batch append: dump-log's "
     "false `Mismatch`"),
    ("index_offset_not_in_append", E, "validate", "an offset index entry's offset is in no batch of its append"),
    ("timeindex_timestamp_mismatch", E, "validate", "the batch ending at a time index entry's offset has another "
     "max timestamp (dump-log: `Found timestamp mismatch`)"),
    ("timeindex_offset_inside_batch", W, "validate", "a time index entry's offset is inside a batch with that max "
     "timestamp (lookups stay correct)"),
    ("timeindex_offset_not_in_log", E, "validate", "no batch of the segment holds a time index entry's offset"),
    # validation: partition-level files
    ("txnindex_abort_marker_missing", E, "validate", "an aborted transaction's lastOffset is not a control batch "
     "in its segment"),
    ("txnindex_marker_producer_mismatch", E, "validate", "the control batch at an aborted transaction's lastOffset "
     "belongs to another producer"),
    ("txnindex_marker_not_abort", E, "validate", "the control record at an aborted transaction's lastOffset is not "
     "an ABORT"),
    ("txnindex_entry_missing", E, "validate", "an ABORT marker without an entry in its segment's `.txnindex` "
     "while data of its transaction is still in the log (read_committed consumers would deliver aborted records); "
     "after the cleaner removed that data, Kafka keeps the marker without an entry"),
    ("snapshot_offset_outside_log", I, "validate", "a producer snapshot outside [log start, log end] (deleted on "
     "load)"),
    ("snapshot_entry_beyond_offset", W, "validate", "a producer's lastOffset at or past its snapshot's offset"),
    ("checkpoint_offset_outside_log", W, "validate", "a root checkpoint offset beyond the log end (or, for the "
     "cleaner, below the log start)"),
    ("checkpoint_missing_partition", W, "validate", "a root checkpoint names a partition the log dir does not hold"),
    ("recovery_point_missing", I, "validate", "a partition without a recovery point (recovered from offset 0 after "
     "an unclean shutdown)"),
    ("special_partition_dir", I, "validate", "a `-delete` or `-future` partition dir (a warning for `-stray`)"),
]

KINDS: dict[str, FindingKind] = {name: FindingKind(name, sev, meaning, source)
                                 for name, sev, source, meaning in _TABLE}
assert len(KINDS) == len(_TABLE), "a finding kind is listed twice"


def finding_kind(name: str) -> FindingKind:
    """The catalogue entry of ``name``; ValueError for a name that is not a finding kind."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"{name!r} is not a finding kind (see kafkalog_spark.finding_kinds)") from None


def markdown_table() -> str:
    """The catalogue as the docs print it (docs/finding-kinds.md)."""
    lines = ["| kind | default severity | reported by | meaning |", "|---|---|---|---|"]
    lines += [f"| `{k.name}` | {k.severity} | {k.source} | {k.meaning} |" for k in KINDS.values()]
    return "\n".join(lines)


def gate_table() -> str:
    """Which kinds fail ``kafkalog validate --fail-on LEVEL`` at their default severity, as the docs print it:
    each level fails on its own kinds and those of the levels above it."""
    lines = ["| with `--fail-on` | these kinds fail the run (at their default severity; the meanings say where the "
             "context changes it) |", "|---|---|"]
    for level, label in ((E, "`error` (default), `warning` or `info`"), (W, "`warning` or `info`"), (I, "`info`")):
        names = ", ".join(f"`{k.name}`" for k in KINDS.values() if k.severity is level)
        lines.append(f"| {label} | {level} kinds: {names} |")
    return "\n".join(lines)
