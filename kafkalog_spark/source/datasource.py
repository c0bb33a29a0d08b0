"""The `kafkalog` PySpark data source (Python Data Source API).

    spark.read.format("kafkalog").option("view", "records").load("/var/lib/kafka/data")

Planning (``partitions()``) runs on the driver from listings and index files; ``read()`` runs in the
executors' Python workers and decodes with the decoder core. The reader keeps only picklable state and
imports its heavy modules inside ``read()``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from ..schemas import with_problem
from .options import SourceOptions


@dataclass
class SegmentGroup(InputPartition):
    """One Spark task: a few segment splits (records/batches views) or partition dirs (other views)."""

    splits: list
    partition_dirs: list


class KafkaLogDataSource(DataSource):
    """Reads Kafka broker log directories. Options: view, topics, topicPattern, includeInternal,
    isolation (read_uncommitted|read_committed), mode (PERMISSIVE|FAILFAST), maxSplitBytes."""

    @classmethod
    def name(cls) -> str:
        return "kafkalog"

    def schema(self) -> StructType:
        from .views import view_schema

        return with_problem(view_schema(SourceOptions.parse(dict(self.options)).view))

    def reader(self, schema: StructType) -> DataSourceReader:
        from .views import view_schema

        options = SourceOptions.parse(dict(self.options))
        expected = with_problem(view_schema(options.view))
        if schema != expected:  # Spark skips schema() when the user gives one: each view's schema is fixed
            raise ValueError(f"kafkalog: the {options.view} view has a fixed schema; remove .schema(...) from the "
                             f"read (its columns are: {', '.join(expected.fieldNames())})")
        return KafkaLogReader(options, schema)


class KafkaLogReader(DataSourceReader):
    def __init__(self, options: SourceOptions, schema: StructType):
        from .filters import Pushdown

        self.options = options
        self.schema = schema
        self.pushdown = Pushdown()

    def pushFilters(self, filters: list) -> Iterator:
        from .filters import from_spark_filter

        for f in filters:
            predicate = from_spark_filter(f, self.options.view) if self.options.pushdown else None
            if predicate is None:
                yield f  # Spark evaluates it
            else:
                self.pushdown.predicates.append(predicate)

    def partitions(self) -> Sequence[InputPartition]:
        from .planning import group_splits, plan_splits, select_partitions

        opts = self.options
        if opts.view in ("records", "batches"):
            groups = group_splits(plan_splits(opts, self.pushdown), opts.max_split_bytes, opts.open_cost_bytes)
            parts = [SegmentGroup(g, []) for g in groups]
        else:
            logs = select_partitions(opts, self.pushdown)
            parts = [SegmentGroup([], [log.path for log in logs[i:i + 64]]) for i in range(0, len(logs), 64)]
        return parts or [SegmentGroup([], [])]

    def read(self, partition: SegmentGroup) -> Iterator:
        from .scan import read_group

        yield from read_group(partition, self.options, self.pushdown, self.schema)
