"""Rows an analysis computed on the driver, as a DataFrame of local data.

Built from an Arrow table, Spark holds such rows on the driver (a local relation): a query that filters, selects and
collects them, as the tables built on them do, runs there without a Spark job, and a write of them is one job. Built
from Python rows instead, they would be an RDD, read by a job each time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from ..schemas import arrow_schema

if TYPE_CHECKING:
    import pyarrow as pa


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


def apply_in_arrow_on_driver(df: DataFrame, keys: Sequence[str], fn: Callable[[pa.Table], pa.Table],
                             schema: StructType) -> DataFrame:
    """What ``df.groupBy(*keys).applyInArrow(fn, schema)`` gives, computed on the driver over one collect of ``df``
    and returned as local data: for inputs of a row or a few per segment or partition, where Spark's shuffle and a
    Python worker's round trip per group cost more than the work. ``fn`` gets each group's rows as an Arrow table
    of ``df``'s schema, in the order collected, and returns rows of ``schema``."""
    import pyarrow as pa

    table = df.toArrow()
    target = arrow_schema(schema)
    groups: dict[tuple, list[int]] = {}  # each group's row numbers, in the order met
    for i, key in enumerate(zip(*(table.column(k).to_pylist() for k in keys), strict=True)):
        groups.setdefault(key, []).append(i)
    out = [fn(table.take(pa.array(rows, pa.int64()))).select(target.names).cast(target) for rows in groups.values()]
    return df.sparkSession.createDataFrame(pa.concat_tables(out) if out else target.empty_table(), schema)
