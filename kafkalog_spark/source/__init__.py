"""The Spark side: the `kafkalog` data source and how to register it on a session."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pyspark.sql import DataFrame, SparkSession

from ..log import object_stores
from .datasource import KafkaLogDataSource

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
RUNTIME_BLOOM_FILTER_CONF = "spark.sql.optimizer.runtime.bloomFilter.enabled"
DECODED_VIEWS = ("records", "batches", "record_stats", "decoded")


def register(spark: SparkSession) -> None:
    """Register the `kafkalog` source on an existing session (a Databricks notebook has one).

    The source prunes segments and seeks through indexes with the filters Spark pushes to it; Spark
    refuses a Python source that takes filters while Python filter pushdown is off, so this turns it on.
    It also turns off Spark's runtime Bloom filters for the session (see :func:`_no_runtime_bloom_filters`).
    """
    spark.conf.set(PUSHDOWN_CONF, "true")
    _no_runtime_bloom_filters(spark)
    spark.dataSource.register(KafkaLogDataSource)


def _no_runtime_bloom_filters(spark: SparkSession) -> None:
    """Spark's runtime Bloom filters (its optimizer rule InjectRuntimeFilter) made the analyses' task binaries
    megabytes, and ran a 1 GiB driver out of heap serializing one for three small log dirs.

    A Python source cannot report its size, so Spark gives its scans ``spark.sql.defaultSizeInBytes``
    (Long.MaxValue), which the rule reads as "unknown". A projection over such a scan scales that number instead
    (the nightly job's cached records without payloads: ~6e18 bytes), which the rule takes for a scan over its
    10 GB threshold: a shuffle join of it with a view filtered selectively (segments, ``status = 'live'``) then
    gets a Bloom filter per join key, sized for a million items as no row count is known: 1 MiB each. Their bytes
    go into the task binary of every stage reading that side, once per reference: segment_stats' stages were 15
    to 37 MiB for one log dir, and a union of the nightly job's log dirs adds them up (110 MiB for three). Here
    they prune next to nothing (both sides are views of the same log dirs), so they are off for the session; rows
    are the same either way. A platform that does not let a session set it (a serverless one allows a list of
    settings) keeps its own: there the filters cost memory, not results."""
    from pyspark.errors import AnalysisException

    try:
        spark.conf.set(RUNTIME_BLOOM_FILTER_CONF, "false")
    except AnalysisException:
        pass


def read_views(spark: SparkSession, paths: str | Sequence[str], views: Iterable[str],
               **options: object) -> dict[str, DataFrame]:
    """The source's ``views`` of the same log dirs or partition dirs, by name, as the analyses take them.
    Internal topics are included unless ``includeInternal`` says otherwise; options whose value is None are
    left out. The metadata log's KRaft snapshots stay listed (segments view) but their batches and records
    are left out unless ``kraftSnapshots`` says otherwise: they restate the log, not add to it."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    stores = object_stores.configured().to_options()  # the process's, unless the call says otherwise
    opts = {"includeInternal": "true"} | stores | {k: str(v) for k, v in options.items() if v is not None}
    decoded = {"kraftSnapshots": "false"}
    return {v: spark.read.format("kafkalog").options(**(decoded | opts if v in DECODED_VIEWS else opts))
            .option("view", v).load(paths) for v in views}


def control_records(records: DataFrame) -> DataFrame:
    """The control records of a records view. The filter is pushed to the source, whose tasks then decode the
    control batches alone: a fraction of a full decode, for the analyses that read markers (log offsets, the
    transaction index checks), while the record_stats view has every record's aggregates and decode problems."""
    from pyspark.sql import functions as F

    return records.where(F.col("isControl") == F.lit(True))


def decoded_views(decoded: DataFrame) -> dict[str, DataFrame]:
    """The views a read of the decoded view holds, by name: batches, record_stats and records (the control records,
    as :func:`control_records` has them), each as its own view has it. One read of the segments gives all three,
    so persist ``decoded`` before reading them (else each reads the segments again)."""
    from .views import DECODED_PARTS

    return {part: decoded_part(decoded, part) for part in DECODED_PARTS}


def decoded_part(rows: DataFrame, part: str) -> DataFrame:
    """The rows of ``part`` in ``rows`` (a struct column per part, the others null), as the part's own view has them:
    the decoded view's and the incremental runs' kept rows are both so packed."""
    from pyspark.sql import functions as F

    return rows.where(F.col(part).isNotNull()).select(f"{part}.*")


__all__ = ["KafkaLogDataSource", "control_records", "decoded_part", "decoded_views", "read_views", "register"]
