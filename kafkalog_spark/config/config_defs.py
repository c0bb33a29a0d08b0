"""Kafka's topic config keys per Kafka version, as data: one row per key with its ConfigDef type, default, valid
range, the versions that know it and what a later version changed; plus the broker-only keys this project needs.

Where the rows come from (the verified builds, ``kafka_versions.VERIFIED``):

- 3.9.2: ``LogConfig.CONFIG`` (storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java,
  the ``.define(...)`` chain of the static block), ``ServerLogConfigs`` (server-common), ``TopicConfig``
  (clients), ``ServerTopicConfigSynonyms`` (server-common) for the broker synonyms.
- 4.4.0: the same classes in the 4.4.0 release JARs: ``LogConfig.configDefCopy()`` (names, types, defaults,
  validators, the internal flag) and ``ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS``.

What 4.x changed, against 3.9: ``segment.bytes`` (and the broker's ``log.segment.bytes``) at least 1 MiB, not 14
(KIP-1030); ``internal.segment.bytes`` (internal, no default) replaces it when set (``LogConfig.segmentSize()``);
``message.timestamp.after.max.ms`` defaults to 1 hour, not Long.MAX_VALUE; removed: ``message.format.version``,
``message.downconversion.enable``, ``message.timestamp.difference.max.ms`` (KIP-724 and the 4.0 removals, with
their ``log.*`` broker synonyms); added: ``max.decompressed.message.bytes``, ``remote.copy.lag.ms``,
``remote.copy.lag.bytes``, ``errors.deadletterqueue.group.enable``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ..kafka_versions import LATEST, KafkaVersion

V3_9, V4 = KafkaVersion.V3_9, KafkaVersion.V4
ALL = (V3_9, V4)

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
INT32_RANGE = (-(2**31), INT_MAX)
INT64_RANGE = (-(2**63), LONG_MAX)
MIB = 1024 * 1024


@dataclass(frozen=True)
class GzipLevel:
    """CompressionType.GZIP's validator: ``[1,...,9] or -1`` (GzipCompression.LevelValidator)."""

    def check(self, value: int) -> str | None:
        return None if value == -1 or 1 <= value <= 9 else "must be -1 or between 1 and 9"


@dataclass(frozen=True)
class ConfigKey:
    """One Kafka config key. ``valid``: a set of values, a (min, max) range (None: open) or a validator object.
    ``versions``: the Kafka versions that know it. ``changed``: what a version changed (``default``/``valid``).
    ``broker_only``: a broker setting the cleaner or retention thread needs, kept under its broker name.
    ``synonym``: the ``server.properties`` key copied to this topic key (``ServerTopicConfigSynonyms``)."""

    name: str
    type: str  # ConfigDef's: long, int, double, boolean, list, string
    default: str | None
    valid: Any = None
    versions: tuple[KafkaVersion, ...] = ALL
    changed: Mapping[KafkaVersion, Mapping[str, Any]] = field(default_factory=dict)
    broker_only: bool = False
    synonym: str | None = None


def _k(name: str, type_: str, default: str | None, valid: Any = None, **kw: Any) -> ConfigKey:
    return ConfigKey(name, type_, default, valid, **kw)


_SINCE_4 = (V4,)
_UNTIL_3_9 = (V3_9,)

# LogConfig's topic keys (3.9.2 LogConfig.java lines 264-334; 4.4.0 LogConfig.configDefCopy()).
TOPIC_KEYS: tuple[ConfigKey, ...] = (
    _k("cleanup.policy", "list", "delete", {"compact", "delete"}, synonym="log.cleanup.policy"),
    _k("compression.type", "string", "producer", {"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"},
       synonym="compression.type"),
    _k("compression.gzip.level", "int", "-1", GzipLevel(), synonym="compression.gzip.level"),
    _k("compression.lz4.level", "int", "9", (1, 17), synonym="compression.lz4.level"),
    _k("compression.zstd.level", "int", "3", (-131072, 22), synonym="compression.zstd.level"),
    _k("delete.retention.ms", "long", "86400000", (0, None), synonym="log.cleaner.delete.retention.ms"),
    _k("errors.deadletterqueue.group.enable", "boolean", "false", versions=_SINCE_4),
    _k("file.delete.delay.ms", "long", "60000", (0, None), synonym="log.segment.delete.delay.ms"),
    _k("flush.messages", "long", str(LONG_MAX), (1, None), synonym="log.flush.interval.messages"),
    _k("flush.ms", "long", str(LONG_MAX), (0, None)),  # broker synonyms: broker._BROKER_TIME
    _k("follower.replication.throttled.replicas", "list", ""),
    _k("index.interval.bytes", "int", "4096", (0, None), synonym="log.index.interval.bytes"),
    # 4.x: defineInternal, INT, no default and no validator; LogConfig.segmentSize() takes it over segment.bytes
    _k("internal.segment.bytes", "int", None, versions=_SINCE_4),
    _k("leader.replication.throttled.replicas", "list", ""),
    _k("local.retention.bytes", "long", "-2", (-2, None), synonym="log.local.retention.bytes"),
    _k("local.retention.ms", "long", "-2", (-2, None), synonym="log.local.retention.ms"),
    _k("max.compaction.lag.ms", "long", str(LONG_MAX), (1, None), synonym="log.cleaner.max.compaction.lag.ms"),
    _k("max.decompressed.message.bytes", "int", "2147483639", (1, 2147483639), versions=_SINCE_4,
       synonym="max.decompressed.message.bytes"),
    _k("max.message.bytes", "int", "1048588", (0, None), synonym="message.max.bytes"),
    _k("message.downconversion.enable", "boolean", "true", versions=_UNTIL_3_9,
       synonym="log.message.downconversion.enable"),
    # MetadataVersionValidator in Kafka; any string here (deprecated since 3.0, ignored for v2 logs)
    _k("message.format.version", "string", "3.0-IV1", versions=_UNTIL_3_9,
       synonym="log.message.format.version"),
    _k("message.timestamp.after.max.ms", "long", str(LONG_MAX), (0, None), changed={V4: {"default": "3600000"}},
       synonym="log.message.timestamp.after.max.ms"),
    _k("message.timestamp.before.max.ms", "long", str(LONG_MAX), (0, None),
       synonym="log.message.timestamp.before.max.ms"),
    _k("message.timestamp.difference.max.ms", "long", str(LONG_MAX), (0, None), versions=_UNTIL_3_9,
       synonym="log.message.timestamp.difference.max.ms"),
    _k("message.timestamp.type", "string", "CreateTime", {"CreateTime", "LogAppendTime"},
       synonym="log.message.timestamp.type"),
    _k("min.cleanable.dirty.ratio", "double", "0.5", (0.0, 1.0), synonym="log.cleaner.min.cleanable.ratio"),
    _k("min.compaction.lag.ms", "long", "0", (0, None), synonym="log.cleaner.min.compaction.lag.ms"),
    _k("min.insync.replicas", "int", "1", (1, None), synonym="min.insync.replicas"),
    _k("preallocate", "boolean", "false", synonym="log.preallocate"),
    _k("remote.copy.lag.bytes", "long", "-1", (-1, None), versions=_SINCE_4, synonym="log.remote.copy.lag.bytes"),
    _k("remote.copy.lag.ms", "long", "0", (-1, None), versions=_SINCE_4, synonym="log.remote.copy.lag.ms"),
    _k("remote.log.copy.disable", "boolean", "false"),
    _k("remote.log.delete.on.disable", "boolean", "false"),
    _k("remote.storage.enable", "boolean", "false"),
    _k("retention.bytes", "long", "-1", synonym="log.retention.bytes"),
    _k("retention.ms", "long", "604800000", (-1, None)),  # broker synonyms: broker._BROKER_TIME
    # 3.9: atLeast(LegacyRecord.RECORD_OVERHEAD_V0) = 14; 4.x: atLeast(1024 * 1024) (KIP-1030)
    _k("segment.bytes", "int", "1073741824", (14, None), changed={V4: {"valid": (MIB, None)}},
       synonym="log.segment.bytes"),
    _k("segment.index.bytes", "int", "10485760", (4, None), synonym="log.index.size.max.bytes"),
    _k("segment.jitter.ms", "long", "0", (0, None)),
    _k("segment.ms", "long", "604800000", (1, None)),
    _k("unclean.leader.election.enable", "boolean", "false", synonym="unclean.leader.election.enable"),
)

# Broker-only settings, under their broker names: the retention thread's and the cleaner's (ServerLogConfigs,
# CleanerConfig), and those the internal topics are created with (GroupCoordinatorConfig, TransactionLogConfig(s),
# ShareCoordinatorConfig, KRaftConfigs / MetadataLogConfig). Defaults and ranges are the same in 3.9.2 and 4.4.0
# unless ``versions``/``changed`` say otherwise (read from KafkaConfig.configDef() of both builds).
BROKER_KEYS: tuple[ConfigKey, ...] = tuple(ConfigKey(*row[:4], broker_only=True, **(row[4] if len(row) > 4 else {}))
                                           for row in (
    ("log.retention.check.interval.ms", "long", "300000", (1, None)),
    ("log.initial.task.delay.ms", "long", "30000", (0, None)),
    ("log.cleaner.enable", "boolean", "true", None),
    ("log.cleaner.threads", "int", "1", (0, None)),
    ("log.cleaner.dedupe.buffer.size", "long", "134217728", None),
    ("log.cleaner.io.buffer.size", "int", "524288", (0, None)),
    ("log.cleaner.io.buffer.load.factor", "double", "0.9", None),
    ("log.cleaner.io.max.bytes.per.second", "double", "1.7976931348623157E308", None),
    ("log.cleaner.backoff.ms", "long", "15000", (0, None)),
    ("producer.id.expiration.ms", "int", "86400000", (1, None)),  # the cleaner keeps an active producer's last batch
    ("remote.log.storage.system.enable", "boolean", "false", None),
    ("remote.log.manager.task.interval.ms", "long", "30000", (1, None)),  # RemoteLogManagerConfig
    ("offsets.topic.segment.bytes", "int", "104857600", (1, None)),
    ("transaction.state.log.segment.bytes", "int", "104857600", (1, None)),
    ("transaction.state.log.min.isr", "int", "2", (1, None)),
    ("share.coordinator.state.topic.segment.bytes", "int", "104857600", (1, None), {"versions": _SINCE_4}),
    ("share.coordinator.state.topic.min.isr", "short", "2", (1, None), {"versions": _SINCE_4}),
    # 3.9.2 [12,...] plus the internal metadata.log.segment.min.bytes (8 MiB) checked by KafkaMetadataLog.apply;
    # 4.4.0 [8388608,...] itself (MetadataLogConfig)
    ("metadata.log.segment.bytes", "int", "1073741824", (12, None), {"changed": {V4: {"valid": (8 * MIB, None)}}}),
    ("metadata.log.segment.ms", "long", "604800000", None),
    ("metadata.max.retention.bytes", "long", "104857600", None),
    ("metadata.max.retention.ms", "long", "604800000", None),
))


@dataclass(frozen=True)
class KeySpec:
    """A key as one Kafka version defines it."""

    name: str
    type: str
    default: str | None
    valid: Any
    broker_only: bool
    synonym: str | None


def _spec(key: ConfigKey, version: KafkaVersion) -> KeySpec:
    change = key.changed.get(version, {})
    return KeySpec(key.name, key.type, change.get("default", key.default), change.get("valid", key.valid),
                   key.broker_only, key.synonym)


@cache
def specs(version: KafkaVersion = LATEST) -> Mapping[str, KeySpec]:
    """Every key ``version`` knows (topic keys and the broker-only ones), by name."""
    return {k.name: _spec(k, version) for k in (*TOPIC_KEYS, *BROKER_KEYS) if version in k.versions}


@cache
def topic_defaults(version: KafkaVersion = LATEST) -> Mapping[str, str | None]:
    """The topic keys ``version`` knows with their defaults (None: no default, e.g. internal.segment.bytes)."""
    return {k.name: _spec(k, version).default for k in TOPIC_KEYS if version in k.versions}


@cache
def broker_defaults(version: KafkaVersion = LATEST) -> Mapping[str, str]:
    return {k.name: k.default or "" for k in BROKER_KEYS if version in k.versions}


def known_in(name: str) -> tuple[KafkaVersion, ...]:
    """The Kafka versions that know ``name`` (empty: no version does)."""
    return next((k.versions for k in (*TOPIC_KEYS, *BROKER_KEYS) if k.name == name), ())


def not_in_version(name: str, version: KafkaVersion) -> str:
    """Why ``name`` is not a config of ``version``: removed, not yet added, or unknown to every version."""
    versions = known_in(name)
    if not versions:
        return "unknown"
    if all(v < version for v in versions):  # StrEnum order: "3.9" < "4.x"
        return f"removed in Kafka 4.0, not a config of Kafka {version.value}"
    return f"not a config of Kafka {version.value} (added in {' and '.join(v.value for v in versions)})"


# Kafka's defaults of the newest version, for the callers that name no version.
KAFKA_DEFAULTS: Mapping[str, str | None] = topic_defaults(LATEST)
BROKER_DEFAULTS: Mapping[str, str] = broker_defaults(LATEST)

# Topic.isInternal (clients' Topic.INTERNAL_TOPICS: the same three names in 3.9.2 and 4.4.0), and the logs that
# are never remote (UnifiedLog.isRemoteLogEnabled).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
NEVER_REMOTE_TOPICS = INTERNAL_TOPICS | {"__cluster_metadata", "__remote_log_metadata"}
