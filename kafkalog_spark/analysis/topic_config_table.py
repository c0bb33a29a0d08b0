"""The ``topic_configs`` table: each topic's effective settings, as resolved once by
:class:`kafkalog_spark.config.TopicConfigs`, with the layer every value came from. The segment statistics
join it for their roll limits; the nightly job writes it next to the tables it explains."""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from ..config.topic_configs import COLUMNS, TopicConfigs

_TYPES = {"cleanupPolicy": StringType(), "remoteStorageEnable": BooleanType(), "minCleanableDirtyRatio": DoubleType()}

TOPIC_CONFIGS = StructType(
    [StructField("topic", StringType()),
     StructField("kafkaVersion", StringType())]  # whose keys, defaults and ranges: 3.9 or 4.x (--kafka-version)
    + [StructField(column, _TYPES.get(column, LongType())) for column in COLUMNS.values()]
    + [StructField("values", MapType(StringType(), StringType())),  # every effective value, as Kafka prints it
       StructField("sources", MapType(StringType(), StringType()))]  # default | broker | internal | topic | what-if
)


def topic_configs(spark: SparkSession, configs: TopicConfigs, topics: Iterable[str]) -> DataFrame:
    """One row per topic of ``topics`` (schema :data:`TOPIC_CONFIGS`)."""
    return spark.createDataFrame(configs.rows(topics), TOPIC_CONFIGS)


def topics_of(segments: DataFrame) -> list[str]:
    """The topics present in a segments view, sorted. Its rows' topics collected (a row per segment file, no
    shuffle): of a view collected on the driver (:func:`~kafkalog_spark.session.collected`), without a Spark job."""
    return sorted({r.topic for r in segments.where("problem is null").select("topic").collect() if r.topic is not None})
