"""A topic's effective configuration, layered as a broker of the chosen Kafka version (3.9 or 4.x) layers it.

Layers, lowest first: Kafka's defaults (:func:`~.keys.topic_defaults`, :func:`~.keys.broker_defaults` of the
version) < the broker's ``server.properties`` (:func:`~.broker.load_broker_properties`) < the configs Kafka gives
its internal topics when it creates them (:func:`internal_topic_layer`) < per-topic overrides
(:func:`~.overrides.load_topic_overrides`) < what-if settings (``--set key=value``). :func:`effective_config`
returns a :class:`TopicConfig` with typed, validated values; a bad value raises :class:`~.values.ConfigError`
naming the key and the value, e.g. ``retention.ms=abc: not a long``. The KRaft metadata log
(``__cluster_metadata``) is no ordinary topic: its LogConfig is built from the ``metadata.*`` settings alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from typing import Any

from ..kafka_versions import LATEST, KafkaVersion, parse_kafka_version
from .broker import load_broker_properties
from .cluster_configs import ClusterConfigs
from .config_defs import (
    BROKER_KEYS,
    INTERNAL_TOPICS,
    NEVER_REMOTE_TOPICS,
    TOPIC_KEYS,
    broker_defaults,
    not_in_version,
    topic_defaults,
)
from .overrides import load_topic_overrides, parse_assignments
from .values import DIFFERENCE, TIMESTAMP_BOUNDS, ConfigError, parse_value, timestamp_bound


def _attr(key: str) -> str:
    return key.replace(".", "_").replace("-", "_")


_ATTRS = {_attr(k.name): k.name for k in (*TOPIC_KEYS, *BROKER_KEYS)}


@dataclass(frozen=True)
class TopicConfig:
    """Typed, validated effective configuration of one topic.

    ``config["retention.ms"]`` or ``config.retention_ms`` (dots become underscores) give typed values: ints for
    long/int keys, a float for ``min.cleanable.dirty.ratio``, a frozenset for ``cleanup.policy``, bools, strings.
    ``local.retention.ms``/``local.retention.bytes`` are resolved (-2 means the non-local value), the raw
    strings stay in ``raw``. ``sources[key]`` says which layer set each value: ``default``, ``broker``,
    ``dynamic-broker-default@<offset>`` or ``dynamic-broker@<offset>`` (the metadata log's broker configs),
    ``internal`` (Kafka's creation config for its internal topics), ``dynamic-topic@<offset>`` (the metadata log's
    topic configs), ``topic`` (``--topic-config``) or ``what-if``.
    ``kafka_version``: whose keys, defaults and ranges were applied.
    """

    topic: str
    values: Mapping[str, Any]
    raw: Mapping[str, str]
    sources: Mapping[str, str] = field(default_factory=dict)
    kafka_version: KafkaVersion = LATEST

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def __getattr__(self, name: str) -> Any:
        key = _ATTRS.get(name)
        if key is None or key not in self.values:  # not a key of this config's Kafka version
            raise AttributeError(name)
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def keys(self):
        return self.values.keys()

    @property
    def cleanup_policy(self) -> frozenset[str]:
        return self.values["cleanup.policy"]

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def retention_ms(self) -> int:
        return self.values["retention.ms"]

    @property
    def retention_bytes(self) -> int:
        return self.values["retention.bytes"]

    @property
    def local_retention_ms(self) -> int:
        return self.values["local.retention.ms"]

    @property
    def local_retention_bytes(self) -> int:
        return self.values["local.retention.bytes"]

    @property
    def min_cleanable_dirty_ratio(self) -> float:
        return self.values["min.cleanable.dirty.ratio"]

    @property
    def segment_size(self) -> int:
        """LogConfig.segmentSize() (4.x, storage/.../log/LogConfig.java): internal.segment.bytes when set, else
        segment.bytes: the size a segment rolls at. 3.9 has no internal key, so it is segment.bytes there."""
        internal = self.values.get("internal.segment.bytes")
        return self.values["segment.bytes"] if internal is None else internal

    @property
    def is_internal(self) -> bool:
        return self.topic in INTERNAL_TOPICS

    @property
    def remote_log_enabled(self) -> bool:
        """UnifiedLog.isRemoteLogEnabled: the topic's remote.storage.enable, not compacted, not internal, and the
        broker's remote.log.storage.system.enable. Offline, a topic can only carry remote.storage.enable=true if
        its cluster had tiered storage on, so the system flag counts as on unless a broker config says false."""
        system_off = self.sources.get("remote.log.storage.system.enable") == "broker" and not self.values[
            "remote.log.storage.system.enable"]
        return (bool(self.values["remote.storage.enable"]) and not self.compact
                and self.topic not in NEVER_REMOTE_TOPICS and not system_off)

    @property
    def remote_copy_enabled(self) -> bool:
        """remoteLogEnabledAndRemoteCopyEnabled: tiered and remote.log.copy.disable=false; then the local.* limits
        apply to local segments and deletion needs a remote copy."""
        return self.remote_log_enabled and not self.values["remote.log.copy.disable"]

    def as_strings(self) -> dict[str, str]:
        """The effective values as Kafka would print them (local.* resolved; raw message.timestamp.* bounds)."""
        out = {key: value for key, value in self.raw.items() if value is not None}  # a null default is not printed
        for key in ("local.retention.ms", "local.retention.bytes"):
            out[key] = str(self.values[key])
        return out


# KafkaRaftClient.MAX_BATCH_SIZE_BYTES (3.9.2) / MetadataLogConfig's internal max batch size default (4.4.0)
METADATA_MAX_BATCH_BYTES = "8388608"
# TopicBasedRemoteLogMetadataManagerConfig: remote.log.metadata.topic.retention.ms and (4.x) .min.isr defaults
_RLMM_RETENTION_MS, _RLMM_MIN_ISR = "-1", "2"


def internal_topic_layer(topic: str, layered: Mapping[str, str], version: KafkaVersion = LATEST) -> dict[str, str]:
    """The configs Kafka creates an internal topic with, from the broker settings in ``layered``.

    - ``__consumer_offsets``: GroupCoordinatorService.groupMetadataTopicConfigs (3.9.2 group-coordinator,
      GroupCoordinatorService.java:1083; the same map in 4.4.0; the old GroupCoordinator.offsetsTopicConfigs too).
    - ``__transaction_state``: TransactionStateManager.transactionTopicConfigs (3.9.2 core,
      TransactionStateManager.scala:401) / TransactionCoordinator.transactionStateTopicConfigs (4.4.0).
    - ``__share_group_state`` (4.x): ShareCoordinatorService.shareGroupStateTopicConfigs (4.4.0).
    - ``__remote_log_metadata``: TopicBasedRemoteLogMetadataManager's CreateTopics configs (3.9.2
      TopicBasedRemoteLogMetadataManager.java:501; 4.4.0 adds min.insync.replicas).
    - ``__cluster_metadata``: KafkaMetadataLog.apply (3.9.2 core/.../raft/KafkaMetadataLog.scala:567) /
      KafkaRaftLog.createLog (4.4.0): segment size and roll from metadata.log.*, no time or size retention
      (snapshots bound it: metadata.max.retention.*), max.message.bytes the largest metadata batch.
    """
    if topic == "__consumer_offsets":
        return {"cleanup.policy": "compact", "compression.type": "producer",
                "segment.bytes": layered["offsets.topic.segment.bytes"]}
    if topic == "__transaction_state":
        return {"unclean.leader.election.enable": "false", "compression.type": "uncompressed",
                "cleanup.policy": "compact", "min.insync.replicas": layered["transaction.state.log.min.isr"],
                "segment.bytes": layered["transaction.state.log.segment.bytes"]}
    if topic == "__share_group_state" and version is KafkaVersion.V4:
        return {"cleanup.policy": "delete", "compression.type": "producer",
                "segment.bytes": layered["share.coordinator.state.topic.segment.bytes"],
                "min.insync.replicas": layered["share.coordinator.state.topic.min.isr"], "retention.ms": "-1"}
    if topic == "__remote_log_metadata":
        layer = {"retention.ms": _RLMM_RETENTION_MS, "cleanup.policy": "delete", "remote.storage.enable": "false"}
        return layer | ({"min.insync.replicas": _RLMM_MIN_ISR} if version is KafkaVersion.V4 else {})
    if topic == CLUSTER_METADATA:
        return {"max.message.bytes": METADATA_MAX_BATCH_BYTES, "segment.bytes": layered["metadata.log.segment.bytes"],
                "segment.ms": layered["metadata.log.segment.ms"], "file.delete.delay.ms": "60000",
                "retention.ms": "-1", "retention.bytes": "-1"}
    return {}


CLUSTER_METADATA = "__cluster_metadata"


def effective_config(topic: str, broker: Mapping[str, str] | str | PathLike[str] | None = None,
                     overrides: Mapping[str, Mapping[str, str]] | str | PathLike[str] | None = None,
                     what_if: Mapping[str, str] | Iterable[str] | None = None,
                     kafka_version: KafkaVersion | str = LATEST, cluster: ClusterConfigs | None = None) -> TopicConfig:
    """``topic``'s effective config: defaults < broker < the cluster's dynamic broker configs < internal-topic
    configs < the cluster's dynamic topic configs < overrides[topic] < what-if, each by ``kafka_version``'s rules.
    ``cluster``: the dynamic configs of the cluster's metadata log (:mod:`.cluster_configs`).

    ``broker``: :func:`load_broker_properties` output (or a path to server.properties). ``overrides``: topic ->
    {key: value} (:func:`load_topic_overrides` output, or a path). ``what_if``: {key: value} or
    ``["key=value", ...]`` applied to every topic; it may also set the broker-only keys. A key the version does
    not know is an error in a what-if and an override, as the AdminClient's CreateTopics/AlterConfigs reject it
    (``LogConfig.validateNames``); files are read leniently by :func:`load_topic_overrides`.
    """
    version = parse_kafka_version(kafka_version)
    if isinstance(broker, (str, PathLike)):
        broker = load_broker_properties(broker, version)
    if isinstance(overrides, (str, PathLike)):
        overrides = load_topic_overrides(overrides, version)
    topic_keys, broker_keys = topic_defaults(version), broker_defaults(version)
    raw: dict[str, str | None] = {**topic_keys, **broker_keys}
    sources = dict.fromkeys(raw, "default")

    def apply(layer: Mapping[str, str], source: str, allow_broker_keys: bool) -> None:
        for key, value in layer.items():
            if key not in topic_keys and not (allow_broker_keys and key in broker_keys):
                why = "unknown" if key in broker_keys else not_in_version(key, version)  # broker-only: no topic key
                if why == "unknown":
                    why = "unknown config key" if allow_broker_keys else "unknown topic config key"
                raise ConfigError(f"{key}={value}: {why}", key, str(value))
            raw[key] = str(value)
            sources[key] = source

    # The metadata log's LogConfig is made from its own properties only: server.properties' log.* do not reach it.
    broker_layer = dict(broker or {})
    if topic == CLUSTER_METADATA:
        broker_layer = {k: v for k, v in broker_layer.items() if k in broker_keys}
    apply(broker_layer, "broker", True)
    if cluster is not None:  # each value with its own source: the ConfigRecord's offset
        for key, (value, source) in cluster.broker.items():
            if topic != CLUSTER_METADATA or key in broker_keys:
                apply({key: value}, source, True)
    apply(internal_topic_layer(topic, raw, version), "internal", False)
    for key, (value, source) in (cluster.topics.get(topic, {}) if cluster is not None else {}).items():
        apply({key: value}, source, False)
    apply((overrides or {}).get(topic, {}), "topic", False)
    apply(parse_assignments(what_if), "what-if", True)

    values = {key: parse_value(key, value, version) for key, value in raw.items()}
    if values["min.compaction.lag.ms"] > values["max.compaction.lag.ms"]:  # LogConfig.validateValues
        raise ConfigError(f"min.compaction.lag.ms={raw['min.compaction.lag.ms']}: conflicts with "
                          f"max.compaction.lag.ms={raw['max.compaction.lag.ms']} (min > max)", "min.compaction.lag.ms",
                          raw["min.compaction.lag.ms"])
    if values["remote.storage.enable"]:
        _validate_remote(values, raw)
    if DIFFERENCE in values:  # 3.9: LogConfig's before/after bounds fall back to the deprecated difference
        for key in TIMESTAMP_BOUNDS:
            values[key] = timestamp_bound(values[key], values[DIFFERENCE])
    # LogConfig.localRetentionMs/Bytes: -2 means "the same as retention.ms/bytes".
    if values["local.retention.ms"] == -2:
        values["local.retention.ms"] = values["retention.ms"]
    if values["local.retention.bytes"] == -2:
        values["local.retention.bytes"] = values["retention.bytes"]
    return TopicConfig(topic, values, raw, sources, version)


def _validate_remote(values: dict[str, Any], raw: dict[str, str]) -> None:
    """LogConfig.validateRemoteStorageRetentionSize/Time (3.9.2, 4.4.0) for topics with remote.storage.enable."""
    for local_key, key in (("local.retention.bytes", "retention.bytes"), ("local.retention.ms", "retention.ms")):
        total, local = values[key], values[local_key]
        if total > -1 and local != -2:
            if local == -1:
                raise ConfigError(f"{local_key}={raw[local_key]}: must not be -1 as {key} is {total}",
                                  local_key, raw[local_key])
            if local > total:
                raise ConfigError(f"{local_key}={raw[local_key]}: must not be more than {key} ({total})",
                                  local_key, raw[local_key])
