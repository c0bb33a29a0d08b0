"""Per segment, its batches' aggregates: what the segment statistics, the retention plans and the segment checks read
of the batches.

The rules live in :func:`kafkalog_spark.log.segment_facts.batch_summary_row`, which the source's decoded view runs in
the task that reads each segment (the nightly job and validate take the view's ``batch_summary`` part); this applies
them to a batches view's rows grouped by segment, for the callers that read the batches view alone. A segment's
batches never change once it rolled (the cleaner and retention replace or delete whole files), so neither does its
row here.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..schemas import batch_summary_schema
from .grouping_keys import SEGMENT as KEYS


def batch_summary(batches: DataFrame) -> DataFrame:
    """One row per segment (``logDir``, ``topic``, ``partition``, ``segmentBaseOffset``, and ``tier`` when the view
    was read with a remote store) with batches in ``batches`` (the batches view, problem rows left out): the columns
    of :data:`~kafkalog_spark.schemas.BATCH_SUMMARY`, computed by
    :func:`~kafkalog_spark.log.segment_facts.batch_summary_row` over each segment's batches (a segment cut into
    several splits is one group)."""
    from ..log.segment_facts import BATCH_COLUMNS

    tier = "tier" in batches.columns
    keys = [*KEYS, *(["tier"] if tier else [])]
    # a KRaft snapshot's batches (segmentBaseOffset null) are no segment's
    ok = batches.where(F.col("problem").isNull() & F.col("segmentBaseOffset").isNotNull()).select(*keys, *BATCH_COLUMNS)
    return ok.groupBy(*keys).applyInArrow(_summarize_group, schema=batch_summary_schema(tier))


def _summarize_group(table):
    """One segment's rows (its keys and batch columns) to its summary row, as an Arrow table."""
    import pyarrow as pa

    from ..log.segment_facts import batch_summary_row
    from ..schemas import arrow_schema

    schema = arrow_schema(batch_summary_schema("tier" in table.column_names))
    row = batch_summary_row(table)
    if row is None:
        return schema.empty_table()
    keys = {name: table.column(name)[0].as_py() for name in schema.names if name in table.column_names}
    return pa.Table.from_pylist([keys | row], schema=schema)
