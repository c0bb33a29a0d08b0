"""A tiered topic's retention by time, as a restarted broker applies it: the oracle of `retention-plan --as-of`.

For each Kafka version (3.9.2, 4.4.0) a single-node KRaft broker with Kafka's LocalTieredStorage (as in
tests/harness/tiered_corpus.py) gets one tiered topic, `restart`, with small segments, `local.retention.ms`
LOCAL_RETENTION_MS and `retention.ms` RETENTION_MS, and records whose CreateTime timestamps are chosen so that
no segment is past either retention while the broker first runs: each segment's largest timestamp passes local
retention, then (RETENTION_MS - LOCAL_RETENTION_MS later) remote retention, a segment at a time, in the minutes
after a restart. The scenario:

1. produce RECORDS records (one timestamp a second), wait until every closed segment is in the remote store,
   stop the broker cleanly and copy its log dir and the remote store: `before/` (the input of the plans);
2. start the broker again on the same log dir, write nothing, and watch the partition dir and the remote store
   every POLL_S seconds until every closed segment is gone from both (local: renamed `.deleted`, then removed
   after the topic's `file.delete.delay.ms`; remote: removed by the expiration task). Once MIDDLE_AFTER local
   segments are gone, copy the log dir and the store again while the broker runs (`middle/`: a tiered partition
   whose oldest segments are remote only), with the log start and end offsets it reports then;
3. record what the broker said: its log lines about retention (`broker-log.txt`) and, in `oracle.json`, the
   time of every step of every segment, with the log start and end offsets the broker reports at the end.

`before/broker/` holds the log dir as the broker left it at the stop, `.lock` and the metadata log's indexes
excepted (a missing index is legal, Kafka rebuilds it; a 4.4.0 broker leaves its metadata log's indexes
preallocated, 20 MiB of zeros): the topic's configs come from its `__cluster_metadata` log.
`before/remote-store/` is the LocalTieredStorage directory at the stop. The broker preallocates index files of
INDEX_BYTES (`log.index.size.max.bytes`) so that the live copy's active indexes stay small.

    python -m tests.harness.tiered_restart_corpus [--kafka 3.9.2] [--kafka 4.4.0]   (default: both)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from tests.harness.broker import KAFKA_3, REPO_ROOT, VERSIONS, HarnessError, KafkaBroker
from tests.harness.tiered_corpus import (
    BUILD_DIR,
    NODE_ID,
    OUT_DIR,
    RECORD_BYTES,
    SEGMENT_BYTES,
    TieredDistribution,
    broker_props,
    local_segments,
    log_offsets,
    remote_segments,
    topic_id,
    wait,
)

CORPUS_NAME = "tiered-restart"  # data/samples-internal/<version>/tiered-restart
TOPIC = "restart"
RECORDS = 90  # about 6 segments of 2048 bytes, the last one active
LOCAL_RETENTION_MS = 120_000
RETENTION_MS = 150_000
FILE_DELETE_DELAY_MS = 3_000
# The first record's largest timestamp passes local retention this long after the first record is produced: long
# enough for the copies, the stop and the restart to come first; a record a second after that.
FIRST_DUE_S = 90
POLL_S = 0.2
MIDDLE_AFTER = 3  # local segments gone (files removed) when `middle/` is copied
INDEX_BYTES = 65536
WATCH_S = FIRST_DUE_S + RECORDS + (RETENTION_MS - LOCAL_RETENTION_MS) / 1000 + 60
# The broker's log lines that say why it deletes a segment (UnifiedLog and RemoteLogManager, 3.9 and 4.x)
_RETENTION_LINE = re.compile(r"retention|Deleting segment|delete(?:d)? remote|Deleted remote|log start offset",
                             re.IGNORECASE)
# What the tests read from them: when the broker decided a deletion (UnifiedLog's and RLMExpirationTask's lines) and
# when it deleted a local segment's files (LocalLog, file.delete.delay.ms later)
_STAMP = r"^\[(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] "
_LOG_EVENTS = {
    "local_deleted": re.compile(_STAMP + r".*\] Deleting segment LogSegment\(baseOffset=(?P<segment>\d+),.* due to "
                                r"local log retention time"),
    "local_files_deleted": re.compile(_STAMP + r".*\] Deleting segment files LogSegment\(baseOffset=(?P<segment>\d+),"),
    "remote_deleted": re.compile(_STAMP + r".*About to delete remote log segment RemoteLogSegmentId\{.*"
                                 r"id=(?P<segment>[A-Za-z0-9_-]{22})\} due to retention time"),
}


def log(msg: str) -> None:
    print(f"[samples-tiered-restart] {msg}", flush=True)


def topic_config(version: str) -> dict[str, Any]:
    segment = "segment.bytes" if version == KAFKA_3 else "internal.segment.bytes"  # 4.x: 1 MiB minimum
    return {"remote.storage.enable": "true", segment: SEGMENT_BYTES, "segment.index.bytes": 4096,
            "local.retention.ms": LOCAL_RETENTION_MS, "retention.ms": RETENTION_MS,
            "file.delete.delay.ms": FILE_DELETE_DELAY_MS}


def produce_timed(broker: KafkaBroker, first_ms: int) -> None:
    """RECORDS records whose timestamps are a second apart from `first_ms`, in batches of about three."""
    from confluent_kafka import Producer

    errors: list[Any] = []
    producer = Producer(broker.client_config(**{"acks": "all", "linger.ms": 0, "batch.size": RECORD_BYTES * 3}))
    for i in range(RECORDS):
        value = f"{TOPIC} #{i:05d} ".encode().ljust(RECORD_BYTES, b".")
        producer.produce(TOPIC, value=value, key=f"k{i % 7}".encode(), partition=0, timestamp=first_ms + 1000 * i,
                         on_delivery=lambda err, _msg: err and errors.append(err))
        producer.poll(0)
    if producer.flush(60) or errors:
        raise HarnessError(f"producing to {TOPIC} failed: {errors[:3]}")


def _listing(path: Path) -> set[str]:
    try:
        return set(os.listdir(path))
    except FileNotFoundError:
        return set()


def _remote_dir(remote_store: Path) -> Path:
    found = sorted(remote_store.glob(f"*/{TOPIC}-0-*"))
    if len(found) != 1:
        raise HarnessError(f"expected one remote partition dir of {TOPIC}-0 in {remote_store}, found {found}")
    return found[0]


def copy_live(broker: KafkaBroker, remote_store: Path, dest: Path) -> dict[str, Any]:
    """The log dir and the remote store copied while the broker runs, and what it reports then."""
    broker.snapshot(dest / "broker")
    _without_large_indexes(dest / "broker")
    shutil.copytree(remote_store, dest / "remote-store")
    return {**log_offsets(broker, TOPIC), "local_segments": sorted(p.name for p in (dest / "broker" / f"{TOPIC}-0")
                                                                  .glob("*.log")),
            "remote_segments": sorted(p.name for p in (dest / "remote-store").glob(f"*/{TOPIC}-0-*/*.log"))}


def _without_large_indexes(log_dir: Path) -> None:
    """The metadata log's indexes out of a copy (KafkaMetadataLog preallocates its own, 10 MiB each in 4.x)."""
    for index in (log_dir / "__cluster_metadata-0").glob("*index"):
        index.unlink()


def watch(broker: KafkaBroker, remote_store: Path, closed: list[str], copied: list[str],
          middle: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Poll the partition dir and the remote store until every closed local segment and every remote one is
    gone; the events, in order: (tier, file, event, atMs) with event "renamed" (a `.log` became `.log.deleted`),
    "removed" (the `.log.deleted` is gone) or, remote, "removed" (the remote `.log` is gone); and, copied into
    `middle` once MIDDLE_AFTER local segments are removed, what :func:`copy_live` says."""
    local, remote = broker.partition_dir(TOPIC), _remote_dir(remote_store)
    events: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()

    def note(tier: str, name: str, event: str, at_ms: int) -> None:
        if (tier, name, event) not in seen:
            seen.add((tier, name, event))
            events.append({"tier": tier, "file": name, "event": event, "atMs": at_ms})

    deadline = time.monotonic() + WATCH_S
    at_middle: dict[str, Any] = {}
    while True:
        now_ms = int(time.time() * 1000)
        here, there = _listing(local), _listing(remote)
        for name in closed:
            if name not in here:
                note("local", name, "renamed", now_ms)  # renamed, or renamed and removed between two polls
                if name + ".deleted" not in here:
                    note("local", name, "removed", now_ms)
        for name in copied:
            if name not in there:
                note("remote", name, "removed", now_ms)
        removed = [e for e in events if e["tier"] == "local" and e["event"] == "removed"]
        if not at_middle and len(removed) == MIDDLE_AFTER:
            at_middle = {"copied_ms": int(time.time() * 1000), **copy_live(broker, remote_store, middle)}
        if len(seen) == 2 * len(closed) + len(copied):
            return events, at_middle
        if time.monotonic() > deadline:
            raise HarnessError(f"not every segment deleted within {WATCH_S:.0f} s after the restart: {events}")
        time.sleep(POLL_S)


def retention_lines(server_log: Path, since: str) -> list[str]:
    """The broker's log lines about retention and deletes after the last line holding `since` (the config dumps'
    lines, which start with a tab, left out)."""
    lines = server_log.read_text(errors="replace").splitlines()
    start = max((i for i, line in enumerate(lines) if since in line), default=0)
    return [line for line in lines[start:] if line.startswith("[") and _RETENTION_LINE.search(line)]


def log_events(lines: list[str]) -> list[dict[str, Any]]:
    """The deletions the broker's log lines record: (event, segment: base offset or remote segment id, atMs), the
    lines' local times read in this machine's zone (the broker's, when it wrote them)."""
    out = []
    for line in lines:
        for event, pattern in _LOG_EVENTS.items():
            m = pattern.match(line)
            if m:
                at = time.mktime(time.strptime(m["at"][:19], "%Y-%m-%d %H:%M:%S"))
                segment = int(m["segment"]) if m["segment"].isdigit() else m["segment"]
                out.append({"event": event, "segment": segment, "atMs": int(at) * 1000 + int(m["at"][20:])})
    return out


def run(version: str, build: Path) -> dict[str, Any]:
    dist = TieredDistribution(version).ensure()
    remote_store = build / "remote-store"
    broker = KafkaBroker(dist, {**broker_props(remote_store), "log.index.size.max.bytes": INDEX_BYTES},
                         work_dir=build / "work", node_id=NODE_ID)
    try:
        broker.start()
        log(f"broker {version} up at {broker.bootstrap}")
        broker.create_topic(TOPIC, 1, topic_config(version))
        produced_ms = int(time.time() * 1000)
        first_ms = produced_ms + FIRST_DUE_S * 1000 - LOCAL_RETENTION_MS
        produce_timed(broker, first_ms)
        wait(f"{TOPIC}'s closed segments in the remote store",
             lambda: len(remote_segments(remote_store, TOPIC)) == len(local_segments(broker, TOPIC)) - 1 > 0)
        copied = [f.split("/")[-1] for f in remote_segments(remote_store, TOPIC)]
        closed = local_segments(broker, TOPIC)[:-1]
        before_offsets = log_offsets(broker, TOPIC)
        ids = topic_id(broker, TOPIC)
        broker.stop(clean=True)
        stopped_ms = int(time.time() * 1000)
        if stopped_ms - first_ms > LOCAL_RETENTION_MS:
            raise HarnessError("the copies took too long: a segment passed local retention before the stop")
        broker.snapshot(build / "out" / "before" / "broker")
        _without_large_indexes(build / "out" / "before" / "broker")
        shutil.copytree(remote_store, build / "out" / "before" / "remote-store")
        log(f"stopped with {len(closed)} closed segments, {len(copied)} copied; restarting")
        broker.start()
        restarted_ms = int(time.time() * 1000)
        events, middle = watch(broker, remote_store, closed, copied, build / "out" / "middle")
        after_offsets = log_offsets(broker, TOPIC)
        log(f"every closed segment deleted, {round((events[-1]['atMs'] - restarted_ms) / 1000)} s after the restart")
        broker.stop(clean=True)
    finally:
        broker.stop(clean=True)
    lines = retention_lines(broker.server_log, "Kafka Server started")  # the restarted broker's
    (build / "out" / "broker-log.txt").write_text("\n".join(lines) + "\n")
    oracle = {
        "kafka": version, "test_jars": dist.test_jars_version, "topic": TOPIC, "topic_id": ids,
        "segment_bytes": SEGMENT_BYTES, "local_retention_ms": LOCAL_RETENTION_MS, "retention_ms": RETENTION_MS,
        "file_delete_delay_ms": FILE_DELETE_DELAY_MS,
        "remote_log_manager_task_interval_ms": broker_props(remote_store)["remote.log.manager.task.interval.ms"],
        "log_retention_check_interval_ms": broker_props(remote_store)["log.retention.check.interval.ms"],
        "poll_ms": int(POLL_S * 1000), "first_timestamp_ms": first_ms, "records": RECORDS,
        "stopped_ms": stopped_ms, "restarted_ms": restarted_ms,
        "closed_segments": closed, "remote_segments": copied,
        "before": before_offsets, "middle": middle, "after": after_offsets, "events": events,
        "log_events": log_events(lines),
    }
    (build / "out" / "oracle.json").write_text(json.dumps(oracle, indent=1) + "\n")
    return oracle


def readme(oracle: dict[str, Any]) -> str:
    version = oracle["kafka"]
    return "\n".join([
        f"# A tiered topic's time retention after a restart, Kafka {version}",
        "",
        "Written by `python -m tests.harness.tiered_restart_corpus` (tests/harness/tiered_restart_corpus.py says "
        f"how): a single-node KRaft {version} broker with Kafka's LocalTieredStorage (from the "
        f"{oracle['test_jars']} `kafka-storage` test JAR) and the default TopicBasedRemoteLogMetadataManager.",
        "",
        f"- `{oracle['topic']}` (topic id {oracle['topic_id']}): {oracle['records']} records with timestamps a second "
        f"apart, {oracle['segment_bytes']}-byte segments, local.retention.ms={oracle['local_retention_ms']}, "
        f"retention.ms={oracle['retention_ms']}, file.delete.delay.ms={oracle['file_delete_delay_ms']}; every "
        "closed segment copied to the remote store before the broker stopped, none past either retention.",
        "- `before/broker/`: the log dir at the stop, without `.lock` and without the metadata log's indexes; "
        "`before/remote-store/`: the remote store at the stop.",
        f"- `middle/`: the same, copied while the restarted broker ran, once {MIDDLE_AFTER} local segments were "
        f"deleted: log start {oracle['middle']['log_start']}, log end {oracle['middle']['log_end']} (list_offsets "
        f"then); local segments {', '.join(oracle['middle']['local_segments'])}; remote segments "
        f"{', '.join(oracle['middle']['remote_segments'])}.",
        f"- `oracle.json`: what the restarted broker then did with no new writes, watched every {oracle['poll_ms']} "
        "ms: when each local segment was renamed `.deleted` and removed, when each remote segment was removed; the "
        f"log start and end offsets it reported before the stop ({oracle['before']['log_start']}, "
        f"{oracle['before']['log_end']}) and at the end ({oracle['after']['log_start']}, "
        f"{oracle['after']['log_end']}).",
        "- `broker-log.txt`: the restarted broker's log lines about retention and deletes.",
        "",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.tiered_restart_corpus",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--kafka", action="append", choices=VERSIONS, help="only this broker version (repeatable)")
    args = parser.parse_args(argv)
    for version in args.kafka or list(VERSIONS):
        started = time.monotonic()
        build = BUILD_DIR.parent / "samples-tiered-restart-build" / version
        shutil.rmtree(build, ignore_errors=True)
        build.mkdir(parents=True)
        try:
            oracle = run(version, build)
        except HarnessError as e:
            print(f"tiered restart corpus: {e}", file=sys.stderr)
            return 1
        target = OUT_DIR / version / CORPUS_NAME
        shutil.rmtree(target, ignore_errors=True)
        (build / "out").rename(target)
        (target / "README.md").write_text(readme(oracle))
        log(f"wrote {os.path.relpath(target, REPO_ROOT)} in {round(time.monotonic() - started)} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
