"""``replica_comparison``: one row per partition and replica, every replica of a partition (:mod:`.replica_set`)
compared with its leader (:mod:`.divergence`), and the findings of the replicas that diverge.

A function of the views of the log dirs (``batches``, ``records`` of the compacted topics, ``segments``,
``partition_files``, ``topic_catalog``) and of each log dir's broker (read by the caller from ``meta.properties``).
The batch headers are grouped per partition across brokers, with each replica's context as one more row of its
group; a compacted topic's records are read as hashes.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from ...config.topic_config import CLUSTER_METADATA
from ...log.checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)
from ..finding_columns import INDEX_FINDINGS, candidate, emit, text
from .divergence import LEADER

EPOCH_ENTRY = StructType([StructField("epoch", IntegerType()), StructField("startOffset", LongType())])
DROPPED_RANGE = StructType([
    StructField("epoch", IntegerType()),  # the partitionLeaderEpoch the records were written in
    StructField("firstOffset", LongType()),
    StructField("lastOffset", LongType()),
    StructField("records", LongType()),
])

REPLICA_COMPARISON = StructType([
    StructField("clusterId", StringType()),
    StructField("topic", StringType()),
    StructField("topicId", StringType()),  # partition.metadata (null: none, the replicas matched by name)
    StructField("partition", IntegerType()),
    StructField("logDir", StringType()),
    StructField("brokerId", IntegerType()),  # meta.properties' node.id (broker.id)
    StructField("replicasRead", IntegerType()),  # the partition's replicas among the log dirs read
    StructField("status", StringType()),  # leader, consistent, behind, divergent
    StructField("leaderBrokerId", IntegerType()),  # the replica this one is compared with
    StructField("leaderLogDir", StringType()),
    StructField("leaderSource", StringType()),  # metadata, metadata-isr, highest-epoch (replica_set)
    StructField("metadataLeader", IntegerType()),  # as the cluster metadata last recorded it (-1: none)
    StructField("metadataLeaderEpoch", IntegerType()),
    StructField("logStartOffset", LongType()),
    StructField("logEndOffset", LongType()),
    StructField("highWatermark", LongType()),  # replication-offset-checkpoint (flushed every few seconds)
    StructField("latestEpoch", IntegerType()),
    StructField("leaderEpochs", ArrayType(EPOCH_ENTRY)),  # leader-epoch-checkpoint
    StructField("truncationOffset", LongType()),  # where it truncates when it fetches from the leader again
    StructField("truncationEpoch", IntegerType()),  # the largest epoch both hold (null: no divergence)
    StructField("droppedRecords", LongType()),
    StructField("acknowledgedRecordsLost", LongType()),  # of those, below this replica's high watermark
    StructField("droppedRanges", ArrayType(DROPPED_RANGE)),
    StructField("firstDroppedFile", StringType()),
    StructField("firstDroppedPosition", LongType()),
    StructField("comparedFrom", LongType()),  # nothing below (the larger log start) is compared
    StructField("comparedBy", StringType()),  # batches, or records (compacted topics)
    StructField("compared", LongType()),  # batches (records) both hold, compared
    StructField("mismatches", LongType()),  # of those, differing below the truncation offset: never repaired
    StructField("firstMismatchOffset", LongType()),
    StructField("firstMismatchFile", StringType()),
    StructField("firstMismatchPosition", LongType()),
    StructField("epochMismatches", LongType()),  # same batch, another partitionLeaderEpoch (outside the CRC)
])

ORDER = ("clusterId", "topic", "partition", "brokerId", "logDir")
BROKERS = "logDir string, clusterId string, brokerId int"  # each log dir's meta.properties
_HEADER = ["baseOffset", "lastOffset", "count", "crc", "partitionLeaderEpoch", "segmentBaseOffset", "position"]
_CONTEXT = ["clusterId", "brokerId", "topicId", "firstSegment", "activeSegment", "logStartCheckpoint",
            "logStartFile", "highWatermarkCheckpoint", "epochs", "compacted", "metadataLeader", "metadataLeaderEpoch",
            "isr"]


def replica_comparison(batches: DataFrame, records: DataFrame, segments: DataFrame, partition_files: DataFrame,
                       topic_catalog: DataFrame | None, brokers: DataFrame, compacted: Iterable[str] = ()) -> DataFrame:
    """The table (schema :data:`REPLICA_COMPARISON`). Each replica's log start, log end and high watermark are those
    a loading broker has (:mod:`..loaded_offsets`), from its segments, batch headers and checkpoint entries.
    ``brokers``: each log dir's cluster and broker id (schema
    :data:`BROKERS`); ``compacted``: the topics compared by records (the configs' own, with those the cluster
    metadata records as compact, :func:`compacted_in_catalog`, and those a cleaner has compacted,
    :func:`cleaned_topics`); ``records``: the records view of those topics (or
    :func:`~..record_sizes.without_payloads` of it); ``topic_catalog``: the cluster metadata's topics (None: not
    read, each partition's leader is then the replica with the highest epoch)."""
    compacted = sorted(set(compacted))
    members = _members(segments, partition_files, brokers, topic_catalog, compacted)
    keys = members.select("logDir", "topic", "partition", "_set")
    heads = (batches.where(F.col("problem").isNull() & F.col("snapshotEndOffset").isNull()
                           & F.col("baseOffset").isNotNull())
             .select("logDir", "topic", "partition", F.lit("batch").alias("kind"), *_HEADER))
    rows = heads
    if compacted:
        rows = rows.unionByName(_record_hashes(records.where(F.col("topic").isin(compacted))),
                                allowMissingColumns=True)
    rows = rows.join(keys, ["logDir", "topic", "partition"])
    rows = rows.unionByName(members.withColumn("kind", F.lit("replica")), allowMissingColumns=True)
    return rows.groupBy("_set").applyInArrow(_compare, REPLICA_COMPARISON)


def compacted_in_catalog(topic_catalog: DataFrame) -> list[str]:
    """The topics whose cleanup.policy the cluster metadata records as compacting (a small job: one row per topic)."""
    policy = F.col("configs").getItem("cleanup.policy")
    rows = topic_catalog.where(~F.col("isDeleted") & policy.contains("compact")).select("topic").distinct()
    return sorted(r.topic for r in rows.collect())


def cleaned_topics(partition_files: DataFrame) -> list[str]:
    """The topics with a cleaner-offset-checkpoint entry in some log dir: the log cleaner has compacted them there,
    whatever the configs given say (a small job: the checkpoint rows)."""
    rows = (partition_files.where(F.col("problem").isNull() & (F.col("fileType") == CLEANER_OFFSET_CHECKPOINT)
                                  & F.col("offset").isNotNull()).select("topic").distinct())
    return sorted(r.topic for r in rows.collect())


def _record_hashes(records: DataFrame) -> DataFrame:
    """A compacted topic's data records as (offset, key hash, value hash): the records view's value, or the
    ``valueHash`` a reduced records view kept in its place."""
    value = F.md5(F.col("value")) if "value" in records.columns else F.col("valueHash")
    return (records.where(F.col("problem").isNull() & ~F.col("isControl"))
            .select("logDir", "topic", "partition", F.lit("record").alias("kind"), F.col("offset").alias("baseOffset"),
                    F.md5(F.col("key")).alias("keyHash"), value.alias("valueHash")))


def _members(segments: DataFrame, partition_files: DataFrame, brokers: DataFrame, topic_catalog: DataFrame | None,
             compacted: list[str]) -> DataFrame:
    """One row per partition replica (with live segments): its first and active segment, checkpoint entries, lineage,
    topic id, broker, the replica set it belongs to (``_set``: cluster, topic id, partition) and the set's
    leadership as the newest metadata any broker holds."""
    # the metadata log is KRaft's own (its quorum settles its replicas, with no leader-epoch-checkpoint): not compared
    live = (segments.where(F.col("problem").isNull() & (F.col("status") == "live") & F.col("baseOffset").isNotNull()
                           & (F.col("topic") != CLUSTER_METADATA))
            .groupBy("logDir", "topic", "partition")
            .agg(F.min("baseOffset").alias("firstSegment"), F.max("baseOffset").alias("activeSegment")))
    ok = partition_files.where(F.col("problem").isNull())
    checkpoints = (ok.where(F.col("fileType").isin(LOG_START_OFFSET_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT))
                   .groupBy("logDir", "topic", "partition")
                   .agg(F.max(F.when(F.col("fileType") == LOG_START_OFFSET_CHECKPOINT, F.col("offset")))
                        .alias("logStartCheckpoint"),
                        F.max(F.col("fileType") == LOG_START_OFFSET_CHECKPOINT).alias("logStartFile"),
                        F.max(F.when(F.col("fileType") == REPLICATION_OFFSET_CHECKPOINT, F.col("offset")))
                        .alias("highWatermarkCheckpoint")))
    ids = (ok.where(F.col("fileType") == "partition.metadata")
           .groupBy("logDir", "topic", "partition").agg(F.first("topicId").alias("topicId")))
    entry = F.struct(F.col("entry"), F.col("epoch"), F.col("startOffset"))
    lineage = (ok.where(F.col("fileType") == "leader-epoch-checkpoint").groupBy("logDir", "topic", "partition")
               .agg(F.sort_array(F.collect_list(entry)).alias("_entries"))
               .select("logDir", "topic", "partition",
                       F.transform("_entries", lambda e: F.struct(e["epoch"].alias("epoch"),
                                                                  e["startOffset"].alias("startOffset"))
                                   ).alias("epochs")))
    members = (live.join(checkpoints, ["logDir", "topic", "partition"], "left")
               .join(ids, ["logDir", "topic", "partition"], "left")
               .join(lineage, ["logDir", "topic", "partition"], "left")
               .join(brokers, "logDir", "left")
               .withColumn("compacted", F.col("topic").isin(compacted) if compacted else F.lit(False)))
    if topic_catalog is not None:
        members = members.join(_leadership(topic_catalog, brokers), ["clusterId", "topicId", "partition"], "left")
    else:
        members = (members.withColumn("metadataLeader", F.lit(None).cast("int"))
                   .withColumn("metadataLeaderEpoch", F.lit(None).cast("int"))
                   .withColumn("isr", F.lit(None).cast("array<int>")))
    replica_set = F.concat_ws("\0", F.coalesce("clusterId", F.lit("")),
                              F.coalesce("topicId", F.concat(F.lit("name:"), "topic")), F.col("partition"))
    return members.withColumn("_set", replica_set)


def _leadership(topic_catalog: DataFrame, brokers: DataFrame) -> DataFrame:
    """Per cluster, topic id and partition: the leader, its epoch and the ISR, from the most recent metadata image
    among the brokers' (the highest ``asOfOffset``)."""
    parts = (topic_catalog.where(~F.col("isDeleted")).join(brokers, "logDir", "left")
             .select("clusterId", "topicId", "asOfOffset", F.explode("partitions").alias("p"))
             .select("clusterId", "topicId", "asOfOffset", F.col("p.partition").alias("partition"),
                     F.col("p.leader").alias("metadataLeader"), F.col("p.leaderEpoch").alias("metadataLeaderEpoch"),
                     # the replicas a leaderless partition's next leader comes from: its ISR, and on 4.x its
                     # eligible leader replicas (an ISR emptied by shutdowns keeps its last members there)
                     F.array_union(F.coalesce("p.isr", F.array().cast("array<int>")),
                                   F.coalesce("p.eligibleLeaderReplicas", F.array().cast("array<int>")))
                     .alias("isr")))
    newest = Window.partitionBy("clusterId", "topicId", "partition").orderBy(F.col("asOfOffset").desc_nulls_last())
    return (parts.withColumn("_rank", F.row_number().over(newest)).where(F.col("_rank") == 1)
            .drop("_rank", "asOfOffset"))


def _compare(key, table):
    """One replica set's rows (its replicas' context, batch headers and compacted records) -> its table rows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ...schemas import arrow_schema
    from ..loaded_offsets import loaded_offsets, log_end_offset
    from .divergence import BatchHeaders, compare
    from .fetcher_truncation import ReplicaLog
    from .leader_epoch_cache import LeaderEpochFileCache
    from .replica_set import PartitionLeadership, Replica, choose_leader

    kinds = table["kind"]
    context = {(r["logDir"], r["topic"], r["partition"]): r
               for r in table.filter(pc.equal(kinds, "replica")).select(["logDir", "topic", "partition", *_CONTEXT])
               .to_pylist()}
    if not context:
        return pa.Table.from_pylist([], schema=arrow_schema(REPLICA_COMPARISON))
    batches = table.filter(pc.equal(kinds, "batch"))
    records = table.filter(pc.equal(kinds, "record"))
    replicas: dict[tuple, Replica] = {}
    for k, c in sorted(context.items()):
        mine = batches.filter(pc.equal(batches["logDir"], k[0]))
        heads = BatchHeaders.of({n: pc.fill_null(mine[n], -1).to_numpy() for n in _HEADER})
        end = log_end_offset(c["activeSegment"], [int(heads.last.max())] if len(heads) else [])
        loaded = loaded_offsets(c["firstSegment"], end, c["logStartCheckpoint"], c["highWatermarkCheckpoint"],
                                log_start_file=bool(c["logStartFile"]))
        epochs = [(e["epoch"], e["startOffset"]) for e in c["epochs"] or []]
        c |= {"epochs": epochs, "logStartOffset": loaded.log_start_offset, "logEndOffset": end,
              "highWatermark": loaded.high_watermark}
        r = replicas[k] = Replica(k[0], c["brokerId"], ReplicaLog(LeaderEpochFileCache(epochs),
                                                                  loaded.log_start_offset, end),
                                  loaded.high_watermark, bool(c["compacted"]), heads)
        if r.compacted:
            own = records.filter(pc.equal(records["logDir"], k[0])).select(["baseOffset", "keyHash", "valueHash"])
            r.records = dict(zip(own["baseOffset"].to_pylist(),
                                 zip(own["keyHash"].to_pylist(), own["valueHash"].to_pylist(), strict=True),
                                 strict=True))
    first = context[min(context)]
    meta = PartitionLeadership(first["metadataLeader"], first["metadataLeaderEpoch"], tuple(first["isr"] or ()))
    leader, source = choose_leader(list(replicas.values()), meta)
    out = []
    for k, r in replicas.items():
        c = context[k]
        row = {"clusterId": c["clusterId"], "topic": k[1], "topicId": c["topicId"], "partition": k[2],
               "logDir": k[0], "brokerId": r.broker_id, "replicasRead": len(replicas),
               "leaderBrokerId": leader.broker_id, "leaderLogDir": leader.log_dir, "leaderSource": source,
               "metadataLeader": meta.leader, "metadataLeaderEpoch": meta.leader_epoch,
               "logStartOffset": c["logStartOffset"], "logEndOffset": c["logEndOffset"],
               "highWatermark": c["highWatermark"], "latestEpoch": r.log.epochs.latest_epoch(),
               "leaderEpochs": [{"epoch": e, "startOffset": s} for e, s in c["epochs"]]}
        if r is leader:
            row["status"] = LEADER
        else:
            d = compare(r, leader)
            row |= {"status": d.status, "truncationOffset": d.truncation_offset, "truncationEpoch": d.truncation_epoch,
                    "droppedRecords": d.dropped_records, "acknowledgedRecordsLost": d.acknowledged_lost,
                    "droppedRanges": d.dropped_ranges, "comparedFrom": d.compared_from, "comparedBy": d.compared_by,
                    "compared": d.compared, "mismatches": d.mismatches, "epochMismatches": d.epoch_mismatches}
            row |= _where("firstDropped", k, d.first_dropped) | _where("firstMismatch", k, d.first_mismatch)
            if d.first_mismatch is not None:
                row["firstMismatchOffset"] = d.first_mismatch[0]
        out.append(row)
    return pa.Table.from_pylist(out, schema=arrow_schema(REPLICA_COMPARISON))


def _where(prefix: str, key: tuple[str, str, int], at: tuple[int, int, int] | None) -> dict:
    """``<prefix>File`` and ``<prefix>Position``: the `.log` file and byte position of a batch ((offset, segment
    base offset, position))."""
    if at is None:
        return {}
    _, segment, position = at
    return {f"{prefix}File": f"{key[0]}/{key[1]}-{key[2]}/{segment:020d}.log", f"{prefix}Position": position}


def replica_findings(comparison: DataFrame) -> DataFrame:
    """The replicas that diverge from their leader, as findings (schema ``INDEX_FINDINGS``), each naming the
    replica's `.log` file and the byte position of its first batch in question."""
    leader = text("broker ", F.coalesce(F.col("leaderBrokerId").cast("string"), F.lit("?")), " (",
                  F.col("leaderLogDir"), ")")
    dropped = {"file": F.col("firstDroppedFile"), "position": F.col("firstDroppedPosition"),
               "base_offset": F.regexp_extract("firstDroppedFile", r"(\d{20})\.log$", 1).cast("long")}
    mismatch = {"file": F.col("firstMismatchFile"), "position": F.col("firstMismatchPosition"),
                "base_offset": F.regexp_extract("firstMismatchFile", r"(\d{20})\.log$", 1).cast("long")}
    out = emit(comparison,
               candidate(F.col("droppedRecords") > 0, "error", "replica_divergent",
                         expected=text("a prefix of the leader's log, ", leader),
                         found=text(F.col("droppedRecords"), " records from offset ", F.col("truncationOffset"),
                                    " the leader does not hold"),
                         detail=text("truncated to offset ", F.col("truncationOffset"), " (epoch ",
                                     F.coalesce(F.col("truncationEpoch").cast("string"), F.lit("none")),
                                     ") when it fetches from the leader again"), **dropped),
               candidate(F.col("acknowledgedRecordsLost") > 0, "error", "replica_acknowledged_records_lost",
                         expected=text("no record below the high watermark ", F.col("highWatermark"), " dropped"),
                         found=text(F.col("acknowledgedRecordsLost"), " acknowledged records from offset ",
                                    F.col("truncationOffset")),
                         detail=text("records this replica had acknowledged as its partition's leader or ISR member "
                                     "that ", leader, " does not hold: lost"), **dropped),
               candidate(F.col("mismatches") > 0, "error", "replica_batches_differ",
                         expected=text("the ", F.col("comparedBy"), " of ", leader),
                         found=text(F.col("mismatches"), " differing from offset ", F.col("firstMismatchOffset")),
                         detail=F.lit("below the truncation offset: Kafka keeps them as they are"), **mismatch),
               candidate(F.col("epochMismatches") > 0, "warning", "replica_leader_epoch_differs",
                         expected=text("the partitionLeaderEpoch of ", leader, "'s batches"),
                         found=text(F.col("epochMismatches"), " batches with another epoch"),
                         detail=F.lit("the batch CRC does not cover the partitionLeaderEpoch"), file=F.lit(None)))
    return out.select(*INDEX_FINDINGS.fieldNames())
