"""The dynamic configs recorded in the KRaft metadata log of the log dirs read, for the analyses' configs.

Every command and the nightly job that resolve topic configs read them here first (the ``metadata_configs`` view,
one small query), so a topic's ``retention.ms`` set with ``kafka-configs --alter`` counts without ``--topic-config``
(:mod:`kafkalog_spark.config.cluster_configs` layers them as the broker does)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pyspark.sql import SparkSession

from ..config import TopicConfigs
from ..config.cluster_configs import ClusterConfigs

log = logging.getLogger(__name__)


def read_cluster_configs(spark: SparkSession, paths: Sequence[str], configs: TopicConfigs,
                         **options: object) -> TopicConfigs:
    """``configs`` with the dynamic configs of the metadata log under ``paths`` (log dirs or partition dirs) layered
    in, by ``configs``' Kafka version; ``configs`` itself when no path holds ``__cluster_metadata``. Of several log
    dirs holding it (the controllers' and brokers' replicas), the one whose image is newest counts; log dirs of
    several clusters leave the configs as they are (a topic name may mean a different topic in each), with a
    warning. The brokers whose own dynamic configs apply are those of ``paths`` (their ``meta.properties``)."""
    from ..log.log_dir import broker_identity
    from . import read_views

    view = read_views(spark, list(paths), ["metadata_configs"], **options)["metadata_configs"]
    rows = [r.asDict() for r in view.where("problem is null").collect()]
    if not rows:
        return configs
    identities = {d: broker_identity(d) for d in dict.fromkeys(r["logDir"] for r in rows)}
    clusters = {cluster for cluster, _ in identities.values()}
    if len(clusters) > 1:
        log.warning("the log dirs hold the metadata of %d clusters: their dynamic configs are not applied",
                    len(clusters))
        return configs
    newest = max(identities, key=lambda d: max(r["asOfOffset"] or -1 for r in rows if r["logDir"] == d))
    nodes = {node for p in paths for _, node in [broker_identity(p)] if node is not None}
    cluster = ClusterConfigs.from_rows([r for r in rows if r["logDir"] == newest], nodes, configs.kafka_version)
    return configs.with_cluster(cluster)
