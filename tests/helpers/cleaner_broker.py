"""The harness both log-cleaner-against-the-broker test modules share (tests/test_compaction_broker.py against a
Kafka 3.9.2 broker, tests/test_compaction_broker_kafka4.py against 4.4.0): the broker's properties, topics held
back from the cleaner until we let it run, producing keyed records, the preview of a copy of the log dir taken
while the broker runs, what the broker then wrote (read back from a second copy and from the cleaner's own log
lines), and the checks that the two agree."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kafkalog_spark.kafka_versions import KafkaVersion

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
CHECKPOINTS = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint",
               "cleaner-offset-checkpoint")


def read_checkpoint(path: Path) -> dict[str, int]:
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text().split("\n")[2:]:
        parts = line.split()
        if len(parts) == 3 and parts[1] == "0":
            out[parts[0]] = int(parts[2])
    return out


def wait(predicate, what: str, timeout: float = 90.0, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def wait_caught_up(broker, topics) -> None:
    """Until the high-watermark checkpoint of every topic is stable and at the log end (the last markers
    of a transaction are written asynchronously by the coordinator)."""
    def stable():
        first = read_checkpoint(broker.log_dir / "replication-offset-checkpoint")
        time.sleep(1.0)  # more than three checkpoint intervals
        second = read_checkpoint(broker.log_dir / "replication-offset-checkpoint")
        return all(t in first and first[t] == second.get(t) for t in topics)
    wait(stable, f"the high-watermark checkpoint of {topics}", every=0)


# ------------------------------------------------------------------------------------------- producing


def keyed(n: int, keys: int, tombstone_every: int, start: int = 0, prefix: str = "key") -> list:
    """(key, value) pairs: skewed keys (low ones hot), a tombstone every ``tombstone_every``-th."""
    import random

    rng = random.Random(start + keys)
    out = []
    for i in range(start, start + n):
        key = f"{prefix}-{min(int(rng.expovariate(4 / keys)), keys - 1):02d}".encode()
        value = None if i % tombstone_every == tombstone_every - 1 else f'{{"seq": {i}}}'.encode()
        out.append((key, value))
    return out


def librdkafka(broker, topic: str, pairs, *, idempotent: bool, every: int = 5, producer=None):
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


def produce_last_batch(broker, topic: str) -> None:
    """Keyed records over a few segments, then one keyless record big enough to fill a segment of its own
    (written while ``topic`` is still cleanup.policy=delete: a compacted topic refuses keyless records), then
    the topic turns compacted and a small keyed batch rolls the active segment. The keyless batch is the last
    batch below the first uncleanable offset, and the pass empties it; no producer id keeps it."""
    librdkafka(broker, topic, [(f"lb-{i % 5}".encode(), f"v{i}".encode()) for i in range(30)], idempotent=False)
    librdkafka(broker, topic, [(None, b"x" * 900)], idempotent=False)
    broker.alter_topic_config(topic, {"cleanup.policy": "compact"})
    librdkafka(broker, topic, [(f"lb-{i}".encode(), f"tail {i}".encode()) for i in range(3)], idempotent=False,
               every=3)


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


def _configs(topics, table, extra: dict[str, dict] | None = None, broker_version=KafkaVersion.V3_9):
    """The topics' effective configs as the broker (of ``broker_version``) has them once the cleaner may run
    (``table``: topic -> (configs at creation, configs set later))."""
    from kafkalog_spark.config import effective_config
    from kafkalog_spark.config.broker import broker_properties_to_config

    broker = broker_properties_to_config({k: str(v) for k, v in BROKER_PROPS.items()})
    out = {}
    for t in topics:
        created, altered = table[t]
        layer = {k: str(v) for k, v in {**created, **altered, **(extra or {}).get(t, {})}.items()}
        out[t] = effective_config(t, broker=broker, overrides={t: layer}, kafka_version=broker_version)
    return out


def predict(spark, snap: Path, topics, now_ms: int, extra=None, *, table,
            broker_version: KafkaVersion = KafkaVersion.V3_9, version: KafkaVersion | None = None) -> dict[str, Pass]:
    """The preview of ``snap``: the topics' configs from ``table`` (topic -> (configs at creation, configs set
    later)) as ``broker_version`` resolves them, the cleaner rules of ``version`` (by default the broker's)."""
    from pyspark.sql import functions as F

    from kafkalog_spark.analysis.compaction import preview_log_dirs, read_compaction_views

    preview = preview_log_dirs(spark, [str(snap)], _configs(topics, table, extra, broker_version), now_ms,
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


def observe(spark, broker, snap: Path, passes: dict[str, Pass]) -> None:
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
    checkpoints = read_checkpoint(snap / "cleaner-offset-checkpoint")
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


class Timings(dict):
    def __setitem__(self, key, value):
        print(f"[compaction broker] {key}: {value:.1f} s", flush=True)
        super().__setitem__(key, value)


# ------------------------------------------------------------------------------------------- checks


def check_pass(p: Pass) -> None:
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


def empty_batches(p: Pass) -> list:
    """The header-only batches the broker left (none before the pass in these scenarios)."""
    return [b for b in p.after_batches if b["count"] == 0]  # Row.count is tuple.count


def check_round_end(p: Pass, kept: bool) -> None:
    """The round's last batch, emptied by the pass: kept as a header-only batch ending at the first
    uncleanable offset (3.9's KAFKA-17076 rule), or dropped (4.x: the high watermark is further on). What the
    preview says and what the broker wrote must agree."""
    part = p.partition
    assert part.keylessRemoved == 1 and part.highWatermark > part.firstUncleanableOffset
    round_end = [f for f in p.fates if f.offset == part.firstUncleanableOffset - 1]
    assert len(round_end) == 1 and not round_end[0].retained and round_end[0].reason == "keyless"
    assert part.emptyBatchesRetained == (1 if kept else 0)
    assert [b.lastOffset + 1 for b in empty_batches(p)] == ([part.firstUncleanableOffset] if kept else [])
