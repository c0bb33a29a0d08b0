"""Typing and validating config values as Kafka's ConfigDef does, and the error that names what it rejects."""

from __future__ import annotations

import re
from os import PathLike
from pathlib import Path
from typing import Any

from ..kafka_versions import LATEST, KafkaVersion
from .config_defs import INT32_RANGE, INT64_RANGE, not_in_version, specs

JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")  # what Long.parseLong / Integer.parseInt accept (ASCII digits)


class ConfigError(ValueError):
    """A config key or value Kafka would reject; the message names the key and the value."""

    def __init__(self, message: str, key: str | None = None, value: str | None = None):
        super().__init__(message)
        self.key = key
        self.value = value


def read_config_text(path: str | PathLike[str]) -> str:
    """A config file's text; an unreadable file is a ConfigError naming it, like any other bad input."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror or e}") from e


def _bounds_message(lo: Any, hi: Any) -> str:
    if hi is None:
        return f"must be at least {lo}"
    if lo is None:
        return f"must be at most {hi}"
    return f"must be between {lo} and {hi}"


_INT_RANGES = {"long": INT64_RANGE, "int": INT32_RANGE, "short": (-(2**15), 2**15 - 1)}


def _in_range(value: Any, bounds: tuple[Any, Any]) -> bool:
    lo, hi = bounds
    return (lo is None or value >= lo) and (hi is None or value <= hi)


def _other_versions_allow(key: str, value: Any, version: KafkaVersion) -> str:
    """A hint when the range is the version's own, e.g. segment.bytes=1000 is fine in 3.9 but not in 4.x."""
    others = [v for v in KafkaVersion if v is not version and key in specs(v)
              and isinstance(specs(v)[key].valid, tuple) and _in_range(value, specs(v)[key].valid)]
    if not others:
        return ""
    return f" in Kafka {version.value} (Kafka {others[0].value} allows it: --kafka-version {others[0].value})"


def parse_value(key: str, text: str | None, version: KafkaVersion = LATEST) -> Any:
    """Parse and validate one value as ``version``'s ConfigDef would; ConfigError names ``key=text`` on failure.
    None (a key without a default, such as 4.x's internal.segment.bytes, left unset) stays None."""
    spec = specs(version).get(key)
    if spec is None:
        why = not_in_version(key, version)
        raise ConfigError(f"{key}={text}: {'unknown config key' if why == 'unknown' else why}", key, text)
    if text is None:
        return None
    kind, constraint = spec.type, spec.valid
    value_text = str(text).strip()

    def bad(why: str) -> ConfigError:
        return ConfigError(f"{key}={text}: {why}", key, str(text))

    if kind in _INT_RANGES:
        article = "an int" if kind == "int" else f"a {kind}"
        if not JAVA_INTEGER.fullmatch(value_text):
            raise bad(f"not {article}")
        value: Any = int(value_text)
        lo, hi = _INT_RANGES[kind]
        if not lo <= value <= hi:
            raise bad(f"not {article} (out of range)")
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
        if not _in_range(value, constraint):
            raise bad(_bounds_message(lo, hi) + _other_versions_allow(key, value, version))
    elif hasattr(constraint, "check"):  # a validator of its own (keys.GzipLevel)
        why = constraint.check(value)
        if why:
            raise bad(why)
    return value


TIMESTAMP_BOUNDS = ("message.timestamp.before.max.ms", "message.timestamp.after.max.ms")
DIFFERENCE = "message.timestamp.difference.max.ms"  # 3.9 only (removed in 4.0)


def timestamp_bound(own: int, difference: int) -> int:
    """3.9's transition rule for message.timestamp.before/after.max.ms: left at Long.MAX_VALUE, the deprecated
    message.timestamp.difference.max.ms applies (LogConfig.getMessageTimestampBeforeMaxMs/AfterMaxMs, and
    KafkaConfig.logMessageTimestampBeforeMaxMs/AfterMaxMs for the log.* broker keys, 3.9.2)."""
    return own if own != INT64_RANGE[1] else difference
