"""The stable schemas of every view, in one place, shared by the decoder, the Spark source and the jobs.

Column names are Kafka's own (as ``kafka-dump-log`` and the record batch classes print them), in
camelCase like Spark's built-in Kafka source (``timestampType``). Timestamps that Kafka stores as
milliseconds with ``-1`` for "none" stay ``long`` milliseconds on batch-level columns, where ``-1``
is meaningful (empty batches); the per-record ``timestamp`` is a Spark timestamp, null for none.

The Arrow schemas are derived from the Spark ones exactly as Spark derives them, because Spark 4.2
rejects batches whose Arrow schema differs in any way (nullability and time zone included).
"""

from __future__ import annotations

from functools import cache

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

_LOCATION = [
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("segmentBaseOffset", LongType()),  # the segment file this row was read from
    StructField("position", LongType()),  # byte position of the batch in that .log file
]

# Rows read from a KRaft snapshot (`__cluster_metadata-0/<end offset>-<epoch>.checkpoint`) instead of a segment:
# the snapshot's id (it holds the metadata state up to, not including, that offset). Null on segment rows,
# whose segmentBaseOffset is null on snapshot rows.
_SNAPSHOT = [
    StructField("snapshotEndOffset", LongType()),
    StructField("snapshotEpoch", IntegerType()),
]

BATCHES = StructType(
    _LOCATION
    + [
        StructField("size", IntegerType()),  # batch size in bytes, framing included (sizeInBytes)
        StructField("baseOffset", LongType()),  # null for a legacy compressed wrapper (not decompressed)
        StructField("lastOffset", LongType()),
        StructField("count", IntegerType()),  # null for legacy entries (Kafka's countOrNull)
        StructField("magic", ByteType()),
        StructField("crc", LongType()),
        StructField("isValid", BooleanType()),
        StructField("attributes", ShortType()),
        StructField("compresscodec", StringType()),
        StructField("timestampType", StringType()),
        StructField("isTransactional", BooleanType()),
        StructField("isControl", BooleanType()),
        StructField("deleteHorizonMs", LongType()),  # null when the batch has none
        StructField("partitionLeaderEpoch", IntegerType()),
        StructField("baseTimestamp", LongType()),
        StructField("maxTimestamp", LongType()),
        StructField("producerId", LongType()),
        StructField("producerEpoch", ShortType()),
        StructField("baseSequence", IntegerType()),
        StructField("lastSequence", IntegerType()),
    ]
    + _SNAPSHOT
)

HEADER = StructType([StructField("key", StringType()), StructField("value", BinaryType())])

RECORDS = StructType(
    _LOCATION
    + [
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", StringType()),
        StructField("key", BinaryType()),  # null key stays null
        StructField("value", BinaryType()),  # null value (a tombstone) stays null; empty is not null
        StructField("headers", ArrayType(HEADER)),
        StructField("keySize", IntegerType()),  # -1 for null, as dump-log prints it
        StructField("valueSize", IntegerType()),
        StructField("sequence", IntegerType()),
        StructField("baseOffset", LongType()),
        StructField("magic", ByteType()),
        StructField("compresscodec", StringType()),
        StructField("isTransactional", BooleanType()),
        StructField("isControl", BooleanType()),
        StructField("controlType", StringType()),  # COMMIT, ABORT, ... for control records
        StructField("coordinatorEpoch", IntegerType()),  # for COMMIT/ABORT markers
        StructField("producerId", LongType()),
        StructField("producerEpoch", ShortType()),
        StructField("partitionLeaderEpoch", IntegerType()),
        StructField("isValid", BooleanType()),  # the batch's (or legacy message's) CRC check
        StructField("crc", LongType()),  # the batch's CRC (v2), or the legacy message's own
    ]
    + _SNAPSHOT
)


# One row per segment piece a task decoded (a split of a `.log` file), its records' aggregates (the view
# `record_stats`, computed next to the decode by :class:`kafkalog_spark.log.record_stats.RecordStats`): a segment's
# are the sums (min, max) of its pieces'. The record columns are null for a piece without records.
KEY_SKETCH_SIZE = 4096  # keyHashes: at most this many; distinct keys are counted exactly up to it
RECORD_STATS = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("segmentBaseOffset", LongType()),
        StructField("position", LongType()),  # where the piece starts in the .log file
        StructField("records", LongType()),
        StructField("controlRecords", LongType()),
        StructField("dataRecords", LongType()),
        StructField("tombstones", LongType()),  # data records with a null value
        StructField("keylessRecords", LongType()),  # data records with a null key
        StructField("abortedRecords", LongType()),  # data records of aborted transactions (the .txnindex's)
        StructField("payloadBytes", LongType()),  # the data records' keys, values, header keys and values
        StructField("maxRecordSize", LongType()),  # the largest data record's payload
        StructField("minTimestamp", LongType()),  # ms
        StructField("batchBytes", LongType()),  # the batches' bytes on disk
        StructField("bytesBeforeCompression", LongType()),  # ... with their records uncompressed
        StructField("keyHashes", ArrayType(LongType())),  # the data records' distinct keys: their k smallest hashes
    ]
    + _SNAPSHOT
)


@cache
def arrow_schema(spark_schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects for ``spark_schema`` (what its strict check compares against)."""
    import inspect

    from pyspark.sql.pandas.types import to_arrow_schema

    # Spark builds the schema it checks batches against with its own to_arrow_schema, whose signature
    # changed: 4.2 takes timezone= (its Python data source worker passes "UTC"), 4.0 and 4.1 take
    # timestamp_utc= and default to UTC. Call it as the running Spark's worker does, so that every field,
    # nullability and time zone included, is the one it expects.
    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(spark_schema, timezone="UTC")
    return to_arrow_schema(spark_schema)


# One row per segment: what the analyses take of its batches (problem rows left out), computed where the segment is
# read (:func:`kafkalog_spark.log.segment_facts.batch_summary_row`, the one home of these rules): the contract between
# reading a segment and the analyses that read its batches' aggregates (docs/nightly.md, Segment facts). Keyed by
# logDir, topic, partition and segmentBaseOffset (and ``tier`` where the remote tier is read). Every column is nullable,
# as a part of the decoded view is (its struct may be null); the nested types are those of the Spark aggregation this
# replaced, which the batch summaries kept by earlier runs (``decoded_rows``) have.
BATCH_SUMMARY_KEYS = StructType([
    StructField("logDir", StringType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("segmentBaseOffset", LongType()),
])
BATCH_SUMMARY = StructType(
    [
        StructField("batches", LongType()),
        StructField("declaredRecords", LongType()),  # the batches' record counts summed (legacy entries: none)
        StructField("firstOffset", LongType()),  # the smallest base offset (a legacy wrapper's last offset)
        StructField("lastOffset", LongType()),
        StructField("maxTimestamp", LongType()),  # the largest, -1 included
        StructField("largestTimestamp", LongType()),  # the largest at or above 0, as retention reads it
        StructField("maxTimestampPosition", LongType()),  # the first batch holding maxTimestamp
        StructField("timestampTypes", ArrayType(StringType(), False)),
        StructField("batchBytes", LongType()),
        StructField("avgBatchSize", DoubleType()),
        StructField("maxBatchSize", IntegerType()),
        StructField("transactionalBatches", LongType()),
        StructField("controlBatches", LongType()),
        StructField("invalidBatches", LongType()),  # CRC mismatch
        StructField("emptyBatches", LongType()),
        StructField("deleteHorizonBatches", LongType()),
        StructField("producerIds", LongType()),  # distinct producer ids (>= 0)
        StructField("codecMix", MapType(StringType(), LongType(), False)),  # batches per codec
        StructField("firstPosition", LongType()),  # the first batch's (the smallest position)
        StructField("firstBatchSize", IntegerType()),
        StructField("firstBatchMaxTimestamp", LongType()),
        StructField("firstBatchLastOffset", LongType()),
        StructField("firstBatchBaseOffset", LongType()),
    ]
)


def batch_summary_schema(tier: bool = False) -> StructType:
    """The batch summary's rows: :data:`BATCH_SUMMARY_KEYS`, ``tier`` when the remote tier is read, then
    :data:`BATCH_SUMMARY`."""
    keys = list(BATCH_SUMMARY_KEYS.fields) + ([StructField("tier", StringType())] if tier else [])
    return StructType(keys + list(BATCH_SUMMARY.fields))


# A PERMISSIVE read turns each finding into a row whose ``problem`` is set and whose data columns are
# null (the location columns say where): the job goes on and the problem is queryable.
PROBLEM = StructType(
    [
        StructField("severity", StringType()),
        StructField("kind", StringType()),
        StructField("file", StringType()),
        StructField("position", LongType()),
        StructField("detail", StringType()),
    ]
)


INDEX_FINDINGS = StructType(
    [
        StructField("logDir", StringType()),  # the broker log dir the partition (or root checkpoint) is in
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("baseOffset", LongType()),  # the segment's base offset; null when not segment-specific
        StructField("severity", StringType()),  # error, warning or info (kafkalog_spark.findings.Severity)
        StructField("check", StringType()),  # stable snake_case name of the check (or of the reader finding)
        StructField("file", StringType()),  # the file the problem is in (path as the views name it)
        StructField("position", LongType()),  # byte position in ``file``; -1 when not positional
        StructField("expected", StringType()),  # what a healthy file would hold there (null: see detail)
        StructField("found", StringType()),  # what the file holds
        StructField("detail", StringType()),  # explanation: why it matters, what is normal
    ]
)
"""The output of :func:`kafkalog_spark.analysis.index_validation.index_findings`: one row per problem.

``severity``: ``error`` = damaged or inconsistent (a reader or the broker would go wrong); ``warning`` =
suspicious but tolerated by Kafka (it repairs or ignores it); ``info`` = normal in some situations
(compaction, a copy of a running broker's directory), reported so it can be explained."""


def with_problem(schema: StructType) -> StructType:
    """A view's schema as the Spark source returns it: the view's columns, ``logDir`` (the broker log dir the
    row comes from: replicas of a partition in several brokers' log dirs stay apart) and ``problem``."""
    return StructType([*schema.fields, StructField("logDir", StringType()), StructField("problem", PROBLEM)])


SEGMENTS = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("baseOffset", LongType()),
        # live, or deleted/cleaned/swap for unfinished operations; a KRaft snapshot file is "snapshot", or
        # "partial" (`.checkpoint.part`) / "deleted" (`.checkpoint.deleted`), with baseOffset null
        StructField("status", StringType()),
        StructField("isActive", BooleanType()),
        StructField("nextBaseOffset", LongType()),  # null for the active segment
        StructField("logFile", StringType()),
        StructField("logSize", LongType()),
        StructField("indexSize", LongType()),
        StructField("timeIndexSize", LongType()),
        StructField("txnIndexSize", LongType()),
        StructField("hasProducerSnapshot", BooleanType()),
        StructField("logModified", TimestampType()),
        StructField("indexModified", TimestampType()),  # the offset index's (the cleaner keeps logModified)
        StructField("timeIndexModified", TimestampType()),
        StructField("indexEntries", IntegerType()),  # valid entries (before any zero tail)
        StructField("timeIndexEntries", IntegerType()),
        StructField("lastIndexedOffset", LongType()),
        StructField("maxIndexedTimestamp", LongType()),  # last time index entry: the segment's largest
    ]
    + _SNAPSHOT
)

INDEX = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("segmentBaseOffset", LongType()),
        StructField("file", StringType()),
        StructField("indexType", StringType()),  # offset or time
        StructField("slot", IntegerType()),
        StructField("offset", LongType()),
        StructField("position", LongType()),  # offset index only
        StructField("timestamp", LongType()),  # time index only (milliseconds)
    ]
)

PARTITION_FILES = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("file", StringType()),
        StructField("fileType", StringType()),
        StructField("entry", IntegerType()),
        StructField("offset", LongType()),  # checkpoint offsets; snapshot offset from its name
        StructField("epoch", IntegerType()),  # leader epoch (leader-epoch-checkpoint, quorum-state)
        StructField("startOffset", LongType()),
        StructField("producerId", LongType()),
        StructField("producerEpoch", ShortType()),
        StructField("lastSequence", IntegerType()),
        StructField("lastOffset", LongType()),
        StructField("offsetDelta", IntegerType()),
        StructField("timestamp", LongType()),
        StructField("coordinatorEpoch", IntegerType()),
        StructField("currentTxnFirstOffset", LongType()),
        StructField("firstOffset", LongType()),
        StructField("lastStableOffset", LongType()),
        StructField("topicId", StringType()),
        StructField("leaderId", IntegerType()),  # quorum-state: the KRaft leader (-1: none known)
        StructField("votedId", IntegerType()),  # quorum-state: the candidate voted for in that epoch (-1: none)
    ]
)


# The views of the internal topics (`decodeInternal` and the state views, kafkalog_spark.state). Each row says where
# its record was read: the internal topic's partition (sourcePartition), the record's offset and time, its segment.
_SOURCE_RECORD = [
    StructField("sourcePartition", IntegerType()),  # the __consumer_offsets / __transaction_state partition
    StructField("recordOffset", LongType()),
    StructField("recordTimestamp", TimestampType()),
    StructField("segmentBaseOffset", LongType()),
]

# The records view's decoded form of an internal topic's records (option decodeInternal=true): null elsewhere.
DECODED_INTERNAL = [
    StructField("keyType", StringType()),  # OffsetCommit, GroupMetadata, TransactionLog, TOPIC_RECORD, LEADER_CHANGE...
    StructField("keyVersion", ShortType()),
    StructField("decodedKey", StringType()),  # JSON, as Kafka's generated JsonConverter writes the message
    StructField("valueVersion", ShortType()),
    StructField("decodedValue", StringType()),
    StructField("decodeError", StringType()),  # why the record could not be decoded (its raw bytes stay)
]

CONSUMER_OFFSETS = StructType(
    [
        StructField("group", StringType()),
        StructField("topic", StringType()),  # the partition the offset is committed for
        StructField("partition", IntegerType()),
        StructField("committedOffset", LongType()),  # null on a tombstone (the offset was deleted or expired)
        StructField("leaderEpoch", IntegerType()),
        StructField("metadata", StringType()),
        StructField("commitTimestamp", TimestampType()),
        StructField("expireTimestamp", TimestampType()),  # only value version 1 has one
        StructField("topicId", StringType()),  # value version 4 (Kafka 4.x)
        StructField("isTombstone", BooleanType()),
        StructField("txnStatus", StringType()),  # committed, aborted, open for a TxnOffsetCommit; null otherwise
        StructField("isLatest", BooleanType()),  # the version the coordinator holds (a tombstone: none)
    ]
    + _SOURCE_RECORD
)

ASSIGNED_PARTITION = StructType([StructField("topic", StringType()), StructField("topicId", StringType()),
                                 StructField("partition", IntegerType())])
GROUP_MEMBER = StructType(
    [
        StructField("memberId", StringType()),
        StructField("groupInstanceId", StringType()),
        StructField("clientId", StringType()),
        StructField("clientHost", StringType()),
        StructField("sessionTimeoutMs", IntegerType()),
        StructField("rebalanceTimeoutMs", IntegerType()),
        StructField("memberEpoch", IntegerType()),  # the classic generation, or the member's epoch
        StructField("memberState", StringType()),  # new protocols: STABLE, UNREVOKED_PARTITIONS, ...
        StructField("assignment", ArrayType(ASSIGNED_PARTITION)),  # new protocols name topics by id only
    ]
)

GROUP_METADATA = StructType(
    [
        StructField("group", StringType()),
        StructField("groupType", StringType()),  # classic, consumer (KIP-848), share (KIP-932), streams (KIP-1071)
        StructField("protocolType", StringType()),
        StructField("protocol", StringType()),  # the classic group's assignor
        StructField("state", StringType()),  # as the coordinator loads it: Empty, Stable, ... or Dead (deleted)
        StructField("generation", IntegerType()),  # classic generation, or the group epoch
        StructField("leader", StringType()),
        StructField("stateTimestamp", TimestampType()),
        StructField("members", ArrayType(GROUP_MEMBER)),
        StructField("isDeleted", BooleanType()),
    ]
    + _SOURCE_RECORD
)

TRANSACTIONS = StructType(
    [
        StructField("transactionalId", StringType()),
        StructField("producerId", LongType()),
        StructField("producerEpoch", ShortType()),
        StructField("previousProducerId", LongType()),
        StructField("state", StringType()),  # Empty, Ongoing, PrepareCommit, CompleteCommit, ... (TransactionState)
        StructField("partitions", ArrayType(StructType([StructField("topic", StringType()),
                                                        StructField("partition", IntegerType())]))),
        StructField("timeoutMs", IntegerType()),
        StructField("startTimestamp", TimestampType()),
        StructField("lastUpdateTimestamp", TimestampType()),
        StructField("isTombstone", BooleanType()),  # the transactional id expired
        StructField("isLatest", BooleanType()),
    ]
    + _SOURCE_RECORD
)

CLUSTER_METADATA = StructType(
    [
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("recordType", StringType()),  # MetadataRecordType (TOPIC_RECORD...) or the control type
        StructField("version", ShortType()),
        StructField("payload", StringType()),  # JSON, as Kafka's JsonConverter writes the record
        StructField("isControl", BooleanType()),
        StructField("segmentBaseOffset", LongType()),
    ]
    + _SNAPSHOT
)

CATALOG_PARTITION = StructType(
    [
        StructField("partition", IntegerType()),
        StructField("leader", IntegerType()),  # -1: none (e.g. after the controlled shutdown of its only replica)
        StructField("leaderEpoch", IntegerType()),
        StructField("partitionEpoch", IntegerType()),
        StructField("replicas", ArrayType(IntegerType())),
        StructField("isr", ArrayType(IntegerType())),
        StructField("addingReplicas", ArrayType(IntegerType())),
        StructField("removingReplicas", ArrayType(IntegerType())),
        # KIP-966 (Kafka 4.x): replicas that may lead though out of the ISR (the last ISR members, when the ISR
        # would fall below min.insync.replicas); empty before 4.x
        StructField("eligibleLeaderReplicas", ArrayType(IntegerType())),
    ]
)

TOPIC_CATALOG = StructType(
    [
        StructField("topicId", StringType()),  # Kafka's Uuid text (base64), as partition.metadata holds it
        StructField("topic", StringType()),
        StructField("partitionCount", IntegerType()),
        StructField("partitions", ArrayType(CATALOG_PARTITION)),
        StructField("configs", MapType(StringType(), StringType())),  # the topic's dynamic configs (overrides)
        StructField("isDeleted", BooleanType()),  # deleted by a RemoveTopicRecord the retained log holds
        StructField("createdOffset", LongType()),  # the TopicRecord's offset; null when it came from a snapshot
        StructField("deletedOffset", LongType()),
        StructField("asOfOffset", LongType()),  # the last metadata offset the image includes
    ]
)

METADATA_CONFIGS = StructType(
    [
        StructField("resourceType", StringType()),  # TOPIC or BROKER
        StructField("resourceName", StringType()),  # a topic's name; a node id, or "" for the cluster-wide default
        StructField("name", StringType()),  # the config key, as the AdminClient names it
        StructField("value", StringType()),
        StructField("offset", LongType()),  # the ConfigRecord's metadata log offset; null when it came from a snapshot
        StructField("snapshotEndOffset", LongType()),  # the snapshot it came from (null: from the log)
        StructField("asOfOffset", LongType()),  # the last metadata offset the image includes
    ]
)

# __remote_log_metadata replayed as the broker's TopicBasedRemoteLogMetadataManager (kafkalog_spark.state): one row per
# remote log segment its RemoteLogMetadataCache holds (a DELETE_SEGMENT_FINISHED one is gone)
REMOTE_LOG_SEGMENTS = StructType(
    [
        StructField("topicId", StringType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("remoteLogSegmentId", StringType()),  # Kafka's Uuid text; LocalTieredStorage names its files so
        StructField("startOffset", LongType()),
        StructField("endOffset", LongType()),
        StructField("segmentSizeInBytes", LongType()),
        StructField("maxTimestamp", LongType()),  # ms
        StructField("state", StringType()),  # COPY_SEGMENT_STARTED, COPY_SEGMENT_FINISHED or DELETE_SEGMENT_STARTED
        StructField("isCopied", BooleanType()),  # COPY_SEGMENT_FINISHED: the broker reads it
        StructField("brokerId", IntegerType()),  # the broker that copied it
        StructField("segmentLeaderEpochs", ArrayType(StructType([StructField("leaderEpoch", IntegerType()),
                                                                 StructField("offset", LongType())]))),
        StructField("copyStartedTime", LongType()),  # ms: the COPY_SEGMENT_STARTED event's
        StructField("stateTime", LongType()),  # ms: the latest state's event
        StructField("txnIndexEmpty", BooleanType()),
        StructField("metadataOffset", LongType()),  # the __remote_log_metadata offset of the latest state's record
        StructField("partitionDeleteState", StringType()),  # DELETE_PARTITION_MARKED or _STARTED; null: not deleted
        StructField("sourcePartition", IntegerType()),  # the __remote_log_metadata partition
    ]
)
