"""The topic-config model against live brokers: one 3.9.2 and one 4.4.0 broker (module-scoped, one after the
other) create topics with various configs, the internal topics come to exist (a transaction, a consumer group,
on 4.4.0 a share group), and the AdminClient's describe_configs reports every key's effective value and source.
Our model, given the broker's own server.properties and the topics' creation configs under the same Kafka
version, must report the same keys and values; and it must reject exactly the configs the broker's
CreateTopics rejects (tried with validate_only).
"""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafkalog_spark.config import ConfigError, effective_config, load_broker_properties
from kafkalog_spark.config.config_defs import specs, topic_defaults
from kafkalog_spark.kafka_versions import KafkaVersion, parse_kafka_version

pytestmark = [pytest.mark.broker,
              pytest.mark.skipif(shutil.which("java") is None, reason="the Kafka broker harness needs Java 17+")]

# server.properties beyond the harness's own: broker-level synonyms, and keys only the other version knows (each
# broker starts with them and ignores them: KafkaConfig logs an unused key).
BROKER_PROPS: dict[str, Any] = {
    "log.retention.hours": 48,
    "log.roll.ms": 3600000,
    "log.cleaner.min.cleanable.ratio": 0.3,
    "compression.type": "lz4",
    "log.message.format.version": "3.0-IV1",  # 3.9 only
    "log.message.timestamp.difference.max.ms": 1000,  # 3.9 only: before/after fall back to it
    "max.decompressed.message.bytes": 5000,  # 4.x only
    "offsets.topic.segment.bytes": 2 * 1024 * 1024,
    "metadata.log.max.snapshot.interval.ms": 2000,  # a metadata snapshot holds some of the dynamic configs below
}
SHARE_PROPS: dict[str, Any] = {  # __share_group_state on a single node (4.x)
    "share.coordinator.state.topic.num.partitions": 1,
    "share.coordinator.state.topic.replication.factor": 1,
    "share.coordinator.state.topic.min.isr": 1,
    "share.coordinator.state.topic.segment.bytes": 3 * 1024 * 1024,
}
# topic -> (3.9 creation config, 4.x creation config); None: not created under that version
TOPICS: dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]] = {
    "plain": ({}, {}),
    "compacted": ({"cleanup.policy": "compact,delete", "min.compaction.lag.ms": 1000,
                   "delete.retention.ms": 5000},) * 2,
    "small": ({"segment.bytes": 1000}, {"internal.segment.bytes": 1000}),
    "stamped": ({"message.timestamp.type": "LogAppendTime", "message.timestamp.before.max.ms": 60000},) * 2,
    "legacy-keys": ({"message.timestamp.difference.max.ms": 5, "message.downconversion.enable": "false",
                     "message.format.version": "2.8"}, None),
    "new-keys": (None, {"remote.copy.lag.ms": 5, "max.decompressed.message.bytes": 1000,
                        "errors.deadletterqueue.group.enable": "true"}),
}
# One topic config each, tried with CreateTopics(validate_only): accepted or rejected, and why.
CANDIDATES = [
    ("segment.bytes", "13"), ("segment.bytes", "14"), ("segment.bytes", "1000"), ("segment.bytes", "1048575"),
    ("segment.bytes", "1048576"), ("internal.segment.bytes", "1000"), ("internal.segment.bytes", "-5"),
    ("internal.segment.bytes", "abc"), ("message.format.version", "3.0"), ("message.downconversion.enable", "false"),
    ("message.timestamp.difference.max.ms", "1000"), ("message.timestamp.after.max.ms", "-1"),
    ("remote.copy.lag.ms", "5"), ("remote.copy.lag.ms", "-2"), ("remote.copy.lag.bytes", "-1"),
    ("max.decompressed.message.bytes", "0"), ("max.decompressed.message.bytes", "1000"),
    ("errors.deadletterqueue.group.enable", "true"), ("compression.gzip.level", "0"),
    ("compression.gzip.level", "9"), ("compression.gzip.level", "-1"), ("compression.zstd.level", "23"),
    ("min.insync.replicas", "0"), ("retention.ms", "-2"), ("local.retention.ms", "-3"),
    ("min.cleanable.dirty.ratio", "1.5"), ("cleanup.policy", "compact,delete"), ("cleanup.policy", "purge"),
    ("segment.index.bytes", "3"), ("max.compaction.lag.ms", "0"), ("log.cleaner.threads", "2"),
    ("not.a.key", "1"),
]
INTERNAL = ("__consumer_offsets", "__transaction_state")
DYNAMIC_TOPIC_CONFIG = 1  # confluent_kafka ConfigSource values
# ConfigSource -> the layer our sources name
LAYERS = {1: ("dynamic-topic@", "internal"), 2: ("dynamic-broker@",), 3: ("dynamic-broker-default@",), 4: ("broker",),
          5: ("default",)}  # STATIC_BROKER_CONFIG, DEFAULT_CONFIG
# kafka-configs --alter after the topics exist, in this order: (resource type, name, {key: value or None (delete)});
# a metadata snapshot is taken after the first three, so the image holds some values from it, some from the log
ALTERS: list[tuple[str, str, dict[str, str | None]]] = [
    ("BROKER", "", {"log.retention.ms": "7200000", "log.cleaner.min.cleanable.ratio": "0.35",
                    "log.cleaner.delete.retention.ms": "12345"}),
    ("BROKER", "1", {"log.cleaner.min.cleanable.ratio": "0.4"}),
    ("TOPIC", "plain", {"retention.bytes": "123456789", "max.compaction.lag.ms": "86400000"}),
    ("TOPIC", "compacted", {"delete.retention.ms": None, "segment.ms": "600000"}),  # back to the broker default
    ("TOPIC", "plain", {"max.compaction.lag.ms": None}),
    ("BROKER", "1", {"log.segment.bytes": "2097152"}),
]


@dataclass
class Observed:
    version: KafkaVersion
    broker_config: dict[str, str]  # our loader on the broker's own server.properties
    created: dict[str, dict[str, str]]  # the topics' creation configs
    described: dict[str, dict[str, tuple[str, int]]]  # topic -> key -> (value, source)
    validated: dict[tuple[str, str], str | None]  # candidate -> None (accepted) or the broker's error
    share_group: bool  # __share_group_state made (4.x, librdkafka's share consumer)
    log_dir: Path  # the broker's log dir, the broker stopped
    altered: dict[str, dict[str, tuple[str, int]]]  # described again after ALTERS


def _make_internal_topics(broker, dist_major: str) -> bool:
    from confluent_kafka import Consumer, Producer

    producer = Producer(broker.client_config(**{"transactional.id": "config-txn"}))
    producer.init_transactions(30)  # __transaction_state
    producer.begin_transaction()
    producer.produce("plain", b"v", b"k")
    producer.commit_transaction(30)
    consumer = Consumer(broker.client_config(**{"group.id": "config-group", "auto.offset.reset": "earliest"}))
    consumer.subscribe(["plain"])  # __consumer_offsets
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and not message.error():
            break
    consumer.commit(asynchronous=False)
    consumer.close()
    if dist_major != "4":
        return False
    try:
        from confluent_kafka import ShareConsumer
    except ImportError:  # an older confluent-kafka: no KIP-932 client
        return False
    share = ShareConsumer(broker.client_config(**{"group.id": "config-share-group"}))
    share.subscribe(["plain"])
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and "__share_group_state" not in broker.admin().list_topics(timeout=10).topics:
        share.poll(0.5)
    share.close()
    return "__share_group_state" in broker.admin().list_topics(timeout=10).topics


def _describe(admin, topics) -> dict[str, dict[str, tuple[str, int]]]:
    from confluent_kafka.admin import ConfigResource

    out = {}
    for topic in topics:
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
        entries = admin.describe_configs([resource])[resource].result(timeout=30)
        out[topic] = {name: (e.value, int(e.source)) for name, e in entries.items()}
    return out


def _alter(broker, kind: str, name: str, config: dict[str, str | None]) -> None:
    """kafka-configs --alter (Kafka's own ConfigCommand: librdkafka cannot name the cluster-wide broker default)."""
    main = "kafka.admin.ConfigCommand" if broker.dist.major == "3" else "org.apache.kafka.tools.ConfigCommand"
    entity = ["--entity-type", "brokers" if kind == "BROKER" else "topics",
              *(["--entity-default"] if name == "" else ["--entity-name", name])]
    added = ",".join(f"{k}={v}" for k, v in config.items() if v is not None)
    deleted = ",".join(k for k, v in config.items() if v is None)
    changes = [*(["--add-config", added] if added else []), *(["--delete-config", deleted] if deleted else [])]
    broker.dist.run_java(main, "--bootstrap-server", broker.bootstrap, *entity, "--alter", *changes)


def _snapshot_after(log_dir: Path, since: float, timeout: float = 30.0) -> None:
    """Wait for a metadata snapshot (`.checkpoint`) written after ``since`` (metadata.log.max.snapshot.interval.ms)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p.stat().st_mtime > since for p in (log_dir / "__cluster_metadata-0").glob("*.checkpoint")):
            return
        time.sleep(0.5)
    raise AssertionError("the broker wrote no metadata snapshot after the dynamic configs")


def _validate(admin, key: str, value: str) -> str | None:
    from confluent_kafka.admin import NewTopic

    future = admin.create_topics([NewTopic("probe", 1, 1, config={key: value})], validate_only=True)["probe"]
    try:
        future.result(timeout=30)
    except Exception as e:  # noqa: BLE001 - a KafkaException carrying the broker's message
        error = e.args[0] if e.args else e
        return error.str() if hasattr(error, "str") else str(error)
    return None


@pytest.fixture(scope="module", params=["3.9.2", "4.4.0"])
def observed(request, tmp_path_factory) -> Observed:
    from tests.harness.broker import KafkaBroker, KafkaDistribution

    dist = KafkaDistribution(request.param)
    dist.ensure()  # the JARs: fetched once, not part of the timing
    props = {**BROKER_PROPS, **(SHARE_PROPS if dist.major == "4" else {})}
    with KafkaBroker(dist, props, work_dir=tmp_path_factory.mktemp(f"config-{request.param}")) as broker:
        column = 0 if dist.major == "3" else 1
        created = {t: {k: str(v) for k, v in configs[column].items()}
                   for t, configs in TOPICS.items() if configs[column] is not None}
        for topic, config in created.items():
            broker.create_topic(topic, config=config)
        share_group = _make_internal_topics(broker, dist.major)
        admin = broker.admin()
        topics = sorted(admin.list_topics(timeout=10).topics)
        described = _describe(admin, topics)
        validated = {(k, v): _validate(admin, k, v) for k, v in CANDIDATES}
        version = parse_kafka_version(request.param)
        broker_config = load_broker_properties(broker.work_dir / "server.properties", version)
        for n, (kind, name, config) in enumerate(ALTERS):
            if n == 3:
                _snapshot_after(broker.log_dir, time.time() - 0.1)
            _alter(broker, kind, name, config)
        altered = _describe(admin, topics)
    return Observed(version, broker_config, created, described, validated, share_group, broker.log_dir, altered)


def _model(obs: Observed, topic: str):
    return effective_config(topic, obs.broker_config, obs.created, kafka_version=obs.version)


def test_the_internal_topics_exist(observed: Observed) -> None:
    expected = {*INTERNAL, *observed.created} | ({"__share_group_state"} if observed.share_group else set())
    assert set(observed.described) == expected
    if observed.version is KafkaVersion.V4:
        assert observed.share_group, "librdkafka's share consumer made no __share_group_state"


def test_every_key_the_broker_reports_is_the_versions(observed: Observed) -> None:
    for topic, entries in observed.described.items():
        # keys without a default (4.x internal.segment.bytes) are reported only where a topic sets them
        expected = {k for k, d in topic_defaults(observed.version).items()
                    if d is not None or k in observed.created.get(topic, {})}
        assert set(entries) == expected, topic


def _same(key: str, ours: str, theirs: str, version: KafkaVersion) -> bool:
    if specs(version)[key].type == "list":  # cleanup.policy=compact,delete: an order of its own
        return sorted(ours.split(",")) == sorted(theirs.split(","))
    return ours == theirs


def test_effective_values_and_their_layer_match_the_broker(observed: Observed) -> None:
    for topic, entries in observed.described.items():
        config = _model(observed, topic)
        for key, (value, source) in entries.items():
            assert _same(key, config.raw[key], value, observed.version), (topic, key, config.raw[key], value)
            # the internal topics' creation configs are stored as dynamic topic configs, as the topic overrides
            topic_level = config.sources[key] in ("internal", "topic")
            assert topic_level == (source == DYNAMIC_TOPIC_CONFIG), (topic, key, config.sources[key], source)


def test_internal_topics_get_their_creation_configs(observed: Observed) -> None:
    offsets = observed.described["__consumer_offsets"]
    assert offsets["segment.bytes"][0] == str(BROKER_PROPS["offsets.topic.segment.bytes"])
    assert offsets["cleanup.policy"][0] == "compact" and offsets["compression.type"][0] == "producer"
    assert observed.described["__transaction_state"]["min.insync.replicas"][0] == "1"  # the harness's min ISR
    if observed.share_group:
        share = observed.described["__share_group_state"]
        assert (share["retention.ms"][0], share["cleanup.policy"][0]) == ("-1", "delete")
        assert share["segment.bytes"][0] == str(SHARE_PROPS["share.coordinator.state.topic.segment.bytes"])


def _ours(obs: Observed, key: str, value: str) -> str | None:
    try:
        effective_config("probe", obs.broker_config, {"probe": {key: value}}, kafka_version=obs.version)
    except ConfigError as e:
        return str(e)
    return None


@pytest.mark.parametrize(("key", "value"), CANDIDATES, ids=[f"{k}={v}" for k, v in CANDIDATES])
def test_the_model_rejects_what_the_broker_rejects(observed: Observed, key: str, value: str) -> None:
    theirs, ours = observed.validated[(key, value)], _ours(observed, key, value)
    assert (theirs is None) == (ours is None), (theirs, ours)
    if theirs is None:
        return
    assert f"{key}={value}: " in ours, ours  # ours names the key and the value
    bound = re.search(r"at least (-?\d+)", theirs)  # Range's message for a value below its minimum
    if bound:
        assert re.search(rf"(at least|between) {bound[1]}\b", ours), (theirs, ours)
    if "Unknown topic config name" in theirs:
        assert re.search(r"unknown topic config key|not a config of Kafka|removed in Kafka", ours), (theirs, ours)


@pytest.fixture(scope="module")
def from_metadata(observed: Observed, spark):
    """Our configs of the stopped broker's topics: its server.properties, and what its log dir's metadata records."""
    from kafkalog_spark.config import TopicConfigs
    from kafkalog_spark.source.cluster_configs import read_cluster_configs

    return read_cluster_configs(spark, [str(observed.log_dir)],
                                TopicConfigs(observed.broker_config, kafka_version=observed.version))


def test_the_metadata_logs_dynamic_configs_give_what_describe_configs_reports(observed: Observed,
                                                                              from_metadata) -> None:
    assert from_metadata.cluster is not None, "the metadata log's configs were not found"
    changed = 0
    for topic, entries in observed.altered.items():
        config = from_metadata[topic]
        for key, (value, source) in entries.items():
            assert _same(key, config.raw[key], value, observed.version), (topic, key, config.raw[key], value)
            # the dynamic layers exactly; static and default alike (a 3.9 bound derived from the broker's
            # difference is the broker's to us, a default to describeConfigs)
            ours = config.sources[key]
            assert ours.startswith(LAYERS[source]) or (source > 3 and ours in ("broker", "default")), (
                topic, key, ours, source)
            changed += entries[key] != observed.described[topic][key]
    # the alters changed values or their layer in every topic (the cluster-wide defaults reach them all)
    assert changed >= 3 * len(observed.altered), changed
    assert observed.altered["compacted"]["delete.retention.ms"] == ("12345", 3)


def test_each_dynamic_value_names_the_offset_or_snapshot_it_came_from(observed: Observed, from_metadata) -> None:
    # the newest snapshot, by its file name: values set before its end offset come from it, later ones from the log
    newest = max(int(p.name.split("-")[0]) for p in (observed.log_dir / "__cluster_metadata-0").glob("*.checkpoint"))
    plain, compacted = from_metadata["plain"].sources, from_metadata["compacted"].sources
    in_order = [plain["retention.ms"], plain["retention.bytes"], compacted["segment.ms"], plain["segment.bytes"]]
    positions = []
    for source in in_order:
        origin = source.split("@")[1]
        if origin.startswith("snapshot-"):
            assert int(origin.removeprefix("snapshot-")) == newest, (source, newest)
            positions.append(newest - 1)
        else:
            assert int(origin) >= newest, (source, newest)
            positions.append(int(origin))
    assert in_order[0] == f"dynamic-broker-default@snapshot-{newest}"  # set before the snapshot the test waited for
    assert positions == sorted(positions), in_order  # the alters' order
    # the per-broker value is over the cluster-wide default, whatever their order in the log
    assert plain["min.cleanable.dirty.ratio"].startswith("dynamic-broker@")
    assert from_metadata["plain"].raw["min.cleanable.dirty.ratio"] == "0.4"


def test_the_topic_configs_rows_name_the_metadata_layers(from_metadata) -> None:
    row = next(r for r in from_metadata.rows(["plain"]))
    assert row["retentionBytes"] == 123456789 and row["retentionMs"] == 7200000
    assert row["sources"]["retention.bytes"].startswith("dynamic-topic@")
