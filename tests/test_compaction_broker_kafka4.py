"""The compaction preview's 4.x rules against a real Kafka 4.4.0 broker, as test_compaction_broker.py checks
the 3.9 rules against 3.9.2 (the harness both share, tests/helpers/cleaner_broker.py: copy while the broker runs,
preview, let the cleaner run, copy again, compare survivors, segments, sizes, horizons and the cleaner's own log
lines).

Segments are made small with the topic config ``internal.segment.bytes`` (4.x keeps ``segment.bytes`` at 1 MiB
or more, KIP-1030). One pass per topic:

- cp-lastbatch: the round's last batch emptied (keyless records written before the topic turned compacted).
  3.9.2 keeps it as a header-only batch ending at the first uncleanable offset (KAFKA-17076); 4.4.0 keeps
  it only at the high watermark (KAFKA-20452), which is further on: the batch goes. Both rules are previewed
  on the same copy and differ; the broker does what the 4.x rules say.
- cp-abort-last: a transactional producer whose last act is an abort. With transactions V2 the ABORT marker
  carries the producer epoch + 1, so the producer's last data batch is no longer its last batch: the aborted
  batch goes entirely (3.9.2 with V1 markers keeps it empty) and the marker stays as the producer's last.
- cp-plain: an idempotent producer, keys overwritten, tombstones kept and given their horizon.
"""

from __future__ import annotations

import gc
import shutil
import time
from typing import Any

import pytest

from kafkalog_spark.kafka_versions import KafkaVersion
from tests.helpers.cleaner_broker import (
    BROKER_PROPS,
    CHECKPOINTS,
    HOLD,
    Timings,
    check_pass,
    check_round_end,
    keyed,
    observe,
    predict,
    produce_last_batch,
    read_checkpoint,
    wait,
    wait_caught_up,
)

pytestmark = [pytest.mark.broker,
              pytest.mark.skipif(shutil.which("java") is None,
                                 reason="Java is missing: the real-broker compaction tests need java 17+")]

SEGMENT = "internal.segment.bytes"
# topic -> (configs at creation, configs set to let the cleaner run)
TOPICS4: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "cp-lastbatch": ({"cleanup.policy": "delete", SEGMENT: 1024, **HOLD},
                     {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.01}),
    "cp-abort-last": ({"cleanup.policy": "compact", SEGMENT: 700, "delete.retention.ms": 600_000, **HOLD},
                      {"min.cleanable.dirty.ratio": 0.01}),
    "cp-plain": ({"cleanup.policy": "compact", SEGMENT: 1024, "delete.retention.ms": 600_000, **HOLD},
                 {"min.cleanable.dirty.ratio": 0.2}),
}


def _java_plan():
    from tests.harness.plan import Plan

    idem = {"acks": "all", "enable.idempotence": "true", "linger.ms": 5, "batch.size": 512}
    plan = Plan().open("a", idem)
    for i, (k, v) in enumerate(keyed(120, 20, 13)):
        plan.send("a", "cp-plain", v, k)
        if i % 6 == 5:
            plan.do("flush", "a")
    plan.do("close", "a")
    # one committed transaction, then one aborted: the producer's last act
    plan.open("tx", {**idem, "transactional.id": "cp-abort-last"}).do("init", "tx").do("begin", "tx")
    for j in range(4):
        plan.send("tx", "cp-abort-last", f"committed {j}".encode(), f"ab-{j}".encode())
    plan.do("flush", "tx").do("commit", "tx").do("begin", "tx")
    for j in range(3):
        plan.send("tx", "cp-abort-last", f"aborted {j}".encode(), f"ab-{j}".encode())
    plan.do("flush", "tx").do("abort", "tx").do("close", "tx")
    # an idempotent producer writes on, so that both sit below the active segment
    plan.open("idem", idem)
    for i in range(24):
        plan.send("idem", "cp-abort-last", f"after {i}".encode(), f"ab-{i % 6}".encode())
        if i % 4 == 3:
            plan.do("flush", "idem")
    return plan.do("close", "idem")


@pytest.fixture(scope="module")
def run4(spark, tmp_path_factory):
    from tests.harness.broker import KAFKA_4, KafkaBroker, KafkaDistribution
    from tests.harness.plan import run_java

    work = tmp_path_factory.mktemp("compaction-broker-4")
    timings: dict[str, float] = Timings()
    started = time.monotonic()
    dist = KafkaDistribution(KAFKA_4).ensure()
    topics = list(TOPICS4)
    with KafkaBroker(dist, BROKER_PROPS) as broker:
        timings["broker start"] = time.monotonic() - started
        for name, (config, _) in TOPICS4.items():
            broker.create_topic(name, config=config)
        t0 = time.monotonic()
        run_java(_java_plan(), dist, broker.bootstrap)
        produce_last_batch(broker, "cp-lastbatch")
        wait_caught_up(broker, topics)
        timings["produce"] = time.monotonic() - t0

        t0 = time.monotonic()
        snap = broker.snapshot(work / "before", only=[f"{t}-0" for t in topics] + list(CHECKPOINTS))
        now = int(time.time() * 1000)
        passes = predict(spark, snap, topics, now, table=TOPICS4, broker_version=KafkaVersion.V4)
        as_39 = predict(spark, snap, ["cp-lastbatch"], now, table=TOPICS4, broker_version=KafkaVersion.V4,
                        version=KafkaVersion.V3_9)
        from kafkalog_spark.analysis.compaction import read_compaction_views

        batches_before = (read_compaction_views(spark, [str(snap)], ["cp-abort-last"])["batches"]
                          .where("problem is null").collect())
        timings["previews"] = time.monotonic() - t0

        t0 = time.monotonic()
        for name, (_, altered) in TOPICS4.items():
            broker.alter_topic_config(name, altered)

        def cleaned_all():
            done = read_checkpoint(broker.log_dir / "cleaner-offset-checkpoint")
            return all(done.get(t, -1) >= p.partition.endOffset for t, p in passes.items() if p.partition.wouldClean)
        wait(cleaned_all, "the 4.4.0 cleaner's passes")
        time.sleep(1.0)
        observe(spark, broker, broker.snapshot(work / "after", only=[f"{t}-0" for t in topics] + list(CHECKPOINTS)),
                passes)
        timings["clean + observe"] = time.monotonic() - t0
        gc.collect()
    timings["total"] = time.monotonic() - started
    return {"passes": passes, "as_39": as_39, "batches_before": batches_before}


@pytest.mark.parametrize("topic", list(TOPICS4))
def test_pass_matches_the_4_4_broker(run4, topic: str) -> None:
    assert run4["passes"][topic].partition.kafkaVersion == "4.x"
    check_pass(run4["passes"][topic])


def test_the_rounds_last_batch_goes_in_4x(run4) -> None:
    p4 = run4["passes"]["cp-lastbatch"]
    check_round_end(p4, kept=False)
    # the 3.9 rules on the same copy would have kept it: the versions' previews differ, the broker took 4.x's
    p39 = run4["as_39"]["cp-lastbatch"].partition
    assert p39.emptyBatchesRetained == 1 and p39.batchesRemoved == p4.partition.batchesRemoved - 1
    assert p39.bytesAfterPass == p4.partition.bytesAfterPass + 61


def test_transactions_v2_markers_end_the_producers_batches(run4) -> None:
    p = run4["passes"]["cp-abort-last"]
    part = p.partition
    before = {b.baseOffset: b for b in run4["batches_before"]}
    abort_fates = [f for f in p.fates if f.isControl and f.controlType == "ABORT"]
    assert len(abort_fates) == 1 and abort_fates[0].retained  # its aborted batch was still there in this pass
    abort = before[abort_fates[0].batchBaseOffset]
    aborted = [b for b in before.values() if b.isTransactional and not b.isControl and b.producerId == abort.producerId
               and b.producerEpoch == abort.producerEpoch - 1]  # V2: the marker carries the epoch + 1
    assert sum(b["count"] for b in aborted) == 3  # the 3 records the plan sent in the aborted transaction
    assert part.abortedRemoved == 3 and part.emptyBatchesRetained == 0
    assert not [b for b in p.after_batches if b["count"] == 0]
