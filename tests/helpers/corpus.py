"""The repository's paths the tests read: the corpora written by real Kafka brokers (`make samples`,
`make samples-internal`, `make samples-tiered`), the configs and the package itself."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "kafkalog_spark"
CONF = ROOT / "conf"
DATA = ROOT / "data"
# Kafka 3.9.2's corpus (log dirs broker/, live-copy/, legacy/; dump goldens under golden*/)
SAMPLES = DATA / "samples"
BROKER = SAMPLES / "broker"
# Kafka 4.4.0's corpus, laid out as SAMPLES
KAFKA4 = DATA / "samples-kafka4"
# The internal topics, per Kafka version (3.9.2/, 4.4.0/), each with the brokers' oracle.json
INTERNAL = DATA / "samples-internal"
REPLICAS = DATA / "samples-replicas"  # three brokers of one KRaft cluster per version (tests/harness/replica_corpus.py)
NOTEBOOK = ROOT / "jobs" / "databricks_nightly.py"
