"""A broker's ``server.properties`` as topic-level keys, mapped as Kafka's ``ServerTopicConfigSynonyms`` does.

``log.retention.ms`` > ``log.retention.minutes`` > ``log.retention.hours`` (a negative result means -1, as
``KafkaConfig.logRetentionTimeMillis``), ``log.roll.ms`` > ``log.roll.hours``, ``log.roll.jitter.ms`` >
``log.roll.jitter.hours``, ``log.flush.interval.ms`` > ``log.flush.scheduler.interval.ms``,
``log.cleaner.min.cleanable.ratio``, ``log.cleaner.{delete.retention,min.compaction.lag,max.compaction.lag}.ms``,
``log.segment.delete.delay.ms``, ``log.index.size.max.bytes``, ``message.max.bytes`` and the
``log.<topic key>`` ones. Broker-only keys the cleaner and the retention thread need keep their own names
(:data:`~kafkalog_spark.config.config_defs.BROKER_DEFAULTS`). Other broker keys are ignored.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from os import PathLike

import javaproperties

from ..kafka_versions import LATEST, KafkaVersion, parse_kafka_version
from .config_defs import BROKER_KEYS, INT32_RANGE, INT64_RANGE, TOPIC_KEYS, broker_defaults
from .values import (
    DIFFERENCE,
    JAVA_INTEGER,
    TIMESTAMP_BOUNDS,
    ConfigError,
    parse_value,
    read_config_text,
    timestamp_bound,
)

_HOUR_MS = 3_600_000
_MINUTE_MS = 60_000

log = logging.getLogger(__name__)


def _broker_same(version: KafkaVersion) -> dict[str, str]:
    """Broker key -> topic key, for the keys copied as they are (ServerTopicConfigSynonyms of ``version``)."""
    return {k.synonym: k.name for k in TOPIC_KEYS if k.synonym and version in k.versions}


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


def _other_versions_keys(version: KafkaVersion) -> dict[str, str]:
    """Broker keys another version knows and ``version`` does not -> the version(s) that know them."""
    out = {}
    for k in (*TOPIC_KEYS, *BROKER_KEYS):
        name = k.synonym if not k.broker_only else k.name
        if name and version not in k.versions:
            out[name] = " and ".join(v.value for v in k.versions)
    return out


def broker_properties_to_config(props: Mapping[str, str], kafka_version: KafkaVersion | str = LATEST
                                ) -> dict[str, str]:
    """Map raw broker properties to topic keys (and the broker-only keys kept under their names), as a
    ``kafka_version`` broker does. A key only another version knows (4.x: ``log.message.format.version``) is
    ignored with a warning, as the broker's KafkaConfig logs an unused key and starts."""
    kafka_version = parse_kafka_version(kafka_version)
    out: dict[str, str] = {}
    same = _broker_same(kafka_version)
    for broker_key, known_in in _other_versions_keys(kafka_version).items():
        if broker_key in props and broker_key not in same:
            log.warning("ignoring %s: not a broker config of Kafka %s (only %s)", broker_key,
                        kafka_version.value, known_in)
    for broker_key, topic_key in same.items():
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
    for key in broker_defaults(kafka_version):
        if key in props:
            out[key] = props[key].strip()
    for key, value in out.items():  # fail here, naming the broker's key, rather than later
        try:
            parse_value(key, value, kafka_version)
        except ConfigError as e:
            broker_key = _broker_name(key, props, same)
            why = str(e)[len(f"{key}={value}: "):]
            raise ConfigError(f"{broker_key}={props.get(broker_key, value)}: {why}",
                              broker_key, props.get(broker_key, value)) from None
    if DIFFERENCE in out:  # 3.9: the broker's before/after bounds fall back to the difference (KafkaConfig)
        difference = parse_value(DIFFERENCE, out[DIFFERENCE], kafka_version)
        for key in TIMESTAMP_BOUNDS:
            own = parse_value(key, out[key], kafka_version) if key in out else INT64_RANGE[1]
            out[key] = str(timestamp_bound(own, difference))
    return out


def broker_key_for(topic_key: str, props: Mapping[str, str], kafka_version: KafkaVersion | str = LATEST) -> str:
    """The key of ``props`` (broker properties) that gave ``topic_key`` its value in
    :func:`broker_properties_to_config` (``log.retention.hours`` for ``retention.ms`` if it is the one present)."""
    return _broker_name(topic_key, props, _broker_same(parse_kafka_version(kafka_version)))


def _broker_name(topic_key: str, props: Mapping[str, str], same: Mapping[str, str]) -> str:
    for broker_key, mapped in same.items():
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


def load_broker_properties(path: str | PathLike[str], kafka_version: KafkaVersion | str = LATEST) -> dict[str, str]:
    """A broker's ``server.properties`` as topic-level keys (see the module docstring), plus broker-only keys."""
    return broker_properties_to_config(_read_properties(read_config_text(path), str(path)), kafka_version)
