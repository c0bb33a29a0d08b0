"""`validate` on what a healthy Kafka 3.9.2 broker writes in the situations of the 4.x corpus: a compacted
transactional topic cleaned twice (ABORT markers whose data the cleaner removed), a restart in the middle, a
producer that crashed inside a transaction, a deleted topic. No error may come out (4.4.0:
tests/test_validate_kafka4.py on data/samples-kafka4, written by the same scenarios)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from kafkalog_spark import read_log
from kafkalog_spark.analysis.index_validation import validate
from kafkalog_spark.log.producer_snapshot import ProducerStateSnapshot
from kafkalog_spark.log.transaction_index import TransactionIndex
from tests.harness.broker import KAFKA_3, KafkaBroker, KafkaDistribution
from tests.harness.make_samples import create_topics, wait_for_cleaner
from tests.harness.plan import run_java
from tests.harness.scenarios import (
    BROKER_PROPS,
    COMPACTED_TXN_ABORTED,
    KAFKA4_TOPICS,
    compacted_txn_plan,
    deleted_topic_plan,
    open_txn_plan,
)

pytestmark = [pytest.mark.broker,
              pytest.mark.skipif(shutil.which("java") is None, reason="the broker tests need java 17+")]


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = KafkaDistribution(KAFKA_3).ensure()
    work = tmp_path_factory.mktemp("validate-broker")
    broker = KafkaBroker(dist, BROKER_PROPS, work_dir=work / "broker")
    try:
        broker.start()
        create_topics(broker, KAFKA4_TOPICS)
        run_java(compacted_txn_plan(1), dist, broker.bootstrap)
        wait_for_cleaner(broker, "compacted-txn")
        broker.stop(clean=True)
        broker.start()  # a restart between the two cleaner rounds
        run_java(compacted_txn_plan(2), dist, broker.bootstrap)
        wait_for_cleaner(broker, "compacted-txn")
        run_java(deleted_topic_plan(), dist, broker.bootstrap)
        broker.admin().delete_topics(["deleted-topic"], operation_timeout=30)["deleted-topic"].result(timeout=60)
        run_java(open_txn_plan(), dist, broker.bootstrap)
        deadline = time.monotonic() + 30
        while not list(broker.log_dir.glob("deleted-topic-0.*-delete")) and time.monotonic() < deadline:
            time.sleep(0.2)
        broker.stop(clean=True)
        return broker.snapshot(work / "copy")
    finally:
        broker.stop(clean=True)


def test_the_situations_are_really_there(log_dir: Path) -> None:
    # the deleted topic's partition dir, renamed and kept (file.delete.delay.ms), its first segment still there
    [deleted] = log_dir.glob("deleted-topic-0.*-delete")
    assert (deleted / f"{0:020d}.log").is_file() and not (log_dir / "deleted-topic-0").exists()
    txn = log_dir / "compacted-txn-0"
    records = read_log(str(txn), "records", findings=[]).to_pylist()
    aborts = {r["offset"] for r in records if r["controlType"] == "ABORT"}
    # transaction n takes offsets 6n..6n+4 and its marker 6n+5; the markers stay (delete.retention.ms is a day)
    assert aborts == {6 * n + 5 for n in COMPACTED_TXN_ABORTED}
    entries = {t.last_offset for p in txn.glob("*.txnindex") for t in TransactionIndex.read(str(p)).aborted_txns}
    assert entries < aborts, "no ABORT marker left without its entry: the cleaner scenario did not happen"
    # the committed transaction: offsets 0..4 and its marker at 5; the open one starts at 6
    newest = max((log_dir / "txn-open-0").glob("*.snapshot"))
    assert [p.current_txn_first_offset for p in ProducerStateSnapshot.read(str(newest)).producers
            if p.current_txn_first_offset >= 0] == [6], "no open transaction in the producer snapshot"


def test_no_error_on_a_healthy_3_9_log_dir(spark, log_dir: Path) -> None:
    try:
        rows = validate(spark, [str(log_dir)], records=True).collect()
    finally:
        spark.catalog.clearCache()
    assert [r for r in rows if r.severity == "error"] == []
    assert "compacted-txn" in {r.topic for r in rows}  # the partitions were read (a cleaned log has infos)
