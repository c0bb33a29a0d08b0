"""The topic and broker settings Kafka's log cleaner reads (``LogConfig``, ``CleanerConfig``), the Kafka version
whose cleaner is modelled, and the size of one cleaner thread's dedupe buffer (``SkimpyOffsetMap``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...config import TopicConfig
from ...kafka_versions import LATEST, KafkaVersion, parse_kafka_version

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
HASH_BYTES = 16  # MD5, CleanerConfig.HASH_ALGORITHM
MAP_ENTRY_BYTES = HASH_BYTES + 8  # SkimpyOffsetMap.bytesPerEntry: hash + offset


@dataclass(frozen=True)
class CleanerSettings:
    """The topic and broker settings the cleaner reads, with Kafka's defaults (the same in 3.9 and 4.x), and the
    Kafka version whose cleaner rules apply (:mod:`.versions`)."""

    cleanup_policy: frozenset[str] = frozenset({"delete"})
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    delete_retention_ms: int = 86400000
    segment_bytes: int = 1073741824  # LogConfig.segmentSize(): what groupSegmentsBySize limits a group to
    segment_index_bytes: int = 10485760
    dedupe_buffer_size: int = 134217728  # log.cleaner.dedupe.buffer.size (all threads)
    cleaner_threads: int = 1  # log.cleaner.threads
    dedupe_load_factor: float = 0.9  # log.cleaner.io.buffer.load.factor
    producer_id_expiration_ms: int = 86400000  # producer.id.expiration.ms
    cleaner_enabled: bool = True  # log.cleaner.enable (deprecated in 3.9, still honoured)
    kafka_version: KafkaVersion = LATEST

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

    @classmethod
    def of(cls, config: TopicConfig, kafka_version: KafkaVersion | str | None = None,
           **overrides: Any) -> CleanerSettings:
        """The cleaner's settings from a topic's effective config (resolved once, by
        :class:`kafkalog_spark.config.TopicConfigs`); ``overrides`` replace single settings by attribute name.
        ``kafka_version``: whose cleaner; by default the version the config was resolved for."""
        version = parse_kafka_version(kafka_version if kafka_version is not None else config.kafka_version)
        values: dict[str, Any] = {attr: config[key] for attr, key in SETTING_KEYS.items()}
        values["cleanup_policy"] = frozenset(values["cleanup_policy"])
        values["segment_bytes"] = config.segment_size  # LogConfig.segmentSize(): 4.x's internal.segment.bytes
        values["kafka_version"] = version
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


# CleanerSettings attribute -> the Kafka config it is (a topic config, or a broker one for the cleaner threads).
SETTING_KEYS = {
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
