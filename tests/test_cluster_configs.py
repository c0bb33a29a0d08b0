"""The metadata log's dynamic configs as config layers (kafkalog_spark.config.cluster_configs), on rows shaped as the
``metadata_configs`` view gives them; against real brokers' describeConfigs in tests/test_topic_config_broker.py."""

from __future__ import annotations

import logging

from kafkalog_spark.config import TopicConfigs
from kafkalog_spark.config.cluster_configs import ClusterConfigs
from kafkalog_spark.kafka_versions import parse_kafka_version

V39, V4 = parse_kafka_version("3.9"), parse_kafka_version("4.x")


def _row(kind: str, name: str, key: str, value: str, offset: int | None = 10, snapshot: int | None = None) -> dict:
    return {"resourceType": kind, "resourceName": name, "name": key, "value": value, "offset": offset,
            "snapshotEndOffset": snapshot}


def test_per_broker_over_cluster_default_over_static_under_topic_and_overrides() -> None:
    rows = [_row("BROKER", "", "log.retention.ms", "1000", 5), _row("BROKER", "", "log.segment.bytes", "2000000", 6),
            _row("BROKER", "1", "log.segment.bytes", "3000000", None, 40), _row("TOPIC", "t", "retention.ms", "7", 9)]
    configs = TopicConfigs({"retention.ms": "99", "segment.bytes": "4000000"}, {"u": {"retention.ms": "8"}},
                           kafka_version=V4, cluster=ClusterConfigs.from_rows(rows, [1], V4))
    t, u = configs["t"], configs["u"]
    assert (t.raw["retention.ms"], t.sources["retention.ms"]) == ("7", "dynamic-topic@9")
    assert (u.raw["retention.ms"], u.sources["retention.ms"]) == ("8", "topic")  # --topic-config on top
    assert (t.raw["segment.bytes"], t.sources["segment.bytes"]) == ("3000000", "dynamic-broker@snapshot-40")
    # another broker's own config does not apply; the cluster-wide default does
    other = TopicConfigs(kafka_version=V4, cluster=ClusterConfigs.from_rows(rows, [2], V4))["u"]
    assert (other.raw["segment.bytes"], other.raw["retention.ms"]) == ("2000000", "1000")
    assert other.sources["retention.ms"] == "dynamic-broker-default@5"


def test_a_value_the_versions_rules_reject_is_left_out_and_said(caplog) -> None:
    rows = [_row("TOPIC", "t", "segment.bytes", "32768", 22), _row("TOPIC", "t", "retention.ms", "5", 23),
            _row("TOPIC", "t", "no.such.key", "1", 24), _row("BROKER", "", "log.segment.bytes", "1000", 3)]
    with caplog.at_level(logging.WARNING):
        cluster = ClusterConfigs.from_rows(rows, [1], V4)
    assert cluster.topics == {"t": {"retention.ms": ("5", "dynamic-topic@23")}} and cluster.broker == {}
    assert "segment.bytes=32768 (metadata offset 22)" in caplog.text and "--kafka-version 3.9" in caplog.text
    # the 3.9 rules the cluster that wrote it had accept it
    assert ClusterConfigs.from_rows(rows, [1], V39).topics["t"]["segment.bytes"] == ("32768", "dynamic-topic@22")
