"""`make samples-incremental`: the two log dirs of one real Kafka broker copied at four moments ("stages"), for an
incremental nightly job that reuses its results for the segment files that did not change and decodes only the new
or changed ones.

For each Kafka version (3.9.2, 4.4.0) one single-node KRaft broker (broker and controller in one process) on
loopback runs with two log dirs, `log.dirs=<build>/logdir-a,<build>/logdir-b`, small segments and a quick cleaner.
At each stage the broker is stopped cleanly, both log dirs are copied (without `.lock`), and the broker is started
again on its own dirs (the copies are never touched again):

- stage-0: topics `appends` (2 partitions), `retained` (retention.bytes), `compacted`, `moved` (on logdir-a),
  `doomed`, `txn` (a committed, an aborted and a committed transaction) written; a consumer group commits its
  offsets on `appends`; the cleaner's first pass on `compacted`.
- stage-1: more records on `appends`; on `txn` a transaction that begins before a segment roll and is aborted
  after it (its `.txnindex` entry lands in a later segment than its first records), then a committed one; the
  group commits again.
- stage-2: more records on `retained`, whose oldest segments the broker's retention then deletes; more updates to
  `compacted` and the cleaner's second pass (it rewrites the segments it cleaned before); a few more on `appends`.
- stage-3: `moved-0` moved from logdir-a to logdir-b (Admin.alterReplicaLogDirs); topic `doomed` deleted.

    python -m tests.harness.incremental_corpus [--kafka 3.9.2] [--kafka 4.4.0]   (default: both)

Writes data/samples-incremental/<version>/stage-<n>/logdir-a/, .../logdir-b/ (each the broker's whole log dir at
that stage), data/samples-incremental/<version>/stages.json (what each stage did, what the broker reported, which
`.log` files changed since the stage before) and data/samples-incremental/README.md. Each version is built in
.cache/samples-incremental-build/<version> and replaces its output only when the whole run succeeded and the
stages passed their checks (otherwise the build dir is kept, with the broker's server.log).
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.harness.broker import CACHE_DIR, REPO_ROOT, HarnessError, KafkaBroker, KafkaDistribution
from tests.harness.corpus_builds import build_versions, write_readme
from tests.harness.make_samples import consume_committing, read_offset_checkpoint
from tests.harness.plan import Plan, run_java
from tests.harness.replica_cluster import ReplicaCluster, copy_sparse
from tests.harness.replica_corpus import content_size, preallocated, to_json

OUT_DIR = REPO_ROOT / "data" / "samples-incremental"
BUILD_DIR = CACHE_DIR / "samples-incremental-build"
LOG_DIRS = ("logdir-a", "logdir-b")
NODE_ID = 1
STAGE_SIZE_LIMIT = 5 * 2**20  # per stage, both log dirs, zero tails not counted
WAIT_S = 120.0

# Small segments (3.9 takes segment.bytes this small; 4.x only through internal.segment.bytes, KIP-1030's 1 MiB
# minimum), so the partitions hold several and roll them as they grow.
SEGMENT_BYTES = 2048
TXN_SEGMENT_BYTES = 1024
VALUE_BYTES = 100  # each record its own batch (sync sends): about 180 bytes, 10 or 11 to a segment
RETENTION_BYTES = 8192
COMPACTED_KEYS = 8
GROUP = "incremental-group"
TRANSACTIONAL_ID = "incremental-txn"

BROKER_PROPS: dict[str, Any] = {
    # the internal topics in one small partition each
    "offsets.topic.num.partitions": 1,
    "transaction.state.log.num.partitions": 1,
    # The cleaner takes any dirty segment at once (topic compacted sets no min.cleanable.dirty.ratio of its own).
    "log.cleaner.min.cleanable.ratio": 0.01,
    "log.cleaner.backoff.ms": 500,
    # Segments the cleaner replaced or retention deleted, and the old dirs of a moved or deleted partition, are
    # removed after 1 s (default 60 s): the builder waits for that, so no `.deleted` file or `-delete` dir is left
    # in a copy. This broker config is the default of every topic's file.delete.delay.ms (a broker config named
    # file.delete.delay.ms would be ignored as unknown).
    "log.segment.delete.delay.ms": 1000,
    # Retention checks from 1 s after each start, every second (defaults: 30 s, 5 minutes).
    "log.initial.task.delay.ms": 1000,
    "log.retention.check.interval.ms": 1000,
}

PRODUCER: dict[str, Any] = {"acks": "all", "enable.idempotence": "true", "linger.ms": 0}
TXN_PRODUCER: dict[str, Any] = {**PRODUCER, "transactional.id": TRANSACTIONAL_ID}


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: int
    config: dict[str, Any]
    segment_bytes: int
    text: str


TOPICS: dict[str, Topic] = {t.name: t for t in (
    Topic("appends", 2, {"cleanup.policy": "delete", "retention.ms": -1, "retention.bytes": -1}, SEGMENT_BYTES,
          "60 records per partition at stage-0, 30 more at stage-1, 5 more at stage-2; a consumer group "
          f"(`{GROUP}`) reads and commits at stage-0 and stage-1."),
    Topic("retained", 1, {"cleanup.policy": "delete", "retention.bytes": RETENTION_BYTES, "retention.ms": -1},
          SEGMENT_BYTES,
          f"30 records at stage-0 (under retention.bytes={RETENTION_BYTES}), 40 more at stage-2: the broker's "
          "retention then deletes the oldest segments."),
    Topic("compacted", 1, {"cleanup.policy": "compact"}, SEGMENT_BYTES,
          f"120 updates to {COMPACTED_KEYS} keys at stage-0, cleaned; 120 more at stage-2, cleaned again (the "
          "cleaner rewrites every segment below the active one)."),
    Topic("moved", 1, {}, SEGMENT_BYTES,
          "30 records at stage-0 on logdir-a; moved to logdir-b at stage-3 (Admin.alterReplicaLogDirs)."),
    Topic("doomed", 1, {}, SEGMENT_BYTES, "20 records at stage-0; the topic is deleted at stage-3."),
    Topic("txn", 1, {}, TXN_SEGMENT_BYTES,
          f"Transactions of one producer (transactional.id {TRANSACTIONAL_ID}): at stage-0 #0 committed, #1 aborted, "
          "#2 committed (5 records each); at stage-1 #3, 12 single-record batches across a segment roll, aborted "
          "after the roll, then #4 committed (5 records)."),
)}


_STARTED = time.monotonic()


def log(msg: str) -> None:
    print(f"[samples-incremental {time.monotonic() - _STARTED:6.1f}s] {msg}", flush=True)


def topic_config(topic: Topic, version: str) -> dict[str, Any]:
    segment = "segment.bytes" if version.startswith("3.") else "internal.segment.bytes"
    return {**topic.config, segment: topic.segment_bytes}


# ---- the broker ----

class TwoDirBroker(KafkaBroker):
    """KafkaBroker (a single KRaft node, broker and controller) with two log dirs, `logdir-a` and `logdir-b` under
    `work_dir`. Its `log_dir` is logdir-a, the first: the storage tool formats both, the metadata log lives there."""

    def __init__(self, dist: KafkaDistribution, props: dict[str, Any], work_dir: Path) -> None:
        super().__init__(dist, props, work_dir=work_dir, log_dir=work_dir / LOG_DIRS[0], node_id=NODE_ID)
        self.log_dirs = {name: work_dir / name for name in LOG_DIRS}

    def properties(self) -> dict[str, Any]:
        return {**super().properties(), "log.dirs": ",".join(str(d) for d in self.log_dirs.values())}

    def partition_dir(self, topic: str, partition: int = 0) -> Path:
        """The partition's dir in whichever log dir holds it (the current one, not a `-future` or `-delete`)."""
        found = [d / f"{topic}-{partition}" for d in self.log_dirs.values() if (d / f"{topic}-{partition}").is_dir()]
        if len(found) != 1:
            raise HarnessError(f"{topic}-{partition} is in {len(found)} log dirs: {found}")
        return found[0]

    def log_dir_of(self, topic: str, partition: int = 0) -> str:
        return self.partition_dir(topic, partition).parent.name

    def log_mark(self) -> int:
        return self.server_log.stat().st_size if self.server_log.exists() else 0

    def log_lines(self, since: int) -> list[str]:
        with open(self.server_log, "rb") as f:
            f.seek(since)
            return f.read().decode("utf-8", "replace").splitlines()

    def entries(self) -> list[str]:
        """Every entry of both log dirs, `<log dir>/<name>`."""
        return sorted(f"{name}/{p.name}" for name, d in self.log_dirs.items() for p in d.iterdir())

    def copy_stage(self, dest: Path) -> None:
        """Both log dirs, whole but `.lock`, to dest/logdir-a and dest/logdir-b; the broker must be stopped."""
        if self.process is not None:
            raise HarnessError("the broker is running: stop it before copying its log dirs")
        for name, src in self.log_dirs.items():
            shutil.copytree(src, dest / name, copy_function=copy_sparse, ignore=shutil.ignore_patterns(".lock"))


def wait_for(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    ReplicaCluster.wait_for(condition, what, timeout)


# Left behind for a moment: segments the cleaner or retention replaced (`.deleted`), a cleaner's work files
# (`.cleaned`, `.swap`), the dir of a moved or deleted partition (`-delete`) and a move under way (`-future`).
_TRANSIENT = re.compile(r"(\.deleted|\.cleaned|\.swap|-delete|-future)$")


def transient(broker: TwoDirBroker) -> list[str]:
    return [str(p.relative_to(broker.work_dir)) for d in broker.log_dirs.values() for p in d.rglob("*")
            if _TRANSIENT.search(p.name)]


def quiesce(broker: TwoDirBroker) -> None:
    """Until no `.deleted` / `.cleaned` / `.swap` file and no `-delete` / `-future` dir is left."""
    wait_for(lambda: not transient(broker), "the log dirs to hold no file or dir waiting for deletion")


def restart(broker: TwoDirBroker, stage: int) -> None:
    if stage:
        broker.start()
        log(f"stage-{stage}: broker restarted on its own log dirs at {broker.bootstrap}")


def stop_and_copy(broker: TwoDirBroker, out: Path, stage: int) -> None:
    quiesce(broker)
    log(f"stage-{stage}: nothing left waiting for deletion; stopping the broker")
    broker.stop(clean=True)
    broker.copy_stage(out / f"stage-{stage}")
    log(f"stage-{stage}: broker stopped cleanly, log dirs copied")


# ---- clients ----

def value(topic: str, label: str, n: int) -> bytes:
    return f"{topic}|{label}|{n:04d}|".encode().ljust(VALUE_BYTES, b".")


def send(plan: Plan, producer: str, topic: str, partition: int, label: str, numbers: Iterable[int],
         key: Callable[[int], str] | None = None) -> Plan:
    """Single-record batches (each send waits for its acknowledgement), keyed `<topic>-<n>` or key(n)."""
    for n in numbers:
        plan.send(producer, topic, value(topic, label, n), (key(n) if key else f"{topic}-{n:04d}").encode(),
                  partition=partition, sync=True)
    return plan


def compacted_key(n: int) -> str:
    return f"key-{n % COMPACTED_KEYS}"


def transaction(plan: Plan, number: int, records: int, end: str) -> Plan:
    plan.do("begin", "tx")
    send(plan, "tx", "txn", 0, f"txn{number}-{end}", range(records))
    return plan.do(end, "tx")


def commit_group(broker: TwoDirBroker, topic: str, partitions: int, wanted: int) -> dict[str, int]:
    """A consumer group reads `wanted` more records of `topic` from its committed offsets, committing every 25 and at
    the end; returns the committed offsets."""
    from confluent_kafka import TopicPartition

    committed = consume_committing(broker, GROUP, [topic], wanted,
                                   [TopicPartition(topic, p) for p in range(partitions)])
    return {f"{tp.topic}-{tp.partition}": tp.offset for tp in committed}


def log_start_offset(broker: TwoDirBroker, topic: str, partition: int) -> int:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    futures = broker.admin().list_offsets({TopicPartition(topic, partition): OffsetSpec.earliest()},
                                          request_timeout=30)
    return next(iter(futures.values())).result(timeout=60).offset


def list_offset(broker: TwoDirBroker, topic: str, partition: int, committed: bool = False) -> int:
    from confluent_kafka import IsolationLevel, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    level = IsolationLevel.READ_COMMITTED if committed else IsolationLevel.READ_UNCOMMITTED
    futures = broker.admin().list_offsets({TopicPartition(topic, partition): OffsetSpec.latest()},
                                          isolation_level=level, request_timeout=30)
    return next(iter(futures.values())).result(timeout=60).offset


def wait_txn_settled(broker: TwoDirBroker) -> int:
    """Until txn-0's last stable offset is its high watermark: the last transaction's marker is written."""
    wait_for(lambda: list_offset(broker, "txn", 0, committed=True) == list_offset(broker, "txn", 0),
             "txn-0's last stable offset to reach its high watermark")
    return list_offset(broker, "txn", 0)


# Admin.alterReplicaLogDirs, then describeReplicaLogDirs until the replica's current dir is the destination and no
# future dir is left (confluent-kafka has neither call). Java source launcher; the 3.9 and 4.x clients alike.
ALTER_REPLICA_LOG_DIR_JAVA = """\
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsResult.ReplicaLogDirInfo;
import org.apache.kafka.common.TopicPartitionReplica;

public class AlterReplicaLogDir {
    // <bootstrap> <topic> <partition> <broker id> <destination log dir> <timeout ms>
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        TopicPartitionReplica replica =
            new TopicPartitionReplica(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        String destination = args[4];
        long started = System.currentTimeMillis();
        long deadline = started + Long.parseLong(args[5]);
        try (Admin admin = Admin.create(props)) {
            admin.alterReplicaLogDirs(Map.of(replica, destination)).all().get();
            while (true) {
                ReplicaLogDirInfo info = admin.describeReplicaLogDirs(List.of(replica)).all().get().get(replica);
                boolean done = destination.equals(info.getCurrentReplicaLogDir())
                    && info.getFutureReplicaLogDir() == null;
                if (done || System.currentTimeMillis() > deadline) {
                    String future = info.getFutureReplicaLogDir();
                    System.out.println("{\\"current\\": \\"" + info.getCurrentReplicaLogDir() + "\\", \\"future\\": "
                        + (future == null ? "null" : "\\"" + future + "\\"")
                        + ", \\"ms\\": " + (System.currentTimeMillis() - started) + "}");
                    System.exit(done ? 0 : 1);
                }
                Thread.sleep(200);
            }
        }
    }
}
"""


def alter_replica_log_dir(broker: TwoDirBroker, topic: str, partition: int, log_dir: str) -> dict[str, Any]:
    """Move the replica to `log_dir` (a name of LOG_DIRS) with Admin.alterReplicaLogDirs; wait until the broker
    reports the move done, then until the old dir is deleted (no `-future` or `-delete` dir left)."""
    source = broker.work_dir / "java" / "AlterReplicaLogDir.java"
    source.parent.mkdir(exist_ok=True)
    source.write_text(ALTER_REPLICA_LOG_DIR_JAVA)
    seen: set[str] = set()
    name = f"{topic}-{partition}"

    def moved() -> bool:
        now = [e for e in broker.entries() if e.split("/", 1)[1].startswith(f"{name}.") or e.endswith(f"/{name}")]
        seen.update(now)
        return now == [f"{log_dir}/{name}"]

    # the dirs the broker makes on the way (`-future`, `-delete`), looked for while the Admin call runs
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            moved()
            stop.wait(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        proc = broker.dist.run_java(str(source), broker.bootstrap, topic, str(partition), str(NODE_ID),
                                    str(broker.log_dirs[log_dir]), str(int(WAIT_S * 1000)), check=False)
    finally:
        stop.set()
        watcher.join()
    if proc.returncode != 0:
        raise HarnessError(f"alterReplicaLogDirs of {name} to {log_dir} failed:\n{proc.stdout}\n{proc.stderr[-3000:]}")
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    wait_for(moved, f"{name}'s dir to be in {log_dir} only")
    return {"describeReplicaLogDirs": answer, "entriesSeen": sorted(seen)}


# ---- the broker's own records ----

def cleaner_offset(broker: TwoDirBroker, topic: str) -> int | None:
    pdir = broker.partition_dir(topic)
    return read_offset_checkpoint(pdir.parent / "cleaner-offset-checkpoint").get((topic, 0))


def base_offsets(pdir: Path) -> list[int]:
    return sorted(int(p.stem) for p in pdir.glob("*.log"))


def wait_cleaned(broker: TwoDirBroker, topic: str, above: int | None = None) -> int:
    """Until the cleaner's checkpoint for topic-0 reaches the active segment (all of the log below it is cleaned)
    and is past `above`."""
    def done() -> bool:
        offset = cleaner_offset(broker, topic)
        return (offset is not None and offset >= base_offsets(broker.partition_dir(topic))[-1]
                and (above is None or offset > above))

    wait_for(done, f"the cleaner on {topic}-0")
    return cleaner_offset(broker, topic)


# the cleaner's first and last line of each pass (its stats lines between name no partition)
_CLEANER_LINE = re.compile(r"Beginning cleaning of log|cleaned log \S+ \(dirty section")
_CLEANED = re.compile(r"cleaned log compacted-0 \(dirty section = \[(\d+), (\d+)\]\)")
_RETENTION_DELETE = re.compile(r"Deleting segment LogSegment\(baseOffset=(\d+)")


def partition_lines(lines: list[str], name: str) -> list[str]:
    pattern = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-])")
    return [line for line in lines if pattern.search(line)]


def retention_lines(lines: list[str]) -> list[str]:
    return [line for line in partition_lines(lines, "retained-0") if "retention" in line and "breach" in line]


TXN_ENTRY = struct.Struct(">hqqqq")  # version, producer id, first offset, last offset, last stable offset


def txn_index(pdir: Path) -> dict[str, list[dict[str, int]]]:
    """Each `.txnindex` file's aborted transactions (Kafka's AbortedTxn, 34 bytes each), by file name."""
    out = {}
    for path in sorted(pdir.glob("*.txnindex")):
        data = path.read_bytes()
        entries = [TXN_ENTRY.unpack_from(data, i) for i in range(0, len(data) - len(data) % 34, 34)]
        out[path.name] = [{"producerId": p, "firstOffset": f, "lastOffset": last, "lastStableOffset": lso}
                          for _, p, f, last, lso in entries]
    return out


def spanning_aborts(pdir: Path) -> list[dict[str, Any]]:
    """Aborted transactions whose `.txnindex` entry is in a segment that begins after the transaction's first
    record (the abort came after a roll)."""
    return [{"txnindex": name, "segmentBaseOffset": int(name.split(".")[0]), **entry}
            for name, entries in txn_index(pdir).items() for entry in entries
            if entry["firstOffset"] < int(name.split(".")[0])]


# ---- the stages ----

@dataclass
class Stage:
    number: int
    actions: list[str]
    broker: dict[str, Any] = field(default_factory=dict)


def stage_0(broker: TwoDirBroker, version: str) -> Stage:
    stage = Stage(0, [])
    for t in TOPICS.values():
        broker.create_topic(t.name, t.partitions, topic_config(t, version))
    wait_for(lambda: all(broker.partition_dir(t.name, p) for t in TOPICS.values() for p in range(t.partitions)),
             "every partition's dir")
    placed = broker.log_dir_of("moved")
    stage.broker["movedPlacedByBroker"] = placed
    if placed != LOG_DIRS[0]:
        stage.broker["movedToLogdirABeforeWrites"] = alter_replica_log_dir(broker, "moved", 0, LOG_DIRS[0])
    stage.actions.append("Topics created: " + ", ".join(
        f"{t.name} ({t.partitions} partition{'s' if t.partitions > 1 else ''}"
        + "".join(f", {k}={v}" for k, v in topic_config(t, version).items()) + ")" for t in TOPICS.values())
        + (f"; moved-0 (placed by the broker in {placed}) moved to logdir-a with alterReplicaLogDirs before any "
           "write" if placed != LOG_DIRS[0] else "; the broker placed moved-0 in logdir-a"))
    plan = Plan().open("w", PRODUCER)
    for p in range(2):
        send(plan, "w", "appends", p, "stage0", range(60))
    send(plan, "w", "retained", 0, "stage0", range(30))
    send(plan, "w", "compacted", 0, "round1", range(120), compacted_key)
    send(plan, "w", "moved", 0, "stage0", range(30))
    send(plan, "w", "doomed", 0, "stage0", range(20))
    plan.do("close", "w").open("tx", TXN_PRODUCER).do("init", "tx")
    for number, end in ((0, "commit"), (1, "abort"), (2, "commit")):
        transaction(plan, number, 5, end)
    run_java(plan.do("close", "tx"), broker.dist, broker.bootstrap)
    log("stage-0: records produced")
    stage.broker["txnHighWatermark"] = wait_txn_settled(broker)
    stage.actions.append("Records produced (Kafka's Java producer, idempotent, acks=all, one record per batch): "
                         "appends-0 and appends-1 60 each, retained-0 30, compacted-0 120 (keys key-0..key-7), "
                         "moved-0 30, doomed-0 20; txn-0: transactions #0 committed, #1 aborted, #2 committed "
                         "(5 records each)")
    stage.broker["groupCommitted"] = commit_group(broker, "appends", 2, 120)
    log(f"stage-0: group committed {stage.broker['groupCommitted']}")
    stage.actions.append(f"Consumer group {GROUP} read the 120 records of appends, committing every 25 and at the end")
    stage.broker["compactedCleanerOffset"] = wait_cleaned(broker, "compacted")
    log(f"stage-0: compacted-0 cleaned up to {stage.broker['compactedCleanerOffset']}")
    stage.actions.append("The cleaner's first pass on compacted-0 (waited for)")
    return stage


def stage_1(broker: TwoDirBroker) -> Stage:
    stage = Stage(1, [])
    plan = Plan().open("w", PRODUCER)
    for p in range(2):
        send(plan, "w", "appends", p, "stage1", range(60, 90))
    plan.do("close", "w").open("tx", TXN_PRODUCER).do("init", "tx")
    transaction(plan, 3, 12, "abort")  # 12 batches of ~180 bytes: past a 1024-byte segment at least once
    transaction(plan, 4, 5, "commit")
    run_java(plan.do("close", "tx"), broker.dist, broker.bootstrap)
    log("stage-1: records produced")
    stage.broker["txnHighWatermark"] = wait_txn_settled(broker)
    stage.actions.append("appends-0 and appends-1 30 more records each; txn-0: transaction #3, 12 single-record "
                         "batches (the segment rolls between them), aborted; #4 committed (5 records)")
    stage.broker["groupCommitted"] = commit_group(broker, "appends", 2, 60)
    log(f"stage-1: group committed {stage.broker['groupCommitted']}")
    stage.actions.append(f"Consumer group {GROUP} read the 60 new records of appends and committed")
    return stage


def stage_2(broker: TwoDirBroker) -> Stage:
    stage = Stage(2, [])
    mark = broker.log_mark()
    retained_before = base_offsets(broker.partition_dir("retained"))
    before = cleaner_offset(broker, "compacted")
    plan = Plan().open("w", PRODUCER)
    send(plan, "w", "retained", 0, "stage2", range(30, 70))
    send(plan, "w", "compacted", 0, "round2", range(120, 240), compacted_key)
    for p in range(2):
        send(plan, "w", "appends", p, "stage2", range(90, 95))
    run_java(plan.do("close", "w"), broker.dist, broker.bootstrap)
    log("stage-2: records produced")
    stage.actions.append("retained-0 40 more records; compacted-0 120 more updates to the same keys; appends-0 and "
                         "appends-1 5 more each")
    wait_for(lambda: retention_lines(broker.log_lines(mark))
             and base_offsets(broker.partition_dir("retained"))[0] > retained_before[0],
             f"the broker's retention to delete retained-0's oldest segments (retention.bytes={RETENTION_BYTES})")
    log("stage-2: retention deleted retained-0's oldest segments")
    after = wait_cleaned(broker, "compacted", above=before)
    log(f"stage-2: compacted-0 cleaned up to {after}")
    quiesce(broker)
    lines = broker.log_lines(mark)
    deleted = sorted({int(m.group(1)) for m in map(_RETENTION_DELETE.search, retention_lines(lines)) if m})
    stage.broker["retainedDeletedBaseOffsets"] = deleted
    stage.broker["retainedSegmentsBefore"] = retained_before
    stage.broker["retainedSegmentsAfter"] = base_offsets(broker.partition_dir("retained"))
    stage.broker["retainedLogStartOffset"] = log_start_offset(broker, "retained", 0)
    stage.broker["retentionLogLines"] = retention_lines(lines)
    stage.broker["compactedCleanerOffsetBefore"] = before
    stage.broker["compactedCleanerOffset"] = after
    stage.broker["cleanerDirtySections"] = [[int(a), int(b)] for a, b in _CLEANED.findall("\n".join(lines))]
    stage.broker["cleanerLogLines"] = [line.strip() for line in partition_lines(lines, "compacted-0")
                                       if _CLEANER_LINE.search(line)]
    stage.actions.append(f"The broker's retention deleted retained-0's segments {deleted} (its log lines: "
                         "retentionLogLines); the cleaner's second pass on compacted-0 (checkpoint "
                         f"{before} -> {after})")
    return stage


def stage_3(broker: TwoDirBroker) -> Stage:
    stage = Stage(3, [])
    source = broker.log_dir_of("moved")
    move = alter_replica_log_dir(broker, "moved", 0, LOG_DIRS[1])
    stage.broker["moved"] = {"from": source, "to": broker.log_dir_of("moved"), **move}
    log(f"stage-3: moved-0 moved from {source} to {stage.broker['moved']['to']}")
    stage.actions.append(f"moved-0 moved from {source} to logdir-b with Admin.alterReplicaLogDirs; waited until "
                         "describeReplicaLogDirs named logdir-b with no future dir and the old dir was deleted")
    seen: set[str] = set()

    def gone() -> bool:
        now = [e for e in broker.entries() if e.split("/", 1)[1].startswith("doomed-0")]
        seen.update(now)
        return not now

    was = [e for e in broker.entries() if e.split("/", 1)[1] == "doomed-0"]
    broker.admin().delete_topics(["doomed"], operation_timeout=30)["doomed"].result(timeout=60)
    wait_for(gone, "doomed-0's dir to be deleted")
    log(f"stage-3: doomed deleted (seen: {sorted(seen)})")
    stage.broker["doomed"] = {"dirBefore": was, "entriesSeen": sorted(seen), "gone": True,
                              "renamedDeleteBeforeGone": any(e.endswith("-delete") for e in seen)}
    stage.actions.append("Topic doomed deleted (admin deleteTopics); waited until no doomed-0 dir was left "
                         f"(seen while waiting: {sorted(seen)})")
    return stage


# ---- the copies ----

def log_files(stage_dir: Path) -> dict[str, bytes]:
    """Every `.log` file of the stage's copy, by its path relative to the stage dir."""
    return {str(p.relative_to(stage_dir)): p.read_bytes() for p in sorted(stage_dir.rglob("*.log"))}


def partition_of(path: str) -> str:
    return path.split("/")[1]


def changes(before: dict[str, bytes], after: dict[str, bytes]) -> dict[str, Any]:
    """The `.log` files of a stage against the stage before, by path: identical, changed, new, removed. `relocated`:
    the new ones byte-identical to a removed one of the same partition dir and file name in the other log dir."""
    new = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    by_name = {p.split("/", 1)[1]: p for p in removed}
    return {
        "identical": sorted(p for p in after if p in before and after[p] == before[p]),
        "changed": sorted(p for p in after if p in before and after[p] != before[p]),
        "new": new,
        "removed": removed,
        "relocated": {p: by_name[p.split("/", 1)[1]] for p in new
                      if p.split("/", 1)[1] in by_name and before[by_name[p.split("/", 1)[1]]] == after[p]},
    }


def partitions_at(stage_dir: Path) -> dict[str, str]:
    """Each partition dir of the copy and the log dir holding it."""
    return {p.name: d for d in LOG_DIRS for p in sorted((stage_dir / d).iterdir()) if p.is_dir()}


def check_stages(out: Path, stages: list[dict[str, Any]]) -> list[str]:
    """What each stage's copy must show against the one before; the problems found."""
    problems = []
    files = [log_files(out / f"stage-{s['stage']}") for s in stages]
    for s in stages[1:]:
        c = s["logFiles"]
        if not c["identical"]:
            problems.append(f"stage-{s['stage']}: no .log file is byte-identical to stage-{s['stage'] - 1}'s")
        if not (c["changed"] or c["new"]):
            problems.append(f"stage-{s['stage']}: no .log file changed or new since stage-{s['stage'] - 1}")
    txn0 = txn_index(out / "stage-0" / stages[0]["partitions"]["txn-0"] / "txn-0")
    if not any(txn0.values()):
        problems.append("stage-0: txn-0 has no .txnindex entry (aborted transaction #1)")
    spanning = stages[1]["copy"]["txnAbortAfterRoll"]
    if not spanning:
        problems.append("stage-1: no aborted transaction of txn-0 has its .txnindex entry in a later segment than "
                        "its first record")

    def segments(n: int, part: str) -> dict[str, bytes]:
        return {p.rsplit("/", 1)[1]: data for p, data in files[n].items() if partition_of(p) == part}

    retained1, retained2 = segments(1, "retained-0"), segments(2, "retained-0")
    if not retained1 or min(retained1) in retained2 or not set(retained1) - set(retained2):
        problems.append(f"stage-2: retained-0 still has stage-1's oldest segment ({sorted(retained1)} -> "
                        f"{sorted(retained2)})")
    if sorted(segments(0, "retained-0")) != sorted(retained1):
        problems.append("stage-1: retained-0's segments are not stage-0's (retention acted too early)")
    compacted1, compacted2 = segments(1, "compacted-0"), segments(2, "compacted-0")
    if not any(name in compacted2 and compacted2[name] != data for name, data in compacted1.items()):
        problems.append("stage-2: no segment file of compacted-0 differs from stage-1's of the same name")
    b1, b2 = stages[1]["copy"]["compactedCleanerOffset"], stages[2]["copy"]["compactedCleanerOffset"]
    if b1 is None or b2 is None or not b2 > b1:
        problems.append(f"stage-2: compacted-0's cleaner checkpoint did not move ({b1} -> {b2})")
    last = out / "stage-3"
    if not (last / "logdir-b" / "moved-0").is_dir() or any(p.name.startswith("moved-0") for p in
                                                            (last / "logdir-a").iterdir()):
        problems.append(f"stage-3: moved-0 is not in logdir-b alone: {stages[3]['partitions'].get('moved-0')}")
    if stages[2]["partitions"].get("moved-0") != "logdir-a":
        problems.append("stage-2: moved-0 is not in logdir-a")
    doomed = [f"{d}/{p.name}" for d in LOG_DIRS for p in (last / d).iterdir() if p.name.startswith("doomed-0")]
    if doomed:
        problems.append(f"stage-3: doomed-0 dirs left: {doomed}")
    if stages[2]["partitions"].get("doomed-0") is None:
        problems.append("stage-2: no doomed-0 dir")
    for s in stages:
        if s["contentBytes"] > STAGE_SIZE_LIMIT:
            problems.append(f"stage-{s['stage']}: {s['contentBytes']} bytes of content, over {STAGE_SIZE_LIMIT}")
        leftovers = [str(p.relative_to(out)) for p in (out / f"stage-{s['stage']}").rglob("*")
                     if _TRANSIENT.search(p.name) or p.name == ".lock"]
        if leftovers:
            problems.append(f"stage-{s['stage']}: left in the copy: {leftovers}")
    return problems


def stage_json(out: Path, stage: Stage, before: dict[str, bytes] | None) -> dict[str, Any]:
    stage_dir = out / f"stage-{stage.number}"
    files = log_files(stage_dir)
    parts = partitions_at(stage_dir)
    txn_dir = stage_dir / parts["txn-0"] / "txn-0"
    copy = {
        "compactedCleanerOffset": read_offset_checkpoint(
            stage_dir / parts["compacted-0"] / "cleaner-offset-checkpoint").get(("compacted", 0)),
        "txnIndex": {name: entries for name, entries in txn_index(txn_dir).items() if entries},
        "txnAbortAfterRoll": spanning_aborts(txn_dir),
    }
    return {
        "stage": stage.number,
        "dir": f"stage-{stage.number}",
        "actions": stage.actions,
        "broker": stage.broker,
        "copy": copy,
        "partitions": parts,
        "segments": {part: base_offsets(stage_dir / d / part) for part, d in parts.items()},
        "contentBytes": content_size(stage_dir),
        "logFiles": None if before is None else changes(before, files),
    }


# ---- one version ----

def sanitize(data: Any, broker: TwoDirBroker) -> Any:
    """Log dir names in place of the build machine's paths (server.log lines and the Admin API name them)."""
    text = json.dumps(data)
    for name, d in broker.log_dirs.items():
        text = text.replace(json.dumps(str(d))[1:-1], name)
    text = text.replace(json.dumps(str(broker.work_dir))[1:-1], "<build>")
    text = text.replace(json.dumps(str(REPO_ROOT))[1:-1], "<repo>")
    return json.loads(text)


def run(version: str, build: Path) -> dict[str, Any]:
    dist = KafkaDistribution(version).ensure()
    out = build / "out"
    broker = TwoDirBroker(dist, BROKER_PROPS, build / "broker")
    stages: list[Stage] = []
    try:
        broker.start()
        log(f"Kafka {version}: broker up at {broker.bootstrap}, log dirs {', '.join(LOG_DIRS)}")
        for number in range(4):
            restart(broker, number)
            if number == 0:
                stage = stage_0(broker, version)
            elif number == 1:
                stage = stage_1(broker)
            elif number == 2:
                stage = stage_2(broker)
            else:
                stage = stage_3(broker)
            stages.append(stage)
            stop_and_copy(broker, out, number)
    finally:
        broker.stop(clean=True)
    meta = (broker.log_dirs[LOG_DIRS[0]] / "meta.properties").read_text()
    records, previous = [], None
    for stage in stages:
        records.append(stage_json(out, stage, previous))
        previous = log_files(out / f"stage-{stage.number}")
    props = {k: v for k, v in broker.properties().items()
             if k not in ("listeners", "advertised.listeners", "controller.quorum.voters", "log.dirs")}
    result = {
        "kafkaVersion": version,
        "clusterId": re.search(r"cluster\.id=(\S+)", meta).group(1),
        "nodeId": NODE_ID,
        "logDirs": list(LOG_DIRS),
        "brokerConfig": {**props, "log.dirs": ",".join(f"<build>/{d}" for d in LOG_DIRS)},
        "topics": {t.name: {"partitions": t.partitions, "config": topic_config(t, version), "text": t.text}
                   for t in TOPICS.values()},
        "stages": records,
    }
    return sanitize(result, broker)


def build_version(version: str) -> bool:
    """Build one version; False (the build dir kept, the output unchanged) when a stage fails its checks."""
    started = time.monotonic()
    build = BUILD_DIR / version
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir(parents=True)
    result = run(version, build)
    result["buildSeconds"] = round(time.monotonic() - started)
    (build / "out" / "stages.json").write_text(to_json(result))
    problems = check_stages(build / "out", result["stages"])
    for problem in problems:
        log(f"problem: {problem}")
    if problems:
        log(f"kept {build.relative_to(REPO_ROOT)} (out/, broker/server.log); output unchanged")
        return False
    target = OUT_DIR / version
    staged = OUT_DIR / f".{version}.new"
    shutil.rmtree(staged, ignore_errors=True)
    staged.parent.mkdir(parents=True, exist_ok=True)
    (build / "out").rename(staged)
    shutil.rmtree(target, ignore_errors=True)
    staged.rename(target)
    shutil.rmtree(build)
    for s in result["stages"]:
        log(f"stage-{s['stage']}: {s['contentBytes']} bytes without zero tails; .log files {summary(s['logFiles'])}")
    log(f"wrote {target.relative_to(REPO_ROOT)} in {result['buildSeconds']} s")
    return True


# ---- README ----

def summary(c: dict[str, Any] | None) -> str:
    if c is None:
        return "(first stage)"
    text = ", ".join(f"{len(c[k])} {k}" for k in ("identical", "changed", "new", "removed"))
    return text + (f" ({len(c['relocated'])} of the new moved byte-identical)" if c["relocated"] else "")


def _offsets(offsets: dict[str, int]) -> str:
    return ", ".join(f"{tp} {o}" for tp, o in offsets.items())


def _props(props: dict[str, Any]) -> list[str]:
    return [f"    {k}={v}" for k, v in props.items()]


def results_text(version: str, data: dict[str, Any]) -> list[str]:
    stages = data["stages"]
    s0, s1, s2, s3 = stages
    lines = [f"### {version}", "",
             f"Cluster id `{data['clusterId']}`; built in {data.get('buildSeconds', '?')} s.", "",
             "| stage | content bytes | `.log` identical | changed | new | removed | of the new: moved |",
             "|---|---|---|---|---|---|---|"]
    for s in stages:
        c = s["logFiles"]
        counts = ["-"] * 5 if c is None else [str(len(c[k])) for k in ("identical", "changed", "new", "removed",
                                                                        "relocated")]
        lines.append(f"| stage-{s['stage']} | {s['contentBytes']} | " + " | ".join(counts) + " |")
    spanning = s1["copy"]["txnAbortAfterRoll"]
    moved = s3["broker"]["moved"]
    doomed = s3["broker"]["doomed"]
    lines += [
        "",
        f"- stage-0: the broker placed moved-0 in {s0['broker']['movedPlacedByBroker']}"
        + ("" if s0["broker"]["movedPlacedByBroker"] == "logdir-a" else " (moved to logdir-a before any write)")
        + f"; compacted-0's cleaner checkpoint {s0['broker']['compactedCleanerOffset']}; group committed "
        f"{_offsets(s0['broker']['groupCommitted'])}.",
        "- stage-1: txn-0's aborted transaction #3 began at offset "
        + ", ".join(f"{e['firstOffset']} and its `.txnindex` entry is in `{e['txnindex']}` (segment base "
                    f"{e['segmentBaseOffset']}, last offset {e['lastOffset']})" for e in spanning)
        + f"; group committed {_offsets(s1['broker']['groupCommitted'])}.",
        f"- stage-2: the broker deleted retained-0's segments {s2['broker']['retainedDeletedBaseOffsets']} "
        f"(segments {s2['broker']['retainedSegmentsBefore']} -> {s2['broker']['retainedSegmentsAfter']}, log "
        f"start offset {s2['broker']['retainedLogStartOffset']}); compacted-0's cleaner checkpoint "
        f"{s2['broker']['compactedCleanerOffsetBefore']} -> {s2['broker']['compactedCleanerOffset']}.",
        f"- stage-3: moved-0 from {moved['from']} to {moved['to']} (dirs seen while it moved: "
        f"{', '.join(f'`{e}`' for e in moved['entriesSeen'])}); doomed-0 was in "
        f"{', '.join(f'`{e}`' for e in doomed['dirBefore'])}, seen while deleted: "
        f"{', '.join(f'`{e}`' for e in doomed['entriesSeen']) or 'nothing'}; gone.",
        "",
    ]
    big = [(name, size, kept) for name, size, kept in preallocated(OUT_DIR / version)]
    if big:
        lines += ["Preallocated indexes a clean stop leaves untrimmed (the metadata log's active segment: Kafka 4.x "
                  "builds that log's config from a fixed set of properties, so `segment.index.bytes` stays at its "
                  "10 MiB default whatever `log.index.size.max.bytes` says; the files are copied sparse):", ""]
        lines += [f"- `{name}`: {size} bytes, all but {kept} of them a zero tail" for name, size, kept in big]
        lines.append("")
    return lines


def readme(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# data/samples-incremental: one broker's log dirs at four stages, for incremental runs",
        "",
        "Generated by `tests/harness/incremental_corpus.py`; regenerate with `make samples-incremental` "
        "(`python -m tests.harness.incremental_corpus [--kafka 3.9.2] [--kafka 4.4.0]`, default both). Do not edit "
        "by hand.",
        "",
        "For each Kafka version, one single-node KRaft broker (broker and controller in one process, node id "
        f"{NODE_ID}) with two log dirs, `log.dirs=<build>/logdir-a,<build>/logdir-b`, was stopped cleanly at four "
        "moments; at each, both log dirs were copied whole (without `.lock`) to "
        "`<version>/stage-<n>/logdir-a/` and `.../logdir-b/`, and the broker was started again on its own dirs "
        "(the copies were never touched again). So between two stages every difference is the broker's own doing: "
        "segments appended to and rolled, segments deleted by retention, segments rewritten by the cleaner, a "
        "partition moved between log dirs, a topic deleted. An incremental job can reuse what it decoded from the "
        "files that did not change and decode only the new or changed ones.",
        "",
        "`<version>/stages.json` has, per stage: `actions` (what was done), `broker` (what the broker and the "
        "admin API reported before the stop: committed group offsets, the deleted segments of `retained` from the "
        "broker's own log lines and its log start offset, the cleaner's checkpoint and its passes' dirty sections, "
        "where `moved` ended and the dirs seen while it moved, whether `doomed`'s dir is gone), `copy` (read from "
        "the copy: compacted-0's cleaner checkpoint, txn-0's `.txnindex` entries by file, `txnAbortAfterRoll`: "
        "the entries whose transaction began before their segment), `partitions` (the log dir holding each "
        "partition dir), "
        "`segments` (base offsets), `contentBytes` (the copy's bytes without zero tails) and `logFiles`: every "
        "`.log` file against the stage before, by path relative to the stage dir (`identical`, `changed`, `new`, "
        "`removed`; `relocated`: new paths byte-identical to a removed one of the same partition in the other log "
        "dir).",
        "",
        "## Broker",
        "",
        "Besides listeners, the controller quorum and log.dirs:",
        "",
    ]
    lines += _props({k: v for k, v in next(iter(results.values()))["brokerConfig"].items() if k != "log.dirs"})
    lines += ["", "## Topics", "",
              f"Records are keyed `<topic>-<n>` (`compacted`: `key-<n % {COMPACTED_KEYS}>`), valued "
              f"`<topic>|<label>|<n>|` padded with dots to {VALUE_BYTES} bytes, one record per batch (each send "
              "waits for its acknowledgement). Segments: "
              f"`segment.bytes` on 3.9, `internal.segment.bytes` on 4.x (whose `segment.bytes` has a 1 MiB minimum).",
              ""]
    for t in TOPICS.values():
        config = ", ".join(f"`{k}={v}`" for k, v in t.config.items())
        lines.append(f"- `{t.name}` ({t.partitions} partition{'s' if t.partitions > 1 else ''}, "
                     f"{t.segment_bytes}-byte segments{', ' + config if config else ''}): {t.text}")
    lines += [
        "",
        "## Stages",
        "",
        "- stage-0: the topics created and written; `moved-0` on logdir-a; the consumer group commits; the "
        "cleaner's first pass on `compacted-0`.",
        "- stage-1: `appends` grows (new segments); on `txn-0` a transaction begins before a segment roll and is "
        "aborted after it, so its `.txnindex` entry is in a later segment than its first records "
        "(`copy.txnAbortAfterRoll`); the group commits again.",
        "- stage-2: `retained` grows past retention.bytes and the broker's retention deletes its oldest segments; "
        "`compacted` gets more updates and the cleaner rewrites its segments (same file names, other content); "
        "`appends` grows a little.",
        "- stage-3: `moved-0` moved to logdir-b with Admin.alterReplicaLogDirs (the broker copies it into "
        "`moved-0.<id>-future`, swaps, deletes the old dir); topic `doomed` deleted (the broker renames its dir "
        "`doomed-0.<id>-delete`, then deletes it after file.delete.delay.ms). Before the stop the builder waits "
        "until neither is left.",
        "",
        "Before each stop the builder waits until no `.deleted`, `.cleaned` or `.swap` file and no `-delete` or "
        "`-future` dir is left, so no copy holds one. A build is kept only if: between consecutive stages some "
        "`.log` files are byte-identical and some changed or new; stage-0 has `.txnindex` entries; stage-1 has an "
        "abort entry after a roll; stage-2 lacks `retained-0`'s oldest segment of stage-1 and has `compacted-0` "
        "segments whose content differs from stage-1's of the same name, with the cleaner checkpoint further on; "
        "stage-3 has `moved-0` in logdir-b and not in logdir-a and no `doomed-0` dir; every stage holds under "
        f"{STAGE_SIZE_LIMIT // 2**20} MiB of content.",
        "",
        "## What the brokers did",
        "",
    ]
    for version, data in results.items():
        lines += results_text(version, data)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return build_versions("make samples-incremental", __doc__, build_version,
                          lambda: write_readme(OUT_DIR, "stages.json", readme), argv)


if __name__ == "__main__":
    sys.exit(main())
