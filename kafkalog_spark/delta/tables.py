"""Snapshot tables: every row carries ``snapshotId`` and ``snapshotTime``; writing a snapshot replaces
that snapshot's rows and nothing else.

Delta makes the write atomic: ``replaceWhere`` commits the new rows and the removal of the old ones in
one transaction, so a re-run never duplicates rows and a run that fails leaves the previous table
version intact. Tables live under a warehouse path (local, s3://, abfss://...) or in a catalog
(``catalog.schema.table`` on Databricks / Unity Catalog).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

SNAPSHOT_COLUMNS = ("snapshotId", "snapshotTime")


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
    if where.by_path:
        from delta.tables import DeltaTable

        return DeltaTable.isDeltaTable(spark, where.name(table))
    return spark.catalog.tableExists(where.name(table))


def write_snapshot(df: DataFrame, where: TableLocation, table: str, snapshot_id: str,
                   snapshot_time: dt.datetime) -> None:
    """Replace ``snapshot_id``'s rows of ``table`` with ``df`` (creating the table on first use)."""
    out = df.select(F.lit(snapshot_id).alias("snapshotId"),
                    F.lit(snapshot_time).cast("timestamp").alias("snapshotTime"), "*")
    writer = out.write.format("delta").option("mergeSchema", "true")
    spark = df.sparkSession
    if _exists(spark, where, table):
        escaped = snapshot_id.replace("'", "''")
        writer = writer.mode("overwrite").option("replaceWhere", f"snapshotId = '{escaped}'")
    else:
        writer = writer.mode("errorifexists").partitionBy("snapshotId")
    if where.by_path:
        writer.save(where.name(table))
    else:
        writer.saveAsTable(where.name(table))


def read_snapshot(spark: SparkSession, where: TableLocation, table: str, snapshot_id: str | None = None) -> DataFrame:
    """A table's rows, of one snapshot when given."""
    df = (spark.read.format("delta").load(where.name(table)) if where.by_path else spark.table(where.name(table)))
    return df if snapshot_id is None else df.where(F.col("snapshotId") == snapshot_id)
