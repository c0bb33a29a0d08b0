"""Kafka 3.9's topic config keys and their defaults, the broker-only keys this project needs, and each key's
type and valid range (what :func:`kafkalog_spark.config.values.parse_value` checks)."""

from __future__ import annotations

from typing import Any

LONG_MAX = 2**63 - 1
INT32_RANGE = (-(2**31), 2**31 - 1)
INT64_RANGE = (-(2**63), 2**63 - 1)

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

# (type, constraint). Types as ConfigDef's: long, int, double, boolean, list, string. A constraint is a set of
# valid values or a (min, max) range, None for an open end.
SPEC: dict[str, tuple[str, Any]] = {
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
