"""The Kafka versions whose on-disk rules kafkalog-spark knows, and how a user names them.

Two families differ in what we model: 3.9 (the last release with ZooKeeper and message format v0/v1 writing)
and 4.x (KRaft only; new config limits, new cleaner rule, new dump-tool text). `--kafka-version` picks one;
the default is the newest. Each family was verified against one exact broker and dump-tool build (`VERIFIED`,
shown in the README's support matrix).
"""

from __future__ import annotations

import re
from enum import StrEnum


class KafkaVersion(StrEnum):
    V3_9 = "3.9"
    V4 = "4.x"


LATEST = KafkaVersion.V4
# The Apache Kafka builds (broker and kafka-dump-log) each family's rules were checked against.
VERIFIED = {KafkaVersion.V3_9: "3.9.2", KafkaVersion.V4: "4.4.0"}
CHOICES = tuple(v.value for v in KafkaVersion)

_PATTERNS = ((KafkaVersion.V3_9, re.compile(r"3\.9(\.\d+)?")), (KafkaVersion.V4, re.compile(r"4(\.x|\.\d+(\.\d+)?)?")))


def parse_kafka_version(text: str | KafkaVersion) -> KafkaVersion:
    """`3.9`, `3.9.2` -> 3.9; `4`, `4.x`, `4.0` ... `4.4.0` -> 4.x. Anything else is a ValueError naming the choices."""
    if isinstance(text, KafkaVersion):
        return text
    for version, pattern in _PATTERNS:
        if pattern.fullmatch(text.strip()):
            return version
    raise ValueError(f"unsupported Kafka version {text!r}: choose {' or '.join(CHOICES)}")
