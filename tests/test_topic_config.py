"""Effective topic configuration: Kafka 3.9's and 4.x's keys, defaults and ranges, broker synonyms and their
precedence, the internal topics' own configs, override file formats, what-if settings, and errors that name the
key and the value. Expected values are Kafka's, read from the 3.9.2 source and the 4.4.0 release JARs (cited per
test); tests/test_topic_config_broker.py checks the same against live 3.9.2 and 4.4.0 brokers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkalog_spark.config import (
    BROKER_DEFAULTS,
    KAFKA_DEFAULTS,
    ConfigError,
    TopicConfig,
    TopicConfigs,
    effective_config,
    load_broker_properties,
    load_topic_overrides,
    parse_topic_overrides,
)
from kafkalog_spark.config.broker import broker_properties_to_config
from kafkalog_spark.config.config_defs import topic_defaults
from kafkalog_spark.kafka_versions import KafkaVersion


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


V3_9, V4 = KafkaVersion.V3_9, KafkaVersion.V4


def test_defaults_are_kafka_3_9s() -> None:
    c = effective_config("orders", kafka_version=V3_9)
    assert isinstance(c, TopicConfig)
    assert c["retention.ms"] == 604800000 and c.retention_ms == 604800000
    assert c.retention_bytes == -1
    assert c["segment.bytes"] == 1073741824 and c["segment.ms"] == 604800000 and c["segment.jitter.ms"] == 0
    assert c["segment.index.bytes"] == 10485760 and c["index.interval.bytes"] == 4096
    assert c.cleanup_policy == frozenset({"delete"}) and (c.delete, c.compact) == (True, False)
    assert c.min_cleanable_dirty_ratio == 0.5 and isinstance(c.min_cleanable_dirty_ratio, float)
    assert c["min.compaction.lag.ms"] == 0 and c["max.compaction.lag.ms"] == 2**63 - 1
    assert c["delete.retention.ms"] == 86400000 and c["file.delete.delay.ms"] == 60000
    assert c["max.message.bytes"] == 1048588 and c["message.timestamp.type"] == "CreateTime"
    assert c["remote.storage.enable"] is False
    # local.retention.* default -2: resolved to retention.* as LogConfig.localRetentionMs/Bytes do
    assert c.raw["local.retention.ms"] == "-2" and c.local_retention_ms == 604800000
    assert c.raw["local.retention.bytes"] == "-2" and c.local_retention_bytes == -1
    # broker-only keys the cleaner needs, under their own names
    assert c["log.cleaner.dedupe.buffer.size"] == 134217728 and c.log_cleaner_threads == 1
    assert c["log.cleaner.io.buffer.load.factor"] == 0.9 and c["log.retention.check.interval.ms"] == 300000
    assert c["producer.id.expiration.ms"] == 86400000 and c["log.cleaner.enable"] is True
    assert set(c.sources.values()) == {"default"} and c.kafka_version is V3_9
    # the newest version's topic keys (LogConfig's define chain, see KEYS_3_9 below)
    assert set(KAFKA_DEFAULTS) == (KEYS_3_9 - REMOVED_IN_4) | ADDED_IN_4
    assert not set(KAFKA_DEFAULTS) & set(BROKER_DEFAULTS)


def test_internal_topics_are_compacted_as_kafka_creates_them() -> None:
    for version in KafkaVersion:
        assert effective_config("__consumer_offsets", kafka_version=version).cleanup_policy == {"compact"}
        assert effective_config("__consumer_offsets", kafka_version=version)["segment.bytes"] == 104857600
        assert effective_config("__transaction_state", kafka_version=version).cleanup_policy == {"compact"}
    assert effective_config("__consumer_offsets", {"offsets.topic.segment.bytes": "5000"},
                            kafka_version=V3_9)["segment.bytes"] == 5000
    # 4.x: the creation config is checked like any topic config, and 5000 is below segment.bytes' 1 MiB minimum
    with pytest.raises(ConfigError, match="segment.bytes=5000: must be at least 1048576"):
        effective_config("__consumer_offsets", {"offsets.topic.segment.bytes": "5000"}, kafka_version=V4)


@pytest.mark.parametrize(("props", "expected"), [
    ("log.retention.hours=48\n", 48 * 3600000),
    ("log.retention.minutes=30\nlog.retention.hours=48\n", 30 * 60000),
    ("log.retention.ms=1234\nlog.retention.minutes=30\nlog.retention.hours=48\n", 1234),
    ("log.retention.hours=-1\n", -1),  # KafkaConfig: any negative result means -1
    ("log.retention.ms=-5\n", -1),
    ("", 604800000),
])
def test_broker_retention_precedence(tmp_path: Path, props: str, expected: int) -> None:
    broker = load_broker_properties(write(tmp_path, "server.properties", props))
    assert effective_config("t", broker).retention_ms == expected


def test_broker_synonyms_map_to_topic_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "server.properties", """
# a comment
! another
node.id=1
log.dirs=/var/lib/kafka
log.retention.bytes = 1073741824
log.segment.bytes: 536870912
log.roll.hours 2
log.roll.jitter.ms=1000
log.roll.jitter.hours=5
log.cleanup.policy=compact,delete
log.cleaner.min.cleanable.ratio=0.25
log.cleaner.min.compaction.lag.ms=1000
log.cleaner.max.compaction.lag.ms=9000
log.cleaner.delete.retention.ms=7
log.segment.delete.delay.ms=100
log.local.retention.ms=3600000
log.local.retention.bytes=1000
log.index.size.max.bytes=4096
log.index.interval.bytes=128
log.message.timestamp.type=LogAppendTime
message.max.bytes=2000000
log.cleaner.dedupe.buffer.size=1048576
log.cleaner.threads=4
log.cleaner.io.buffer.load.factor=0.5
log.retention.check.interval.ms=\\
  1000
producer.id.expiration.ms=60000
remote.log.storage.system.enable=true
""")
    broker = load_broker_properties(path, V4)
    assert "node.id" not in broker and "log.dirs" not in broker  # broker keys that are not log settings
    c = effective_config("t", broker, kafka_version=V4)
    assert c.retention_bytes == 1073741824 and c["segment.bytes"] == 536870912
    assert c["segment.ms"] == 2 * 3600000
    assert c["segment.jitter.ms"] == 1000  # log.roll.jitter.ms wins over .hours
    assert c.cleanup_policy == {"compact", "delete"}
    assert c.min_cleanable_dirty_ratio == 0.25
    assert c["min.compaction.lag.ms"] == 1000 and c["max.compaction.lag.ms"] == 9000
    assert c["delete.retention.ms"] == 7 and c["file.delete.delay.ms"] == 100
    assert c.local_retention_ms == 3600000 and c.local_retention_bytes == 1000
    assert c["segment.index.bytes"] == 4096 and c["index.interval.bytes"] == 128
    assert c["message.timestamp.type"] == "LogAppendTime" and c["max.message.bytes"] == 2000000
    assert c["log.cleaner.dedupe.buffer.size"] == 1048576 and c["log.cleaner.threads"] == 4
    assert c["log.cleaner.io.buffer.load.factor"] == 0.5
    assert c["log.retention.check.interval.ms"] == 1000  # a continuation line, as java.util.Properties
    assert c["producer.id.expiration.ms"] == 60000
    assert c.sources["segment.ms"] == "broker" and c.sources["retention.ms"] == "default"


def test_layers_defaults_broker_topic_what_if() -> None:
    broker = {"retention.ms": "1000", "retention.bytes": "10", "segment.bytes": "2000000"}
    overrides = {"orders": {"retention.ms": "2000", "segment.bytes": "3000000"}, "other": {"retention.ms": "5"}}
    c = effective_config("orders", broker, overrides, ["retention.ms=3000"])
    assert (c.retention_ms, c.retention_bytes, c["segment.bytes"]) == (3000, 10, 3000000)
    assert c.sources["retention.ms"] == "what-if" and c.sources["segment.bytes"] == "topic"
    assert c.sources["retention.bytes"] == "broker" and c.sources["delete.retention.ms"] == "default"
    assert effective_config("payments", broker, overrides).retention_ms == 1000  # no override: the broker's
    assert effective_config("orders", broker, overrides, {"log.cleaner.threads": 3})["log.cleaner.threads"] == 3


def test_local_retention_resolution() -> None:
    c = effective_config("t", what_if={"retention.ms": "5000", "retention.bytes": "900"})
    assert (c.local_retention_ms, c.local_retention_bytes) == (5000, 900)
    c = effective_config("t", what_if={"retention.ms": "5000", "local.retention.ms": "100"})
    assert c.local_retention_ms == 100
    tiered = effective_config("t", what_if={"remote.storage.enable": "true", "local.retention.ms": "100"})
    assert (tiered.remote_log_enabled, tiered.remote_copy_enabled) == (True, True)
    assert effective_config("t", what_if={"remote.storage.enable": "true", "cleanup.policy": "compact"}) \
        .remote_log_enabled is False  # UnifiedLog.isRemoteLogEnabled: never for compacted topics
    assert effective_config("__consumer_offsets", what_if={"remote.storage.enable": "true"}).remote_log_enabled is False
    assert effective_config("t", {"remote.log.storage.system.enable": "false"},
                            what_if={"remote.storage.enable": "true"}).remote_log_enabled is False
    assert effective_config("t", what_if={"remote.storage.enable": "true", "remote.log.copy.disable": "true"}) \
        .remote_copy_enabled is False


def test_kafka_configs_describe_output(tmp_path: Path) -> None:
    path = write(tmp_path, "describe.txt", """Dynamic configs for topic orders are:
  retention.ms=86400000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=86400000, STATIC_BROKER_CONFIG:log.retention.hours=168, DEFAULT_CONFIG:log.retention.hours=168}
  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete}
Dynamic configs for topic empty are:
All configs for topic payments are:
  compression.type=producer sensitive=false synonyms={DEFAULT_CONFIG:compression.type=producer}
  segment.bytes=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.bytes=1000, DEFAULT_CONFIG:log.segment.bytes=1073741824}
  retention.bytes=5000 sensitive=false synonyms={STATIC_BROKER_CONFIG:log.retention.bytes=5000, DEFAULT_CONFIG:log.retention.bytes=-1}
  leader.replication.throttled.replicas= sensitive=false synonyms={}
Configs for topic 'legacy' are retention.ms=1,cleanup.policy=compact,delete,segment.bytes=2000
""")  # noqa: E501 - kafka-configs prints long lines
    o = load_topic_overrides(path, V3_9)
    assert o["orders"] == {"retention.ms": "86400000", "cleanup.policy": "compact,delete"}
    assert o["empty"] == {}
    assert o["payments"] == {"segment.bytes": "1000", "retention.bytes": "5000",
                             "leader.replication.throttled.replicas": ""}
    assert o["legacy"] == {"retention.ms": "1", "cleanup.policy": "compact,delete", "segment.bytes": "2000"}
    assert effective_config("orders", overrides=o).cleanup_policy == {"compact", "delete"}


def test_ini_yaml_and_json_override_files(tmp_path: Path) -> None:
    expected = {"orders": {"retention.ms": "86400000", "cleanup.policy": "compact,delete"},
                "logs": {"retention.bytes": "1000"}}
    ini = write(tmp_path, "t.ini", """# overrides
[orders]
retention.ms = 86400000
cleanup.policy = compact,delete

; another comment
[logs]
retention.bytes=1000
""")
    yaml = write(tmp_path, "t.yaml", """# overrides
orders:
  retention.ms: 86400000   # one day
  cleanup.policy: [compact, delete]
"logs":
  retention.bytes: '1000'
""")
    js = write(tmp_path, "t.json", json.dumps({"orders": {"retention.ms": 86400000,
                                                          "cleanup.policy": ["compact", "delete"]},
                                               "logs": {"retention.bytes": 1000}}))
    for path in (ini, yaml, js):
        assert load_topic_overrides(path) == expected, path.name


@pytest.mark.parametrize(("what_if", "message"), [
    (["retention.ms=abc"], "retention.ms=abc: not a long"),
    (["segment.bytes=12"], "segment.bytes=12: must be at least 1048576"),
    (["segment.bytes=99999999999"], "segment.bytes=99999999999: not an int"),
    (["retention.ms=-2"], "retention.ms=-2: must be at least -1"),
    (["min.cleanable.dirty.ratio=1.5"], "min.cleanable.dirty.ratio=1.5: must be between 0.0 and 1.0"),
    (["min.cleanable.dirty.ratio=half"], "min.cleanable.dirty.ratio=half: not a double"),
    (["cleanup.policy=compact,purge"], "cleanup.policy=compact,purge: 'purge' is not one of compact, delete"),
    (["remote.storage.enable=yes"], "remote.storage.enable=yes: not a boolean"),
    (["message.timestamp.type=Now"], "message.timestamp.type=Now: not one of CreateTime, LogAppendTime"),
    (["retention.mss=5"], "retention.mss=5: unknown config key"),
    (["retention.ms"], "retention.ms: expected key=value"),
    (["min.compaction.lag.ms=10", "max.compaction.lag.ms=5"], "min.compaction.lag.ms=10: conflicts"),
    (["remote.storage.enable=true", "retention.ms=100", "local.retention.ms=200"],
     "local.retention.ms=200: must not be more than retention.ms"),
    (["remote.storage.enable=true", "retention.ms=100", "local.retention.ms=-1"], "local.retention.ms=-1: must not"),
])
def test_bad_values_name_the_key_and_value(what_if: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        effective_config("t", what_if=what_if)
    assert message in str(e.value)
    assert isinstance(e.value, ValueError)


def test_bad_files_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"log.retention.hours=two: not an int"):
        load_broker_properties(write(tmp_path, "a.properties", "log.retention.hours=two\n"))
    with pytest.raises(ConfigError, match=r"log.segment.bytes=1048575: must be at least 1048576"):
        load_broker_properties(write(tmp_path, "f.properties", "log.segment.bytes=1048575\n"))
    with pytest.raises(ConfigError, match=r"log.segment.bytes=1k: not an int"):
        load_broker_properties(write(tmp_path, "b.properties", "log.segment.bytes=1k\n"))
    with pytest.raises(ConfigError, match=r"log.cleaner.min.cleanable.ratio=2: must be between"):
        load_broker_properties(write(tmp_path, "c.properties", "log.cleaner.min.cleanable.ratio=2\n"))
    with pytest.raises(ConfigError, match=r"retention.ms=soon: not a long"):
        load_topic_overrides(write(tmp_path, "d.ini", "[orders]\nretention.ms=soon\n"))
    with pytest.raises(ConfigError, match=r"retension.ms=5: unknown topic config key \(topic orders"):
        load_topic_overrides(write(tmp_path, "e.ini", "[orders]\nretension.ms=5\n"))
    with pytest.raises(ConfigError, match=r"log.cleaner.threads=2: unknown topic config key"):
        effective_config("t", overrides={"t": {"log.cleaner.threads": "2"}})  # broker-only: not per topic
    with pytest.raises(ConfigError, match="cannot read"):
        load_topic_overrides(tmp_path / "missing.ini")
    with pytest.raises(ConfigError, match=r"t.yaml:2: expected an indented"):
        parse_topic_overrides("orders:\n  retention.ms 5\n", "t.yaml")


# --- what the parsing libraries give (javaproperties, configparser, PyYAML) ----------------------------------


def test_server_properties_java_syntax(tmp_path: Path) -> None:
    path = write(tmp_path, "server.properties", """! a '!' comment
  # an indented '#' comment
log.retention.hours: 5
log.segment.bytes \\
    = 4096
log.message.format.version=caf\\u00e9
log\\u002eroll.ms  1000
log.cleanup.policy=compact,\\
                   delete
log.retention.hours=6
""")
    c = effective_config("t", load_broker_properties(path, V3_9), kafka_version=V3_9)
    assert c.retention_ms == 6 * 3600000  # the last occurrence wins, as Properties.load
    assert c["segment.bytes"] == 4096  # a continuation line, leading whitespace dropped
    assert c["message.format.version"] == "café"  # a \\u escape
    assert c["segment.ms"] == 1000  # an escape in a key, whitespace as the separator
    assert c.cleanup_policy == {"compact", "delete"}


def test_server_properties_bad_escape_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.properties", "# c\nlog.segment.bytes=1\\\n  0\nlog.retention.hours=\\u00zz\n")
    with pytest.raises(ConfigError, match=r"bad.properties:4: .*\\u00zz"):
        load_broker_properties(path)


def test_yaml_block_lists_quoted_keys_and_scalars_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, "t.yaml", """---
"orders":
  cleanup.policy:
    - compact
    - delete
  'retention.ms': "86400000"
  segment.ms: 010        # as written, not YAML 1.1's octal 8 (Kafka reads 10)
  preallocate: true
empty:
""")
    assert load_topic_overrides(path) == {
        "orders": {"cleanup.policy": "compact,delete", "retention.ms": "86400000", "segment.ms": "010",
                   "preallocate": "true"},
        "empty": {}}
    assert effective_config("orders", overrides=path)["segment.ms"] == 10
    # YAML 1.1's yes/on are not booleans to Kafka: the text goes through and is rejected, as before
    with pytest.raises(ConfigError, match=r"preallocate=on: not a boolean"):
        load_topic_overrides(write(tmp_path, "on.yaml", "orders:\n  preallocate: on\n"))


@pytest.mark.parametrize(("text", "message"), [
    ("orders:\n  retention.ms: [1\n", r"t.yaml:3: invalid YAML"),  # the line PyYAML reports
    ("orders:\n  - retention.ms=5\n", r"t.yaml:2: expected an indented 'key: value' mapping under topic 'orders'"),
    ("- orders\n- logs\n", r"t.yaml:1: expected a YAML mapping of topic"),
    ("orders:\n  cleanup.policy: {a: b}\n", r"t.yaml:2: expected a scalar or a list of scalars"),
])
def test_invalid_yaml_names_the_file(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_topic_overrides(write(tmp_path, "t.yaml", text))


def test_ini_comments_separators_and_duplicates(tmp_path: Path) -> None:
    path = write(tmp_path, "t.ini", """; a ';' comment
[orders]
retention.ms: 1000
  # an indented comment
cleanup.policy = "compact"
[logs]
retention.bytes = 1
[orders]
retention.ms = 2000
""")
    # a repeated section merges and a repeated key's last value wins, as before configparser
    assert load_topic_overrides(path) == {"orders": {"retention.ms": "2000", "cleanup.policy": "compact"},
                                          "logs": {"retention.bytes": "1"}}
    assert parse_topic_overrides("[DEFAULT]\nRetention.MS = 1\n") == {"DEFAULT": {"Retention.MS": "1"}}
    with pytest.raises(ConfigError, match=r"t.ini:3: expected \[topic\] or key=value, got 'retention.ms'"):
        parse_topic_overrides("[orders]\nsegment.ms = 1\nretention.ms\n", "t.ini")
    with pytest.raises(ConfigError, match=r"t.ini:2: expected \[topic\] or key=value, got '\[orders'"):
        parse_topic_overrides("; comment\n[orders\nretention.ms = 1\n", "t.ini")


def test_accepted_differences_of_the_libraries() -> None:
    # configparser: a line indented deeper than the key above continues that key's value
    assert parse_topic_overrides("[orders]\nretention.ms = 1\n    segment.ms = 2\n") == {
        "orders": {"retention.ms": "1\nsegment.ms = 2"}}
    # YAML: an unquoted '*' (Kafka's "all replicas") starts an alias; it has to be quoted
    with pytest.raises(ConfigError, match=r"t.yaml:2: invalid YAML"):
        parse_topic_overrides("orders:\n  leader.replication.throttled.replicas: *\n", "t.yaml")
    assert parse_topic_overrides("orders:\n  leader.replication.throttled.replicas: '*'\n") == {
        "orders": {"leader.replication.throttled.replicas": "*"}}
    # YAML: tabs cannot indent (the hand-written reader took any whitespace)
    with pytest.raises(ConfigError, match=r"t.yaml:2: invalid YAML"):
        parse_topic_overrides("orders:\n\tretention.ms: 5\n", "t.yaml")


# --- 3.9 and 4.x: keys, defaults and ranges (3.9.2 LogConfig.java's define chain; 4.4.0 LogConfig.configDefCopy()) --

ADDED_IN_4 = {"internal.segment.bytes", "max.decompressed.message.bytes", "remote.copy.lag.ms",
              "remote.copy.lag.bytes", "errors.deadletterqueue.group.enable"}
REMOVED_IN_4 = {"message.format.version", "message.downconversion.enable", "message.timestamp.difference.max.ms"}
# 3.9.2 LogConfig's CONFIG define chain (TopicConfig and QuotaConfig names), in its order
KEYS_3_9 = {
    "segment.bytes", "segment.ms", "segment.jitter.ms", "segment.index.bytes", "flush.messages", "flush.ms",
    "retention.bytes", "retention.ms", "max.message.bytes", "index.interval.bytes", "delete.retention.ms",
    "min.compaction.lag.ms", "max.compaction.lag.ms", "file.delete.delay.ms", "min.cleanable.dirty.ratio",
    "cleanup.policy", "unclean.leader.election.enable", "min.insync.replicas", "compression.type",
    "compression.gzip.level", "compression.lz4.level", "compression.zstd.level", "preallocate",
    "message.format.version", "message.timestamp.type", "message.timestamp.difference.max.ms",
    "message.timestamp.before.max.ms", "message.timestamp.after.max.ms", "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas", "message.downconversion.enable", "remote.storage.enable",
    "local.retention.ms", "local.retention.bytes", "remote.log.copy.disable", "remote.log.delete.on.disable",
}


def test_topic_keys_per_version() -> None:
    keys = {v: set(topic_defaults(v)) for v in KafkaVersion}
    assert len(KEYS_3_9) == 36 and keys[V3_9] == KEYS_3_9
    assert len(keys[V4]) == 38  # 4.4.0: 37 documented + the internal one
    assert keys[V4] - keys[V3_9] == ADDED_IN_4
    assert keys[V3_9] - keys[V4] == REMOVED_IN_4
    assert topic_defaults(V4)["internal.segment.bytes"] is None  # defineInternal(..., INT, null, ...)
    assert topic_defaults(V4)["max.decompressed.message.bytes"] == "2147483639"
    assert (topic_defaults(V4)["remote.copy.lag.ms"], topic_defaults(V4)["remote.copy.lag.bytes"]) == ("0", "-1")


def test_defaults_and_ranges_that_changed() -> None:
    # message.timestamp.after.max.ms: Long.MAX_VALUE in 3.9.2, one hour in 4.4.0 (ServerLogConfigs)
    assert effective_config("t", kafka_version=V3_9)["message.timestamp.after.max.ms"] == 2**63 - 1
    assert effective_config("t", kafka_version=V4)["message.timestamp.after.max.ms"] == 3600000
    # segment.bytes: atLeast(LegacyRecord.RECORD_OVERHEAD_V0 = 14) in 3.9.2, atLeast(1 MiB) in 4.4.0 (KIP-1030)
    assert effective_config("t", what_if=["segment.bytes=14"], kafka_version=V3_9)["segment.bytes"] == 14
    with pytest.raises(ConfigError, match="segment.bytes=13: must be at least 14"):
        effective_config("t", what_if=["segment.bytes=13"], kafka_version=V3_9)
    with pytest.raises(ConfigError, match=r"segment.bytes=1000: must be at least 1048576 in Kafka 4.x \(Kafka 3.9 "
                                          r"allows it: --kafka-version 3.9\)"):
        effective_config("t", what_if=["segment.bytes=1000"], kafka_version=V4)
    assert effective_config("t", what_if=["segment.bytes=1048576"], kafka_version=V4)["segment.bytes"] == 1048576
    # compression.gzip.level: "[1,...,9] or -1" in both (GzipCompression.LevelValidator)
    for version in KafkaVersion:
        assert effective_config("t", what_if=["compression.gzip.level=5"], kafka_version=version)[
            "compression.gzip.level"] == 5
        with pytest.raises(ConfigError, match="compression.gzip.level=0: must be -1 or between 1 and 9"):
            effective_config("t", what_if=["compression.gzip.level=0"], kafka_version=version)


def test_internal_segment_bytes_is_the_segment_size_in_4x() -> None:
    c = effective_config("t", overrides={"t": {"internal.segment.bytes": "1000"}}, kafka_version=V4)
    assert c["segment.bytes"] == 1073741824 and c.segment_size == 1000  # LogConfig.segmentSize()
    assert TopicConfigs(overrides={"t": {"internal.segment.bytes": "1000"}}).rows(["t"])[0]["segmentBytes"] == 1000
    assert "internal.segment.bytes" not in effective_config("t", kafka_version=V4).as_strings()  # null: not shown
    # no validator (a 4.4.0 broker accepts -5 too), but it must be an int
    assert effective_config("t", what_if=["internal.segment.bytes=-5"], kafka_version=V4).segment_size == -5
    with pytest.raises(ConfigError, match="internal.segment.bytes=abc: not an int"):
        effective_config("t", what_if=["internal.segment.bytes=abc"], kafka_version=V4)
    # 3.9 does not know it: what a 3.9.2 AdminClient call gets too ("Unknown topic config name")
    with pytest.raises(ConfigError, match=r"internal.segment.bytes=1000: not a config of Kafka 3.9 \(added in 4.x\)"):
        effective_config("t", what_if=["internal.segment.bytes=1000"], kafka_version=V3_9)


def test_removed_keys_under_4x(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # setting one (--set) is rejected, as a 4.4.0 broker's CreateTopics/AlterConfigs reject it
    with pytest.raises(ConfigError, match=r"message.format.version=3.0: removed in Kafka 4.0"):
        effective_config("t", what_if=["message.format.version=3.0"], kafka_version=V4)
    assert effective_config("t", what_if=["message.format.version=3.0"], kafka_version=V3_9)[
        "message.format.version"] == "3.0"
    # a stored override (a cluster upgraded from 3.9) is ignored, as the 4.x broker's LogConfig ignores it
    path = write(tmp_path, "t.ini", "[orders]\nmessage.format.version = 2.8\nretention.ms = 5\n")
    with caplog.at_level("WARNING"):
        assert load_topic_overrides(path, V4) == {"orders": {"retention.ms": "5"}}
    assert "ignoring message.format.version=2.8 of topic orders: removed in Kafka 4.0" in caplog.text
    assert load_topic_overrides(path, V3_9)["orders"]["message.format.version"] == "2.8"
    # in server.properties: ignored with a warning, as a 4.4.0 broker starts with it (test_topic_config_broker)
    props = write(tmp_path, "server.properties", "log.message.format.version=3.0\nlog.retention.hours=1\n")
    caplog.clear()
    with caplog.at_level("WARNING"):
        assert load_broker_properties(props, V4) == {"retention.ms": "3600000"}
    assert "ignoring log.message.format.version: not a broker config of Kafka 4.x" in caplog.text
    assert load_broker_properties(props, V3_9)["message.format.version"] == "3.0"


def test_4x_only_keys_under_3_9(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ConfigError, match=r"remote.copy.lag.ms=5: not a config of Kafka 3.9 \(added in 4.x\) "
                                          r"\(topic orders"):
        load_topic_overrides(write(tmp_path, "t.ini", "[orders]\nremote.copy.lag.ms = 5\n"), V3_9)
    props = write(tmp_path, "server.properties", "max.decompressed.message.bytes=5000\n")
    with caplog.at_level("WARNING"):
        assert load_broker_properties(props, V3_9) == {}
    assert "ignoring max.decompressed.message.bytes: not a broker config of Kafka 3.9" in caplog.text
    assert effective_config("t", load_broker_properties(props, V4), kafka_version=V4)[
        "max.decompressed.message.bytes"] == 5000


def test_timestamp_difference_fallback_in_3_9() -> None:
    # KafkaConfig.logMessageTimestampBeforeMaxMs/AfterMaxMs (3.9.2 KafkaConfig.scala:490-510): left at their
    # default, the broker's before/after bounds are log.message.timestamp.difference.max.ms
    props = {"log.message.timestamp.difference.max.ms": "1000", "log.message.timestamp.after.max.ms": "7"}
    c = effective_config("t", broker_properties_to_config(props, V3_9), kafka_version=V3_9)
    assert (c["message.timestamp.before.max.ms"], c["message.timestamp.after.max.ms"]) == (1000, 7)
    # LogConfig.getMessageTimestampBeforeMaxMs/AfterMaxMs (3.9.2 LogConfig.java:461-479): the same per topic
    c = effective_config("t", what_if=["message.timestamp.difference.max.ms=5"], kafka_version=V3_9)
    assert (c["message.timestamp.before.max.ms"], c["message.timestamp.after.max.ms"]) == (5, 5)
    assert c.raw["message.timestamp.before.max.ms"] == str(2**63 - 1)  # printed as set
    c = effective_config("t", broker_properties_to_config(props, V4), kafka_version=V4)  # 4.x: no such key
    assert (c["message.timestamp.before.max.ms"], c["message.timestamp.after.max.ms"]) == (2**63 - 1, 7)


def test_internal_topics_per_version() -> None:
    # __transaction_state: min.insync.replicas = transaction.state.log.min.isr (default 2, TransactionLogConfig(s))
    for version in KafkaVersion:
        c = effective_config("__transaction_state", kafka_version=version)
        assert (c["min.insync.replicas"], c["compression.type"], c.sources["min.insync.replicas"]) == (
            2, "uncompressed", "internal")
    # __share_group_state: ShareCoordinatorService.shareGroupStateTopicConfigs (4.4.0); 3.9 creates none
    share = effective_config("__share_group_state", {"share.coordinator.state.topic.segment.bytes": "2097152"},
                             kafka_version=V4)
    assert share.cleanup_policy == {"delete"} and share.retention_ms == -1 and share["segment.bytes"] == 2097152
    assert share["min.insync.replicas"] == 2 and share.is_internal is True
    assert effective_config("__share_group_state", kafka_version=V3_9).sources["retention.ms"] == "default"
    # __remote_log_metadata: TopicBasedRemoteLogMetadataManager's CreateTopics configs (+ min ISR 2 in 4.4.0)
    for version, min_isr in ((V3_9, 1), (V4, 2)):
        rlmm = effective_config("__remote_log_metadata", kafka_version=version)
        assert (rlmm.retention_ms, rlmm["min.insync.replicas"], rlmm.remote_log_enabled) == (-1, min_isr, False)


def test_cluster_metadata_is_configured_from_metadata_settings_only() -> None:
    # KafkaMetadataLog.apply (3.9.2) / KafkaRaftLog.createLog (4.4.0): a LogConfig of its own properties
    broker = broker_properties_to_config({"log.retention.hours": "1", "log.segment.bytes": "2097152",
                                          "metadata.log.segment.bytes": "16777216", "metadata.log.segment.ms": "60000"})
    c = effective_config("__cluster_metadata", broker)
    assert (c.retention_ms, c.retention_bytes) == (-1, -1)  # snapshots, not retention, bound it
    assert (c["segment.bytes"], c["segment.ms"], c["max.message.bytes"]) == (16777216, 60000, 8388608)
    assert effective_config("t", broker)["segment.bytes"] == 2097152  # an ordinary topic takes log.segment.bytes
    # metadata.log.segment.bytes: [12,...] in 3.9.2 (KRaftConfigs), [8388608,...] in 4.4.0 (MetadataLogConfig)
    with pytest.raises(ConfigError, match="metadata.log.segment.bytes=1048576: must be at least 8388608"):
        broker_properties_to_config({"metadata.log.segment.bytes": "1048576"}, V4)
    small = broker_properties_to_config({"metadata.log.segment.bytes": "1048576"}, V3_9)
    assert effective_config("__cluster_metadata", small, kafka_version=V3_9)["segment.bytes"] == 1048576


def test_versions_are_named_and_shown() -> None:
    assert effective_config("t", kafka_version="3.9.2").kafka_version is V3_9
    assert effective_config("t", kafka_version="4.4.0").kafka_version is V4
    assert effective_config("t").kafka_version is V4  # the newest by default
    rows = TopicConfigs(kafka_version="3.9").rows(["t"])
    assert rows[0]["kafkaVersion"] == "3.9" and rows[0]["segmentBytes"] == 1073741824
    assert TopicConfigs.of({"t": effective_config("t", kafka_version=V3_9)}).kafka_version is V3_9
    assert TopicConfigs(kafka_version=V3_9).with_what_if(["retention.ms=1"]).kafka_version is V3_9
