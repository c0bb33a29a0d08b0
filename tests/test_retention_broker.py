"""The retention plan against a real Kafka 3.9.2 broker: what we predict offline is what the broker deletes.

One broker serves every scenario. Phase 1 runs it with ``log.initial.task.delay.ms`` far in the future, so
its retention thread never starts: topics are created with the retention configs the broker will apply,
records are produced with timestamps days in the past (must expire) or days in the future (must not), and
DeleteRecords moves a log start offset; a clean stop writes every checkpoint and the log dir is copied. The
plan runs on the copy with those topic configs. Phase 2 restarts the broker on the same log dir with a 1 s
retention check (and a 1 s cleaner backoff for the compact,delete topic, whose retention config is set only
now: the cleaner thread, which applies retention to compacted logs, is not held back by the initial delay).
When the partitions stop changing, the segment files the broker kept, the segment it rolled, the log start
offset it reports (ListOffsets earliest) and the rule it logged for each deleted segment must be exactly
the plan's.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.broker,
              pytest.mark.skipif(shutil.which("java") is None, reason="the Kafka broker harness needs Java 17+")]

DAY_MS = 86_400_000
SEGMENT_BYTES = 1000
VALUE = b"v" * 100

# topic -> (topic configs at creation, configs set after the restart, the records' timestamps as "old"/"new")
SCENARIOS: dict[str, tuple[dict, dict, list[str]]] = {
    # time rule; the segment holding the first new record stops the walk, older-looking ones after it stay
    "ret-time": ({"retention.ms": DAY_MS}, {}, ["old"] * 20 + ["new"] * 3 + ["old"] * 10 + ["new"] * 7),
    # every segment expired, the active one too: the broker rolls an empty segment at the log end offset
    "ret-time-all": ({"retention.ms": DAY_MS}, {}, ["old"] * 15),
    # size rule: never below retention.bytes
    "ret-size": ({"retention.ms": -1, "retention.bytes": 2500}, {}, ["new"] * 30),
    # size first, then time on what is left
    "ret-size-time": ({"retention.ms": DAY_MS, "retention.bytes": 4000}, {}, ["old"] * 25 + ["new"] * 15),
    # log start offset rule after DeleteRecords to an offset inside a segment
    "ret-lso": ({"retention.ms": -1}, {}, ["new"] * 30),
    # compact,delete: the cleaner thread applies the delete rules; the lag keeps compaction away
    "ret-compact-delete": ({"cleanup.policy": "compact,delete", "retention.ms": -1,
                            "min.compaction.lag.ms": 10 * 365 * DAY_MS},
                           {"retention.ms": DAY_MS}, ["old"] * 20 + ["new"] * 10),
}
DELETE_RECORDS_BEFORE = {"ret-lso": 13}

BROKER_PROPS = {
    "log.initial.task.delay.ms": 3_600_000,  # phase 1: no retention thread
    "log.retention.check.interval.ms": 1000,
    "log.cleaner.backoff.ms": 1000,
    "log.segment.delete.delay.ms": 1000,
    "log.flush.start.offset.checkpoint.interval.ms": 1000,
    "log.flush.offset.checkpoint.interval.ms": 1000,
}

_DELETING = re.compile(r"\[UnifiedLog partition=(?P<tp>\S+), dir=[^\]]*\] Deleting segments? (?P<rest>.*)$")


def _produce(broker, topic: str, stamps: list[str], now_ms: int) -> None:
    from confluent_kafka import Producer

    errors: list = []
    producer = Producer(broker.client_config(**{"linger.ms": 0, "acks": "all"}))
    for i, stamp in enumerate(stamps):
        ts = now_ms - 10 * DAY_MS + i if stamp == "old" else now_ms + 10 * DAY_MS + i
        producer.produce(topic, value=VALUE, key=f"k{i:04d}".encode(), timestamp=ts,
                         on_delivery=lambda err, _msg: errors.append(err) if err else None)
        producer.flush(30)  # one record per batch, in order
    assert not errors, errors


def _live_segments(partition_dir: Path) -> set[int]:
    return {int(p.name[:20]) for p in partition_dir.glob("*.log")}


def _logged_rules(server_log: Path) -> dict[tuple[str, int], str]:
    """(topic-partition, base offset) -> the rule the broker logged when it deleted that segment."""
    out = {}
    for line in server_log.read_text(errors="replace").splitlines():
        m = _DELETING.search(line)
        if m is None:
            continue
        rest = m["rest"]
        rule = ("log_start_offset" if "log start offset" in rest else "size" if "retention size" in rest
                else "time" if "retention time" in rest else "?")
        for base in re.findall(r"LogSegment\(baseOffset=(\d+)", rest):
            out[(m["tp"], int(base))] = rule
    return out


def _earliest_offsets(broker, topics) -> dict[str, int]:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    futures = broker.admin().list_offsets({TopicPartition(t, 0): OffsetSpec.earliest() for t in topics})
    return {tp.topic: f.result(timeout=30).offset for tp, f in futures.items()}


@pytest.fixture(scope="module")
def outcome(spark, tmp_path_factory):
    from confluent_kafka import TopicPartition

    from kafkalog_spark.analysis.retention import retention_plan
    from kafkalog_spark.config import effective_config, load_broker_properties
    from tests.harness.broker import KafkaBroker, KafkaDistribution

    timings: dict[str, float] = {}
    t0 = time.monotonic()
    work = tmp_path_factory.mktemp("retention-broker")
    broker = KafkaBroker(KafkaDistribution(), BROKER_PROPS, work_dir=work / "broker")
    try:
        broker.start()
        timings["start broker"] = time.monotonic() - t0
        now_ms = int(time.time() * 1000)
        for topic, (config, _later, stamps) in SCENARIOS.items():
            broker.create_topic(topic, config={"segment.bytes": SEGMENT_BYTES, **config})
            _produce(broker, topic, stamps, now_ms)
        for topic, offset in DELETE_RECORDS_BEFORE.items():
            for f in broker.admin().delete_records([TopicPartition(topic, 0, offset)]).values():
                assert f.result(timeout=30).low_watermark == offset
        timings["produce"] = time.monotonic() - t0 - sum(timings.values())
        broker.stop()
        snapshot = broker.snapshot(work / "snapshot")
        on_disk = {t: _live_segments(snapshot / f"{t}-0") for t in SCENARIOS}  # what the broker wrote

        # Our plan, on the copy, with the configs the broker will apply.
        t1 = time.monotonic()
        server_props = load_broker_properties(broker.work_dir / "server.properties", broker.dist.version)
        overrides = {t: {"segment.bytes": str(SEGMENT_BYTES), **{k: str(v) for k, v in {**c, **later}.items()}}
                     for t, (c, later, _s) in SCENARIOS.items()}

        def load(view):
            return (spark.read.format("kafkalog").option("view", view).option("topics", ",".join(SCENARIOS))
                    .load(str(snapshot)))

        plan = retention_plan(load("segments"), load("batches"), load("partition_files"),
                              lambda t: effective_config(t, server_props, overrides, kafka_version=broker.dist.version),
                              int(time.time() * 1000))
        rows = [r.asDict() for r in plan.collect()]
        timings["plan"] = time.monotonic() - t1

        # Phase 2: the broker acts.
        t2 = time.monotonic()
        broker.extra_props["log.initial.task.delay.ms"] = 500
        broker.start()
        for topic, (_c, later, _s) in SCENARIOS.items():
            if later:
                broker.alter_topic_config(topic, later)
        predicted = {t: {r["baseOffset"] for r in rows if r["topic"] == t and not r["deletable"]} for t in SCENARIOS}
        before = {t: {r["baseOffset"] for r in rows if r["topic"] == t} for t in SCENARIOS}
        deadline = time.monotonic() + 60

        def state():
            return {t: _live_segments(broker.partition_dir(t)) for t in SCENARIOS}

        while time.monotonic() < deadline and any(s & before[t] != predicted[t] for t, s in state().items()):
            time.sleep(0.25)
        settled = state()
        time.sleep(3.5)  # several more retention checks and cleaner passes: nothing else may go
        final = state()
        earliest = _earliest_offsets(broker, SCENARIOS)
        timings["broker retention"] = time.monotonic() - t2
        broker.stop()
        logged = _logged_rules(broker.server_log)
    finally:
        broker.stop()
    timings["total"] = time.monotonic() - t0
    print("\nretention broker timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))
    return {"rows": rows, "before": before, "settled": settled, "final": final, "earliest": earliest,
            "logged": logged, "timings": timings, "on_disk": on_disk}


@pytest.mark.parametrize("topic", list(SCENARIOS))
def test_plan_matches_what_the_broker_deleted(outcome, topic: str) -> None:
    rows = sorted((r for r in outcome["rows"] if r["topic"] == topic), key=lambda r: r["baseOffset"])
    before = outcome["before"][topic]
    # a plan row per segment file the broker had written when it stopped (several: the records roll segments)
    assert before == outcome["on_disk"][topic] and len(rows) == len(before) > 1, (topic, sorted(before))
    kept = {r["baseOffset"] for r in rows if not r["deletable"]}
    final = outcome["final"][topic]
    assert final == outcome["settled"][topic], "the broker kept deleting after the plan's state was reached"
    assert final & before == kept, (topic, sorted(final & before), sorted(kept))
    rolled = rows[0]["rollsActiveSegment"]
    assert final - before == ({rows[0]["logEndOffset"]} if rolled else set())
    assert outcome["earliest"][topic] == rows[0]["newLogStartOffset"]
    broker_rules = {base: rule for (tp, base), rule in outcome["logged"].items() if tp == f"{topic}-0"}
    assert broker_rules == {r["baseOffset"]: r["rule"] for r in rows if r["deletable"]}


def test_scenarios_exercise_every_rule_and_reason(outcome) -> None:
    rows = outcome["rows"]
    by_topic = {t: [r for r in rows if r["topic"] == t] for t in SCENARIOS}
    assert {r["rule"] for r in rows} == {"time", "size", "log_start_offset", None}  # None: kept
    assert set(outcome["logged"].values()) == {"time", "size", "log_start_offset"}  # the broker used each rule
    assert any(r["reason"] == "prefix_rule" for r in by_topic["ret-time"])
    assert [r["deletable"] for r in by_topic["ret-time-all"]] == [True] * len(outcome["on_disk"]["ret-time-all"])
    assert by_topic["ret-time-all"][0]["rollsActiveSegment"]
    assert {r["rule"] for r in by_topic["ret-size-time"]} == {"size", "time", None}
    lso = by_topic["ret-lso"]
    assert lso[0]["logStartOffset"] == DELETE_RECORDS_BEFORE["ret-lso"]
    assert lso[0]["logStartOffsetSource"] == "checkpoint"
    assert lso[0]["newLogStartOffset"] == DELETE_RECORDS_BEFORE["ret-lso"]  # inside a segment: not a base offset
    assert {r["rule"] for r in by_topic["ret-compact-delete"]} == {"time", None}
    assert all(r["highWatermarkSource"] == "checkpoint" for r in rows)
