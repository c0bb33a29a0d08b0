"""Snapshot tables: every row carries ``snapshotId`` and ``snapshotTime``; writing a snapshot replaces
that snapshot's rows and nothing else.

Delta makes the write atomic: ``replaceWhere`` commits the new rows and the removal of the old ones in
one transaction, so a re-run never duplicates rows and a run that fails leaves the previous table
version intact. Tables live under a warehouse path (local, s3://, abfss://...) or in a catalog
(``catalog.schema.table`` on Databricks / Unity Catalog).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

SNAPSHOT_COLUMNS = ("snapshotId", "snapshotTime")
# A snapshot id reaches Delta's replaceWhere predicate, which is SQL text: only ids of this shape are accepted,
# so no quote or backslash can ever change what the predicate selects (the default id is the run's UTC time).
SNAPSHOT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,127}")


def check_snapshot_id(snapshot_id: str) -> str:
    """``snapshot_id`` if it is a valid snapshot id, else ValueError naming it."""
    if not isinstance(snapshot_id, str) or not SNAPSHOT_ID.fullmatch(snapshot_id):
        raise ValueError(f"snapshot id {snapshot_id!r}: use 1 to 128 letters, digits and . _ : + - "
                         "(starting with a letter or digit)")
    return snapshot_id


@dataclass(frozen=True)
class TableLocation:
    """Where the tables go: a warehouse directory, or a catalog and schema."""

    warehouse: str | None = None
    catalog: str | None = None
    schema: str | None = None

    def __post_init__(self) -> None:
        if (self.warehouse is None) == (self.schema is None):
            raise ValueError("give either a warehouse path or a catalog schema for the tables, not both")

    def name(self, table: str) -> str:
        if self.warehouse is not None:
            return f"{self.warehouse.rstrip('/')}/{table}"
        return ".".join(p for p in (self.catalog, self.schema, table) if p)

    @property
    def by_path(self) -> bool:
        return self.warehouse is not None


def _exists(spark: SparkSession, where: TableLocation, table: str) -> bool:
    """Whether the table exists, asked through the DataFrame API only (no JVM handle: works over Spark Connect)."""
    if not where.by_path:
        return spark.catalog.tableExists(where.name(table))
    from pyspark.errors import AnalysisException

    try:
        spark.read.format("delta").load(where.name(table)).schema  # noqa: B018 - analysing it is the question
    except AnalysisException:
        return False
    return True


def write_snapshot(df: DataFrame, where: TableLocation, table: str, snapshot_id: str,
                   snapshot_time: dt.datetime) -> None:
    """Replace ``snapshot_id``'s rows of ``table`` with ``df`` (creating the table on first use)."""
    check_snapshot_id(snapshot_id)
    out = df.select(F.lit(snapshot_id).alias("snapshotId"),
                    F.lit(snapshot_time).cast("timestamp").alias("snapshotTime"), "*")
    writer = out.write.format("delta").option("mergeSchema", "true")
    spark = df.sparkSession
    if _exists(spark, where, table):
        writer = writer.mode("overwrite").option("replaceWhere", f"snapshotId = '{snapshot_id}'")
    else:
        writer = writer.mode("error").partitionBy("snapshotId")  # "error": the name Spark Connect knows too
    if where.by_path:
        writer.save(where.name(table))
    else:
        writer.saveAsTable(where.name(table))


def read_snapshot(spark: SparkSession, where: TableLocation, table: str, snapshot_id: str | None = None) -> DataFrame:
    """A table's rows, of one snapshot when given."""
    df = (spark.read.format("delta").load(where.name(table)) if where.by_path else spark.table(where.name(table)))
    return df if snapshot_id is None else df.where(F.col("snapshotId") == snapshot_id)
