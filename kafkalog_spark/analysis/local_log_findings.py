"""The checks of each partition's local log (:mod:`kafkalog_spark.log.local_log_checks`, which lists them) over the
source's views, in one Spark pass: the few rows each partition has in the views (its segments, their batches'
aggregates, its snapshot and checkpoint entries, the readers' problem rows) are grouped by partition and reduced in
Python, one call a partition, instead of a Spark query (and its jobs) per check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..log.local_log_checks import (
    CHECKED_FILE_TYPES,
    ENTRY_COLUMNS,
    FILE_COLUMNS,
    READER_VIEWS,
    SEGMENT_COLUMNS,
    SUMMARY_COLUMNS,
)
from .batch_summary import batch_summary
from .finding_columns import INDEX_FINDINGS, ok, problems
from .grouping_keys import PARTITION

# a partition's rows of each kind, as one struct column each (null on the other kinds' rows)
_PARTS = ("segment", "summary", "file", "problem", "entry")


def local_log_findings(views: Mapping[str, DataFrame], line_positions: Mapping[tuple, Sequence[int]], *,
                       log_missing: bool = False) -> DataFrame:
    """The findings of :func:`~kafkalog_spark.log.local_log_checks.partition_findings` for every partition in
    ``views`` (``segments``, ``partition_files``; the batches' aggregates from ``batch_summary`` when given, else
    from ``batches``; the problem rows of every view of :data:`~kafkalog_spark.log.local_log_checks.READER_VIEWS`
    given). ``line_positions``: each root checkpoint entry's byte position by (file, topic, partition).
    ``log_missing``: the ``index`` view's entries of segments without a `.log` are checked here too (when the tasks
    that read the segments check the others' entries)."""
    summary = views["batch_summary"] if "batch_summary" in views else batch_summary(views["batches"])
    parts = [
        ok(views["segments"]).select(*PARTITION, F.struct(*SEGMENT_COLUMNS).alias("segment")),
        summary.select(*PARTITION, F.struct(*SUMMARY_COLUMNS).alias("summary")),
        ok(views["partition_files"]).where(F.col("fileType").isin(*CHECKED_FILE_TYPES))
        .select(*PARTITION, F.struct(*FILE_COLUMNS).alias("file")),
        *(problems(views[view]).select(*PARTITION, F.struct("problem.*", F.lit(rank).alias("viewRank"))
                                       .alias("problem"))
          for rank, view in enumerate(READER_VIEWS) if view in views),
    ]
    if log_missing:
        parts.append(ok(views["index"]).select(*PARTITION, F.struct(*ENTRY_COLUMNS).alias("entry")))
    rows = parts[0]
    for part in parts[1:]:
        rows = rows.unionByName(part, allowMissingColumns=True)
    positions = {key: list(found) for key, found in line_positions.items()}

    def reduce(table):
        return _partition_findings(table, positions)

    return rows.groupBy(*PARTITION).applyInArrow(reduce, INDEX_FINDINGS)


def _partition_findings(table, line_positions: Mapping[tuple, Sequence[int]]):
    """One partition's rows (its keys and the :data:`_PARTS` struct columns) to its findings, as an Arrow table."""
    import pyarrow as pa

    from ..log.local_log_checks import partition_findings
    from ..schemas import arrow_schema

    schema = arrow_schema(INDEX_FINDINGS)
    key = {name: table.column(name)[0].as_py() for name in PARTITION}
    of = {part: [r for r in table.column(part).to_pylist() if r is not None] if part in table.column_names else []
          for part in _PARTS}
    rows = partition_findings(key, of["segment"], of["summary"], of["file"], of["problem"], line_positions,
                              of["entry"])
    return pa.Table.from_pylist(rows, schema=schema) if rows else schema.empty_table()
