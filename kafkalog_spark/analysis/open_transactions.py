"""Open and hanging transactions: transactions open in data partitions, cross-checked with `__transaction_state`.

A function of DataFrames. Which transactions are open in a partition is the broker's rule, applied once
(:mod:`.cleaner.producer_state`, ``ProducerStateManager`` as a loading broker rebuilds it from the producer
snapshot and the batches after it): :func:`.log_offsets.log_offsets` carries them (``openTransactions``: producer,
first batch, last data offset) with the last stable offset they hold back. The ``transactions`` view or table
(the coordinator's latest record of each transactional id) gives its id, state, timeout and start time.

``status``: ``hanging`` when, at ``as_of``, the transaction has been open longer than its timeout (the
coordinator's, else ``transaction.max.timeout.ms``'s default, 15 minutes, as ``kafka-transactions
find-hanging`` assumes), or the coordinator's record of its producer says it is no longer ongoing in that
partition (``reason``: ``timeout`` / ``coordinator_not_ongoing``); else ``open``.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ..state.transactions import ONGOING_STATES
from .finding_columns import INDEX_FINDINGS, candidate, emit, log_dir_of_segment_file, text

MAX_TIMEOUT_MS = 900_000  # transaction.max.timeout.ms's default: no transaction may be open longer

OPEN_TRANSACTIONS = StructType([
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("producerId", LongType()),
    StructField("producerEpoch", ShortType()),
    StructField("firstOffset", LongType()),
    StructField("lastOffset", LongType()),  # its last data batch's last offset
    StructField("transactionalId", StringType()),  # null: no coordinator record of the producer was read
    StructField("coordinatorState", StringType()),
    StructField("startTimestamp", TimestampType()),
    StructField("startSource", StringType()),  # coordinator, or firstBatch (its first batch's timestamp)
    StructField("timeoutMs", LongType()),
    StructField("timeoutSource", StringType()),  # coordinator, or maxTimeoutDefault
    StructField("openMs", LongType()),  # as_of - start
    StructField("status", StringType()),  # open or hanging
    StructField("reason", StringType()),  # timeout or coordinator_not_ongoing, for hanging
    StructField("lastStableOffset", LongType()),
    StructField("pinsLastStableOffset", BooleanType()),  # its first offset is the partition's last stable offset
    StructField("blockedOffsets", LongType()),  # high watermark - first offset: what read_committed cannot see
    StructField("logFile", StringType()),  # the segment holding its first batch
    StructField("position", LongType()),
])


def open_transaction_starts(log_offsets: DataFrame) -> DataFrame:
    """One row per transaction open in a data partition, with its first batch and last data offset: the facts of
    the data partitions (``log_offsets``' openTransactions, of any number of log dirs), to be checked against the
    coordinator by :func:`open_transactions`."""
    starts = log_offsets.select("logDir", "topic", "partition", "lastStableOffset", "highWatermark",
                                F.explode("openTransactions").alias("t")).select("*", "t.*").drop("t")
    file = F.concat_ws("/", "logDir", F.concat_ws("-", "topic", "partition"),
                       F.concat(F.lpad(F.col("segmentBaseOffset").cast("string"), 20, "0"), F.lit(".log")))
    return starts.withColumn("logFile", file)


def open_transactions(starts: DataFrame, transactions: DataFrame, as_of_ms: int) -> DataFrame:
    """One row per transaction open in a data partition (schema :data:`OPEN_TRANSACTIONS`): ``starts`` from
    :func:`open_transaction_starts`, ``transactions`` the coordinator's view (the
    ``transactions`` view or table of the log dirs holding `__transaction_state`)."""
    coordinator = (transactions.where(F.col("isLatest") & ~F.col("isTombstone") & F.col("problem").isNull())
                   .groupBy("producerId").agg(F.max_by(F.struct("transactionalId", "state", "timeoutMs",
                                                                "startTimestamp", "partitions"), "recordOffset")
                                              .alias("c")))
    out = starts.join(coordinator, "producerId", "left")
    ongoing_here = (F.col("c.state").isin(*ONGOING_STATES)
                    & F.exists("c.partitions", lambda p: (p["topic"] == F.col("topic"))
                               & (p["partition"] == F.col("partition"))))
    coordinator_start = F.when(ongoing_here, F.col("c.startTimestamp"))
    out = (out.withColumn("transactionalId", F.col("c.transactionalId"))
           .withColumn("coordinatorState", F.col("c.state"))
           .withColumn("startTimestamp", F.coalesce(coordinator_start, F.timestamp_millis("firstBatchTimestamp")))
           .withColumn("startSource", F.when(coordinator_start.isNotNull(), "coordinator")
                       .when(F.col("firstBatchTimestamp").isNotNull(), "firstBatch"))
           .withColumn("timeoutMs", F.coalesce(F.col("c.timeoutMs").cast("long"), F.lit(MAX_TIMEOUT_MS).cast("long")))
           .withColumn("timeoutSource", F.when(F.col("c.timeoutMs").isNotNull(), "coordinator")
                       .otherwise("maxTimeoutDefault"))
           .withColumn("openMs", F.lit(as_of_ms) - F.unix_millis(F.col("startTimestamp")))
           .withColumn("reason", F.when(F.col("c.state").isNotNull() & ~ongoing_here, "coordinator_not_ongoing")
                       .when(F.col("openMs") > F.col("timeoutMs"), "timeout"))
           .withColumn("status", F.when(F.col("reason").isNotNull(), "hanging").otherwise("open"))
           .withColumn("pinsLastStableOffset", F.col("firstOffset") == F.col("lastStableOffset"))
           .withColumn("blockedOffsets", F.greatest(F.col("highWatermark") - F.col("firstOffset"), F.lit(0))))
    return out.select(*[F.col(f.name).cast(f.dataType) for f in OPEN_TRANSACTIONS])


def transaction_findings(open_txns: DataFrame) -> DataFrame:
    """Each open transaction as a finding (schema ``INDEX_FINDINGS``) at its first batch: ``transaction_hanging``
    (error) or ``transaction_open`` (info)."""
    found = text("producer ", F.col("producerId"), " (", F.coalesce(F.col("transactionalId"), F.lit("no coordinator "
                 "record read")), "), open since offset ", F.col("firstOffset"), " for ", F.col("openMs"), " ms")
    where = {"file": F.col("logFile"), "log_dir": log_dir_of_segment_file(F.col("logFile")),
             "position": F.col("position"), "found": found}
    out = emit(open_txns,
               candidate(F.col("status") == "hanging", "error", "transaction_hanging",
                         expected=text("closed within its timeout of ", F.col("timeoutMs"), " ms"),
                         detail=text("hanging (", F.col("reason"), "): it pins the last stable offset at ",
                                     F.col("lastStableOffset")), **where),
               candidate(F.col("status") == "open", "info", "transaction_open",
                         detail=text("open within its timeout (", F.col("timeoutMs"), " ms); the last stable "
                                     "offset is ", F.col("lastStableOffset")), **where))
    return out.select(*INDEX_FINDINGS.fieldNames())
