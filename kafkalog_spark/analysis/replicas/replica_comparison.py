"""``replica_comparison``: one row per partition and replica, every replica of a partition (:mod:`.replica_set`)
compared with its leader (:mod:`.divergence`), and the findings of the replicas that diverge.

A function of the views of the log dirs (``batches``, ``records`` of the compacted topics, ``segments``,
``partition_files``, ``topic_catalog``) and of each log dir's broker (read by the caller from ``meta.properties``).
The batch headers are grouped per partition across brokers, with each replica's context as one more row of its
group; a compacted topic's records are read as hashes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping

from pyspark.sql import DataFrame
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
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    PARTITION_METADATA,
    REPLICATION_OFFSET_CHECKPOINT,
)
from ..finding_columns import INDEX_FINDINGS, candidate, emit, text
from .batch_headers import COLUMNS as HEADER_COLUMNS
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
_MEMBERS = "logDir string, topic string, partition int, kind string, context string"


def replica_members(segments: DataFrame, partition_files: DataFrame, topic_catalog: DataFrame | None,
                    brokers: Mapping[str, tuple[str | None, int | None]]) -> list[dict]:
    """Each partition replica with live segments, on the driver (three small collects: the live segments, the
    partition files' topic id, lineage and checkpoint entries, the metadata's partitions), so that the comparison's
    own job scans the batch headers alone: its log dir, topic, partition and context (cluster and broker, topic id,
    first and active segment, checkpoint entries, lineage; the replica set it belongs to, ``set``: cluster, topic
    id, partition; the set's leadership as the most recent metadata image any broker holds, and whether the
    metadata's cleanup.policy of the topic is compact). ``brokers``: each log dir's (cluster id, broker id);
    ``topic_catalog``: the cluster metadata's topics (None: not read, each partition's leader is then the replica
    with the highest epoch)."""
    members: dict[tuple[str, str, int], dict] = {}
    live = segments.where(F.col("problem").isNull() & (F.col("status") == "live") & F.col("baseOffset").isNotNull()
                          # the metadata log is KRaft's own (its quorum settles its replicas): not compared
                          & (F.col("topic") != CLUSTER_METADATA))
    for r in live.select("logDir", "topic", "partition", "baseOffset").collect():  # a row per segment: no shuffle
        cluster, broker = brokers.get(r.logDir, (None, None))
        m = members.setdefault((r.logDir, r.topic, r.partition), {
            "clusterId": cluster, "brokerId": broker, "topicId": None, "firstSegment": r.baseOffset,
            "activeSegment": r.baseOffset, "logStartCheckpoint": None, "logStartFile": False,
            "highWatermarkCheckpoint": None, "cleanerCheckpoint": None, "epochs": [], "metadataLeader": None,
            "metadataLeaderEpoch": None, "isr": [], "compactInCatalog": False})
        m["firstSegment"], m["activeSegment"] = min(m["firstSegment"], r.baseOffset), max(m["activeSegment"],
                                                                                            r.baseOffset)
    files = partition_files.where(F.col("problem").isNull() & F.col("fileType").isin(*_PARTITION_FILES))
    for r in files.select("logDir", "topic", "partition", "fileType", "entry", "epoch", "startOffset", "offset",
                          "topicId").collect():
        m = members.get((r.logDir, r.topic, r.partition))
        if m is None:
            continue
        if r.fileType == PARTITION_METADATA:
            m["topicId"] = r.topicId
        elif r.fileType == LEADER_EPOCH_CHECKPOINT:
            m["epochs"].append((r.entry, r.epoch, r.startOffset))
        else:
            m[_PARTITION_FILES[r.fileType]] = r.offset
            m["logStartFile"] |= r.fileType == LOG_START_OFFSET_CHECKPOINT
    for m in members.values():
        m["epochs"] = [{"epoch": e, "startOffset": s} for _, e, s in sorted(m["epochs"])]
    leadership = _leadership(topic_catalog, brokers) if topic_catalog is not None else {}
    out = []
    for (log_dir, topic, partition), m in sorted(members.items()):
        key = (m["clusterId"], m["topicId"] or f"name:{topic}", partition)
        m |= leadership.get(key, {})
        m["set"] = "\0".join(str(k) for k in key)
        out.append({"logDir": log_dir, "topic": topic, "partition": partition, "context": m})
    return out


# partition files the comparison reads: their fileType -> the context key of their offset
_PARTITION_FILES = {PARTITION_METADATA: "topicId", LEADER_EPOCH_CHECKPOINT: "epochs",
                    LOG_START_OFFSET_CHECKPOINT: "logStartCheckpoint",
                    REPLICATION_OFFSET_CHECKPOINT: "highWatermarkCheckpoint",
                    CLEANER_OFFSET_CHECKPOINT: "cleanerCheckpoint"}


def _leadership(topic_catalog: DataFrame, brokers: Mapping[str, tuple[str | None, int | None]]) -> dict:
    """Per (cluster, topic id, partition): the leader, its epoch and whom a leaderless partition is led by next (its
    ISR, and on 4.x its eligible leader replicas: an ISR emptied by shutdowns keeps its last members there), from the
    most recent metadata image among the brokers' (the highest ``asOfOffset``); and whether the topic's
    cleanup.policy there is compact."""
    out: dict[tuple, dict] = {}
    newest: dict[tuple, int] = {}
    for t in topic_catalog.where(~F.col("isDeleted")).select("logDir", "topicId", "configs", "partitions",
                                                             "asOfOffset").collect():
        cluster = brokers.get(t.logDir, (None, None))[0]
        compact = "compact" in ((t.configs or {}).get("cleanup.policy") or "")
        for p in t.partitions or []:
            key = (cluster, t.topicId, p.partition)
            if newest.get(key, -1) >= (t.asOfOffset or 0):
                continue
            newest[key] = t.asOfOffset or 0
            out[key] = {"metadataLeader": p.leader, "metadataLeaderEpoch": p.leaderEpoch,
                        "isr": sorted(set(p.isr or ()) | set(p.eligibleLeaderReplicas or ())),
                        "compactInCatalog": compact}
    return out


def compacted_replicas(members: list[dict]) -> list[str]:
    """The topics whose replicas are compared by records: a log cleaner compacted them in some log dir (a
    cleaner-offset-checkpoint entry), or the cluster metadata records their cleanup.policy as compact; with the
    configs' compacted topics, what :func:`replica_comparison` takes as ``compacted``."""
    return sorted({m["topic"] for m in members
                   if m["context"]["cleanerCheckpoint"] is not None or m["context"]["compactInCatalog"]})


def replica_comparison(batches: DataFrame, records: DataFrame | None, members: list[dict],
                       compacted: Iterable[str] = ()) -> DataFrame:
    """The table (schema :data:`REPLICA_COMPARISON`) from the batch headers, the ``records`` of the ``compacted``
    topics (the records view, or :func:`~..record_sizes.without_payloads` of it: only those topics are read) and
    the replicas (:func:`replica_members`). Each replica's log start, log end and high watermark are those a
    loading broker has (:mod:`..loaded_offsets`), from its segments, batch headers and checkpoint entries."""
    spark = batches.sparkSession
    compacted = sorted(set(compacted))
    heads = (batches.where(F.col("problem").isNull() & F.col("snapshotEndOffset").isNull()
                           & F.col("baseOffset").isNotNull() & (F.col("topic") != CLUSTER_METADATA))
             .select("logDir", "topic", "partition", F.lit("batch").alias("kind"), *HEADER_COLUMNS))
    compacted_records = records.where(F.col("topic").isin(compacted)) if compacted and records is not None else None
    heads, compacted_records = _alone_by_log_end(heads, compacted_records, members)
    rows = heads
    if compacted_records is not None:
        rows = rows.unionByName(_record_hashes(compacted_records), allowMissingColumns=True)
    # each replica's context as one JSON column: the batch rows it is shuffled with stay as narrow as their headers
    context = spark.createDataFrame(
        [(m["logDir"], m["topic"], m["partition"], "replica",
          json.dumps(m["context"] | {"compacted": m["topic"] in compacted})) for m in members], _MEMBERS)
    rows = rows.unionByName(context, allowMissingColumns=True)
    # grouped by name: one shuffle of the batch headers, no join; the replica sets (cluster, topic id) are told
    # apart in the group, by each replica's context
    return rows.groupBy("topic", "partition").applyInArrow(_compare, REPLICA_COMPARISON)


def _alone_by_log_end(heads: DataFrame, records: DataFrame | None,
                      members: list[dict]) -> tuple[DataFrame, DataFrame | None]:
    """The batch headers and compacted records the comparison needs: a replica alone among the log dirs read (no
    other member of that partition name) is compared with none, so of its batches only the log end is read (one
    row: their largest last offset) and none of its records; the others' rows whole."""
    spark = heads.sparkSession
    counts = Counter((m["topic"], m["partition"]) for m in members)
    shared = [name for name, n in counts.items() if n > 1]
    if len(shared) == len(counts):
        return heads, records
    replicated = F.broadcast(spark.createDataFrame(shared, "topic string, partition int"))
    log_end = (heads.join(replicated, ["topic", "partition"], "left_anti")
               .groupBy("logDir", "topic", "partition", "kind").agg(F.max("lastOffset").alias("lastOffset")))
    heads = heads.join(replicated, ["topic", "partition"], "left_semi").unionByName(log_end, allowMissingColumns=True)
    return heads, None if records is None else records.join(replicated, ["topic", "partition"], "left_semi")


def _record_hashes(records: DataFrame) -> DataFrame:
    """A compacted topic's data records as (offset, key hash, value hash): the records view's value, or the
    ``valueHash`` a reduced records view kept in its place."""
    value = F.md5(F.col("value")) if "value" in records.columns else F.col("valueHash")
    return (records.where(F.col("problem").isNull() & ~F.col("isControl"))
            .select("logDir", "topic", "partition", F.lit("record").alias("kind"), F.col("offset").alias("baseOffset"),
                    F.md5(F.col("key")).alias("keyHash"), value.alias("valueHash")))


def _compare(key, table):
    """One partition name's rows (its replicas' context, batch headers and compacted records, in every cluster)
    -> its table rows, each replica set (cluster, topic id) compared on its own."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ...schemas import arrow_schema

    kinds = table["kind"]
    context = {r["logDir"]: {"logDir": r["logDir"], "topic": r["topic"], "partition": r["partition"]}
               | json.loads(r["context"])
               for r in table.filter(pc.equal(kinds, "replica")).select(["logDir", "topic", "partition", "context"])
               .to_pylist()}
    sets: dict[str, list[dict]] = {}
    for log_dir in sorted(context):
        sets.setdefault(context[log_dir]["set"], []).append(context[log_dir])
    batches = table.filter(pc.equal(kinds, "batch"))
    records = table.filter(pc.equal(kinds, "record"))
    out = [row for members in sets.values() for row in _compare_set(members, batches, records)]
    return pa.Table.from_pylist(out, schema=arrow_schema(REPLICA_COMPARISON))


def _compare_set(members: list[dict], batches, records) -> list[dict]:
    """The rows of one replica set: each member's context, the group's batch headers and compacted records."""
    import pyarrow.compute as pc

    from ..loaded_offsets import loaded_offsets, log_end_offset
    from .batch_headers import BatchHeaders
    from .divergence import compare
    from .fetcher_truncation import ReplicaLog
    from .leader_epoch_cache import LeaderEpochFileCache
    from .replica_set import PartitionLeadership, Replica, choose_leader

    replicas: dict[str, Replica] = {}
    for c in members:
        mine = batches.filter(pc.equal(batches["logDir"], c["logDir"]))
        heads = BatchHeaders.of({n: pc.fill_null(mine[n], -1).to_numpy() for n in HEADER_COLUMNS})
        end = log_end_offset(c["activeSegment"], [int(heads.last.max())] if len(heads) else [])
        loaded = loaded_offsets(c["firstSegment"], end, c["logStartCheckpoint"], c["highWatermarkCheckpoint"],
                                log_start_file=bool(c["logStartFile"]))
        epochs = [(e["epoch"], e["startOffset"]) for e in c["epochs"]]
        c |= {"epochs": epochs, "logStartOffset": loaded.log_start_offset, "logEndOffset": end,
              "highWatermark": loaded.high_watermark}
        r = replicas[c["logDir"]] = Replica(c["logDir"], c["brokerId"],
                                            ReplicaLog(LeaderEpochFileCache(epochs), loaded.log_start_offset, end),
                                            loaded.high_watermark, bool(c["compacted"]), heads)
        if r.compacted:
            own = records.filter(pc.equal(records["logDir"], c["logDir"])).select(["baseOffset", "keyHash",
                                                                                   "valueHash"])
            r.records = dict(zip(own["baseOffset"].to_pylist(),
                                 zip(own["keyHash"].to_pylist(), own["valueHash"].to_pylist(), strict=True),
                                 strict=True))
    first = members[0]
    meta = PartitionLeadership(first["metadataLeader"], first["metadataLeaderEpoch"], tuple(first["isr"] or ()))
    leader, source = choose_leader(list(replicas.values()), meta)
    out = []
    for c in members:
        r = replicas[c["logDir"]]
        key = (c["logDir"], c["topic"], c["partition"])
        row = {"clusterId": c["clusterId"], "topic": c["topic"], "topicId": c["topicId"], "partition": c["partition"],
               "logDir": c["logDir"], "brokerId": r.broker_id, "replicasRead": len(replicas),
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
            row |= _where("firstDropped", key, d.first_dropped) | _where("firstMismatch", key, d.first_mismatch)
            if d.first_mismatch is not None:
                row["firstMismatchOffset"] = d.first_mismatch[0]
        out.append(row)
    return out


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
