"""`make samples-internal`: Kafka's internal topics written by a real broker, with the broker's own view as oracle.

For each Kafka version (3.9.2, 4.4.0) a single-node KRaft broker on loopback plays one scenario that leaves known
state in `__consumer_offsets`, `__transaction_state`, `__cluster_metadata` (and `__share_group_state` on 4.x):
consumer groups in several states, committed / aborted / open / timed-out transactions, a deleted topic and late
metadata changes. Right before the clean stop the broker's view of that state is recorded through the admin API
(confluent-kafka's and Kafka's Java Admin, tests/harness/java/AdminOracle.java) and Kafka's TransactionsCommand;
that record, `oracle.json`, is what a reader of the copied log dir should find.

    python -m tests.harness.internal_corpus [--kafka 3.9.2] [--kafka 4.4.0]   (default: both)

Writes data/samples-internal/<version>/broker/ (the log dir, without `.lock`), .../<version>/oracle.json and
data/samples-internal/README.md. Each version is built in .cache/samples-internal-build/<version> and replaces
its output only when the whole run succeeded.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import re
import shutil
import subprocess
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.harness.broker import (
    CACHE_DIR,
    JAVA_SRC_DIR,
    KAFKA_4,
    REPO_ROOT,
    VERSIONS,
    HarnessError,
    KafkaBroker,
    KafkaDistribution,
    dump_log,
)
from tests.harness.plan import Plan, run_java, run_librdkafka
from tests.harness.scenarios import KAFKA4_BROKER_PROPS

OUT_DIR = REPO_ROOT / "data" / "samples-internal"
BUILD_DIR = CACHE_DIR / "samples-internal-build"
NODE_ID = 1

BROKER_PROPS: dict[str, Any] = {
    "offsets.topic.num.partitions": 3,
    "transaction.state.log.num.partitions": 2,
    "transaction.state.log.min.isr": 1,
    # A deleted topic's `<topic>-<p>.<id>-delete` dir stays on disk for 10 minutes, past the shutdown.
    "file.delete.delay.ms": 600000,
    # A KRaft snapshot (`__cluster_metadata-0/*.checkpoint`) every 5 s while the metadata log grows (it always
    # does: the controller appends a NoOpRecord every 500 ms).
    "metadata.log.max.snapshot.interval.ms": 5000,
    "log.flush.offset.checkpoint.interval.ms": 5000,
    "log.flush.start.offset.checkpoint.interval.ms": 5000,
    # The coordinator looks for timed-out transactions every 2 s (default 10 s).
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 2000,
}
# __share_group_state (KIP-932) on the single node, as in the 4.x sample corpus.
KAFKA4_EXTRA_PROPS: dict[str, Any] = {k: v for k, v in KAFKA4_BROKER_PROPS.items()
                                      if k.startswith("share.coordinator.state.topic.")}

# name: (partitions, topic config, records produced per partition)
TOPICS: dict[str, tuple[int, dict[str, Any], int]] = {
    "orders": (3, {}, 30),
    "payments": (2, {"retention.ms": 86400000}, 20),
    "ledger": (2, {}, 0),
    "audit": (1, {"cleanup.policy": "compact"}, 10),
    # A deleted topic's log is closed without trimming its active segment's preallocated indexes (10 MiB each
    # by default): small ones keep the corpus small.
    "doomed": (1, {"segment.index.bytes": 4096}, 10),
}
LATE_TOPIC = "late"
ORDERS_RETENTION_MS = 3600000
PAYMENTS_PARTITIONS_AFTER = 3
RESET_DELETE_BEFORE = 10

# g-classic: two commits by a consumer (no subscription, generation -1), metadata "m-<offset>".
CLASSIC_COMMITS = ({("orders", 0): 5, ("orders", 1): 7}, {("orders", 0): 12, ("orders", 1): 9, ("orders", 2): 30})
LIVE_CLIENT_ID = "g-live-client"
CLASSIC_GROUPS = ("g-classic", "g-beyond", "g-reset", "g-offsets-deleted", "g-deleted", "g-live")
CONSUMER_GROUP, SHARE_GROUP = "g-consumer", "g-share"
TXN_RECORDS = 3  # records per partition and transaction
OPEN_TXN_TIMEOUT_MS, EXPIRED_TXN_TIMEOUT_MS = 900000, 5000
# After the last changes: time for the broker to create the new partitions' logs before they are asked about.
TAIL_WAIT_S = 1


def log(msg: str) -> None:
    print(f"[samples-internal] {msg}", flush=True)


def now_ms() -> int:
    return int(time.time() * 1000)


def kafka_uuid(uuid: Any) -> str:
    """A confluent-kafka Uuid as Kafka prints it (Uuid.toString: URL-safe base64 of the 16 bytes, no padding)."""
    raw = (uuid.get_most_significant_bits().to_bytes(8, "big", signed=True)
           + uuid.get_least_significant_bits().to_bytes(8, "big", signed=True))
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def broker_props(version: str) -> dict[str, Any]:
    return {**BROKER_PROPS, **(KAFKA4_EXTRA_PROPS if version == KAFKA_4 else {})}


# ---- the scenario ----

def produce(broker: KafkaBroker) -> int:
    plan = Plan().open("p", {"linger.ms": 5, "acks": "all"})
    for topic, (partitions, _, per_partition) in TOPICS.items():
        for p in range(partitions):
            for i in range(per_partition):
                key = f"{topic}-k{i % 5}" if topic == "audit" else f"{topic}-{p}-{i}"
                plan.send("p", topic, f"{topic} p{p} #{i}".encode(), key.encode(), partition=p)
            plan.do("flush", "p")
    return len(run_librdkafka(plan.do("close", "p"), broker.bootstrap))


def _tps(offsets: dict[tuple[str, int], int]) -> list[Any]:
    from confluent_kafka import TopicPartition

    return [TopicPartition(t, p, o) for (t, p), o in offsets.items()]


def admin_commit(broker: KafkaBroker, group: str, offsets: dict[tuple[str, int], int]) -> None:
    from confluent_kafka import ConsumerGroupTopicPartitions

    futures = broker.admin().alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, _tps(offsets))])
    futures[group].result(timeout=60)


def classic_commits(broker: KafkaBroker) -> None:
    """g-classic: a Java consumer's synchronous commits with metadata (it never joins: a simple group). Not
    librdkafka: confluent-kafka sends a Python metadata string with a trailing NUL byte."""
    commits = [",".join(f"{t}:{p}={o}:m-{o}" for (t, p), o in commit.items()) for commit in CLASSIC_COMMITS]
    broker.dist.run_java("CommitOffsets.java", broker.bootstrap, "g-classic", *commits)


def admin_groups(broker: KafkaBroker) -> None:
    admin = broker.admin()
    admin_commit(broker, "g-beyond", {("payments", 0): 1000})
    admin_commit(broker, "g-reset", {("payments", 1): 2})
    admin_commit(broker, "g-offsets-deleted", {("orders", 0): 3, ("orders", 1): 4})
    # confluent-kafka has no DeleteOffsets; Kafka's kafka-consumer-groups --delete-offsets does it.
    broker.dist.run_java("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server",
                         broker.bootstrap, "--delete-offsets", "--group", "g-offsets-deleted", "--topic", "orders:0")
    admin_commit(broker, "g-deleted", {("orders", 2): 1})
    admin.delete_consumer_groups(["g-deleted"], request_timeout=60)["g-deleted"].result(timeout=60)


def delete_payments_records(broker: KafkaBroker) -> None:
    from confluent_kafka import TopicPartition

    futures = broker.admin().delete_records([TopicPartition("payments", 1, RESET_DELETE_BEFORE)])
    for future in futures.values():
        future.result(timeout=60)


class LiveConsumer:
    """g-live: a librdkafka classic-protocol consumer that reads all of `orders`, commits, and stays in the
    (Stable) group: a thread keeps polling until `stop()`, after the broker is gone."""

    def __init__(self, broker: KafkaBroker, records: int) -> None:
        from confluent_kafka import Consumer

        self.consumer = Consumer(broker.client_config(**{
            "group.id": "g-live", "client.id": LIVE_CLIENT_ID, "auto.offset.reset": "earliest",
            "enable.auto.commit": False}))
        self.consumer.subscribe(["orders"])
        seen, deadline = 0, time.monotonic() + 60
        while seen < records and time.monotonic() < deadline:
            msg = self.consumer.poll(1.0)
            if msg is not None and not msg.error():
                seen += 1
        if seen != records:
            raise HarnessError(f"g-live read {seen} of {records} records")
        self.consumer.commit(asynchronous=False)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stopping.is_set():
            self.consumer.poll(0.5)

    def stop(self) -> None:
        """Stop polling and close (the broker may be gone: close is given 30 s in a daemon thread)."""
        self._stopping.set()
        self._thread.join(10)
        closer = threading.Thread(target=self.consumer.close, daemon=True)
        closer.start()
        closer.join(30)


def group_consume(broker: KafkaBroker, protocol: str, group: str, records: int, topic: str) -> int:
    proc = broker.dist.run_java("GroupConsume.java", broker.bootstrap, protocol, group, str(records), topic)
    return int(proc.stdout.split()[-1])


def txn_plan(tid: str, partitions: tuple[int, ...], end: str, timeout_ms: int | None = None) -> Plan:
    """One transaction of `tid` on ledger; `end` is commit, abort or halt (the JVM stops inside it)."""
    props: dict[str, Any] = {"acks": "all", "enable.idempotence": "true", "linger.ms": 5, "transactional.id": tid}
    if timeout_ms is not None:
        props["transaction.timeout.ms"] = timeout_ms
    plan = Plan().open(tid, props).do("init", tid).do("begin", tid)
    for p in partitions:
        for i in range(TXN_RECORDS):
            plan.send(tid, "ledger", f"{tid} p{p} #{i}".encode(), f"{tid}-{i}".encode(), partition=p)
    plan.do("flush", tid)
    if end == "halt":
        return plan.do("halt")
    return plan.do(end, tid).do("close", tid)


def transactions(broker: KafkaBroker) -> None:
    dist, bootstrap = broker.dist, broker.bootstrap
    run_java(txn_plan("t-committed", (0, 1), "commit").extend(txn_plan("t-aborted", (0, 1), "abort")),
             dist, bootstrap)
    run_java(txn_plan("t-open", (0, 1), "halt", OPEN_TXN_TIMEOUT_MS), dist, bootstrap)
    run_java(txn_plan("t-expired", (1,), "halt", EXPIRED_TXN_TIMEOUT_MS), dist, bootstrap)
    log("waiting for the coordinator to abort t-expired")
    dist.run_java("AdminOracle.java", bootstrap, "wait-txn", "t-expired", "CompleteAbort", "90000")


def metadata_dir(broker: KafkaBroker) -> Path:
    return broker.log_dir / "__cluster_metadata-0"


def checkpoints(broker: KafkaBroker) -> list[str]:
    return sorted(p.name for p in metadata_dir(broker).glob("*.checkpoint"))


def wait_for_snapshot(broker: KafkaBroker, seen: list[str] = (), timeout: float = 60.0) -> list[str]:
    """Wait for a `.checkpoint` in __cluster_metadata-0 that is not in `seen`; return them all."""
    deadline = time.monotonic() + timeout
    while not set(checkpoints(broker)) - set(seen):
        if time.monotonic() > deadline:
            raise HarnessError(f"no new KRaft snapshot in __cluster_metadata-0 within {timeout}s")
        time.sleep(0.05)
    return checkpoints(broker)


def topic_ids(broker: KafkaBroker, names: list[str]) -> dict[str, Any]:
    """name -> confluent-kafka TopicDescription."""
    from confluent_kafka import TopicCollection

    futures = broker.admin().describe_topics(TopicCollection(names), request_timeout=60)
    return {name: f.result(timeout=60) for name, f in futures.items()}


def late_changes_first(broker: KafkaBroker) -> dict[str, str]:
    """Delete `doomed` and alter orders' retention; returns {doomed: its topic id}, described just before."""
    admin = broker.admin()
    deleted = {"doomed": kafka_uuid(topic_ids(broker, ["doomed"])["doomed"].topic_id)}
    admin.delete_topics(["doomed"], operation_timeout=30)["doomed"].result(timeout=60)
    broker.alter_topic_config("orders", {"retention.ms": ORDERS_RETENTION_MS})
    deadline = time.monotonic() + 30
    while "doomed" in admin.list_topics(timeout=10).topics:
        if time.monotonic() > deadline:
            raise HarnessError("topic doomed still listed 30 s after its deletion")
        time.sleep(0.2)
    return deleted


def late_changes_last(broker: KafkaBroker) -> None:
    """Grow payments and create `late` (right after a snapshot: these should be only in the log tail)."""
    from confluent_kafka.admin import NewPartitions

    futures = broker.admin().create_partitions([NewPartitions("payments", PAYMENTS_PARTITIONS_AFTER)],
                                               operation_timeout=30)
    futures["payments"].result(timeout=60)
    broker.create_topic(LATE_TOPIC, 1)


# ---- the oracle ----

def record_topics(broker: KafkaBroker) -> tuple[dict[str, Any], dict[str, Any]]:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import ConfigResource, ConfigSource, OffsetSpec

    admin = broker.admin()
    names = sorted(t for t in admin.list_topics(timeout=30).topics if not t.startswith("__"))
    described = topic_ids(broker, names)
    resources = [ConfigResource(ConfigResource.Type.TOPIC, name) for name in names]
    configs = {res.name: f.result(timeout=60) for res, f in admin.describe_configs(resources).items()}
    topics: dict[str, Any] = {}
    specs: dict[Any, Any] = {}
    for name in names:
        d = described[name]
        if d.is_internal:
            continue
        partitions = {}
        for p in sorted(d.partitions, key=lambda p: p.id):
            partitions[str(p.id)] = {"leader": p.leader.id if p.leader else None,
                                     "replicas": [n.id for n in p.replicas], "isr": [n.id for n in p.isr]}
            specs[(name, p.id)] = None
        dynamic = {k: e.value for k, e in configs[name].items()
                   if e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}
        topics[name] = {"topic_id": kafka_uuid(d.topic_id), "partitions": partitions, "configs": dynamic}
    offsets: dict[str, Any] = {}
    for which, spec in (("log_start", OffsetSpec.earliest()), ("log_end", OffsetSpec.latest())):
        futures = admin.list_offsets({TopicPartition(t, p): spec for t, p in specs}, request_timeout=60)
        for tp, f in futures.items():
            offsets.setdefault(f"{tp.topic}-{tp.partition}", {})[which] = f.result(timeout=60).offset
    return topics, dict(sorted(offsets.items()))


def describe_groups_protocol(broker: KafkaBroker, group: str) -> str | None:
    """The protocol type of a classic group as DescribeGroups reports it (librdkafka's list_groups)."""
    with warnings.catch_warnings():  # deprecated in favour of describe_consumer_groups, which lacks it
        warnings.simplefilter("ignore", DeprecationWarning)
        found = broker.admin().list_groups(group=group, timeout=30)
    return found[0].protocol_type if found else None


def record_groups(broker: KafkaBroker, java: dict[str, Any], groups: list[str]) -> dict[str, Any]:
    described = {**java["groups"], **java.get("share_groups", {})}
    listed_types = java.get("groups_listed")  # 4.x: Admin.listGroups, with each group's protocol type
    out: dict[str, Any] = {}
    for group in groups:
        if group not in described:
            out[group] = {"absent": True}
            continue
        entry = dict(described[group])
        entry["type"] = entry["type"].lower()
        if listed_types is not None:
            entry["protocol_type"] = listed_types[group]["protocol_type"]
        else:
            entry["protocol_type"] = describe_groups_protocol(broker, group)
        out[group] = entry
    return out


class JavaOracle:
    """AdminOracle.java started ahead (compiled, connected, warmed up), recording when `record()` says go."""

    def __init__(self, broker: KafkaBroker, groups: list[str], share_groups: list[str]) -> None:
        args = (broker.bootstrap, "oracle", ",".join(g for g in groups if g not in share_groups),
                ",".join(share_groups) or "-", "ledger", "on-stdin")
        cmd = broker.dist.java_cmd(str(JAVA_SRC_DIR / "AdminOracle.java"), *args)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline()
        if line.strip() != b"ready":
            self.proc.kill()
            _, err = self.proc.communicate()
            raise HarnessError(f"AdminOracle.java did not start: {line!r}\n{err.decode(errors='replace')[-3000:]}")

    def record(self) -> dict[str, Any]:
        out, err = self.proc.communicate(b"go\n", timeout=120)
        if self.proc.returncode != 0:
            raise HarnessError(f"AdminOracle.java exited {self.proc.returncode}:\n{err.decode(errors='replace')}")
        return json.loads(out)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def record_oracle(broker: KafkaBroker, java_oracle: JavaOracle, groups: list[str],
                  deleted: dict[str, str]) -> dict[str, Any]:
    """Everything the oracle holds but the snapshot list, as fast as possible (the TransactionsCommand JVM
    runs while the rest is asked)."""
    recorded_at = now_ms()
    with ThreadPoolExecutor(2) as pool:
        find_hanging = pool.submit(
            broker.dist.run_java, "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server",
            broker.bootstrap, "find-hanging", "--broker-id", str(NODE_ID))
        java_future = pool.submit(java_oracle.record)
        cluster_id = broker.admin().describe_cluster(request_timeout=30).result(timeout=60).cluster_id
        topics, log_offsets = record_topics(broker)
        java = java_future.result()
        hanging = find_hanging.result()
    for group in groups:
        if group == "g-deleted":
            if group in java["consumer_groups_listed"] or group in java.get("groups_listed", {}):
                raise HarnessError("g-deleted is still listed after delete_consumer_groups")
        elif group not in java["groups"] and group not in java.get("share_groups", {}):
            raise HarnessError(f"group {group} is not listed: {sorted(java['consumer_groups_listed'])}")
    return {
        "kafka": broker.dist.version,
        "cluster_id": cluster_id,
        "node_id": NODE_ID,
        "recorded_at_ms": recorded_at,
        "topics": topics,
        "deleted_topics": deleted,
        "log_offsets": log_offsets,
        "groups": record_groups(broker, java, groups),
        "transactions": java["transactions"],
        "producers": java["producers"],
        "find_hanging": hanging.stdout,
    }


def check_on_disk(oracle: dict[str, Any], log_dir: Path) -> list[str]:
    """The copied log dir against the oracle: topic ids in partition.metadata, the deleted topic's dir, the
    cluster id in meta.properties. Returns problems (empty when all agree)."""
    problems = []
    meta = (log_dir / "meta.properties").read_text()
    if f"cluster.id={oracle['cluster_id']}" not in meta:
        problems.append("meta.properties has another cluster.id")
    dirs = {p.name: p for p in log_dir.iterdir() if p.is_dir()}
    for name, topic in oracle["topics"].items():
        for p in topic["partitions"]:
            path = dirs.get(f"{name}-{p}")
            text = (path / "partition.metadata").read_text() if path else ""
            if f"topic_id: {topic['topic_id']}" not in text:
                problems.append(f"{name}-{p}/partition.metadata does not name topic id {topic['topic_id']}")
    for name, topic_id in oracle["deleted_topics"].items():
        gone = [d for n, d in dirs.items() if n.startswith(f"{name}-") and n.endswith("-delete")]
        if not any(f"topic_id: {topic_id}" in (d / "partition.metadata").read_text() for d in gone):
            problems.append(f"no {name}-*-delete dir with topic id {topic_id}")
        if f"{name}-0" in dirs:
            problems.append(f"{name}-0 is still on disk")
    if not oracle["metadata_snapshots"]:
        problems.append("no .checkpoint in __cluster_metadata-0")
    return problems


def expectations(oracle: dict[str, Any]) -> list[str]:
    """Where the broker's view differs from what the scenario meant to leave (reported, not fatal)."""
    notes = []
    want_groups = {"g-live": "Stable", "g-classic": "Empty", "g-beyond": "Empty", "g-reset": "Empty",
                   "g-offsets-deleted": "Empty", CONSUMER_GROUP: "Empty", SHARE_GROUP: "Empty"}
    for group, state in want_groups.items():
        got = oracle["groups"].get(group)
        if got is not None and got.get("state") != state:
            notes.append(f"group {group} is {got.get('state')}, expected {state}")
    want_txns = {"t-committed": "CompleteCommit", "t-aborted": "CompleteAbort", "t-open": "Ongoing",
                 "t-expired": "CompleteAbort"}
    for tid, state in want_txns.items():
        got = oracle["transactions"].get(tid, {}).get("state")
        if got != state:
            notes.append(f"transaction {tid} is {got}, expected {state}")
    return notes


def run(version: str, build: Path) -> dict[str, Any]:
    dist = KafkaDistribution(version).ensure()
    kafka4 = version == KAFKA_4
    groups = list(CLASSIC_GROUPS) + ([CONSUMER_GROUP, SHARE_GROUP] if kafka4 else [])
    share_groups = [SHARE_GROUP] if kafka4 else []
    broker = KafkaBroker(dist, broker_props(version), node_id=NODE_ID)
    live: LiveConsumer | None = None
    java_oracle: JavaOracle | None = None
    try:
        broker.start()
        log(f"broker {version} up at {broker.bootstrap}; topics {', '.join(TOPICS)}")
        for name, (partitions, config, _) in TOPICS.items():
            broker.create_topic(name, partitions, config)
        log(f"produced {produce(broker)} records (librdkafka)")
        log("groups: g-classic (consumer commits), g-beyond, g-reset, g-offsets-deleted, g-deleted (admin)")
        classic_commits(broker)
        admin_groups(broker)
        if kafka4:
            payments = TOPICS["payments"][0] * TOPICS["payments"][2]
            log(f"{CONSUMER_GROUP} (KIP-848) on payments, {SHARE_GROUP} (KIP-932) on audit")
            group_consume(broker, "consumer", CONSUMER_GROUP, payments, "payments")
            group_consume(broker, "share", SHARE_GROUP, TOPICS["audit"][2], "audit")
        log(f"delete_records payments-1 before offset {RESET_DELETE_BEFORE}")
        delete_payments_records(broker)
        log("g-live: a consumer reads orders, commits and stays in the group")
        live = LiveConsumer(broker, TOPICS["orders"][0] * TOPICS["orders"][2])
        log("transactions on ledger (Java producer)")
        transactions(broker)
        snapshots = wait_for_snapshot(broker)
        log(f"late metadata changes: delete doomed, orders retention.ms (snapshots so far: {len(snapshots)})")
        deleted = late_changes_first(broker)
        java_oracle = JavaOracle(broker, groups, share_groups)
        log("waiting for the next snapshot (it holds those changes)")
        wait_for_snapshot(broker, checkpoints(broker))
        log(f"right after it: payments to {PAYMENTS_PARTITIONS_AFTER} partitions, topic {LATE_TOPIC}; "
            "recording the oracle")
        late_changes_last(broker)
        time.sleep(TAIL_WAIT_S)
        oracle = record_oracle(broker, java_oracle, groups, deleted)
        log("stopping the broker cleanly")
        broker.stop(clean=True)
        oracle["stopped_at_ms"] = now_ms()
        oracle["metadata_snapshots"] = checkpoints(broker)
        live.stop()
        live = None
        broker.snapshot(build / "broker")
    finally:
        broker.stop(clean=True)
        if live is not None:
            live.stop()
        if java_oracle is not None:
            java_oracle.close()
        broker.cleanup()
    problems = check_on_disk(oracle, build / "broker")
    if problems:
        raise HarnessError("the copied log dir disagrees with the oracle:\n  " + "\n  ".join(problems))
    (build / "oracle.json").write_text(json.dumps(oracle, sort_keys=True, indent=1) + "\n")
    return oracle


# ---- README ----

def _fmt_props(props: dict[str, Any]) -> str:
    return "\n".join(f"    {k}={v}" for k, v in props.items())


def _topic_text(name: str, partitions: int, config: dict[str, Any]) -> str:
    parts = [f"{partitions} partition{'s' if partitions > 1 else ''}", *(f"{k}={v}" for k, v in config.items())]
    return f"`{name}` ({', '.join(parts)})"


def readme(oracles: dict[str, dict[str, Any]]) -> str:
    # work_dir given so that no temp dir is made: only the property values are wanted.
    base = KafkaBroker(KafkaDistribution(VERSIONS[0]), node_id=NODE_ID, work_dir=Path("work")).properties()
    base = {k: v for k, v in base.items() if k not in ("listeners", "advertised.listeners",
                                                       "controller.quorum.voters", "log.dirs")}
    lines = [
        "# data/samples-internal: Kafka's internal topics, with the broker's own view as oracle",
        "",
        "Generated by `tests/harness/internal_corpus.py`; regenerate with `make samples-internal`.",
        "Do not edit by hand.",
        "",
        "For each Kafka version a single-node KRaft broker (`process.roles=broker,controller`, node id 1) ran on",
        "127.0.0.1, played the scenario below, had its state recorded through the admin API (`oracle.json`) and",
        "was stopped cleanly (SIGTERM: indexes trimmed, checkpoints and the clean-shutdown marker written).",
        "Its log dir was then copied, without `.lock`, to `<version>/broker/`.",
        "",
        "## Versions",
        "",
    ]
    for version, oracle in oracles.items():
        recorded = dt.datetime.fromtimestamp(oracle["recorded_at_ms"] / 1000, dt.UTC)
        lines.append(f"- `{version}/`: Apache Kafka {version} (JARs from Maven Central), cluster id "
                     f"`{oracle['cluster_id']}`, recorded {recorded:%Y-%m-%d %H:%M:%S} UTC, "
                     f"{len(oracle['metadata_snapshots'])} KRaft snapshots.")
    lines += [
        "",
        "## Broker settings",
        "",
        "The harness defaults (tests/harness/broker.py; listeners on free loopback ports):",
        "",
        _fmt_props(base),
        "",
        "plus, on every version:",
        "",
        _fmt_props(BROKER_PROPS),
        "",
        f"and on {KAFKA_4} (share groups, `__share_group_state` on the single node):",
        "",
        _fmt_props(KAFKA4_EXTRA_PROPS),
        "",
        "## Scenario",
        "",
        "1. Topics: " + ", ".join(_topic_text(n, p, c) for n, (p, c, _) in TOPICS.items()) + ".",
        "   Keyed records produced with librdkafka (acks=all) to explicit partitions: " + ", ".join(
            f"{n} {r} per partition" for n, (_, _, r) in TOPICS.items() if r) + ".",
        "2. Consumer groups:",
        "   - `g-classic`: a Java consumer (tests/harness/java/CommitOffsets.java; never subscribed: a simple "
        "group, generation -1) commits "
        + " then ".join("{" + ", ".join(f"{t}-{p}={o}" for (t, p), o in c.items()) + "}" for c in CLASSIC_COMMITS)
        + ", each offset with metadata `m-<offset>`: the first commit's keys have two versions.",
        "   - `g-beyond`: admin `alter_consumer_group_offsets` payments-0=1000 (past the log end).",
        f"   - `g-reset`: admin commit payments-1=2, later `delete_records` payments-1 before offset "
        f"{RESET_DELETE_BEFORE}: the committed offset is below the log start.",
        "   - `g-offsets-deleted`: admin commit orders-0=3, orders-1=4, then `kafka-consumer-groups "
        "--delete-offsets` for orders-0 (DeleteOffsets: a tombstone for that key).",
        "   - `g-deleted`: admin commit orders-2=1, then `delete_consumer_groups` (tombstones); it is not listed "
        "any more (`\"absent\": true` in the oracle).",
        f"   - `g-live`: a librdkafka classic-protocol consumer (client.id `{LIVE_CLIENT_ID}`) subscribed to "
        "orders reads all of it, commits, and is still a member of the Stable group when the oracle is recorded "
        "and the broker stops (it is closed afterwards).",
        f"   - {KAFKA_4} only: `{CONSUMER_GROUP}`, a Java consumer with group.protocol=consumer (KIP-848) reads "
        f"payments (tests/harness/java/GroupConsume.java), and `{SHARE_GROUP}`, a Java share consumer (KIP-932), "
        "reads and accepts audit; both close when done (Empty groups).",
        f"3. Transactions on ledger (Kafka's Java producer, tests/harness/java/ProducePlan.java), {TXN_RECORDS} "
        "records per partition each:",
        "   `t-committed` commits one on ledger-0 and ledger-1; `t-aborted` aborts one on both; `t-open` "
        f"(transaction.timeout.ms={OPEN_TXN_TIMEOUT_MS}) begins one on both, flushes, and its JVM halts "
        "(Runtime.halt, like a crash), so it is still Ongoing at the shutdown; `t-expired` "
        f"(transaction.timeout.ms={EXPIRED_TXN_TIMEOUT_MS}) does the same on ledger-1 only, then the run waits "
        "until the coordinator has aborted it on its own (CompleteAbort).",
        "4. Late metadata changes, once `__cluster_metadata-0` has a `.checkpoint` snapshot: topic `doomed` "
        "deleted (its dir stays as `doomed-0.<id>-delete`; a deleted log is closed without trimming its "
        "preallocated indexes, hence doomed's small segment.index.bytes) and orders altered to "
        f"`retention.ms={ORDERS_RETENTION_MS}`; the run waits for the next snapshot (which holds both), then "
        f"at once grows payments to {PAYMENTS_PARTITIONS_AFTER} partitions and creates topic `{LATE_TOPIC}` "
        f"(1 partition), waits {TAIL_WAIT_S} s and records the oracle (AdminOracle.java started and warmed up "
        "beforehand), so that these two are only in the log after the last snapshot (see below for where "
        "each landed).",
        "5. The broker stops cleanly and the log dir is copied.",
        "",
        "## oracle.json",
        "",
        "Everything is the broker's answer at the time, never computed from the scenario:",
        "",
        "- `kafka`, `cluster_id` (describe_cluster), `node_id`; `recorded_at_ms` (wall clock when recording "
        "started), `stopped_at_ms` (right after the clean stop).",
        "- `topics`: every non-internal topic: `topic_id` (as Kafka prints a Uuid), `partitions` (leader, replicas, "
        "isr), `configs` (only dynamic topic overrides, source DYNAMIC_TOPIC_CONFIG).",
        "- `deleted_topics`: name -> topic id, as described just before the deletion.",
        "- `log_offsets`: `<topic>-<p>` -> `log_start` / `log_end` (list_offsets earliest / latest).",
        "- `groups`: per group `type` (classic, consumer, share), `state`, `protocol_type`, `protocol` (assignor, "
        "or null), `members` (member_id, client_id, host, assignment), `offsets` (`<topic>-<p>` -> offset, "
        "leader_epoch, metadata; for the share group its start offsets, metadata null, plus the `lag` the broker "
        "reports: a share partition's start offset only moves on a later state write, so acknowledged records "
        "can sit above it); Java Admin "
        "describeConsumerGroups / listConsumerGroupOffsets (describeShareGroups / listShareGroupOffsets); the "
        "protocol type from Admin.listGroups (4.x) or DescribeGroups (3.9, librdkafka). `g-deleted`: "
        "`{\"absent\": true}`.",
        "- `transactions`: transactional id -> producer_id, producer_epoch, state, timeout_ms, start_ms, partitions "
        "(Java Admin listTransactions + describeTransactions).",
        "- `producers`: every ledger partition -> its active producers (Java Admin describeProducers).",
        "- `find_hanging`: stdout of `kafka-transactions find-hanging --broker-id 1` (TransactionsCommand).",
        "- `metadata_snapshots`: the `.checkpoint` files in `__cluster_metadata-0` after the stop.",
        "",
        "## What the brokers reported",
        "",
    ]
    for version, oracle in oracles.items():
        lines.append(f"### {version}")
        lines.append("")
        for group, g in oracle["groups"].items():
            if g.get("absent"):
                lines.append(f"- group `{group}`: absent")
            else:
                offsets = ", ".join(f"{k}={v['offset']}" for k, v in g["offsets"].items()) or "none"
                lines.append(f"- group `{group}`: {g['type']}, {g['state']}, {len(g['members'])} member(s), "
                             f"offsets {offsets}")
        for tid, t in oracle["transactions"].items():
            parts = ", ".join(f"{tp}-{p}" for tp, p in t["partitions"]) or "no partitions"
            lines.append(f"- transaction `{tid}`: {t['state']}, producer {t['producer_id']} epoch "
                         f"{t['producer_epoch']}, {parts}")
        lines.append(f"- KRaft snapshots: {', '.join(oracle['metadata_snapshots'])}")
        big = sorted(f for f in (OUT_DIR / version / "broker").rglob("*") if f.is_file() and f.stat().st_size > 2**20)
        for f in big:
            lines.append(f"- {f.relative_to(OUT_DIR / version)}: {f.stat().st_size} bytes, all but "
                         f"{len(f.read_bytes().rstrip(bytes(1)))} of them a zero tail (a preallocated index the "
                         "clean stop did not trim)")
        lines.append("")
        lines += metadata_log_text(OUT_DIR / version, version)
        lines.append("")
    return "\n".join(lines)


_DUMP_RECORD = re.compile(r"offset: (\d+) .*?payload: (\{.*\})\s*$")


def metadata_records(version_dir: Path, version: str) -> list[tuple[int, dict[str, Any]]]:
    """(offset, payload) of every record in the copied `__cluster_metadata-0` log, as Kafka's DumpLogSegments
    --cluster-metadata-decoder prints them."""
    logs = sorted((version_dir / "broker" / "__cluster_metadata-0").glob("*.log"))
    out, err = dump_log(logs, "--cluster-metadata-decoder", dist=KafkaDistribution(version))
    records = [(int(m.group(1)), json.loads(m.group(2))) for m in map(_DUMP_RECORD.search, out.splitlines()) if m]
    if not records:
        raise HarnessError(f"DumpLogSegments printed no metadata records:\n{err[-2000:]}")
    return records


def metadata_log_text(version_dir: Path, version: str) -> list[str]:
    """Where the late changes and the shutdown landed in the metadata log, relative to the last snapshot."""
    records = metadata_records(version_dir, version)
    oracle = json.loads((version_dir / "oracle.json").read_text())
    last_end = max(int(name.split("-")[0]) for name in oracle["metadata_snapshots"])
    names = {r["data"]["topicId"]: r["data"]["name"] for _, r in records if r["type"] == "TOPIC_RECORD"}
    names.update({v: k for k, v in oracle["deleted_topics"].items()})

    def describe(r: dict[str, Any]) -> str:
        data = r["data"]
        topic = names.get(data.get("topicId", ""), data.get("topicId"))
        if r["type"] == "CONFIG_RECORD":
            return f"CONFIG_RECORD {data['resourceName']} {data['name']}={data['value']}"
        if r["type"] in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
            extra = f" leader={data['leader']}" if "leader" in data else ""
            return f"{r['type']} {topic}-{data['partitionId']}{extra}"
        if r["type"] in ("TOPIC_RECORD", "REMOVE_TOPIC_RECORD"):
            return f"{r['type']} {topic}"
        fields = ", ".join(f"{k}={v}" for k, v in data.items() if k in ("brokerId", "fenced", "inControlledShutdown"))
        return f"{r['type']} {fields}".strip()

    noop = "NO_OP_RECORD"
    tail = [(o, r) for o, r in records if o >= last_end]
    late = [(o, r) for o, r in records
            if (r["type"] == "REMOVE_TOPIC_RECORD")
            or (r["type"] == "CONFIG_RECORD" and r["data"]["resourceName"] == "orders")
            or (r["type"] == "TOPIC_RECORD" and r["data"]["name"] == LATE_TOPIC)
            or (r["type"] == "PARTITION_RECORD" and names.get(r["data"]["topicId"]) == LATE_TOPIC)
            or (r["type"] == "PARTITION_RECORD" and names.get(r["data"]["topicId"]) == "payments"
                and r["data"]["partitionId"] >= TOPICS["payments"][0])]
    lines = [f"Metadata log (DumpLogSegments --cluster-metadata-decoder on `{version}/broker/__cluster_metadata-0`): "
             f"offsets {records[0][0]}..{records[-1][0]}, the last snapshot ends at offset {last_end}.",
             "The late changes:"]
    for offset, r in late:
        where = "only in the log tail" if offset >= last_end else "in the log and the last snapshot"
        lines.append(f"- offset {offset}: {describe(r)} ({where})")
    others = [(o, r) for o, r in tail if r["type"] != noop and (o, r) not in late]
    lines.append(f"After the last snapshot: {len(tail)} records, {sum(r['type'] == noop for _, r in tail)} of them "
                 "NoOpRecords" + (", and these others (the clean shutdown's):" if others else "."))
    lines += [f"- offset {o}: {describe(r)}" for o, r in others]
    return lines


def write_readme() -> None:
    oracles = {}
    for version in VERSIONS:
        path = OUT_DIR / version / "oracle.json"
        if path.exists():
            oracles[version] = json.loads(path.read_text())
    tmp = OUT_DIR / "README.md.tmp"
    tmp.write_text(readme(oracles))
    tmp.rename(OUT_DIR / "README.md")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make samples-internal", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kafka", action="append", choices=VERSIONS, help="only this broker version (repeatable)")
    versions = parser.parse_args(argv).kafka or list(VERSIONS)
    for version in versions:
        started = time.monotonic()
        build = BUILD_DIR / version
        shutil.rmtree(build, ignore_errors=True)
        build.mkdir(parents=True)
        try:
            oracle = run(version, build)
        except HarnessError as e:
            print(f"make samples-internal: {e}", file=sys.stderr)
            return 1
        for note in expectations(oracle):
            log(f"note: {note}")
        target = OUT_DIR / version
        # tiered/ is the tiered-storage corpus's (make samples-tiered): replace only what this run writes
        target.mkdir(parents=True, exist_ok=True)
        for name in ("broker", "oracle.json"):
            old = target / name
            if old.is_dir():
                shutil.rmtree(old)
            elif old.exists():
                old.unlink()
            (build / name).rename(old)
        shutil.rmtree(build)
        write_readme()
        log(f"wrote {target.relative_to(REPO_ROOT)} in {round(time.monotonic() - started)} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
