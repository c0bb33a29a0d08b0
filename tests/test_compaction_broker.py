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
a 4.4.0 broker with the helpers of this module.
"""

from __future__ import annotations

import gc
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kafkalog_spark.kafka_versions import KafkaVersion

pytestmark = [pytest.mark.broker,
              pytest.mark.skipif(shutil.which("java") is None,
                                 reason="Java is missing: the real-broker compaction tests need java 17+")]

HOUR_MS = 3_600_000
# The dedupe buffer: Kafka requires more than 1 MiB per cleaner thread; with a 0.01 load factor the map
# holds int(1048600 / 24 * 0.01) = 436 keys, so one topic overflows it while the others fit.
BROKER_PROPS: dict[str, Any] = {
    "offsets.topic.num.partitions": 1,
    "transaction.state.log.num.partitions": 1,
    "log.cleaner.backoff.ms": 200,
    "log.cleaner.dedupe.buffer.size": 1_048_600,
    "log.cleaner.io.buffer.load.factor": 0.01,
    "replica.high.watermark.checkpoint.interval.ms": 300,
    "log.flush.offset.checkpoint.interval.ms": 1000,
}
HOLD = {"min.cleanable.dirty.ratio": 1}

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
    # written with cleanup.policy=delete, turned compacted before the last batch (see _produce_last_batch)
    "cp-lastbatch": ({"cleanup.policy": "delete", "segment.bytes": 1024, **HOLD},
                     {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.01}),
}
TWO_PASS = ("cp-tombstones", "cp-txn")
CHECKPOINTS = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint",
               "cleaner-offset-checkpoint")


def _read_checkpoint(path: Path) -> dict[str, int]:
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text().split("\n")[2:]:
        parts = line.split()
        if len(parts) == 3 and parts[1] == "0":
            out[parts[0]] = int(parts[2])
    return out


def _wait(predicate, what: str, timeout: float = 90.0, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def _wait_caught_up(broker, topics) -> None:
    """Until the high-watermark checkpoint of every topic is stable and at the log end (the last markers
    of a transaction are written asynchronously by the coordinator)."""
    def stable():
        first = _read_checkpoint(broker.log_dir / "replication-offset-checkpoint")
        time.sleep(1.0)  # more than three checkpoint intervals
        second = _read_checkpoint(broker.log_dir / "replication-offset-checkpoint")
        return all(t in first and first[t] == second.get(t) for t in topics)
    _wait(stable, f"the high-watermark checkpoint of {topics}", every=0)


def _copy(broker, dest: Path, topics) -> Path:
    return broker.snapshot(dest, only=[f"{t}-0" for t in topics] + list(CHECKPOINTS))


# ------------------------------------------------------------------------------------------- producing


def _keyed(n: int, keys: int, tombstone_every: int, start: int = 0, prefix: str = "key") -> list:
    """(key, value) pairs: skewed keys (low ones hot), a tombstone every ``tombstone_every``-th."""
    import random

    rng = random.Random(start + keys)
    out = []
    for i in range(start, start + n):
        key = f"{prefix}-{min(int(rng.expovariate(4 / keys)), keys - 1):02d}".encode()
        value = None if i % tombstone_every == tombstone_every - 1 else f'{{"seq": {i}}}'.encode()
        out.append((key, value))
    return out


def _java_round1(now_ms: int):
    from tests.harness.plan import Plan

    idem = {"acks": "all", "enable.idempotence": "true", "linger.ms": 5, "batch.size": 512}
    plan = Plan().open("a", idem)
    for i, (k, v) in enumerate(_keyed(240, 30, 19)):
        plan.send("a", "cp-plain", v, k)
        if i % 6 == 5:
            plan.do("flush", "a")
    plan.do("close", "a")
    # Old records (3 h ago) over 15 keys, then recent ones over the same keys.
    plan.open("e", idem)
    for i, (k, v) in enumerate(_keyed(120, 15, 1000, prefix="lag")):
        plan.send("e", "cp-lag", v, k, timestamp=now_ms - 3 * HOUR_MS + i)
        if i % 6 == 5:
            plan.do("flush", "e")
    for i, (k, v) in enumerate(_keyed(60, 15, 1000, start=500, prefix="lag")):
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


def _librdkafka(broker, topic: str, pairs, *, idempotent: bool, every: int = 5, producer=None):
    from confluent_kafka import Producer

    errors = []
    p = producer or Producer(broker.client_config(**{"enable.idempotence": idempotent, "linger.ms": 50,
                                                     "log_level": 3}))
    for i, (k, v) in enumerate(pairs):
        p.produce(topic, value=v, key=k, on_delivery=lambda err, _m: err and errors.append(err))
        if i % every == every - 1:
            p.flush(30)
    p.flush(30)
    assert not errors, errors
    return p


def _produce_last_batch(broker, topic: str) -> None:
    """Keyed records over a few segments, then one keyless record big enough to fill a segment of its own
    (written while ``topic`` is still cleanup.policy=delete: a compacted topic refuses keyless records), then
    the topic turns compacted and a small keyed batch rolls the active segment. The keyless batch is the last
    batch below the first uncleanable offset, and the pass empties it; no producer id keeps it."""
    _librdkafka(broker, topic, [(f"lb-{i % 5}".encode(), f"v{i}".encode()) for i in range(30)], idempotent=False)
    _librdkafka(broker, topic, [(None, b"x" * 900)], idempotent=False)
    broker.alter_topic_config(topic, {"cleanup.policy": "compact"})
    _librdkafka(broker, topic, [(f"lb-{i}".encode(), f"tail {i}".encode()) for i in range(3)], idempotent=False,
                every=3)


def empty_batches(p: Pass) -> list:
    """The header-only batches the broker left (none before the pass in these scenarios)."""
    return [b for b in p.after_batches if b["count"] == 0]  # Row.count is tuple.count


# ------------------------------------------------------------------------------------------- the run


@dataclass
class Pass:
    """One predicted cleaning pass and what the broker then wrote."""

    topic: str
    now_ms: int
    partition: Any = None  # the preview's partition row
    segments: list = field(default_factory=list)
    fates: list = field(default_factory=list)
    before: dict = field(default_factory=dict)  # offset -> record row before
    after_records: list = field(default_factory=list)
    after_batches: list = field(default_factory=list)
    after_segments: list = field(default_factory=list)
    checkpoint: int | None = None
    cleaned_line: tuple[int, int] | None = None  # (firstDirty, endOffset) the broker logged
    map_range: tuple[int, int] | None = None  # the offset map's [start, end) the broker logged
    utilization: float | None = None
    messages_written: int | None = None  # "End size: ... (N messages)" the broker logged
    pass_index: int = 0  # which of the topic's cleaning passes this is
    observed_ms: int = 0  # when the cleaned partition was copied: the clean happened before


def _configs(topics, extra: dict[str, dict] | None = None, table=None, broker_version=KafkaVersion.V3_9):
    """The topics' effective configs as the broker (of ``broker_version``) has them once the cleaner may run
    (``table``: topic -> (configs at creation, configs set later), TOPICS by default)."""
    from kafkalog_spark.config import effective_config
    from kafkalog_spark.config.broker import broker_properties_to_config

    broker = broker_properties_to_config({k: str(v) for k, v in BROKER_PROPS.items()})
    out = {}
    for t in topics:
        created, altered = (table or TOPICS)[t]
        layer = {k: str(v) for k, v in {**created, **altered, **(extra or {}).get(t, {})}.items()}
        out[t] = effective_config(t, broker=broker, overrides={t: layer}, kafka_version=broker_version)
    return out


def _predict(spark, snap: Path, topics, now_ms: int, extra=None, *, table=None,
             broker_version: KafkaVersion = KafkaVersion.V3_9, version: KafkaVersion | None = None) -> dict[str, Pass]:
    """The preview of ``snap``: configs as ``broker_version`` resolves them, the cleaner rules of ``version``
    (by default the broker's)."""
    from pyspark.sql import functions as F

    from kafkalog_spark.analysis.compaction import preview_log_dirs, read_compaction_views

    preview = preview_log_dirs(spark, [str(snap)], _configs(topics, extra, table, broker_version), now_ms,
                               topics=list(topics), kafka_version=version or broker_version)
    out = {t: Pass(t, now_ms) for t in topics}
    for r in preview.partitions.collect():
        out[r.topic].partition = r
    for r in preview.segments.orderBy("baseOffset").collect():
        out[r.topic].segments.append(r)
    for r in preview.records.collect():
        out[r.topic].fates.append(r)
    before = read_compaction_views(spark, [str(snap)], topics)["records"].where("problem is null")
    for r in before.select("topic", "offset", F.md5("key").alias("keyHash"), "isControl").collect():
        out[r.topic].before[r.offset] = r
    preview.unpersist()
    return out


def _observe(spark, broker, snap: Path, passes: dict[str, Pass]) -> None:
    from pyspark.sql import functions as F

    from kafkalog_spark.analysis.compaction import read_compaction_views

    topics = list(passes)
    for p in passes.values():
        p.observed_ms = int(time.time() * 1000)
    views = read_compaction_views(spark, [str(snap)], topics)
    for r in views["records"].where("problem is null").select(
            "topic", "offset", F.md5("key").alias("keyHash"), "isControl", "controlType",
            F.col("value").isNull().alias("isNull"), "segmentBaseOffset", "position").collect():
        passes[r.topic].after_records.append(r)
    for r in views["batches"].where("problem is null").collect():
        passes[r.topic].after_batches.append(r)
    for r in views["segments"].where("problem is null and status = 'live'").orderBy("baseOffset").collect():
        passes[r.topic].after_segments.append(r)
    checkpoints = _read_checkpoint(snap / "cleaner-offset-checkpoint")
    server_log = broker.server_log.read_text(errors="replace")
    for t, p in passes.items():
        p.checkpoint = checkpoints.get(t)
        # The cleaner logs one "cleaned log" block per pass; this pass is the last one so far.
        cleaned = re.findall(rf"cleaned log {re.escape(t)}-0 \(dirty section = \[(\d+), (\d+)\]\)", server_log)
        ranges = re.findall(rf"Building offset map for log {re.escape(t)}-0 for \d+ segments in offset range "
                            rf"\[(\d+), (\d+)\)", server_log)
        util = re.findall(rf"cleaned log {re.escape(t)}-0 .*?Buffer utilization: ([\d.]+)%", server_log, re.S)
        written = re.findall(rf"cleaned log {re.escape(t)}-0 .*?End size: .*? \(([\d,.\s]+) messages\)",
                             server_log, re.S)
        if p.partition is not None and p.partition.wouldClean and cleaned:
            index = p.pass_index
            p.cleaned_line = tuple(map(int, cleaned[index]))
            p.map_range = tuple(map(int, ranges[index]))
            p.utilization = float(util[index])
            p.messages_written = int(re.sub(r"\D", "", written[index]))


class _Timings(dict):
    def __setitem__(self, key, value):
        print(f"[compaction broker] {key}: {value:.1f} s", flush=True)
        super().__setitem__(key, value)


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    from tests.harness.broker import KafkaBroker, KafkaDistribution
    from tests.harness.plan import run_java

    work = tmp_path_factory.mktemp("compaction-broker")
    timings: dict[str, float] = _Timings()
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
        _librdkafka(broker, "cp-compact-delete", _keyed(150, 15, 11, prefix="cd"), idempotent=False)
        c_producer = _librdkafka(broker, "cp-tombstones", _keyed(120, 12, 7, prefix="tb"), idempotent=True)
        from confluent_kafka import Producer

        # Open until we abort it in round 2 (the coordinator would abort it after transaction.timeout.ms).
        open_txn = Producer(broker.client_config(**{"transactional.id": "cp-txn-open", "linger.ms": 5,
                                                    "transaction.timeout.ms": 600_000, "log_level": 3}))
        open_txn.init_transactions(30)
        open_txn.begin_transaction()
        _librdkafka(broker, "cp-txn", [(f"t-{j}".encode(), f"open #{j}".encode()) for j in range(3)],
                    idempotent=True, producer=open_txn)
        tail = _librdkafka(broker, "cp-txn", [(f"tail-{i % 6}".encode(), f"tail {i}".encode()) for i in range(40)],
                           idempotent=True)
        _librdkafka(broker, "cp-mapfull", [(f"k-{i:04d}".encode(), f"v{i}".encode()) for i in range(700)]
                    + [(f"k-{i * 7 % 700:04d}".encode(), f"w{i}".encode()) for i in range(300)],
                    idempotent=False, every=50)
        _produce_last_batch(broker, "cp-lastbatch")
        _wait_caught_up(broker, TOPICS)
        timings["produce round 1"] = time.monotonic() - t0

        t0 = time.monotonic()
        snap = _copy(broker, work / "before-1", TOPICS)
        now = int(time.time() * 1000)
        first = _predict(spark, snap, list(TOPICS), now)
        # the same input under the 4.x rules, to show where they part (the broker follows the 3.9 ones)
        first_4x = _predict(spark, snap, ["cp-lastbatch"], now, version=KafkaVersion.V4)
        timings["preview 1"] = time.monotonic() - t0
        for p in first.values():
            p.pass_index = 0

        t0 = time.monotonic()
        for name, (_, altered) in TOPICS.items():
            broker.alter_topic_config(name, altered)

        def cleaned_all(passes):
            done = _read_checkpoint(broker.log_dir / "cleaner-offset-checkpoint")
            return all(done.get(t, -1) >= p.partition.endOffset for t, p in passes.items()
                       if p.partition.wouldClean)
        _wait(lambda: cleaned_all(first), "the cleaner's first passes")
        # The two-pass topics go back on hold before anything else is produced to them.
        for t in TWO_PASS:
            broker.alter_topic_config(t, HOLD)
        time.sleep(1.0)
        _observe(spark, broker, _copy(broker, work / "after-1", TOPICS), first)
        timings["clean + observe 1"] = time.monotonic() - t0

        # Round 2: past the first horizons, new data and tombstones; the open transaction is aborted ---------
        t0 = time.monotonic()
        horizons = [b.deleteHorizonMs for b in first["cp-tombstones"].after_batches if b.deleteHorizonMs]
        if horizons:
            time.sleep(max(0.0, (max(horizons) - time.time() * 1000) / 1000) + 0.5)
        # new tombstones first, so that they land below the active segment
        _librdkafka(broker, "cp-tombstones", [(f"tb-{k:02d}".encode(), None) for k in (6, 7, 8)]
                    + _keyed(60, 6, 1000, start=1000, prefix="tb"), idempotent=True, producer=c_producer)
        open_txn.abort_transaction(30)
        _librdkafka(broker, "cp-txn", [(f"tail-{i % 6}".encode(), f"tail {i}".encode()) for i in range(40, 60)],
                    idempotent=True, producer=tail)
        _wait_caught_up(broker, TWO_PASS)
        snap = _copy(broker, work / "before-2", TWO_PASS)
        now = int(time.time() * 1000)
        second = _predict(spark, snap, list(TWO_PASS), now)
        for p in second.values():
            p.pass_index = 1
        for t in TWO_PASS:
            broker.alter_topic_config(t, TOPICS[t][1])
        _wait(lambda: cleaned_all(second), "the cleaner's second passes")
        time.sleep(0.5)
        _observe(spark, broker, _copy(broker, work / "after-2", TWO_PASS), second)
        timings["round 2"] = time.monotonic() - t0
        del c_producer, tail, open_txn  # librdkafka clients go before the broker does
        gc.collect()
    timings["total"] = time.monotonic() - started
    print("compaction broker timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))
    return {"first": first, "second": second, "first_4x": first_4x, "timings": timings}


# ------------------------------------------------------------------------------------------- checks


def _check_pass(p: Pass) -> None:
    part = p.partition
    assert part is not None and part.wouldClean, part
    # The broker's own account of the pass: [firstDirtyOffset, endOffset] and the offset map's range.
    assert p.cleaned_line == (part.firstDirtyOffset, part.endOffset)
    assert p.map_range == (part.firstDirtyOffset, part.firstUncleanableOffset)
    assert p.checkpoint == part.endOffset
    assert p.utilization == pytest.approx(100 * part.offsetMapEntries / part.offsetMapSlots, abs=0.06)
    assert p.messages_written == part.recordsKept

    # Survivors: exactly the records predicted retained, per key hash, markers included.
    predicted = {f.offset for f in p.fates if f.retained}
    removed = {f.offset for f in p.fates if not f.retained}
    actual = {r.offset for r in p.after_records}
    assert actual == predicted, (sorted(actual - predicted), sorted(predicted - actual))
    assert not actual & removed
    assert set(p.before) == predicted | removed  # every record had a fate

    def by_key(rows):
        out: dict[str, list[int]] = {}
        for r in rows:
            out.setdefault("marker" if r.isControl else (r.keyHash or "keyless"), []).append(r.offset)
        return {k: sorted(v) for k, v in out.items()}
    assert by_key(p.after_records) == by_key([f for f in p.fates if f.retained])

    # The segments the broker wrote: one per predicted group, the untouched ones as they were.
    expected_bases = sorted([g.baseOffset for g in part.cleanedGroups]
                            + [s.baseOffset for s in p.segments if not s.inPass])
    assert [s.baseOffset for s in p.after_segments] == expected_bases
    sizes = {s.baseOffset: s.logSize for s in p.after_segments}
    group_of = {s.baseOffset: s.cleanedGroupBaseOffset for s in p.segments}
    for g in part.cleanedGroups:
        # Exact, except in batches that get a new horizon: their records' timestamp deltas are taken from it,
        # and the broker's clock decides how many bytes each delta's varint needs (one more or less).
        moved = sum(1 for f in p.fates if f.retained and group_of[f.segmentBaseOffset] == g.baseOffset
                    and f.deleteHorizonMs is not None and f.deleteHorizonMs == part.newDeleteHorizonMs)
        assert abs(sizes[g.baseOffset] - g.logBytesAfter) <= 2 * moved, (g, sizes[g.baseOffset])

    # Delete horizons: kept where they were, new ones at the clean time + delete.retention.ms (the preview
    # assumed the clean at its ``now``; the broker cleaned between then and our copy).
    horizon_of = {}
    for b in p.after_batches:
        for o in range(b.baseOffset, b.lastOffset + 1):
            horizon_of[o] = b.deleteHorizonMs
    for f in p.fates:
        if not f.retained:
            continue
        got = horizon_of[f.offset]
        if f.deleteHorizonMs is None or f.deleteHorizonMs != part.newDeleteHorizonMs:
            assert got == f.deleteHorizonMs, f
        else:
            assert got is not None and 0 <= got - f.deleteHorizonMs <= p.observed_ms - p.now_ms, (f, got)


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
    _check_pass(p)


@pytest.mark.parametrize("topic", TWO_PASS)
def test_second_pass_matches_the_broker(run, topic: str) -> None:
    _check_pass(run["second"][topic])


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
    lag = first["cp-lag"]
    held = [f for f in lag.fates if f.offset >= parts["cp-lag"].firstUncleanableOffset]
    assert held and all(f.retained and f.reason == "notInPass" for f in held)
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


def check_round_end(p: Pass, kept: bool) -> None:
    """The round's last batch, emptied by the pass: kept as a header-only batch ending at the first
    uncleanable offset (3.9's KAFKA-17076 rule), or dropped (4.x: the high watermark is further on). What the
    preview says and what the broker wrote must agree."""
    part = p.partition
    assert part.keylessRemoved == 1 and part.highWatermark > part.firstUncleanableOffset
    round_end = [f for f in p.fates if f.offset == part.firstUncleanableOffset - 1]
    assert round_end and not round_end[0].retained and round_end[0].reason == "keyless"
    assert part.emptyBatchesRetained == (1 if kept else 0)
    assert [b.lastOffset + 1 for b in empty_batches(p)] == ([part.firstUncleanableOffset] if kept else [])


def test_the_rounds_last_batch_is_kept_empty_by_3_9(run) -> None:
    check_round_end(run["first"]["cp-lastbatch"], kept=True)
    # the 4.x rules on the same copy: the batch goes, one batch and a 61-byte header fewer
    p39, p4 = run["first"]["cp-lastbatch"].partition, run["first_4x"]["cp-lastbatch"].partition
    assert p4.kafkaVersion == "4.x" and p39.kafkaVersion == "3.9"
    assert p4.emptyBatchesRetained == 0 and p4.batchesRemoved == p39.batchesRemoved + 1
    assert p4.bytesAfterPass == p39.bytesAfterPass - 61
