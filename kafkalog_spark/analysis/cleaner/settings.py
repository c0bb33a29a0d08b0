"""The topic and broker settings Kafka 3.9's log cleaner reads (``LogConfig``, ``CleanerConfig``), and the
size of one cleaner thread's dedupe buffer (``SkimpyOffsetMap``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
HASH_BYTES = 16  # MD5, CleanerConfig.HASH_ALGORITHM
MAP_ENTRY_BYTES = HASH_BYTES + 8  # SkimpyOffsetMap.bytesPerEntry: hash + offset


@dataclass(frozen=True)
class CleanerSettings:
    """The topic and broker settings the cleaner reads, with Kafka 3.9's defaults."""

    cleanup_policy: frozenset[str] = frozenset({"delete"})
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    delete_retention_ms: int = 86400000
    segment_bytes: int = 1073741824
    segment_index_bytes: int = 10485760
    dedupe_buffer_size: int = 134217728  # log.cleaner.dedupe.buffer.size (all threads)
    cleaner_threads: int = 1  # log.cleaner.threads
    dedupe_load_factor: float = 0.9  # log.cleaner.io.buffer.load.factor
    producer_id_expiration_ms: int = 86400000  # producer.id.expiration.ms
    cleaner_enabled: bool = True  # log.cleaner.enable (deprecated in 3.9, still honoured)

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def map_slots(self) -> int:
        """SkimpyOffsetMap slots of one cleaner thread: min(buffer / threads, Int.MAX) / 24."""
        memory = min(self.dedupe_buffer_size // max(self.cleaner_threads, 1), INT_MAX)
        return memory // MAP_ENTRY_BYTES

    @property
    def map_capacity(self) -> int:
        """Entries the cleaner puts before it calls the map full (``maxDesiredMapSize``)."""
        return int(self.map_slots * self.dedupe_load_factor)


_SETTING_KEYS = {
    "cleanup_policy": "cleanup.policy",
    "min_cleanable_dirty_ratio": "min.cleanable.dirty.ratio",
    "min_compaction_lag_ms": "min.compaction.lag.ms",
    "max_compaction_lag_ms": "max.compaction.lag.ms",
    "delete_retention_ms": "delete.retention.ms",
    "segment_bytes": "segment.bytes",
    "segment_index_bytes": "segment.index.bytes",
    "dedupe_buffer_size": "log.cleaner.dedupe.buffer.size",
    "cleaner_threads": "log.cleaner.threads",
    "dedupe_load_factor": "log.cleaner.io.buffer.load.factor",
    "producer_id_expiration_ms": "producer.id.expiration.ms",
    "cleaner_enabled": "log.cleaner.enable",
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _lookup(config: Any, attr: str, key: str) -> Any:
    """A setting from a mapping of Kafka names or an object with snake_case / camelCase attributes."""
    if config is None:
        return None
    if isinstance(config, Mapping):
        for k in (key, attr, _camel(attr)):
            if k in config:
                return config[k]
        return None
    for name in (attr, _camel(attr), key.replace(".", "_")):
        if hasattr(config, name):
            return getattr(config, name)
    getter = getattr(config, "get", None)
    if callable(getter):
        try:
            return getter(key)
        except (KeyError, TypeError, ValueError):
            return None
    return None


def _policy(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset(p.strip().lower() for p in value.split(",") if p.strip())
    return frozenset(str(p).strip().lower() for p in value)


def settings_from(config: Any, **overrides: Any) -> CleanerSettings:
    """CleanerSettings from a ``TopicConfig`` (kafkalog_spark.config.topic_config), a mapping of Kafka
    config names (``{"cleanup.policy": "compact", ...}``), or None (Kafka's defaults)."""
    if isinstance(config, CleanerSettings):
        values = {k: getattr(config, k) for k in _SETTING_KEYS}
    else:
        values = {}
        for attr, key in _SETTING_KEYS.items():
            v = _lookup(config, attr, key)
            if v is not None:
                values[attr] = v
    values.update({k: v for k, v in overrides.items() if v is not None})
    out: dict[str, Any] = {}
    for attr, v in values.items():
        if attr == "cleanup_policy":
            out[attr] = _policy(v)
        elif attr in ("min_cleanable_dirty_ratio", "dedupe_load_factor"):
            out[attr] = float(v)
        elif attr == "cleaner_enabled":
            out[attr] = v if isinstance(v, bool) else str(v).strip().lower() == "true"
        else:
            out[attr] = int(v)
    return CleanerSettings(**out)
