"""`make samples`: regenerate the sample corpora from real Kafka brokers and clients.

data/samples is written by a 3.9.2 broker, data/samples-kafka4 by a 4.4.0 broker (all of the 3.9 scenarios
plus what only 4.x does). Each corpus gets golden dumps from both versions' kafka-dump-log: `golden/` from its
own broker's version, `golden-<other version>/` from the other one.

    python -m tests.harness.make_samples [--kafka 3.9.2] [--kafka 4.4.0]   (default: both)

Builds everything in .cache/samples-build-<version> and only then replaces the corpus, so a failed run
leaves the committed one alone. Scenario definitions: tests/harness/scenarios.py; README: report.py.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from tests.harness import report
from tests.harness.broker import (
    CACHE_DIR,
    KAFKA_3,
    KAFKA_4,
    REPO_ROOT,
    VERSIONS,
    HarnessError,
    KafkaBroker,
    KafkaDistribution,
)
from tests.harness.golden import GOLDEN_DIR, write_golden
from tests.harness.plan import run_java, run_librdkafka
from tests.harness.scenarios import (
    BROKER_PROPS,
    COMPACT_DELETE_RETENTION_MS,
    CONSUMED_TOPICS,
    CONSUMER_GROUP,
    GROUP_CONSUMER_848,
    KAFKA4_BROKER_PROPS,
    KAFKA4_TOPICS,
    SHARE_GROUP,
    SHARE_GROUP_TOPIC,
    TOPICS,
    compacted_plan,
    compacted_txn_plan,
    deleted_topic_plan,
    librdkafka_plan,
    main_java_plan,
    open_txn_plan,
    topic_config,
)

SAMPLES_DIR = REPO_ROOT / "data" / "samples"
CORPORA = {KAFKA_3: SAMPLES_DIR, KAFKA_4: REPO_ROOT / "data" / "samples-kafka4"}
CHECKPOINT_FILES = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                    "log-start-offset-checkpoint", "cleaner-offset-checkpoint")


def log(msg: str) -> None:
    print(f"[samples] {msg}", flush=True)


def read_offset_checkpoint(path: Path) -> dict[tuple[str, int], int]:
    """Kafka's text offset checkpoint: version line, count line, then `topic partition offset`."""
    if not path.exists():
        return {}
    lines = path.read_text().split("\n")[2:]
    return {(t, int(p)): int(o) for t, p, o in (line.split() for line in lines if line.strip())}


def active_base_offset(partition_dir: Path) -> int:
    return max(int(p.stem) for p in partition_dir.glob("*.log"))


def wait_for_cleaner(broker: KafkaBroker, topic: str, timeout: float = 90.0) -> int:
    """Wait until the cleaner checkpoint for `topic`-0 reaches the active segment: all cleanable data
    (everything below the active segment) has been cleaned. Returns the checkpointed offset."""
    target = active_base_offset(broker.partition_dir(topic))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = read_offset_checkpoint(broker.log_dir / "cleaner-offset-checkpoint").get((topic, 0), -1)
        if done >= target:
            return done
        time.sleep(0.5)
    raise HarnessError(f"log cleaner did not reach offset {target} of {topic} within {timeout}s")


def wait_for_checkpoint(broker: KafkaBroker, name: str, topic: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while (topic, 0) not in read_offset_checkpoint(broker.log_dir / name):
        if time.monotonic() > deadline:
            raise HarnessError(f"{name} did not list {topic} within {timeout}s")
        time.sleep(0.5)


def consume_committing(broker: KafkaBroker, group: str, topics: list[str], wanted: int,
                       committed_of: list | None = None) -> list:
    """Consumer group ``group`` (librdkafka) reads ``wanted`` records of ``topics`` from its committed offsets,
    committing every 25 and at the end; returns its committed offsets of ``committed_of`` (TopicPartitions)."""
    from confluent_kafka import Consumer

    consumer = Consumer(broker.client_config(**{
        "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}))
    consumer.subscribe(topics)
    seen, deadline = 0, time.monotonic() + 60
    try:
        while seen < wanted and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            seen += 1
            if seen % 25 == 0:
                consumer.commit(asynchronous=False)
        consumer.commit(asynchronous=False)
        committed = consumer.committed(committed_of, timeout=30) if committed_of else []
    finally:
        consumer.close()
    if seen != wanted:
        raise HarnessError(f"consumer group {group} read {seen} of {wanted} records of {', '.join(topics)}")
    return committed


def commit_offsets(broker: KafkaBroker) -> int:
    """Consume the small topics in a consumer group, committing as it goes, so __consumer_offsets has
    group metadata and offset commits."""
    consume_committing(broker, CONSUMER_GROUP, list(CONSUMED_TOPICS), 100 + 27)
    return 100 + 27


def create_topics(broker: KafkaBroker, topics: list) -> None:
    for topic in topics:
        broker.create_topic(topic.name, topic.partitions, topic_config(topic, broker.dist.major))


def run_main_broker(dist: KafkaDistribution, build: Path) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    with KafkaBroker(dist, BROKER_PROPS) as broker:
        log(f"broker up at {broker.bootstrap}; creating {len(TOPICS)} topics")
        create_topics(broker, TOPICS)
        log("Java producer: main plan")
        run_java(main_java_plan(), dist, broker.bootstrap)
        log("librdkafka producer")
        run_librdkafka(librdkafka_plan(), broker.bootstrap)
        log("consumer group commits")
        facts["consumed"] = commit_offsets(broker)
        log("waiting for the log cleaner (round 1)")
        facts["cleaner_round1"] = wait_for_cleaner(broker, "compacted-cleaned")
        # Let round-1 tombstones' delete horizon pass so pass 2 drops them while keeping round 2's.
        time.sleep(COMPACT_DELETE_RETENTION_MS / 1000 + 1)
        run_java(compacted_plan(2, ("compacted-cleaned",)), dist, broker.bootstrap)
        log("waiting for the log cleaner (round 2)")
        facts["cleaner_round2"] = wait_for_cleaner(broker, "compacted-cleaned")
        # The broker first writes recovery points 30 s after startup; wait for it so the live copy
        # has a real (not yet final) checkpoint rather than the empty file created at startup.
        wait_for_checkpoint(broker, "recovery-point-offset-checkpoint", "live-copy")
        log("live copy of live-copy-0 while the broker runs")
        broker.snapshot(build / "live-copy", only=["live-copy-0", *CHECKPOINT_FILES])
        log("stopping the broker cleanly")
        broker.stop(clean=True)
        broker.snapshot(build / "broker")
        server_log = broker.server_log.read_text(errors="replace")
        facts["cleaner_passes"] = len(re.findall(r"Beginning cleaning of log compacted-cleaned-0", server_log))
        facts["cleaner_dirty_passes"] = len(re.findall(r"Beginning cleaning of log compacted-dirty-0", server_log))
    return facts


def group_consume(broker: KafkaBroker, protocol: str, group: str, records: int, *topics: str) -> int:
    """A Java consumer (classic or KIP-848) or share consumer (KIP-932) group reading `records` records."""
    proc = broker.dist.run_java("GroupConsume.java", broker.bootstrap, protocol, group, str(records), *topics)
    return int(proc.stdout.split()[-1])


def run_kafka4_broker(dist: KafkaDistribution, build: Path) -> dict[str, Any]:
    """The 3.9 scenarios on a 4.x broker, a restart in the middle, then what only 4.x brokers write."""
    facts: dict[str, Any] = {}
    broker = KafkaBroker(dist, KAFKA4_BROKER_PROPS)
    try:
        broker.start()
        log(f"broker {dist.version} up at {broker.bootstrap}; creating {len(TOPICS) + len(KAFKA4_TOPICS)} topics")
        create_topics(broker, TOPICS + KAFKA4_TOPICS[:2])
        log("Java producer: main plan and compacted-txn round 1")
        run_java(main_java_plan().extend(compacted_txn_plan(1)), dist, broker.bootstrap)
        log("librdkafka producer")
        run_librdkafka(librdkafka_plan(), broker.bootstrap)
        log("groups: classic (librdkafka), consumer protocol (KIP-848), share (KIP-932)")
        facts["consumed"] = commit_offsets(broker)
        facts["consumed_848"] = group_consume(broker, "consumer", GROUP_CONSUMER_848, 127, *CONSUMED_TOPICS)
        facts["consumed_share"] = group_consume(broker, "share", SHARE_GROUP, 27, SHARE_GROUP_TOPIC)
        log("waiting for the log cleaner (round 1)")
        facts["cleaner_round1"] = wait_for_cleaner(broker, "compacted-cleaned")
        facts["txn_cleaner_round1"] = wait_for_cleaner(broker, "compacted-txn")
        wait_for_checkpoint(broker, "recovery-point-offset-checkpoint", "live-copy")
        log("live copy of live-copy-0 while the broker runs")
        broker.snapshot(build / "live-copy", only=["live-copy-0", *CHECKPOINT_FILES])
        log("restart (clean stop, start on the same log dir)")
        broker.stop(clean=True)
        broker.start()
        time.sleep(COMPACT_DELETE_RETENTION_MS / 1000 + 1)
        run_java(compacted_plan(2, ("compacted-cleaned",)).extend(compacted_txn_plan(2)), dist, broker.bootstrap)
        log("waiting for the log cleaner (round 2)")
        facts["cleaner_round2"] = wait_for_cleaner(broker, "compacted-cleaned")
        facts["txn_cleaner_round2"] = wait_for_cleaner(broker, "compacted-txn")
        log("deleted-topic: produce, then delete")
        create_topics(broker, KAFKA4_TOPICS[2:])
        run_java(deleted_topic_plan(), dist, broker.bootstrap)
        broker.admin().delete_topics(["deleted-topic"], operation_timeout=30)["deleted-topic"].result(timeout=60)
        log("txn-open: a producer halts inside a transaction")
        run_java(open_txn_plan(), dist, broker.bootstrap)
        # A metadata snapshot after the deletion (metadata.log.max.snapshot.interval.ms).
        time.sleep(KAFKA4_BROKER_PROPS["metadata.log.max.snapshot.interval.ms"] / 1000 + 2)
        log("stopping the broker cleanly")
        broker.stop(clean=True)
        broker.snapshot(build / "broker")
        server_log = broker.server_log.read_text(errors="replace")
        for topic in ("compacted-cleaned", "compacted-dirty", "compacted-txn"):
            facts[f"passes {topic}"] = len(re.findall(rf"Beginning cleaning of log {topic}-0", server_log))
    finally:
        broker.stop(clean=True)
        broker.cleanup()
    return facts


def build_corpus(version: str) -> Path:
    """Run the broker of `version`, write goldens from both dump tools and the README, into a build dir."""
    started = time.monotonic()
    dist = KafkaDistribution(version).ensure()
    build = CACHE_DIR / f"samples-build-{version}"
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir(parents=True)
    if version == KAFKA_3:
        facts = run_main_broker(dist, build)
        log("legacy v0/v1 segments (LegacyRecords.java)")
        facts["legacy_batches"] = dist.run_java("LegacyRecords.java", str(build / "legacy")).stdout
    else:
        facts = run_kafka4_broker(dist, build)
    log(f"golden DumpLogSegments output ({version})")
    facts["dump_runs"] = write_golden(build, dist)
    for other in VERSIONS:
        if other != version:
            log(f"golden DumpLogSegments output ({other}, into golden-{other})")
            facts[f"dump_runs {other}"] = write_golden(build, KafkaDistribution(other).ensure(),
                                                       golden_dir=f"{GOLDEN_DIR}-{other}")
    facts["seconds"] = round(time.monotonic() - started)
    report.write_readme(build, dist, facts)
    return build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make samples", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kafka", action="append", choices=VERSIONS, help="only this broker version (repeatable)")
    versions = parser.parse_args(argv).kafka or list(VERSIONS)
    for version in versions:
        started = time.monotonic()
        try:
            build = build_corpus(version)
        except HarnessError as e:
            print(f"make samples: {e}", file=sys.stderr)
            return 1
        target = CORPORA[version]
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        build.rename(target)
        log(f"wrote {target.relative_to(REPO_ROOT)} in {round(time.monotonic() - started)} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
