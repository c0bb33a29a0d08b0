"""A broker's ``server.properties`` as topic-level keys, mapped as Kafka's ``ServerTopicConfigSynonyms`` does.

``log.retention.ms`` > ``log.retention.minutes`` > ``log.retention.hours`` (a negative result means -1, as
``KafkaConfig.logRetentionTimeMillis``), ``log.roll.ms`` > ``log.roll.hours``, ``log.roll.jitter.ms`` >
``log.roll.jitter.hours``, ``log.flush.interval.ms`` > ``log.flush.scheduler.interval.ms``,
``log.cleaner.min.cleanable.ratio``, ``log.cleaner.{delete.retention,min.compaction.lag,max.compaction.lag}.ms``,
``log.segment.delete.delay.ms``, ``log.index.size.max.bytes``, ``message.max.bytes`` and the
``log.<topic key>`` ones. Broker-only keys the cleaner and the retention thread need keep their own names
(:data:`~kafkalog_spark.config.keys.BROKER_DEFAULTS`). Other broker keys are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from os import PathLike

import javaproperties

from .keys import BROKER_DEFAULTS, INT32_RANGE, INT64_RANGE
from .values import JAVA_INTEGER, ConfigError, parse_value, read_config_text

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

_EOL = re.compile(r"\r\n?|\n")  # the line ends java.util.Properties knows


def _synonym_millis(broker_key: str, text: str, unit: int) -> int:
    """A time synonym in ms: the ``.ms`` keys are longs, the ``.minutes``/``.hours`` ones ints (KafkaConfig)."""
    kind, (lo, hi) = ("a long", INT64_RANGE) if unit == 1 else ("an int", INT32_RANGE)
    if not JAVA_INTEGER.fullmatch(text) or not lo <= int(text) <= hi:
        raise ConfigError(f"{broker_key}={text}: not {kind}", broker_key, text)
    return int(text) * unit


def broker_properties_to_config(props: Mapping[str, str]) -> dict[str, str]:
    """Map raw broker properties to topic keys (and the broker-only keys kept under their names)."""
    out: dict[str, str] = {}
    for broker_key, topic_key in _BROKER_SAME.items():
        if broker_key in props:
            out[topic_key] = props[broker_key].strip()
    for topic_key, synonyms in _BROKER_TIME.items():
        present = [(key, unit) for key, unit in synonyms if key in props]
        if present:  # the first synonym present wins, the others are not even parsed
            broker_key, unit = present[0]
            millis = _synonym_millis(broker_key, props[broker_key].strip(), unit)
            if topic_key == "retention.ms" and millis < 0:
                millis = -1  # KafkaConfig.logRetentionTimeMillis: any negative value means "no limit"
            out[topic_key] = str(millis)
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


def _read_properties(text: str, where: str) -> dict[str, str]:
    """java.util.Properties.load of ``text``: the last occurrence of a key wins. A malformed ``\\uXXXX``
    escape, which makes Properties.load throw, is a ConfigError naming ``where`` and the line."""
    props: dict[str, str] = {}
    line = 1
    try:
        # parse() rather than loads(): each element carries its source lines, which give the line of an error.
        for element in javaproperties.parse(text):
            if isinstance(element, javaproperties.KeyValue):
                props[element.key] = element.value
            line += len(_EOL.findall(element.source))
    except javaproperties.InvalidUEscapeError as e:
        raise ConfigError(f"{where}:{line}: {e}") from e
    return props


def load_broker_properties(path: str | PathLike[str]) -> dict[str, str]:
    """A broker's ``server.properties`` as topic-level keys (see the module docstring), plus broker-only keys."""
    return broker_properties_to_config(_read_properties(read_config_text(path), str(path)))
