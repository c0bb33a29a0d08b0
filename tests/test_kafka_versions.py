"""`--kafka-version` spellings map onto the two families whose rules we model."""

from __future__ import annotations

import pytest

from kafkalog_spark.kafka_versions import LATEST, VERIFIED, KafkaVersion, parse_kafka_version


@pytest.mark.parametrize(("text", "family"), [
    ("3.9", KafkaVersion.V3_9), ("3.9.2", KafkaVersion.V3_9), ("4", KafkaVersion.V4), ("4.x", KafkaVersion.V4),
    ("4.0", KafkaVersion.V4), ("4.4.0", KafkaVersion.V4), (" 4.1 ", KafkaVersion.V4)])
def test_spellings(text: str, family: KafkaVersion) -> None:
    assert parse_kafka_version(text) is family


@pytest.mark.parametrize("text", ["3.8", "2.8.1", "5.0", "4.x.1", "", "latest"])
def test_unknown_versions_name_the_choices(text: str) -> None:
    with pytest.raises(ValueError, match=r"choose 3\.9 or 4\.x"):
        parse_kafka_version(text)


def test_latest_is_the_newest_verified_build() -> None:
    assert LATEST is KafkaVersion.V4 and VERIFIED[LATEST] == "4.4.0"
