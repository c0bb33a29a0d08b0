"""A topic's effective configuration, layered as a Kafka 3.9 broker layers it.

Layers, lowest first: Kafka's defaults (:data:`~.keys.KAFKA_DEFAULTS`, :data:`~.keys.BROKER_DEFAULTS`) < the
broker's ``server.properties`` (:func:`~.broker.load_broker_properties`) < the configs Kafka gives its internal
topics when it creates them (``__consumer_offsets``, ``__transaction_state``: compacted) < per-topic overrides
(:func:`~.overrides.load_topic_overrides`) < what-if settings (``--set key=value``). :func:`effective_config`
returns a :class:`TopicConfig` with typed, validated values; a bad value raises :class:`~.values.ConfigError`
naming the key and the value, e.g. ``retention.ms=abc: not a long``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from typing import Any

from .broker import load_broker_properties
from .keys import BROKER_DEFAULTS, INTERNAL_TOPICS, KAFKA_DEFAULTS, NEVER_REMOTE_TOPICS
from .overrides import load_topic_overrides, parse_assignments
from .values import ConfigError, parse_value


def _attr(key: str) -> str:
    return key.replace(".", "_").replace("-", "_")


_ATTRS = {_attr(k): k for k in (*KAFKA_DEFAULTS, *BROKER_DEFAULTS)}


@dataclass(frozen=True)
class TopicConfig:
    """Typed, validated effective configuration of one topic.

    ``config["retention.ms"]`` or ``config.retention_ms`` (dots become underscores) give typed values: ints for
    long/int keys, a float for ``min.cleanable.dirty.ratio``, a frozenset for ``cleanup.policy``, bools, strings.
    ``local.retention.ms``/``local.retention.bytes`` are resolved (-2 means the non-local value), the raw
    strings stay in ``raw``. ``sources[key]`` says which layer set each value: ``default``, ``broker``,
    ``internal`` (Kafka's creation config for its internal topics), ``topic`` or ``what-if``.
    """

    topic: str
    values: Mapping[str, Any]
    raw: Mapping[str, str]
    sources: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def __getattr__(self, name: str) -> Any:
        key = _ATTRS.get(name)
        if key is None:
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
        """The effective values as Kafka would print them (local.* resolved)."""
        out = dict(self.raw)
        for key in ("local.retention.ms", "local.retention.bytes"):
            out[key] = str(self.values[key])
        return out


def _internal_topic_layer(topic: str, layered: Mapping[str, str]) -> dict[str, str]:
    """The configs Kafka creates its internal topics with (GroupCoordinator / TransactionStateManager)."""
    if topic == "__consumer_offsets":
        return {"cleanup.policy": "compact", "compression.type": "producer",
                "segment.bytes": layered["offsets.topic.segment.bytes"]}
    if topic == "__transaction_state":
        return {"cleanup.policy": "compact", "unclean.leader.election.enable": "false",
                "compression.type": "uncompressed", "segment.bytes": layered["transaction.state.log.segment.bytes"]}
    return {}


def effective_config(topic: str, broker: Mapping[str, str] | str | PathLike[str] | None = None,
                     overrides: Mapping[str, Mapping[str, str]] | str | PathLike[str] | None = None,
                     what_if: Mapping[str, str] | Iterable[str] | None = None) -> TopicConfig:
    """``topic``'s effective config: defaults < broker < internal-topic configs < overrides[topic] < what-if.

    ``broker``: :func:`load_broker_properties` output (or a path to server.properties). ``overrides``: topic ->
    {key: value} (:func:`load_topic_overrides` output, or a path). ``what_if``: {key: value} or
    ``["key=value", ...]`` applied to every topic; it may also set the broker-only keys.
    """
    if isinstance(broker, (str, PathLike)):
        broker = load_broker_properties(broker)
    if isinstance(overrides, (str, PathLike)):
        overrides = load_topic_overrides(overrides)
    raw: dict[str, str] = {**KAFKA_DEFAULTS, **BROKER_DEFAULTS}
    sources = dict.fromkeys(raw, "default")

    def apply(layer: Mapping[str, str], source: str, allow_broker_keys: bool) -> None:
        for key, value in layer.items():
            if key not in KAFKA_DEFAULTS and not (allow_broker_keys and key in BROKER_DEFAULTS):
                what = "config key" if allow_broker_keys else "topic config key"
                raise ConfigError(f"{key}={value}: unknown {what}", key, str(value))
            raw[key] = str(value)
            sources[key] = source

    apply(broker or {}, "broker", True)
    apply(_internal_topic_layer(topic, raw), "internal", False)
    apply((overrides or {}).get(topic, {}), "topic", False)
    apply(parse_assignments(what_if), "what-if", True)

    values = {key: parse_value(key, value) for key, value in raw.items()}
    if values["min.compaction.lag.ms"] > values["max.compaction.lag.ms"]:
        raise ConfigError(f"min.compaction.lag.ms={raw['min.compaction.lag.ms']}: conflicts with "
                          f"max.compaction.lag.ms={raw['max.compaction.lag.ms']} (min > max)", "min.compaction.lag.ms",
                          raw["min.compaction.lag.ms"])
    if values["remote.storage.enable"]:
        _validate_remote(values, raw)
    # LogConfig.localRetentionMs/Bytes: -2 means "the same as retention.ms/bytes".
    if values["local.retention.ms"] == -2:
        values["local.retention.ms"] = values["retention.ms"]
    if values["local.retention.bytes"] == -2:
        values["local.retention.bytes"] = values["retention.bytes"]
    return TopicConfig(topic, values, raw, sources)


def _validate_remote(values: dict[str, Any], raw: dict[str, str]) -> None:
    """LogConfig.validateRemoteStorageRetentionSize/Time (3.9) for topics with remote.storage.enable=true."""
    for local_key, key in (("local.retention.bytes", "retention.bytes"), ("local.retention.ms", "retention.ms")):
        total, local = values[key], values[local_key]
        if total > -1 and local != -2:
            if local == -1:
                raise ConfigError(f"{local_key}={raw[local_key]}: must not be -1 as {key} is {total}",
                                  local_key, raw[local_key])
            if local > total:
                raise ConfigError(f"{local_key}={raw[local_key]}: must not be more than {key} ({total})",
                                  local_key, raw[local_key])
