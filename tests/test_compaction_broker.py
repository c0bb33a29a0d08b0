"""The compaction preview against a real Kafka 3.9.2 broker: what we predict offline is what its cleaner does.

One broker serves every scenario. Each topic is created with ``min.cleanable.dirty.ratio=1`` (a log's dirty
ratio is at most 1 and must be strictly above the threshold, so the cleaner leaves it alone), records are
produced and the segments roll; once the high-watermark checkpoint has caught up, the log dir is copied
while the broker runs. The preview runs on the copy with the configs the broker will use after we lower the
threshold (or set ``max.compaction.lag.ms``) through the AdminClient. Then the cleaner runs; when its
``cleaner-offset-checkpoint`` entry reaches the predicted end offset, the partition is copied again and read
with our records view. Per partition, the offsets that survive (per key hash), the first dirty and first
uncleanable offsets (from the cleaner's own log lines), the segments it wrote and their sizes, and the delete
horizons it set must be the preview's.

Scenarios: plain compact (Java idempotent producer, tombstones kept until their horizon); compact,delete
(librdkafka, no producer id); tombstones over two passes (the first sets deleteHorizonMs, the second, past
it, drops them); transactions (Java transactional producer commits and aborts, a librdkafka transaction
left open holds the last stable offset back, then is aborted before a second pass that gives the emptied
markers their horizon); min.compaction.lag.ms holding recent segments back while max.compaction.lag.ms forces
the clean; a dedupe buffer too small for the dirty keys, which cuts the pass short; the round's last batch
emptied (keyless records written before the topic turned compacted), which 3.9.2 keeps as a header-only
batch (KAFKA-17076) where 4.x would drop it.

The previews here apply the 3.9 rules; tests/test_compaction_broker_kafka4.py checks the 4.x rules against
a 4.4.0 broker with the same harness (tests/helpers/cleaner_broker.py).
"""

from __future__ import annotations

import gc
import shutil
import time
from pathlib import Path
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
    librdkafka,
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

HOUR_MS = 3_600_000
# topic -> (configs at creation, configs set to let the cleaner run)
TOPICS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "cp-plain": ({"cleanup.policy": "compact", "segment.bytes": 1024, "delete.retention.ms": 600_000, **HOLD},
                 {"min.cleanable.dirty.ratio": 0.2}),
    "cp-compact-delete": ({"cleanup.policy": "compact,delete", "retention.ms": 86_400_000, "segment.bytes": 1024,
                           "delete.retention.ms": 600_000, **HOLD}, {"min.cleanable.dirty.ratio": 0.2}),
    "cp-tombstones": ({"cleanup.policy": "compact", "segment.bytes": 800, "delete.retention.ms": 3000, **HOLD},
                      {"min.cleanable.dirty.ratio": 0.01}),
    "cp-txn": ({"cleanup.policy": "compact", "segment.bytes": 700, "delete.retention.ms": 600_000, **HOLD},
               {"min.cleanable.dirty.ratio": 0.01}),
    "cp-lag": ({"cleanup.policy": "compact", "segment.bytes": 1024, "min.compaction.lag.ms": HOUR_MS, **HOLD},
               {"max.compaction.lag.ms": 90 * 60_000}),  # the ratio stays 1: max.compaction.lag forces it
    "cp-mapfull": ({"cleanup.policy": "compact", "segment.bytes": 16384, **HOLD}, {"min.cleanable.dirty.ratio": 0.5}),
    # written with cleanup.policy=delete, turned compacted before the last batch (see produce_last_batch)
    "cp-lastbatch": ({"cleanup.policy": "delete", "segment.bytes": 1024, **HOLD},
                     {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.01}),
}
TWO_PASS = ("cp-tombstones", "cp-txn")


def _copy(broker, dest: Path, topics) -> Path:
    return broker.snapshot(dest, only=[f"{t}-0" for t in topics] + list(CHECKPOINTS))


# ------------------------------------------------------------------------------------------- producing


def _java_round1(now_ms: int):
    from tests.harness.plan import Plan

    idem = {"acks": "all", "enable.idempotence": "true", "linger.ms": 5, "batch.size": 512}
    plan = Plan().open("a", idem)
    for i, (k, v) in enumerate(keyed(240, 30, 19)):
        plan.send("a", "cp-plain", v, k)
        if i % 6 == 5:
            plan.do("flush", "a")
    plan.do("close", "a")
    # Old records (3 h ago) over 15 keys, then recent ones over the same keys.
    plan.open("e", idem)
    for i, (k, v) in enumerate(keyed(120, 15, 1000, prefix="lag")):
        plan.send("e", "cp-lag", v, k, timestamp=now_ms - 3 * HOUR_MS + i)
        if i % 6 == 5:
            plan.do("flush", "e")
    for i, (k, v) in enumerate(keyed(60, 15, 1000, start=500, prefix="lag")):
        plan.send("e", "cp-lag", v, k, timestamp=now_ms - 60_000 + i)
        if i % 6 == 5:
            plan.do("flush", "e")
    plan.do("close", "e")
    # Transactions: 6 of 4 records (keys overlap from one to the next), #1 and #3 aborted; an idempotent
    # producer writes 2 records during each.
    plan.open("tx", {**idem, "transactional.id": "cp-txn-java"}).open("idem", idem).do("init", "tx")
    for n in range(6):
        plan.do("begin", "tx")
        for j in range(4):
            plan.send("tx", "cp-txn", f"txn {n} #{j}".encode(), f"t-{(n + j) % 5}".encode())
        plan.do("flush", "tx")
        for j in range(2):
            plan.send("idem", "cp-txn", f"idem {n} #{j}".encode(), f"idem-{(n + j) % 3}".encode())
        plan.do("flush", "idem")
        plan.do("abort" if n in (1, 3) else "commit", "tx")
    return plan.do("close", "idem").do("close", "tx")


# ------------------------------------------------------------------------------------------- the run


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    from tests.harness.broker import KafkaBroker, KafkaDistribution
    from tests.harness.plan import run_java

    work = tmp_path_factory.mktemp("compaction-broker")
    timings: dict[str, float] = Timings()
    started = time.monotonic()
    dist = KafkaDistribution().ensure()
    with KafkaBroker(dist, BROKER_PROPS) as broker:
        timings["broker start"] = time.monotonic() - started
        for name, (config, _) in TOPICS.items():
            broker.create_topic(name, config=config)

        # Round 1 ------------------------------------------------------------------------------
        t0 = time.monotonic()
        now = int(time.time() * 1000)
        run_java(_java_round1(now), dist, broker.bootstrap)
        librdkafka(broker, "cp-compact-delete", keyed(150, 15, 11, prefix="cd"), idempotent=False)
        c_producer = librdkafka(broker, "cp-tombstones", keyed(120, 12, 7, prefix="tb"), idempotent=True)
        from confluent_kafka import Producer

        # Open until we abort it in round 2 (the coordinator would abort it after transaction.timeout.ms).
        open_txn = Producer(broker.client_config(**{"transactional.id": "cp-txn-open", "linger.ms": 5,
                                                    "transaction.timeout.ms": 600_000, "log_level": 3}))
        open_txn.init_transactions(30)
        open_txn.begin_transaction()
        librdkafka(broker, "cp-txn", [(f"t-{j}".encode(), f"open #{j}".encode()) for j in range(3)],
                   idempotent=True, producer=open_txn)
        tail = librdkafka(broker, "cp-txn", [(f"tail-{i % 6}".encode(), f"tail {i}".encode()) for i in range(40)],
                          idempotent=True)
        librdkafka(broker, "cp-mapfull", [(f"k-{i:04d}".encode(), f"v{i}".encode()) for i in range(700)]
                   + [(f"k-{i * 7 % 700:04d}".encode(), f"w{i}".encode()) for i in range(300)],
                   idempotent=False, every=50)
        produce_last_batch(broker, "cp-lastbatch")
        wait_caught_up(broker, TOPICS)
        timings["produce round 1"] = time.monotonic() - t0

        t0 = time.monotonic()
        snap = _copy(broker, work / "before-1", TOPICS)
        now = int(time.time() * 1000)
        first = predict(spark, snap, list(TOPICS), now, table=TOPICS)
        # the same input under the 4.x rules, to show where they part (the broker follows the 3.9 ones)
        first_4x = predict(spark, snap, ["cp-lastbatch"], now, table=TOPICS, version=KafkaVersion.V4)
        timings["preview 1"] = time.monotonic() - t0
        for p in first.values():
            p.pass_index = 0

        t0 = time.monotonic()
        for name, (_, altered) in TOPICS.items():
            broker.alter_topic_config(name, altered)

        def cleaned_all(passes):
            done = read_checkpoint(broker.log_dir / "cleaner-offset-checkpoint")
            return all(done.get(t, -1) >= p.partition.endOffset for t, p in passes.items()
                       if p.partition.wouldClean)
        wait(lambda: cleaned_all(first), "the cleaner's first passes")
        # The two-pass topics go back on hold before anything else is produced to them.
        for t in TWO_PASS:
            broker.alter_topic_config(t, HOLD)
        time.sleep(1.0)
        observe(spark, broker, _copy(broker, work / "after-1", TOPICS), first)
        timings["clean + observe 1"] = time.monotonic() - t0

        # Round 2: past the first horizons, new data and tombstones; the open transaction is aborted ---------
        t0 = time.monotonic()
        horizons = [b.deleteHorizonMs for b in first["cp-tombstones"].after_batches if b.deleteHorizonMs]
        if horizons:
            time.sleep(max(0.0, (max(horizons) - time.time() * 1000) / 1000) + 0.5)
        # new tombstones first, so that they land below the active segment
        librdkafka(broker, "cp-tombstones", [(f"tb-{k:02d}".encode(), None) for k in (6, 7, 8)]
                   + keyed(60, 6, 1000, start=1000, prefix="tb"), idempotent=True, producer=c_producer)
        open_txn.abort_transaction(30)
        librdkafka(broker, "cp-txn", [(f"tail-{i % 6}".encode(), f"tail {i}".encode()) for i in range(40, 60)],
                   idempotent=True, producer=tail)
        wait_caught_up(broker, TWO_PASS)
        snap = _copy(broker, work / "before-2", TWO_PASS)
        now = int(time.time() * 1000)
        second = predict(spark, snap, list(TWO_PASS), now, table=TOPICS)
        for p in second.values():
            p.pass_index = 1
        for t in TWO_PASS:
            broker.alter_topic_config(t, TOPICS[t][1])
        wait(lambda: cleaned_all(second), "the cleaner's second passes")
        time.sleep(0.5)
        observe(spark, broker, _copy(broker, work / "after-2", TWO_PASS), second)
        timings["round 2"] = time.monotonic() - t0
        del c_producer, tail, open_txn  # librdkafka clients go before the broker does
        gc.collect()
    timings["total"] = time.monotonic() - started
    print("compaction broker timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))
    return {"first": first, "second": second, "first_4x": first_4x, "timings": timings}


# ------------------------------------------------------------------------------------------- checks


@pytest.mark.parametrize("topic", list(TOPICS))
def test_first_pass_matches_the_broker(run, topic: str) -> None:
    p = run["first"][topic]
    if topic == "cp-mapfull":
        part = p.partition
        # The map fills after 436 keys: the pass ends right after the last key put, as the broker logged.
        assert part.offsetMapFull and part.offsetMapCapacity == 436 and part.offsetMapEntries == 436
        assert part.endOffset == part.offsetMapFullAtOffset == 436
        assert p.cleaned_line == (part.firstDirtyOffset, part.endOffset)
        assert p.map_range == (part.firstDirtyOffset, part.firstUncleanableOffset)
        assert p.utilization == pytest.approx(100 * 436 / part.offsetMapSlots, abs=0.06)
        return
    check_pass(p)


@pytest.mark.parametrize("topic", TWO_PASS)
def test_second_pass_matches_the_broker(run, topic: str) -> None:
    check_pass(run["second"][topic])


def test_scenarios_cover_the_cleaners_decisions(run) -> None:
    first, second = run["first"], run["second"]
    parts = {t: p.partition for t, p in first.items()}
    # why each log is cleaned, and where the uncleanable section starts
    assert parts["cp-plain"].cleanReason == "dirtyRatio" and parts["cp-plain"].uncleanableReason == "activeSegment"
    assert parts["cp-lag"].cleanReason == "maxCompactionLag" and parts["cp-lag"].dirtyRatio == 1.0
    assert parts["cp-lag"].uncleanableReason == "minCompactionLag"
    assert parts["cp-txn"].uncleanableReason == "lastStableOffset" and parts["cp-txn"].openTransactions == 1
    assert parts["cp-compact-delete"].cleanupPolicy == "compact,delete"
    # a min-lag segment and everything after it stay as they were
    # (120 records of 3 h ago at offsets 0..119, then 60 of a minute ago, below the 1 h lag, at 120..179)
    lag = first["cp-lag"]
    uncleanable = parts["cp-lag"].firstUncleanableOffset
    held = [f for f in lag.fates if f.offset >= uncleanable]
    assert 0 < uncleanable <= 120 and sorted(f.offset for f in held) == list(range(uncleanable, 120 + 60))
    assert all(f.retained and f.reason == "notInPass" for f in held)
    # first pass: tombstones kept and given a horizon; aborted records dropped, their markers kept
    tomb1 = first["cp-tombstones"].partition
    assert tomb1.tombstonesKept > 0 and tomb1.tombstonesRemoved > 0 and tomb1.deleteHorizonsSet > 0
    txn1 = parts["cp-txn"]
    assert txn1.abortedRemoved == 8 and txn1.markersKept > 0 and txn1.markersRemoved == 0
    # second pass: the expired tombstones go, new ones get a horizon; emptied markers get theirs
    tomb2 = second["cp-tombstones"]
    assert any(f.reason == "tombstoneExpired" for f in tomb2.fates)
    assert any(f.reason == "tombstoneRetained" and f.deleteHorizonMs == tomb2.partition.newDeleteHorizonMs
               for f in tomb2.fates)
    txn2 = second["cp-txn"]
    assert txn2.partition.abortedRemoved == 3 and txn2.partition.openTransactions == 0
    assert any(f.isControl and f.retained and f.deleteHorizonMs == txn2.partition.newDeleteHorizonMs
               for f in txn2.fates)
    # producer state: a last batch kept empty for an active producer somewhere
    assert sum(p.partition.emptyBatchesRetained for p in [*first.values(), *second.values()]) > 0


def test_the_rounds_last_batch_is_kept_empty_by_3_9(run) -> None:
    check_round_end(run["first"]["cp-lastbatch"], kept=True)
    # the 4.x rules on the same copy: the batch goes, one batch and a 61-byte header fewer
    p39, p4 = run["first"]["cp-lastbatch"].partition, run["first_4x"]["cp-lastbatch"].partition
    assert p4.kafkaVersion == "4.x" and p39.kafkaVersion == "3.9"
    assert p4.emptyBatchesRetained == 0 and p4.batchesRemoved == p39.batchesRemoved + 1
    assert p4.bytesAfterPass == p39.bytesAfterPass - 61
