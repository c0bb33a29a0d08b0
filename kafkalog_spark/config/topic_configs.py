"""Every topic's effective configuration, resolved once: the one object every analysis takes.

The broker resolves a partition's settings once, when it loads the log (``LogConfig`` from the static
defaults, ``server.properties`` and the topic's dynamic overrides); so does this: a :class:`TopicConfigs`
holds the layers (loaded and validated when it is made, so a bad file or value fails before any work) and
gives each topic's :class:`~.topic_config.TopicConfig`, computed on first use and then kept. The retention
plan, the compaction preview and the segment statistics all read their settings from it, and
:meth:`TopicConfigs.rows` is what the ``topic_configs`` table shows, with the layer each value came from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from os import PathLike
from typing import Any

from ..kafka_versions import LATEST, KafkaVersion, parse_kafka_version
from .broker import load_broker_properties
from .cluster_configs import ClusterConfigs
from .overrides import load_topic_overrides, parse_assignments
from .topic_config import TopicConfig, effective_config

# The settings the analyses read, as columns of the topic_configs table (Kafka's key -> column name).
COLUMNS = {
    "cleanup.policy": "cleanupPolicy",
    "retention.ms": "retentionMs",
    "retention.bytes": "retentionBytes",
    "local.retention.ms": "localRetentionMs",
    "local.retention.bytes": "localRetentionBytes",
    "remote.storage.enable": "remoteStorageEnable",
    "segment.bytes": "segmentBytes",  # LogConfig.segmentSize(): internal.segment.bytes when set (4.x)
    "segment.ms": "segmentMs",
    "segment.index.bytes": "segmentIndexBytes",
    "min.cleanable.dirty.ratio": "minCleanableDirtyRatio",
    "min.compaction.lag.ms": "minCompactionLagMs",
    "max.compaction.lag.ms": "maxCompactionLagMs",
    "delete.retention.ms": "deleteRetentionMs",
}

ConfigSource = Any  # TopicConfigs | Mapping[str, TopicConfig | Mapping[str, str]] | Callable[[str], TopicConfig] | None


class TopicConfigs:
    """Kafka's defaults < ``broker`` (server.properties) < the cluster's dynamic broker configs < the internal
    topics' own configs < the cluster's dynamic topic configs < ``overrides[topic]`` < ``what_if`` (applied to every
    topic), per topic, each by ``kafka_version``'s keys, defaults and ranges (:mod:`.config_defs`). ``broker`` and
    ``overrides`` may be paths; ``cluster``: the dynamic configs the cluster's metadata log records
    (:mod:`.cluster_configs`)."""

    def __init__(self, broker: Mapping[str, str] | str | PathLike[str] | None = None,
                 overrides: Mapping[str, Mapping[str, str]] | str | PathLike[str] | None = None,
                 what_if: Mapping[str, str] | Iterable[str] | None = None,
                 kafka_version: KafkaVersion | str = LATEST, cluster: ClusterConfigs | None = None):
        self.kafka_version = version = parse_kafka_version(kafka_version)
        self.cluster = cluster
        self.broker = (load_broker_properties(broker, version) if isinstance(broker, str | PathLike)
                       else dict(broker or {}))
        self.overrides = (load_topic_overrides(overrides, version) if isinstance(overrides, str | PathLike)
                          else {t: dict(kv) for t, kv in (overrides or {}).items()})
        self.what_if = parse_assignments(what_if)
        self._resolved: dict[str, TopicConfig] = {}
        self._fixed: Callable[[str], TopicConfig | None] | None = None
        for topic in ["-", *self.overrides, *(cluster.topics if cluster else ())]:  # every layer is checked now: a
            self[topic]  # bad value fails here, by name

    def __getitem__(self, topic: str) -> TopicConfig:
        config = self._resolved.get(topic)
        if config is None:
            config = self._fixed(topic) if self._fixed is not None else None
            if config is None:
                config = effective_config(topic, self.broker, self.overrides, self.what_if, self.kafka_version,
                                          self.cluster)
            self._resolved[topic] = config
        return config

    def __call__(self, topic: str) -> TopicConfig:
        return self[topic]

    def resolve(self, topics: Iterable[str]) -> dict[str, TopicConfig]:
        return {t: self[t] for t in topics}

    def with_what_if(self, what_if: Mapping[str, str] | Iterable[str]) -> TopicConfigs:
        """The same layers with a what-if on top (``--set``), for side-by-side plans."""
        return TopicConfigs(self.broker, self.overrides, {**self.what_if, **parse_assignments(what_if)},
                            self.kafka_version, self.cluster)

    def with_cluster(self, cluster: ClusterConfigs | None) -> TopicConfigs:
        """The same layers with the dynamic configs of the cluster's metadata log under the topic overrides."""
        if cluster is None or self._fixed is not None:  # resolved configs given whole stay as given
            return self
        return TopicConfigs(self.broker, self.overrides, self.what_if, self.kafka_version, cluster)

    @classmethod
    def of(cls, configs: ConfigSource, kafka_version: KafkaVersion | str | None = None) -> TopicConfigs:
        """What the analyses accept, as one resolver: a TopicConfigs; None (Kafka's defaults); a mapping of topic
        -> TopicConfig (topics it lacks get Kafka's defaults) or topic -> {Kafka key: value} (per-topic
        overrides); or a callable topic -> TopicConfig. ``kafka_version`` (default: the newest, or the version
        of the mapping's TopicConfigs) applies to what is resolved here, not to a TopicConfigs given whole."""
        if isinstance(configs, TopicConfigs):
            return configs
        if kafka_version is None and isinstance(configs, Mapping):
            kafka_version = next((v.kafka_version for v in configs.values() if isinstance(v, TopicConfig)), None)
        version = kafka_version or LATEST
        if configs is None:
            return cls(kafka_version=version)
        if callable(configs) and not isinstance(configs, Mapping):
            out = cls(kafka_version=version)
            out._fixed = configs
            return out
        if all(isinstance(v, TopicConfig) for v in configs.values()):
            out = cls(kafka_version=version)
            out._fixed = configs.get
            return out
        return cls(overrides=configs, kafka_version=version)

    def rows(self, topics: Iterable[str]) -> list[dict[str, Any]]:
        """One row per topic: the settings the analyses read (:data:`COLUMNS`), every effective value as Kafka
        prints it, the layer each came from (:attr:`~.topic_config.TopicConfig.sources`) and the Kafka version
        whose rules were applied (``kafkaVersion``: 3.9 or 4.x)."""
        out = []
        for topic in sorted(set(topics)):
            c = self[topic]
            row: dict[str, Any] = {"topic": topic, "kafkaVersion": c.kafka_version.value}
            for key, column in COLUMNS.items():
                value = c.segment_size if key == "segment.bytes" else c[key]
                row[column] = ",".join(sorted(value)) if key == "cleanup.policy" else value
            row["values"] = c.as_strings()
            row["sources"] = dict(c.sources)
            out.append(row)
        return out
