"""`make samples`: regenerate data/samples from real Kafka 3.9.2 brokers and clients.

Builds everything in .cache/samples-build and only then replaces data/samples, so a failed run leaves
the committed corpus alone. Scenario definitions: tests/harness/scenarios.py; README: report.py.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from tests.harness import report
from tests.harness.broker import CACHE_DIR, REPO_ROOT, HarnessError, KafkaBroker, KafkaDistribution
from tests.harness.golden import write_golden
from tests.harness.plan import run_java, run_librdkafka
from tests.harness.scenarios import (
    BROKER_PROPS,
    COMPACT_DELETE_RETENTION_MS,
    CONSUMED_TOPICS,
    CONSUMER_GROUP,
    TOPICS,
    compacted_plan,
    librdkafka_plan,
    main_java_plan,
)

SAMPLES_DIR = REPO_ROOT / "data" / "samples"
BUILD_DIR = CACHE_DIR / "samples-build"
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


def commit_offsets(broker: KafkaBroker) -> int:
    """Consume the small topics in a consumer group, committing as it goes, so __consumer_offsets has
    group metadata and offset commits."""
    from confluent_kafka import Consumer

    consumer = Consumer(broker.client_config(**{
        "group.id": CONSUMER_GROUP, "auto.offset.reset": "earliest", "enable.auto.commit": False}))
    consumer.subscribe(list(CONSUMED_TOPICS))
    wanted, seen = 100 + 27, 0
    deadline = time.monotonic() + 60
    while seen < wanted and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is None or msg.error():
            continue
        seen += 1
        if seen % 25 == 0:
            consumer.commit(asynchronous=False)
    consumer.commit(asynchronous=False)
    consumer.close()
    if seen != wanted:
        raise HarnessError(f"consumer group read {seen} of {wanted} messages")
    return seen


def run_main_broker(dist: KafkaDistribution, build: Path) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    with KafkaBroker(dist, BROKER_PROPS) as broker:
        log(f"broker up at {broker.bootstrap}; creating {len(TOPICS)} topics")
        for topic in TOPICS:
            broker.create_topic(topic.name, topic.partitions, topic.config)
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


def main() -> int:
    started = time.monotonic()
    try:
        dist = KafkaDistribution().ensure()
        shutil.rmtree(BUILD_DIR, ignore_errors=True)
        BUILD_DIR.mkdir(parents=True)
        facts = run_main_broker(dist, BUILD_DIR)
        log("legacy v0/v1 segments (LegacyRecords.java)")
        facts["legacy_batches"] = dist.run_java("LegacyRecords.java", str(BUILD_DIR / "legacy")).stdout
        log("golden DumpLogSegments output")
        facts["dump_runs"] = write_golden(BUILD_DIR, dist)
        facts["seconds"] = round(time.monotonic() - started)
        report.write_readme(BUILD_DIR, dist, facts)
    except HarnessError as e:
        print(f"make samples: {e}", file=sys.stderr)
        return 1
    shutil.rmtree(SAMPLES_DIR, ignore_errors=True)
    SAMPLES_DIR.parent.mkdir(parents=True, exist_ok=True)
    BUILD_DIR.rename(SAMPLES_DIR)
    log(f"wrote {SAMPLES_DIR.relative_to(REPO_ROOT)} in {round(time.monotonic() - started)} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
