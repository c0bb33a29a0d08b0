"""A topic's effective configuration, layered as a Kafka 3.9 broker layers it.

Layers, lowest first: Kafka's defaults (:data:`KAFKA_DEFAULTS`, :data:`BROKER_DEFAULTS`) < the broker's
``server.properties`` (:func:`load_broker_properties`) < the configs Kafka gives its internal topics when it
creates them (``__consumer_offsets``, ``__transaction_state``: compacted) < per-topic overrides
(:func:`load_topic_overrides`) < what-if settings (``--set key=value``). :func:`effective_config` returns a
:class:`TopicConfig` with typed, validated values; a bad value raises :class:`ConfigError` naming the key and
the value, e.g. ``retention.ms=abc: not a long``.

Broker properties (Java properties syntax) are mapped to topic keys as Kafka's ``ServerTopicConfigSynonyms``
does: ``log.retention.ms`` > ``log.retention.minutes`` > ``log.retention.hours`` (a negative result means -1,
as ``KafkaConfig.logRetentionTimeMillis``), ``log.roll.ms`` > ``log.roll.hours``, ``log.roll.jitter.ms`` >
``log.roll.jitter.hours``, ``log.flush.interval.ms`` > ``log.flush.scheduler.interval.ms``,
``log.cleaner.min.cleanable.ratio``, ``log.cleaner.{delete.retention,min.compaction.lag,max.compaction.lag}.ms``,
``log.segment.delete.delay.ms``, ``log.index.size.max.bytes``, ``message.max.bytes`` and the
``log.<topic key>`` ones. Broker-only keys the cleaner and the retention thread need keep their own names
(:data:`BROKER_DEFAULTS`). Other broker keys are ignored.

Topic override files (:func:`load_topic_overrides`) may be any of:

1. ``kafka-configs.sh --describe --entity-type topics [--entity-name T] [--all]`` output::

       Dynamic configs for topic orders are:
         retention.ms=86400000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=86400000}

   (``All configs for topic ...`` blocks too: entries whose source is ``DEFAULT_CONFIG`` and sensitive entries
   are skipped), or the older one-line form ``Configs for topic 'orders' are retention.ms=1,segment.bytes=2``.
2. INI-style sections, ``#``/``;`` comments::

       [orders]
       retention.ms = 86400000
       cleanup.policy = compact,delete

3. A YAML subset (no YAML library): a topic name ending in ``:`` at column 0, then indented
   ``key: value`` lines; values may be quoted or a flow list (``[compact, delete]``)::

       orders:
         retention.ms: 86400000

4. JSON: ``{"orders": {"retention.ms": 86400000}}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from ..log.checkpoints import parse_java_properties


class ConfigError(ValueError):
    """A config key or value Kafka would reject; the message names the key and the value."""

    def __init__(self, message: str, key: str | None = None, value: str | None = None):
        super().__init__(message)
        self.key = key
        self.value = value


LONG_MAX = 2**63 - 1
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)

# Kafka 3.9 topic-level configs (LogConfig), with their defaults as strings, named as Kafka names them.
KAFKA_DEFAULTS: dict[str, str] = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "compression.gzip.level": "-1",
    "compression.lz4.level": "9",
    "compression.zstd.level": "3",
    "delete.retention.ms": "86400000",
    "file.delete.delay.ms": "60000",
    "flush.messages": str(LONG_MAX),
    "flush.ms": str(LONG_MAX),
    "follower.replication.throttled.replicas": "",
    "index.interval.bytes": "4096",
    "leader.replication.throttled.replicas": "",
    "local.retention.bytes": "-2",
    "local.retention.ms": "-2",
    "max.compaction.lag.ms": str(LONG_MAX),
    "max.message.bytes": "1048588",
    "message.downconversion.enable": "true",
    "message.format.version": "3.0-IV1",
    "message.timestamp.after.max.ms": str(LONG_MAX),
    "message.timestamp.before.max.ms": str(LONG_MAX),
    "message.timestamp.difference.max.ms": str(LONG_MAX),
    "message.timestamp.type": "CreateTime",
    "min.cleanable.dirty.ratio": "0.5",
    "min.compaction.lag.ms": "0",
    "min.insync.replicas": "1",
    "preallocate": "false",
    "remote.log.copy.disable": "false",
    "remote.log.delete.on.disable": "false",
    "remote.storage.enable": "false",
    "retention.bytes": "-1",
    "retention.ms": "604800000",
    "segment.bytes": "1073741824",
    "segment.index.bytes": "10485760",
    "segment.jitter.ms": "0",
    "segment.ms": "604800000",
    "unclean.leader.election.enable": "false",
}

# Broker-only settings the retention thread and the cleaner need, under their broker names.
BROKER_DEFAULTS: dict[str, str] = {
    "log.retention.check.interval.ms": "300000",
    "log.initial.task.delay.ms": "30000",
    "log.cleaner.enable": "true",
    "log.cleaner.threads": "1",
    "log.cleaner.dedupe.buffer.size": "134217728",
    "log.cleaner.io.buffer.size": "524288",
    "log.cleaner.io.buffer.load.factor": "0.9",
    "log.cleaner.io.max.bytes.per.second": "1.7976931348623157E308",
    "log.cleaner.backoff.ms": "15000",
    "producer.id.expiration.ms": "86400000",  # the cleaner keeps an active producer's last batch
    "remote.log.storage.system.enable": "false",
    "offsets.topic.segment.bytes": "104857600",
    "transaction.state.log.segment.bytes": "104857600",
}

# (type, constraint). Types as ConfigDef's: long, int, double, boolean, list, string.
_SPEC: dict[str, tuple[str, Any]] = {
    "cleanup.policy": ("list", {"compact", "delete"}),
    "compression.type": ("string", {"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}),
    "compression.gzip.level": ("int", None),
    "compression.lz4.level": ("int", (1, 17)),
    "compression.zstd.level": ("int", (-131072, 22)),
    "delete.retention.ms": ("long", (0, None)),
    "file.delete.delay.ms": ("long", (0, None)),
    "flush.messages": ("long", (1, None)),
    "flush.ms": ("long", (0, None)),
    "follower.replication.throttled.replicas": ("list", None),
    "index.interval.bytes": ("int", (0, None)),
    "leader.replication.throttled.replicas": ("list", None),
    "local.retention.bytes": ("long", (-2, None)),
    "local.retention.ms": ("long", (-2, None)),
    "max.compaction.lag.ms": ("long", (1, None)),
    "max.message.bytes": ("int", (0, None)),
    "message.downconversion.enable": ("boolean", None),
    "message.format.version": ("string", None),
    "message.timestamp.after.max.ms": ("long", (0, None)),
    "message.timestamp.before.max.ms": ("long", (0, None)),
    "message.timestamp.difference.max.ms": ("long", (0, None)),
    "message.timestamp.type": ("string", {"CreateTime", "LogAppendTime"}),
    "min.cleanable.dirty.ratio": ("double", (0.0, 1.0)),
    "min.compaction.lag.ms": ("long", (0, None)),
    "min.insync.replicas": ("int", (1, None)),
    "preallocate": ("boolean", None),
    "remote.log.copy.disable": ("boolean", None),
    "remote.log.delete.on.disable": ("boolean", None),
    "remote.storage.enable": ("boolean", None),
    "retention.bytes": ("long", None),
    "retention.ms": ("long", (-1, None)),
    "segment.bytes": ("int", (14, None)),  # 3.9: LegacyRecord.RECORD_OVERHEAD_V0 (4.x raised it to 1 MiB)
    "segment.index.bytes": ("int", (4, None)),
    "segment.jitter.ms": ("long", (0, None)),
    "segment.ms": ("long", (1, None)),
    "unclean.leader.election.enable": ("boolean", None),
    "log.retention.check.interval.ms": ("long", (1, None)),
    "log.initial.task.delay.ms": ("long", (0, None)),
    "log.cleaner.enable": ("boolean", None),
    "log.cleaner.threads": ("int", (0, None)),
    "log.cleaner.dedupe.buffer.size": ("long", None),
    "log.cleaner.io.buffer.size": ("int", (0, None)),
    "log.cleaner.io.buffer.load.factor": ("double", None),
    "log.cleaner.io.max.bytes.per.second": ("double", None),
    "log.cleaner.backoff.ms": ("long", (0, None)),
    "producer.id.expiration.ms": ("int", (1, None)),
    "remote.log.storage.system.enable": ("boolean", None),
    "offsets.topic.segment.bytes": ("int", (1, None)),
    "transaction.state.log.segment.bytes": ("int", (1, None)),
}

# Topic.isInternal in 3.9, plus the logs that are never remote (UnifiedLog.isRemoteLogEnabled).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
NEVER_REMOTE_TOPICS = INTERNAL_TOPICS | {"__cluster_metadata", "__remote_log_metadata"}

_HOUR_MS = 3_600_000
_MINUTE_MS = 60_000

# Broker key -> topic key, for the keys that are copied as they are (ServerTopicConfigSynonyms).
_BROKER_SAME: dict[str, str] = {
    "log.segment.bytes": "segment.bytes",
    "log.index.size.max.bytes": "segment.index.bytes",
    "log.flush.interval.messages": "flush.messages",
    "log.retention.bytes": "retention.bytes",
    "message.max.bytes": "max.message.bytes",
    "log.index.interval.bytes": "index.interval.bytes",
    "log.cleaner.delete.retention.ms": "delete.retention.ms",
    "log.cleaner.min.compaction.lag.ms": "min.compaction.lag.ms",
    "log.cleaner.max.compaction.lag.ms": "max.compaction.lag.ms",
    "log.segment.delete.delay.ms": "file.delete.delay.ms",
    "log.cleaner.min.cleanable.ratio": "min.cleanable.dirty.ratio",
    "log.cleanup.policy": "cleanup.policy",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "min.insync.replicas": "min.insync.replicas",
    "compression.type": "compression.type",
    "compression.gzip.level": "compression.gzip.level",
    "compression.lz4.level": "compression.lz4.level",
    "compression.zstd.level": "compression.zstd.level",
    "log.preallocate": "preallocate",
    "log.message.format.version": "message.format.version",
    "log.message.timestamp.type": "message.timestamp.type",
    "log.message.timestamp.before.max.ms": "message.timestamp.before.max.ms",
    "log.message.timestamp.after.max.ms": "message.timestamp.after.max.ms",
    "log.message.timestamp.difference.max.ms": "message.timestamp.difference.max.ms",
    "log.message.downconversion.enable": "message.downconversion.enable",
    "log.local.retention.ms": "local.retention.ms",
    "log.local.retention.bytes": "local.retention.bytes",
}
# Topic key -> broker synonyms in priority order, each with its unit in ms (1 = already ms).
_BROKER_TIME: dict[str, tuple[tuple[str, int], ...]] = {
    "retention.ms": (("log.retention.ms", 1), ("log.retention.minutes", _MINUTE_MS), ("log.retention.hours", _HOUR_MS)),
    "segment.ms": (("log.roll.ms", 1), ("log.roll.hours", _HOUR_MS)),
    "segment.jitter.ms": (("log.roll.jitter.ms", 1), ("log.roll.jitter.hours", _HOUR_MS)),
    "flush.ms": (("log.flush.interval.ms", 1), ("log.flush.scheduler.interval.ms", 1)),
}


def _bounds_message(lo: Any, hi: Any) -> str:
    if hi is None:
        return f"must be at least {lo}"
    if lo is None:
        return f"must be at most {hi}"
    return f"must be between {lo} and {hi}"


def parse_value(key: str, text: str) -> Any:
    """Parse and validate one value as Kafka's ConfigDef would; ConfigError names ``key=text`` on failure."""
    if key not in _SPEC:
        raise ConfigError(f"{key}={text}: unknown config key", key, text)
    kind, constraint = _SPEC[key]
    value_text = str(text).strip()

    def bad(why: str) -> ConfigError:
        return ConfigError(f"{key}={text}: {why}", key, str(text))

    if kind in ("long", "int"):
        if not re.fullmatch(r"[+-]?[0-9]+", value_text):
            raise bad(f"not {'a long' if kind == 'long' else 'an int'}")
        value: Any = int(value_text)
        lo, hi = _INT64 if kind == "long" else _INT32
        if not lo <= value <= hi:
            raise bad(f"not {'a long' if kind == 'long' else 'an int'} (out of range)")
    elif kind == "double":
        try:
            value = float(value_text)
        except ValueError:
            raise bad("not a double") from None
        if value != value:  # NaN
            raise bad("not a double")
    elif kind == "boolean":
        if value_text.lower() not in ("true", "false"):
            raise bad("not a boolean (true or false)")
        return value_text.lower() == "true"
    elif kind == "list":
        items = [] if value_text == "" else [s.strip() for s in value_text.split(",")]
        if constraint is not None:
            for item in items:
                if item.lower() not in constraint:
                    raise bad(f"{item!r} is not one of {', '.join(sorted(constraint))}")
            return frozenset(item.lower() for item in items)
        return tuple(items)
    else:  # string
        if constraint is not None and value_text not in constraint:
            raise bad(f"not one of {', '.join(sorted(constraint))}")
        return value_text
    if isinstance(constraint, tuple):
        lo, hi = constraint
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise bad(_bounds_message(lo, hi))
    return value


# ---------------------------------------------------------------------------------------------- loading


def _read_text(path: str | PathLike[str]) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror or e}") from e


def broker_properties_to_config(props: Mapping[str, str]) -> dict[str, str]:
    """Map raw broker properties to topic keys (and the broker-only keys kept under their names)."""
    out: dict[str, str] = {}
    for broker_key, topic_key in _BROKER_SAME.items():
        if broker_key in props:
            out[topic_key] = props[broker_key].strip()
    for topic_key, synonyms in _BROKER_TIME.items():
        for broker_key, unit in synonyms:
            if broker_key not in props:
                continue
            text = props[broker_key].strip()
            if unit == 1:
                if not re.fullmatch(r"[+-]?[0-9]+", text) or not _INT64[0] <= int(text) <= _INT64[1]:
                    raise ConfigError(f"{broker_key}={text}: not a long", broker_key, text)
                millis = int(text)
            else:
                if not re.fullmatch(r"[+-]?[0-9]+", text) or not _INT32[0] <= int(text) <= _INT32[1]:
                    raise ConfigError(f"{broker_key}={text}: not an int", broker_key, text)
                millis = int(text) * unit
            if topic_key == "retention.ms" and millis < 0:
                millis = -1  # KafkaConfig.logRetentionTimeMillis: any negative value means "no limit"
            out[topic_key] = str(millis)
            break
    for key in BROKER_DEFAULTS:
        if key in props:
            out[key] = props[key].strip()
    for key, value in out.items():  # fail here, naming the broker's key, rather than later
        try:
            parse_value(key, value)
        except ConfigError as e:
            broker_key = _broker_name(key, props)
            why = str(e)[len(f"{key}={value}: "):]
            raise ConfigError(f"{broker_key}={props.get(broker_key, value)}: {why}",
                              broker_key, props.get(broker_key, value)) from None
    return out


def _broker_name(topic_key: str, props: Mapping[str, str]) -> str:
    for broker_key, mapped in _BROKER_SAME.items():
        if mapped == topic_key and broker_key in props:
            return broker_key
    for broker_key, _unit in _BROKER_TIME.get(topic_key, ()):
        if broker_key in props:
            return broker_key
    return topic_key


def load_broker_properties(path: str | PathLike[str]) -> dict[str, str]:
    """A broker's ``server.properties`` as topic-level keys (see the module docstring), plus broker-only keys."""
    props: dict[str, str] = {}
    for key, value, _pos in parse_java_properties(_read_text(path)):
        props[key] = value  # Properties.load: the last occurrence wins
    return broker_properties_to_config(props)


_DESCRIBE_HEADER = re.compile(
    r"^\s*(?P<kind>Dynamic|All|Static)?\s*[Cc]onfigs for topic\s+(?P<topic>\S+?)\s+are:?\s*(?P<rest>.*)$")
_DESCRIBE_ENTRY = re.compile(
    r"^\s+(?P<key>[^=\s]+)=(?P<value>.*?)\s+sensitive=(?P<sensitive>true|false)(?:\s+synonyms=\{(?P<syn>.*)\})?\s*$")


def _strip_quotes(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _parse_describe(text: str, where: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        header = _DESCRIBE_HEADER.match(line)
        if header:
            current = out.setdefault(_strip_quotes(header["topic"]), {})
            rest = header["rest"].strip()
            if rest:  # the one-line form: k=v,k=v (a value may itself hold commas: cleanup.policy=compact,delete)
                key = None
                for piece in rest.split(","):
                    if "=" in piece and re.match(r"^\s*[a-z][a-z0-9._-]*=", piece):
                        key, value = piece.split("=", 1)
                        key = key.strip()
                        current[key] = value.strip()
                    elif key is not None:
                        current[key] += "," + piece.strip()
                    else:
                        raise ConfigError(f"{where}:{number}: cannot read {piece!r} as key=value")
            continue
        entry = _DESCRIBE_ENTRY.match(line)
        if entry and current is not None:
            if entry["sensitive"] == "true":
                continue
            source = (entry["syn"] or "").split(":", 1)[0].strip()
            if source == "DEFAULT_CONFIG":
                continue  # Kafka's default: the same as ours, and it must not shadow the broker layer
            current[entry["key"]] = entry["value"]
            continue
        raise ConfigError(f"{where}:{number}: unexpected line in kafka-configs output: {line.strip()!r}")
    return out


def _parse_ini(text: str, where: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            current = out.setdefault(stripped[1:-1].strip(), {})
            continue
        m = re.fullmatch(r"([^=:\s]+)\s*[=:]\s*(.*)", stripped)
        if m is None or current is None:
            raise ConfigError(f"{where}:{number}: expected [topic] or key=value, got {stripped!r}")
        current[m[1]] = _strip_quotes(m[2])
    return out


def _yaml_value(text: str) -> str:
    text = re.sub(r"\s+#.*$", "", text).strip()
    if text.startswith("[") and text.endswith("]"):
        return ",".join(_strip_quotes(s) for s in text[1:-1].split(",") if s.strip())
    return _strip_quotes(text)


def _parse_yaml(text: str, where: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#") or line.strip() == "---":
            continue
        if not line[0].isspace():
            m = re.fullmatch(r"(.+?):\s*(\{\s*\})?\s*(#.*)?", line.rstrip())
            if m is None:
                raise ConfigError(f"{where}:{number}: expected 'topic:' at column 0, got {line.strip()!r}")
            current = out.setdefault(_strip_quotes(m[1]), {})
            continue
        m = re.fullmatch(r"\s+([^:\s]+)\s*:\s*(.*)", line.rstrip())
        if m is None or current is None:
            raise ConfigError(f"{where}:{number}: expected an indented 'key: value', got {line.strip()!r}")
        current[m[1]] = _yaml_value(m[2])
    return out


def _json_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_json_str(v) for v in value)
    return str(value)


def parse_topic_overrides(text: str, where: str = "<text>") -> dict[str, dict[str, str]]:
    """Per-topic overrides from text in any of the formats of the module docstring (detected)."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{where}: invalid JSON: {e}") from e
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise ConfigError(f"{where}: expected a JSON object of topic -> {{key: value}}")
        return {t: {k: _json_str(v) for k, v in kv.items()} for t, kv in data.items()}
    if any(_DESCRIBE_HEADER.match(line) for line in text.splitlines()):
        return _parse_describe(text, where)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip()[0] not in "#;"), "")
    if first.startswith("["):
        return _parse_ini(text, where)
    return _parse_yaml(text, where)


def load_topic_overrides(path: str | PathLike[str]) -> dict[str, dict[str, str]]:
    """Per-topic overrides from a file: kafka-configs output, INI sections, a YAML subset or JSON."""
    overrides = parse_topic_overrides(_read_text(path), str(path))
    for topic, values in overrides.items():
        for key, value in values.items():
            if key not in KAFKA_DEFAULTS:
                raise ConfigError(f"{key}={value}: unknown topic config key (topic {topic} in {path})", key, value)
            parse_value(key, value)
    return overrides


def parse_assignments(items: Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``["key=value", ...]`` (the CLI's ``--set``) or a mapping, as a dict of strings."""
    if items is None:
        return {}
    if isinstance(items, Mapping):
        return {str(k): _json_str(v) for k, v in items.items()}
    out = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"{item}: expected key=value", item, None)
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out


# ------------------------------------------------------------------------------------------- the config


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
