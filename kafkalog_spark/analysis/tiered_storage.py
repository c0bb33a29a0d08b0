"""Per tiered partition, what is local, what is remote, and what is not uploaded yet: from the log dirs alone.

The remote tier is what ``__remote_log_metadata`` says (the ``remote_log_segments`` view, replayed as the
broker's metadata manager loads it); the local tier is the partition's segments. As Kafka's RemoteLogManager
copies them (``RLMCopyTask``): a rolled segment is copied whole, its remote end offset is the next segment's base
offset - 1, so a local segment is uploaded when a copied remote segment reaches its next base offset - 1
(``highestCopiedOffset``, the broker's highest offset in remote storage); the active segment is never copied.
The copy lag is the rolled segments above it, in bytes and segments (KIP-963's RemoteCopyLagBytes and
RemoteCopyLagSegments), and in time since the oldest of them was last written (rolled). The log start offset is a
tiered log's (:func:`~.loaded_offsets.log_start_offset`: the checkpoint's entry, not raised to the first local
segment), the local log start offset its first local segment's base; offsets between the remote log's end and
the local log start are in neither tier (``missingOffsets``).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import LongType

from ..log.checkpoints import LOG_START_OFFSET_CHECKPOINT, PARTITION_METADATA
from .grouping_keys import PARTITION

TIERED_STORAGE_COLUMNS = (
    "logDir", "topic", "partition", "topicId", "logStartOffset", "localLogStartOffset", "logEndOffsetAtLeast",
    "remoteSegments", "remoteBytes", "copiedSegments", "copiedBytes", "copyingSegments", "deletingSegments",
    "remoteLogStartOffset", "highestCopiedOffset", "localSegments", "localBytes", "uploadedLocalSegments",
    "uploadedLocalBytes", "copyLagSegments", "copyLagBytes", "copyLagMs", "missingOffsets", "partitionDeleteState")


def one_replica(remote_segments: DataFrame) -> DataFrame:
    """The rows of one replica of each ``__remote_log_metadata`` partition (log dirs of several brokers hold
    replicas of it): the one that has read furthest (the greatest metadata offset among its segments)."""
    from pyspark.sql import Window

    ok = remote_segments.where(F.col("problem").isNull())
    reach = ok.groupBy("sourcePartition", "logDir").agg(F.max("metadataOffset").alias("_reach"))
    furthest = Window.partitionBy("sourcePartition").orderBy(F.desc("_reach"), "logDir")
    chosen = reach.withColumn("_rank", F.row_number().over(furthest)).where(F.col("_rank") == 1)
    # a partition and log dir are never null in the view's rows
    return ok.join(chosen.select("sourcePartition", "logDir"), ["sourcePartition", "logDir"], "left_semi")


def copied_to_remote(upper_bound_offset: int, highest_copied_offset: int | None) -> bool:
    """Whether a local segment whose offsets end below ``upper_bound_offset`` (the next segment's base offset) is in
    remote storage: UnifiedLog.isSegmentEligibleForDeletion's ``upperBoundOffset > 0 && upperBoundOffset - 1 <=
    highestOffsetInRemoteStorage`` (None: nothing copied). :func:`tiered_storage`'s ``uploaded`` is the same rule
    over columns."""
    return highest_copied_offset is not None and upper_bound_offset > 0 and upper_bound_offset - 1 <= \
        highest_copied_offset


def remote_partitions(remote_segments: DataFrame) -> DataFrame:
    """Per partition the remote tier holds (topicId, topic, partition): its remote segments' counts and bytes by
    state, ``remoteLogStartOffset`` and ``highestCopiedOffset`` (of the copied ones; null when none is)."""
    return (one_replica(remote_segments).groupBy("topicId", "topic", "partition").agg(
        F.count("*").alias("remoteSegments"),
        F.sum("segmentSizeInBytes").alias("remoteBytes"),
        F.sum(F.col("isCopied").cast("int")).alias("copiedSegments"),
        F.sum(F.when(F.col("isCopied"), F.col("segmentSizeInBytes"))).alias("copiedBytes"),
        F.sum((F.col("state") == "COPY_SEGMENT_STARTED").cast("int")).alias("copyingSegments"),
        F.sum((F.col("state") == "DELETE_SEGMENT_STARTED").cast("int")).alias("deletingSegments"),
        F.min(F.when(F.col("isCopied"), F.col("startOffset"))).alias("remoteLogStartOffset"),
        F.max(F.when(F.col("isCopied"), F.col("endOffset"))).alias("highestCopiedOffset"),
        F.first("partitionDeleteState", ignorenulls=True).alias("partitionDeleteState")))


def matched_remote(local: DataFrame, partition_files: DataFrame, remote: DataFrame) -> DataFrame:
    """Each local partition of ``local`` (rows with :data:`~.grouping_keys.PARTITION`) with ``_remoteTopicId``, the
    topic id of the remote partition of :func:`remote_partitions` that is its remote tier (null: none), and
    ``_localTopicId`` (its partition.metadata's): remote segments of an earlier topic of the same name (deleted,
    then created again) are not its."""
    ids = (partition_files.where(F.col("problem").isNull() & (F.col("fileType") == PARTITION_METADATA))
           .groupBy(*PARTITION).agg(F.first("topicId").alias("_localTopicId")))
    keys = local.select(*PARTITION).distinct().join(ids, PARTITION, "left")
    remote_keys = remote.select(F.col("topicId").alias("_remoteTopicId"), F.col("topic").alias("_remoteTopic"),
                                F.col("partition").alias("_remotePartition"))
    same = ((F.col("_remoteTopic") == F.col("topic")) & (F.col("_remotePartition") == F.col("partition"))
            & (F.col("_localTopicId").isNull() | (F.col("_localTopicId") == F.col("_remoteTopicId"))))
    return keys.join(remote_keys, same, "left").select(*PARTITION, "_remoteTopicId", "_localTopicId")


def highest_copied_offsets(segments: DataFrame, partition_files: DataFrame, remote_segments: DataFrame) -> DataFrame:
    """Per local partition that has a remote tier, ``highestCopiedOffset`` (the broker's
    highestOffsetInRemoteStorage: the largest end offset of its copied remote segments; -1 when none is)."""
    remote = remote_partitions(remote_segments)
    matched = matched_remote(segments.where(F.col("problem").isNull()), partition_files, remote)
    return (matched.where(F.col("_remoteTopicId").isNotNull())
            .join(remote.withColumnRenamed("topicId", "_remoteTopicId"), ["_remoteTopicId", "topic", "partition"])
            .select(*PARTITION, F.coalesce("highestCopiedOffset", F.lit(-1)).alias("highestCopiedOffset")))


def tiered_storage(segments: DataFrame, remote_segments: DataFrame, partition_files: DataFrame,
                   tiered_topics: list[str], now_ms: int) -> DataFrame:
    """One row per partition of a log dir that ``remote_segments`` (the ``remote_log_segments`` view) names, or of
    ``tiered_topics`` (the topics whose configs enable remote storage: a partition with nothing copied yet is the
    one whose disk does not shrink), with the columns of :data:`TIERED_STORAGE_COLUMNS`. The remote segments of a
    partition count for every log dir holding it (the metadata is the cluster's, not a log dir's)."""
    from .loaded_offsets import log_start_offset

    remote = remote_partitions(remote_segments)
    live = segments.where(F.col("problem").isNull() & (F.col("status") == "live") & F.col("logFile").isNotNull())
    matched = matched_remote(live, partition_files, remote)
    tiered = matched.where(F.col("_remoteTopicId").isNotNull() | F.col("topic").isin(list(tiered_topics)))
    local = live.join(tiered, PARTITION).join(
        remote.select(F.col("topicId").alias("_remoteTopicId"), "topic", "partition", "highestCopiedOffset"),
        ["_remoteTopicId", "topic", "partition"], "left")
    rolled = F.col("nextBaseOffset").isNotNull()
    uploaded = rolled & (F.col("nextBaseOffset") - 1 <= F.coalesce(F.col("highestCopiedOffset"), F.lit(-1)))
    lagging = rolled & ~uploaded
    per_partition = local.groupBy(*PARTITION, "_remoteTopicId", "_localTopicId").agg(
        F.min("baseOffset").alias("localLogStartOffset"),
        F.max("baseOffset").alias("logEndOffsetAtLeast"),  # the active segment's base: the log end is at or above
        F.count("*").alias("localSegments"),
        F.sum("logSize").alias("localBytes"),
        F.sum(uploaded.cast("int")).alias("uploadedLocalSegments"),
        F.coalesce(F.sum(F.when(uploaded, F.col("logSize"))), F.lit(0)).alias("uploadedLocalBytes"),
        F.sum(lagging.cast("int")).alias("copyLagSegments"),
        F.coalesce(F.sum(F.when(lagging, F.col("logSize"))), F.lit(0)).alias("copyLagBytes"),
        F.min(F.when(lagging, F.col("logModified"))).alias("_oldestLagging"))
    checkpoint = (partition_files.where(F.col("problem").isNull()
                                        & (F.col("fileType") == LOG_START_OFFSET_CHECKPOINT))
                  .groupBy(*PARTITION).agg(F.max("offset").alias("_logStartCheckpoint")))
    start = F.udf(lambda first, entry: log_start_offset(first, entry, remote_log=True)[0], LongType())
    out = (per_partition.join(checkpoint, PARTITION, "left")
           .join(remote.withColumnRenamed("topicId", "_remoteTopicId"), ["_remoteTopicId", "topic", "partition"],
                 "left")
           .withColumn("topicId", F.coalesce("_remoteTopicId", "_localTopicId"))
           .withColumn("logStartOffset", start("localLogStartOffset", "_logStartCheckpoint"))
           .withColumn("copyLagMs", F.when(F.col("_oldestLagging").isNotNull(),
                                           F.lit(now_ms) - F.unix_millis("_oldestLagging")))
           .withColumn("missingOffsets", F.greatest(F.lit(0), F.col("localLogStartOffset") - F.greatest(
               F.coalesce(F.col("highestCopiedOffset") + 1, F.col("logStartOffset")), F.col("logStartOffset")))))
    counts = ("remoteSegments", "copiedSegments", "copyingSegments", "deletingSegments")
    return out.fillna(0, subset=[*counts, "remoteBytes", "copiedBytes"]).select(*TIERED_STORAGE_COLUMNS)


STUCK_TASK_INTERVALS = 3  # a copy or delete older than this many RemoteLogManager task intervals is not progressing


def tiered_findings(tiered: DataFrame, remote_segments: DataFrame, plan: DataFrame, task_interval_ms: int,
                    now_ms: int) -> DataFrame:
    """The tiered partitions' findings (schema ``INDEX_FINDINGS``), from :func:`tiered_storage`'s rows, the
    ``remote_log_segments`` view and the retention plan: copies and deletes started more than
    :data:`STUCK_TASK_INTERVALS` of the broker's ``remote.log.manager.task.interval.ms`` before ``now_ms`` and
    not finished, offsets in neither tier, and local segments past local retention kept for want of a copy."""
    from .finding_columns import candidate, emit, text

    since = F.lit(now_ms) - F.col("stateTime")
    stuck = since > STUCK_TASK_INTERVALS * task_interval_ms
    where = {"file": F.lit(None), "base_offset": F.col("startOffset")}
    # the remote segments speak of a partition, not of a log dir: each finding names every log dir holding it
    held = tiered.select("logDir", "topic", "partition", F.col("topicId").alias("_topicId"))
    remote = (one_replica(remote_segments).drop("logDir").join(held, ["topic", "partition"])
              .where(F.col("_topicId").isNull() | (F.col("_topicId") == F.col("topicId"))))
    segment = text("remote segment ", F.col("remoteLogSegmentId"), " (offsets ", F.col("startOffset"), " to ",
                   F.col("endOffset"), ")")
    age = text(F.round(since / 1000).cast("long"), " s ago (metadata offset ", F.col("metadataOffset"), ")")
    by_segment = emit(
        remote,
        candidate((F.col("state") == "COPY_SEGMENT_STARTED") & stuck, "warning", "remote_copy_not_finished",
                  expected=F.lit("COPY_SEGMENT_FINISHED within a few task intervals"),
                  found=text(segment, ": COPY_SEGMENT_STARTED ", age),
                  detail=F.lit("an upload that failed or hangs: the broker retries under a new segment id; the "
                               "local segment stays until a copy finishes"), **where),
        candidate((F.col("state") == "DELETE_SEGMENT_STARTED") & stuck, "warning", "remote_delete_not_finished",
                  expected=F.lit("DELETE_SEGMENT_FINISHED within a few task intervals"),
                  found=text(segment, ": DELETE_SEGMENT_STARTED ", age),
                  detail=F.lit("its remote files may remain in the store"), **where))
    by_partition = emit(tiered, candidate(
        F.col("missingOffsets") > 0, "error", "remote_log_gap",
        expected=text("the remote log reaching the local log start offset ", F.col("localLogStartOffset")),
        found=text(F.col("missingOffsets"), " offsets in neither tier below ", F.col("localLogStartOffset"),
                   " (highest copied offset ", F.coalesce(F.col("highestCopiedOffset").cast("string"), F.lit("none")),
                   ", log start offset ", F.col("logStartOffset"), ")"),
        detail=F.lit("a consumer fetching them gets OFFSET_OUT_OF_RANGE"), file=F.lit(None)))
    waiting = (plan.where(F.col("reason") == "not_copied_to_remote")
               .groupBy("logDir", "topic", "partition").agg(F.count("*").alias("n"), F.sum("size").alias("bytes"),
                                                           F.min("baseOffset").alias("first")))
    by_plan = emit(waiting, candidate(
        F.lit(True), "warning", "local_retention_waits_for_copy",
        expected=F.lit("local segments past local retention copied, then deleted"),
        found=text(F.col("n"), " segment(s), ", F.col("bytes"), " bytes from offset ", F.col("first"),
                   " not in remote storage yet"),
        detail=F.lit("local retention deletes a tiered segment only once it is copied: the disk does not shrink"),
        file=F.lit(None), base_offset=F.col("first")))
    return by_segment.unionByName(by_partition).unionByName(by_plan)
