"""Catalog checks: the partition directories on disk against the cluster metadata's topics.

A function of DataFrames: each partition dir's topic id (``partition.metadata``, from the ``partition_files``
view or the ``partition_stats`` table: :func:`live_partition_dirs`), the ``topic_catalog`` (view or table; when
several metadata logs were read, the most advanced image of each topic wins) and the special
dirs (``-delete``, ``-future``, ``-stray``) that :func:`special_partition_dirs` lists on the driver.

``status`` of a live dir: ``ok``; ``unknown_topic_id`` (the metadata does not know its id: the broker marks it
stray); ``topic_id_mismatch`` (its name belongs to another id now: deleted and created again);
``deleted_topic`` (its topic was deleted; the broker renames it to ``-delete`` and removes it after
``file.delete.delay.ms``); ``no_catalog`` (no metadata log was read); ``metadata_log`` (``__cluster_metadata``
itself). A special dir's status is its kind: ``delete`` (a deleted topic's, or a replica moved away),
``future`` (a move between log dirs in progress) or ``stray``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, IntegerType, StringType, StructField, StructType

from .finding_columns import INDEX_FINDINGS, candidate, emit, text

CATALOG_CHECKS = StructType([
    StructField("logDir", StringType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("dir", StringType()),
    StructField("dirKind", StringType()),  # live, delete, future, stray
    StructField("topicId", StringType()),  # partition.metadata's; null when the dir has none
    StructField("catalogTopicId", StringType()),  # the live topic of that name in the metadata, if any
    StructField("status", StringType()),
    StructField("topicDeleted", BooleanType()),  # the metadata deleted the topic of this dir's id
])

PARTITION_DIRS = "logDir string, topic string, partition int, dir string, dirKind string, topicId string"
METADATA_TOPIC = "__cluster_metadata"


def special_partition_dirs(spark: SparkSession, log_dirs: Sequence[str]) -> DataFrame:
    """The ``-delete``, ``-future`` and ``-stray`` dirs of ``log_dirs`` with their topic id (schema
    :data:`PARTITION_DIRS`), listed and read on the driver: a few small files."""
    from ..log.checkpoints import PARTITION_METADATA, PartitionMetadataFile
    from ..log.log_dir import find_partitions

    rows = []
    for p in find_partitions(list(log_dirs), None, []):
        kind = p.topic_partition.kind
        if kind == "live":
            continue
        path = p.other_files.get(PARTITION_METADATA)
        topic_id = PartitionMetadataFile.read(path).topic_id if path else None
        rows.append((p.log_dir, p.topic, p.partition, p.path, kind, topic_id))
    return spark.createDataFrame(rows, PARTITION_DIRS)


def live_partition_dirs(partition_files: DataFrame) -> DataFrame:
    """Each live partition dir's topic id (schema :data:`PARTITION_DIRS`), from the ``partition_files`` view or
    the ``partition_stats`` table (both have logDir, topic, partition and topicId)."""
    df = partition_files
    if "fileType" in df.columns:
        df = df.where(F.col("problem").isNull() & (F.col("fileType") == "partition.metadata"))
    return df.where(F.col("topicId").isNotNull()).select(
        "logDir", "topic", "partition", F.concat_ws("/", "logDir", F.concat_ws("-", "topic", "partition")).alias("dir"),
        F.lit("live").alias("dirKind"), "topicId")


def partition_dirs(spark: SparkSession, partition_files: DataFrame, log_dirs: Sequence[str]) -> DataFrame:
    """Every partition dir of ``log_dirs`` (schema :data:`PARTITION_DIRS`): the live ones with their topic id
    (:func:`live_partition_dirs` of ``partition_files``, the view or the ``partition_stats`` table) and the special
    ones (:func:`special_partition_dirs`)."""
    return live_partition_dirs(partition_files).unionByName(special_partition_dirs(spark, log_dirs))


def catalog_checks(partition_dirs: DataFrame, topic_catalog: DataFrame) -> DataFrame:
    """One row per partition dir (schema :data:`CATALOG_CHECKS`); ``partition_dirs``: :func:`partition_dirs`."""
    catalog = (topic_catalog.where(F.col("problem").isNull())
               .groupBy("topicId").agg(F.max_by(F.struct("topic", "isDeleted"), "asOfOffset").alias("c"))
               .select("topicId", "c.topic", "c.isDeleted"))
    live = catalog.where(~F.col("isDeleted"))
    by_id = catalog.select("topicId", F.col("topic").alias("idTopic"), F.col("isDeleted").alias("idDeleted"))
    by_name = live.select("topic", F.col("topicId").alias("catalogTopicId"))
    has_catalog = F.lit(catalog.limit(1).count() > 0)
    out = partition_dirs.join(by_id, "topicId", "left").join(by_name, "topic", "left")
    status = (F.when(F.col("dirKind") != "live", F.col("dirKind"))
              .when(F.col("topic") == METADATA_TOPIC, "metadata_log")
              .when(~has_catalog, "no_catalog")
              .when(F.col("idDeleted"), "deleted_topic")
              .when(F.col("catalogTopicId").isNotNull() & (F.col("catalogTopicId") != F.col("topicId")),
                    "topic_id_mismatch")
              .when(F.col("idTopic").isNull(), "unknown_topic_id")
              .otherwise("ok"))
    out = out.withColumn("status", status).withColumn("topicDeleted", F.coalesce(F.col("idDeleted"), F.lit(False)))
    return out.select(*[F.col(f.name).cast(f.dataType) for f in CATALOG_CHECKS])


def catalog_findings(checks: DataFrame) -> DataFrame:
    """The dirs the metadata disowns, as findings (schema ``INDEX_FINDINGS``) naming the dir's
    ``partition.metadata``."""
    where = {"file": F.concat(F.col("dir"), F.lit("/partition.metadata")), "found": text("topic id ", F.col("topicId"))}
    out = emit(checks,
               candidate(F.col("status") == "unknown_topic_id", "error", "partition_topic_id_unknown",
                         detail="the cluster metadata has no topic with this id", **where),
               candidate(F.col("status") == "topic_id_mismatch", "error", "partition_topic_id_mismatch",
                         expected=text("topic id ", F.col("catalogTopicId")),
                         detail="the metadata's topic of this name has another id", **where),
               candidate(F.col("status") == "deleted_topic", "warning", "deleted_topic_on_disk",
                         detail="the topic was deleted; the dir is not yet renamed -delete", **where),
               candidate((F.col("status") == "delete") & F.col("topicDeleted"), "info", "deleted_topic_on_disk",
                         detail="a deleted topic's dir, removed after file.delete.delay.ms", **where))
    return out.select(*INDEX_FINDINGS.fieldNames())
