"""The `kafkalog` PySpark data source (Python Data Source API).

    spark.read.format("kafkalog").option("view", "records").load("/var/lib/kafka/data")

Planning (``partitions()``) runs on the driver from listings and index files; ``read()`` runs in the
executors' Python workers and decodes with the decoder core. The reader keeps only picklable state and
imports its heavy modules inside ``read()``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from .options import SEGMENT_VIEWS, VIEW_TOPICS, SourceOptions


@dataclass
class SegmentGroup(InputPartition):
    """One Spark task: a few segment splits (records/batches views) or listed partition dirs (other views:
    :class:`~kafkalog_spark.log.log_dir.PartitionLog`), and the
    problems the driver's listing found (:class:`~.planning.ListingProblem`), made rows by the first task."""

    splits: list
    partition_dirs: list
    problems: list = field(default_factory=list)


class KafkaLogDataSource(DataSource):
    """Reads Kafka broker log directories. Options: view, topics, topicPattern, includeInternal,
    isolation (read_uncommitted|read_committed), mode (PERMISSIVE|FAILFAST), maxSplitBytes; for object stores
    storeEndpoint, storeRegion, storeAnonymous."""

    @classmethod
    def name(cls) -> str:
        return "kafkalog"

    def schema(self) -> StructType:
        from .views import source_schema

        options = SourceOptions.parse(dict(self.options))
        return source_schema(options.view, options.decode_internal, options.remote_tier)

    def reader(self, schema: StructType) -> DataSourceReader:
        from .views import source_schema

        options = SourceOptions.parse(dict(self.options))
        expected = source_schema(options.view, options.decode_internal, options.remote_tier)
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
        from ..log.object_stores import configure, fresh_listings
        from .planning import group_splits, plan_partition_dirs, plan_splits

        opts = self.options
        configure(opts.store)
        fresh_listings()
        problems: list = []
        if opts.view in SEGMENT_VIEWS:
            splits = plan_splits(opts, self.pushdown, problems=problems)
            parts = [SegmentGroup(g, []) for g in group_splits(splits, opts.max_split_bytes, opts.open_cost_bytes)]
        else:
            dirs = plan_partition_dirs(opts, self.pushdown, problems=problems)
            step = 1 if opts.view in VIEW_TOPICS else 64  # a state view decodes its partitions whole: one a task
            parts = [SegmentGroup([], dirs[i:i + step]) for i in range(0, len(dirs), step)]
        parts = parts or [SegmentGroup([], [])]
        parts[0].problems = problems
        return parts

    def read(self, partition: SegmentGroup) -> Iterator:
        from ..log.object_stores import configure, fresh_listings
        from .task_reader import read_group

        configure(self.options.store)  # this worker's stores, opened as the driver's were
        fresh_listings()
        yield from read_group(partition, self.options, self.pushdown, self.schema)
