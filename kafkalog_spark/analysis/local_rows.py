"""Rows an analysis computed on the driver, as a DataFrame of local data.

Built from an Arrow table, Spark holds such rows on the driver (a local relation): a query that filters, selects and
collects them, as the tables built on them do, runs there without a Spark job, and a write of them is one job. Built
from Python rows instead, they would be an RDD, read by a job each time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from ..schemas import arrow_schema


def local_rows(spark: SparkSession, rows: Sequence[Mapping[str, Any]], schema: StructType) -> DataFrame:
    """``rows`` (dicts by column name; a map as a dict or a list of pairs) as local data of ``schema``."""
    import pyarrow as pa

    return spark.createDataFrame(pa.Table.from_pylist(list(rows), schema=arrow_schema(schema)), schema)


def grouped(rows: Iterable[Any], keys: Sequence[str]) -> dict[tuple, list[Any]]:
    """``rows`` (dicts or Rows) by the values of their ``keys``, in the order met: an aggregation's groups."""
    out: dict[tuple, list[Any]] = {}
    for row in rows:
        out.setdefault(tuple(row[k] for k in keys), []).append(row)
    return out
