"""The offsets of every partition as a broker loading its log would have them: log start, log end, high
watermark, last stable offset, and the transactions open in it (producer id and first offset).

The rules are the cleaner model's (:func:`.cleaner.load_offsets`: ``UnifiedLog`` and ``ProducerStateManager``,
the producer snapshot then the batches after it), applied here to every partition, compacted or not, from the
batches and the control records only (no keys): one home for what is open and where the last stable offset
is, shared with the compaction preview.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, IntegerType, LongType, StringType, StructField, StructType

from ..config.topic_configs import ConfigSource
from .compaction import (
    _batch_rows,
    _check_one_copy,
    _collect_context,
    _partition_input,
    _problem_rows,
    _record_rows,
    _segment_listing,
    resolve_settings,
)

LOG_OFFSETS = StructType([
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("logStartOffset", LongType()),
    StructField("logEndOffset", LongType()),
    StructField("highWatermark", LongType()),
    StructField("highWatermarkSource", StringType()),  # checkpoint (replication-offset-checkpoint) or logEndOffset
    StructField("lastStableOffset", LongType()),
    StructField("activeProducers", IntegerType()),
    StructField("openTransactionStarts", ArrayType(StructType([StructField("producerId", LongType()),
                                                              StructField("firstOffset", LongType())]))),
    StructField("problems", LongType()),  # problem rows of the inputs for this partition: the offsets may be off
])


def log_offsets(records: DataFrame, batches: DataFrame, segments: DataFrame, partition_files: DataFrame,
                configs: ConfigSource, now_ms: int) -> DataFrame:
    """One row per partition with segments (schema :data:`LOG_OFFSETS`), from the views of one broker's log dirs
    (a partition in two of the dirs given is a ValueError, as for the compaction preview). ``configs``: the topics'
    effective configs (producer.id.expiration.ms decides which producers a loading broker keeps); ``now_ms``:
    the load time to assume."""
    listing = _segment_listing(segments)
    _check_one_copy(listing)
    names = sorted({r.topic for r in listing if r.topic is not None})
    spark = segments.sparkSession
    if not names:
        return spark.createDataFrame([], LOG_OFFSETS)
    settings = resolve_settings(configs, names)
    context = _collect_context(listing, partition_files, names)
    controls = records.where(F.col("isControl") & F.col("snapshotEndOffset").isNull())
    live = batches.where(F.col("snapshotEndOffset").isNull())
    rows = (_batch_rows(live).unionByName(_record_rows(controls), allowMissingColumns=True)
            .unionByName(_problem_rows(live), allowMissingColumns=True))
    markers = spark.createDataFrame([(t, p) for (t, p), c in context.items() if c["segments"]],
                                    "topic string, partition int").withColumn("kind", F.lit("partition"))
    rows = rows.unionByName(markers, allowMissingColumns=True)
    return rows.groupBy("topic", "partition").applyInArrow(_offsets_function(context, settings, int(now_ms)),
                                                           LOG_OFFSETS)


def _offsets_function(context: dict, settings: dict, now_ms: int):
    def run(key, table):
        import pyarrow as pa

        from ..schemas import arrow_schema
        from .cleaner import LogSegments, load_offsets, place_batches

        topic, partition = key[0].as_py(), key[1].as_py()
        c = context.get((topic, partition))
        if c is None or not c["segments"]:
            return pa.Table.from_pylist([], schema=arrow_schema(LOG_OFFSETS))
        inp = _partition_input(table, (topic, partition), c, settings[topic])
        segs = LogSegments(inp.segments)
        ordered, _ = place_batches(inp.batches, segs)
        offsets, state = load_offsets(inp, segs, ordered, now_ms)
        row = {"topic": topic, "partition": partition, "logStartOffset": offsets.log_start,
               "logEndOffset": offsets.log_end, "highWatermark": offsets.high_watermark,
               "highWatermarkSource": offsets.high_watermark_source, "lastStableOffset": offsets.last_stable,
               "activeProducers": len(state.producers),
               "openTransactionStarts": [{"producerId": p, "firstOffset": o}
                                         for p, o in sorted(state.open_txns.items(), key=lambda t: t[1])],
               "problems": inp.problems}
        return pa.Table.from_pylist([row], schema=arrow_schema(LOG_OFFSETS))

    return run
