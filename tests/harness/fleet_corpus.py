"""`make samples-fleet`: the log dirs of one 3-broker KRaft cluster whose consumer groups and transactions live on
other brokers than the partitions they point at, with the cluster's own view (admin API) as oracle.

For each Kafka version (3.9.2, 4.4.0) a cluster on loopback (tests/harness/replica_cluster.py: a dedicated
controller, node id 100, and brokers 1..3, one log dir each) has `__consumer_offsets` and `__transaction_state` in
three partitions of one replica each, so that each broker holds some of them and none holds all. Data topics with
explicit replica assignments (one replica, two, three; a compacted one) get records; three consumer groups commit
offsets; one transaction commits, one aborts and one is left open when the brokers stop. Right before the stop the
admin API's answers are recorded (committed group offsets, log end and last stable offsets, leaders and replicas,
the transactions); then every broker stops cleanly (the controller last) and each broker's log dir is copied. Three
runs over one broker's dir each must together see what one run over all three dirs sees: the corpus of the fleet
view (consumer positions and open transactions across brokers, catalog checks, replica comparison).

    python -m tests.harness.fleet_corpus [--kafka 3.9.2] [--kafka 4.4.0]   (default: both)

Writes data/samples-fleet/<version>/broker-<id>/ (each broker's whole log dir, without `.lock`),
data/samples-fleet/<version>/oracle.json and data/samples-fleet/README.md. Each version is built in
.cache/samples-fleet-build/<version> and replaces its output only when the whole run succeeded and the copies passed
their checks (otherwise the build dir is kept, with the nodes' server.log).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from tests.harness.broker import CACHE_DIR, REPO_ROOT, HarnessError, KafkaDistribution
from tests.harness.corpus_builds import build_versions, cluster_settings_text, write_readme
from tests.harness.incremental_corpus import list_offset, value
from tests.harness.internal_corpus import OPEN_TXN_TIMEOUT_MS, TXN_RECORDS, record_topics, txn_plan
from tests.harness.make_samples import consume_committing, read_offset_checkpoint
from tests.harness.plan import run_java
from tests.harness.replica_cluster import CONTROLLER_ID, CONTROLLER_PROPS, ReplicaCluster, broker_defaults
from tests.harness.replica_corpus import Topic, content_size, preallocated, to_json

OUT_DIR = REPO_ROOT / "data" / "samples-fleet"
BUILD_DIR = CACHE_DIR / "samples-fleet-build"
BROKERS = (1, 2, 3)
SIZE_LIMIT = 4 * 2**20  # per version, the copies without their zero tails
WAIT_S = 120.0

OFFSETS_TOPIC, TXN_TOPIC = "__consumer_offsets", "__transaction_state"
INTERNAL_PARTITIONS = 3
BROKER_PROPS: dict[str, Any] = {
    # the internal topics in three partitions of one replica each: every broker holds some, none all
    "offsets.topic.num.partitions": INTERNAL_PARTITIONS,
    "offsets.topic.replication.factor": 1,
    "transaction.state.log.num.partitions": INTERNAL_PARTITIONS,
    "transaction.state.log.replication.factor": 1,
    "transaction.state.log.min.isr": 1,
    # The cleaner takes any dirty segment at once (profiles sets no min.cleanable.dirty.ratio of its own).
    "log.cleaner.min.cleanable.ratio": 0.01,
    "log.cleaner.backoff.ms": 500,
    # Segments the cleaner replaced are removed 1 s later (default 60 s): none left as `.deleted` in the copy.
    "log.segment.delete.delay.ms": 1000,
}

# Small segments (3.9 takes segment.bytes this small; 4.x only through internal.segment.bytes, KIP-1030's 1 MiB
# minimum), so the partitions roll several; every value is padded to 100 bytes.
SEGMENT_BYTES = 16384
# Records per partition (before the groups read, after). What a group reads is no multiple of 25: consume_committing
# commits every 25 records and at the end, and librdkafka fails a commit with nothing new to commit.
ORDERS = (250, 50)
PAYMENTS = 310
EVENTS = (210, 90)
PROFILE_KEYS = 24
PROFILES = (200, 200)  # updates per partition, two rounds

TOPICS: dict[str, Topic] = {t.name: t for t in (
    Topic("orders", ((1,), (2,), (3,)), {},
          f"{ORDERS[0]} records per partition, then (after the groups read) {ORDERS[1]} more."),
    Topic("payments", ((1, 2, 3), (2, 3, 1)), {}, f"{PAYMENTS} records per partition."),
    Topic("events", ((1, 2), (2, 3), (3, 1)), {},
          f"{EVENTS[0]} records per partition, then (after the groups read) {EVENTS[1]} more."),
    Topic("profiles", ((2, 3), (3, 1)), {"cleanup.policy": "compact"},
          f"{sum(PROFILES)} updates per partition to {PROFILE_KEYS} keys, in two rounds; every replica's cleaner "
          "done after each."),
    Topic("ledger", ((1,), (2,), (3,)), {},
          f"Transactions only (Kafka's Java producer, {TXN_RECORDS} records per partition each)."),
)}
PARTITIONS = [(t.name, p) for t in TOPICS.values() for p in range(len(t.assignment))]

# group -> (topics, records it reads: all there are when it reads, read_committed)
GROUPS: dict[str, tuple[tuple[str, ...], int]] = {
    "g-caught-up": (("payments",), 2 * PAYMENTS),
    "g-lagging": (("events",), 3 * EVENTS[0]),
    "g-spread": (("orders", "ledger"), 3 * ORDERS[0] + 2 * TXN_RECORDS),
}
GROUP_TEXT = {
    "g-caught-up": "reads all of payments (both partitions, RF=3) and commits: its offsets are the log end offsets.",
    "g-lagging": f"reads all of events, commits; then events gets {EVENTS[1]} more records per partition: it lags.",
    "g-spread": "reads all of orders (one partition on each broker) and the committed records of ledger, commits; "
                f"then orders gets {ORDERS[1]} more records per partition and ledger the open transaction.",
}
# transactional id -> (ledger partitions, how it ends); txn-open's partitions are those on the brokers that do not
# hold its __transaction_state partition, chosen once that topic exists
TRANSACTIONS: dict[str, tuple[tuple[int, ...], str]] = {
    "txn-committed": ((0, 1), "commit"),
    "txn-aborted": ((1, 2), "abort"),
    "txn-open": ((), "halt"),
}
TXN_STATES = {"txn-committed": "CompleteCommit", "txn-aborted": "CompleteAbort", "txn-open": "Ongoing"}
# Left behind for a moment: what the cleaner replaced (`.deleted`) and its work files (`.cleaned`, `.swap`).
_TRANSIENT = re.compile(r"\.(deleted|cleaned|swap)$")

_STARTED = time.monotonic()


def log(msg: str) -> None:
    print(f"[samples-fleet {time.monotonic() - _STARTED:6.1f}s] {msg}", flush=True)


def topic_config(topic: Topic, version: str) -> dict[str, Any]:
    segment = "segment.bytes" if version.startswith("3.") else "internal.segment.bytes"
    return {**topic.config, segment: SEGMENT_BYTES}


def java_hash(text: str) -> int:
    """Java's String.hashCode (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h


def partition_for(key: str, partitions: int = INTERNAL_PARTITIONS) -> int:
    """The internal partition of a group id or transactional id: Utils.abs(key.hashCode()) % partitions (the group
    and transaction coordinators' partitionFor; Utils.abs maps Integer.MIN_VALUE to 0)."""
    h = java_hash(key)
    return (0 if h == -2**31 else abs(h)) % partitions


# ---- the scenario ----

def produce(cluster: ReplicaCluster, topic: str, label: str, numbers: range, keys: int | None = None) -> None:
    """acks=all records to every partition of `topic`, valued `<topic>|<label>|<n>|...` (100 bytes), keyed
    `<topic>-<n>` (or `key-<n % keys>`); each must be acknowledged."""
    for p in range(len(TOPICS[topic].assignment)):
        records = [((f"key-{n % keys:02d}" if keys else f"{topic}-{n:04d}").encode(), value(topic, label, n))
                   for n in numbers]
        failed = [d for d in cluster.produce(topic, p, records, acks="all") if not d.acknowledged]
        if failed:
            raise HarnessError(f"{len(failed)} records to {topic}-{p} ({label}) not acknowledged: {failed[0].error}")


def wait_cleaned(cluster: ReplicaCluster, topic: str) -> dict[str, int]:
    """Until every replica's cleaner checkpoint of each partition of `topic` reaches its active segment."""
    done: dict[str, int] = {}
    for p, replicas in enumerate(TOPICS[topic].assignment):
        for b in replicas:
            log_dir = cluster.brokers[b].log_dir

            def cleaned(log_dir: Path = log_dir, p: int = p, b: int = b) -> bool:
                active = max(int(f.stem) for f in (log_dir / f"{topic}-{p}").glob("*.log"))
                done[f"{topic}-{p}@{b}"] = read_offset_checkpoint(log_dir / "cleaner-offset-checkpoint").get(
                    (topic, p), -1)
                return done[f"{topic}-{p}@{b}"] >= active

            cluster.wait_for(cleaned, f"broker {b}'s cleaner on {topic}-{p}", WAIT_S)
    return done


def internal_partitions(cluster: ReplicaCluster) -> dict[str, dict[str, Any]]:
    """__consumer_offsets' and __transaction_state's partitions: leader, replicas, ISR, log end offset."""
    from confluent_kafka import TopicCollection, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    admin = cluster.admin()
    out: dict[str, dict[str, Any]] = {}
    specs = {}
    for name, future in admin.describe_topics(TopicCollection([OFFSETS_TOPIC, TXN_TOPIC]), request_timeout=30).items():
        for p in sorted(future.result(timeout=60).partitions, key=lambda p: p.id):
            out.setdefault(name, {})[str(p.id)] = {
                "leader": p.leader.id if p.leader is not None else None,
                "replicas": [n.id for n in p.replicas], "isr": [n.id for n in p.isr]}
            specs[TopicPartition(name, p.id)] = OffsetSpec.latest()
    for tp, future in admin.list_offsets(specs, request_timeout=60).items():
        out[tp.topic][str(tp.partition)]["log_end"] = future.result(timeout=60).offset
    return {name: out[name] for name in (OFFSETS_TOPIC, TXN_TOPIC)}


def holder(cluster: ReplicaCluster, topic: str, partition: int) -> int:
    """The broker holding an internal partition (its one replica), once the topic exists."""
    holders: list[int] = []

    def described() -> bool:
        holders[:] = internal_partitions(cluster)[topic][str(partition)]["replicas"]
        return len(holders) == 1

    cluster.wait_for(described, f"{topic}-{partition}'s replica", WAIT_S)
    return holders[0]


def finished_transactions(cluster: ReplicaCluster) -> None:
    """txn-committed and txn-aborted (Kafka's Java producer, one JVM)."""
    first, second = (txn_plan(tid, parts, end) for tid, (parts, end) in TRANSACTIONS.items() if end != "halt")
    run_java(first.extend(second), cluster.dist, cluster.bootstrap)


def open_transaction(cluster: ReplicaCluster) -> tuple[int, ...]:
    """txn-open on the ledger partitions of the two brokers that do not hold its __transaction_state partition; its
    JVM halts inside the transaction (Runtime.halt), which stays Ongoing through the stop. Returns those partitions."""
    coordinator = holder(cluster, TXN_TOPIC, partition_for("txn-open"))
    parts = tuple(p for p, (b,) in enumerate(TOPICS["ledger"].assignment) if b != coordinator)
    run_java(txn_plan("txn-open", parts, "halt", OPEN_TXN_TIMEOUT_MS), cluster.dist, cluster.bootstrap)
    log(f"txn-open left open on ledger {list(parts)} (its __transaction_state partition: broker {coordinator})")
    return parts


def settle(cluster: ReplicaCluster) -> None:
    """Every ISR full, no file left waiting for deletion, then 2 s for the followers to learn the last high
    watermark (next fetch response)."""
    for topic, p in PARTITIONS:
        cluster.wait_for_isr(topic, p, TOPICS[topic].assignment[p], WAIT_S)
    cluster.wait_for(lambda: not transient(cluster.work_dir), "no `.deleted` / `.cleaned` / `.swap` file", WAIT_S)
    time.sleep(2)


def transient(root: Path) -> list[str]:
    return [str(f.relative_to(root)) for f in root.rglob("*") if _TRANSIENT.search(f.name)]


def play(cluster: ReplicaCluster) -> dict[str, Any]:
    """The scenario on the running cluster; returns what it chose and saw on the way."""
    facts: dict[str, Any] = {}
    produce(cluster, "orders", "round-1", range(ORDERS[0]))
    produce(cluster, "payments", "round-1", range(PAYMENTS))
    produce(cluster, "events", "round-1", range(EVENTS[0]))
    produce(cluster, "profiles", "round-1", range(PROFILES[0]), PROFILE_KEYS)
    finished_transactions(cluster)
    log("records produced; txn-committed and txn-aborted done")
    for group, (topics, wanted) in GROUPS.items():
        if wanted % 25 == 0:
            raise HarnessError(f"{group} would read {wanted} records, a multiple of 25: its last commit would fail")
        consume_committing(cluster, group, list(topics), wanted)
        log(f"{group} read {wanted} records of {', '.join(topics)} and committed")
    produce(cluster, "orders", "round-2", range(ORDERS[0], sum(ORDERS)))
    produce(cluster, "events", "round-2", range(EVENTS[0], sum(EVENTS)))
    facts["cleanerRound1"] = wait_cleaned(cluster, "profiles")
    produce(cluster, "profiles", "round-2", range(PROFILES[0], sum(PROFILES)), PROFILE_KEYS)
    facts["cleanerRound2"] = wait_cleaned(cluster, "profiles")
    log(f"profiles cleaned: {facts['cleanerRound2']}")
    facts["txnOpenPartitions"] = list(open_transaction(cluster))
    settle(cluster)
    return facts


# ---- the oracle ----

def record_oracle(cluster: ReplicaCluster, facts: dict[str, Any]) -> dict[str, Any]:
    """What the admin API answers now: Kafka's Java Admin (tests/harness/java/AdminOracle.java: the groups and
    their committed offsets, the transactions, ledger's producers) and confluent-kafka's (topics, leaders, replicas,
    log start / end / last stable offsets, the internal partitions)."""
    java = json.loads(cluster.dist.run_java("AdminOracle.java", cluster.bootstrap, "oracle", ",".join(GROUPS), "-",
                                            "ledger").stdout)
    topics, log_offsets = record_topics(cluster)
    for topic, p in PARTITIONS:
        log_offsets[f"{topic}-{p}"]["last_stable"] = list_offset(cluster, topic, p, committed=True)
    internal = internal_partitions(cluster)

    def placed(internal_topic: str, key: str) -> dict[str, Any]:
        n = partition_for(key)
        return {"internalPartition": f"{internal_topic}-{n}", "broker": internal[internal_topic][str(n)]["leader"]}

    missing = [g for g in GROUPS if g not in java["groups"]]
    if missing:
        raise HarnessError(f"groups {missing} not listed: {sorted(java['consumer_groups_listed'])}")
    return {
        "kafkaVersion": cluster.dist.version,
        "clusterId": cluster.cluster_id,
        "controllerId": CONTROLLER_ID,
        "brokers": {str(b): f"broker-{b}" for b in BROKERS},
        "internalTopics": internal,
        "topics": topics,
        "logOffsets": log_offsets,
        "groups": {g: {**placed(OFFSETS_TOPIC, g), "topics": list(GROUPS[g][0]), **java["groups"][g]}
                   for g in GROUPS},
        "transactions": {t: {**placed(TXN_TOPIC, t), **java["transactions"].get(t, {"absent": True})}
                         for t in TRANSACTIONS},
        "producers": java["producers"],
        **facts,
    }


def copy_json(build: Path, broker: int) -> dict[str, Any]:
    """One copied log dir: its meta.properties, its partition dirs, its profiles cleaner offsets."""
    root = build / f"broker-{broker}"
    meta = dict(line.split("=", 1) for line in (root / "meta.properties").read_text().splitlines()
                if "=" in line and not line.startswith("#"))
    cleaner = read_offset_checkpoint(root / "cleaner-offset-checkpoint")
    return {"nodeId": int(meta["node.id"]), "clusterId": meta["cluster.id"],
            "partitions": sorted((p.name for p in root.iterdir() if p.is_dir()), key=_partition_order),
            "profilesCleanerOffsets": {f"{t}-{p}": o for (t, p), o in sorted(cleaner.items()) if t == "profiles"}}


def _partition_order(name: str) -> tuple[str, int]:
    topic, _, p = name.rpartition("-")
    return (topic, int(p)) if p.isdigit() else (name, -1)


def holds(build: Path, broker: int, partition: str, key: str) -> bool:
    """Whether broker's copy of the internal partition has `key` (a group or transactional id: the records' keys,
    uncompressed) in a segment."""
    return any(key.encode() in f.read_bytes() for f in (build / f"broker-{broker}" / partition).glob("*.log"))


def check(oracle: dict[str, Any], build: Path) -> list[str]:
    """Where the cluster or the copies do not hold what the scenario meant to leave (problems fail the build)."""
    problems: list[str] = []
    copies = oracle["copies"]
    for name, parts in oracle["internalTopics"].items():
        if sorted(p["leader"] for p in parts.values()) != list(BROKERS):
            problems.append(f"{name}'s partitions are not one on each broker: {parts}")
    for b, c in copies.items():
        if c["nodeId"] != int(b) or c["clusterId"] != oracle["clusterId"]:
            problems.append(f"broker-{b}/meta.properties: node.id {c['nodeId']}, cluster.id {c['clusterId']}")
        held = sorted(f"{name}-{n}" for name, parts in oracle["internalTopics"].items() for n, p in parts.items()
                      if int(b) in p["replicas"])
        if sorted(p for p in c["partitions"] if p.startswith("__") and p != "__cluster_metadata-0") != held:
            problems.append(f"broker-{b} does not hold exactly {held}: {c['partitions']}")
    leaders = {tp: p["leader"] for t, d in oracle["topics"].items() for tp, p in
               ((f"{t}-{n}", p) for n, p in d["partitions"].items())}
    ends = {tp: o["log_end"] for tp, o in oracle["logOffsets"].items()}
    for kind, entries in (("group", oracle["groups"]), ("transactional id", oracle["transactions"])):
        for key, e in entries.items():
            if not holds(build, e["broker"], e["internalPartition"], key):
                problems.append(f"{kind} {key}: broker-{e['broker']}/{e['internalPartition']} does not hold it")
    groups = oracle["groups"]
    if len({g["broker"] for g in groups.values()}) < 2:
        problems.append("every group's offsets are on one broker")
    offsets = {g: {tp: o["offset"] for tp, o in e["offsets"].items()} for g, e in groups.items()}
    if not offsets["g-caught-up"] or any(o != ends[tp] for tp, o in offsets["g-caught-up"].items()):
        problems.append(f"g-caught-up is not at the log end: {offsets['g-caught-up']}")
    if len(offsets["g-lagging"]) != len(TOPICS["events"].assignment) or any(
            o >= ends[tp] for tp, o in offsets["g-lagging"].items()):
        problems.append(f"g-lagging does not lag on every events partition: {offsets['g-lagging']}")
    if len({leaders[tp] for tp in offsets["g-spread"]}) < len(BROKERS):
        problems.append(f"g-spread's offsets are not for partitions on every broker: {offsets['g-spread']}")
    txns = oracle["transactions"]
    problems += [f"transaction {t} is {txns[t].get('state')}, expected {s}" for t, s in TXN_STATES.items()
                 if txns[t].get("state") != s]
    opened = txns["txn-open"]
    if [p for t, p in opened.get("partitions", []) if t == "ledger"] != oracle["txnOpenPartitions"]:
        problems.append(f"txn-open's partitions {opened.get('partitions')} are not {oracle['txnOpenPartitions']}")
    for p in oracle["txnOpenPartitions"]:
        if opened["broker"] in TOPICS["ledger"].assignment[p]:
            problems.append(f"txn-open's coordinator (broker {opened['broker']}) holds ledger-{p}")
        if not oracle["logOffsets"][f"ledger-{p}"]["last_stable"] < ends[f"ledger-{p}"]:
            problems.append(f"ledger-{p}'s last stable offset is not below its log end")
    text = to_json(oracle)
    problems += [f"oracle.json names {where}" for where in (str(REPO_ROOT), str(build)) if where in text]
    return problems


# ---- one version ----

def run(version: str, build: Path, out: Path) -> dict[str, Any]:
    """The cluster in `build`/cluster; the copies in `out`."""
    dist = KafkaDistribution(version).ensure()
    cluster = ReplicaCluster(dist, build / "cluster", len(BROKERS), broker_props=BROKER_PROPS)
    stop_order: list[int] = []
    try:
        cluster.start()
        log(f"Kafka {version}: controller {CONTROLLER_ID} and brokers {BROKERS} up; topics {', '.join(TOPICS)}")
        for t in TOPICS.values():
            cluster.create_topic(t.name, t.assignment, topic_config(t, version))
        facts = play(cluster)
        oracle = record_oracle(cluster, facts)
        log("oracle recorded; stopping the brokers, then the controller")
        for node in (*BROKERS, CONTROLLER_ID):
            cluster.stop_node(node)
            stop_order.append(node)
        for b in BROKERS:
            cluster.copy_log_dir(b, out / f"broker-{b}")
        log("every node down: log dirs copied")
    finally:
        cluster.stop()
    return {**oracle, "stopOrder": stop_order, "copies": {str(b): copy_json(out, b) for b in BROKERS}}


def build_version(version: str) -> bool:
    """Build one version; False (the build dir kept, the output unchanged) when the copies fail their checks."""
    started = time.monotonic()
    build = BUILD_DIR / version
    out = build / "out"  # becomes data/samples-fleet/<version>
    shutil.rmtree(build, ignore_errors=True)
    out.mkdir(parents=True)
    oracle = run(version, build, out)
    oracle["contentBytes"] = content_size(out)
    oracle["buildSeconds"] = round(time.monotonic() - started)
    (out / "oracle.json").write_text(to_json(oracle))
    problems = check(oracle, out)
    if oracle["contentBytes"] > SIZE_LIMIT:
        problems.append(f"the copies hold {oracle['contentBytes']} bytes (without zero tails), over {SIZE_LIMIT}")
    if problems:
        log("problems:\n  " + "\n  ".join(problems))
        log(f"kept {build.relative_to(REPO_ROOT)} (out/, cluster/*/server.log); output unchanged")
        return False
    target = OUT_DIR / version
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    out.rename(target)
    shutil.rmtree(build)
    log(f"wrote {target.relative_to(REPO_ROOT)} ({oracle['contentBytes']} bytes without zero tails) in "
        f"{oracle['buildSeconds']} s")
    return True


# ---- README ----

def settings_text() -> list[str]:
    lines = cluster_settings_text(
        f"One dedicated controller (node id {CONTROLLER_ID}, `process.roles=controller`, its metadata log in its own "
        "dir, not copied) and brokers 1, 2, 3 (`process.roles=broker`, one log dir each), all formatted with the same "
        "cluster id, on free loopback ports (tests/harness/replica_cluster.py). The controller also has:",
        CONTROLLER_PROPS, lambda version: {**broker_defaults(version.split(".")[0], len(BROKERS)), **BROKER_PROPS})
    lines += [f"`{OFFSETS_TOPIC}` and `{TXN_TOPIC}` are created by the brokers on first use (the first group, the "
              f"first transactional producer), {INTERNAL_PARTITIONS} partitions of one replica each, placed by the "
              "controller: one partition on each broker (which one differs between the builds: see below).", "",
              "Topics (explicit replica assignment, the first replica of each partition its preferred leader), each "
              f"with segments of {SEGMENT_BYTES} bytes (`segment.bytes` on 3.9, `internal.segment.bytes` on 4.x, "
              "whose `segment.bytes` has a 1 MiB minimum); keys `<topic>-<n>`, values `<topic>|<label>|<n>|` padded "
              "to 100 bytes with dots, produced with librdkafka (acks=all, 10 records a batch):", ""]
    lines += ["| topic | replicas per partition | config | records |", "|---|---|---|---|"]
    lines += [f"| `{t.name}` | {' '.join(str(list(a)) for a in t.assignment)} | "
              f"{', '.join(f'`{k}={v}`' for k, v in t.config.items()) or '-'} | {t.text} |" for t in TOPICS.values()]
    return lines


def scenario_text() -> list[str]:
    lines = ["## Scenario", "",
             "1. All brokers up; the topics created; orders, payments, events and profiles' first rounds written.",
             f"2. Transactions on ledger with Kafka's Java producer (tests/harness/java/ProducePlan.java, "
             f"{TXN_RECORDS} records per partition): `txn-committed` commits one on ledger "
             f"{list(TRANSACTIONS['txn-committed'][0])}, `txn-aborted` aborts one on ledger "
             f"{list(TRANSACTIONS['txn-aborted'][0])}.",
             "3. Consumer groups (librdkafka, classic protocol, read_committed, each reads all there is from the "
             "start, commits every 25 records and at the end, then closes: Empty groups):"]
    lines += [f"   - `{g}` ({OFFSETS_TOPIC}-{partition_for(g)}): {GROUP_TEXT[g]}" for g in GROUPS]
    lines += ["4. orders and events' second rounds; profiles' second round; each round of profiles waits until "
              "every replica's cleaner checkpoint reaches its active segment.",
              f"5. `txn-open` ({TXN_TOPIC}-{partition_for('txn-open')}, transaction.timeout.ms="
              f"{OPEN_TXN_TIMEOUT_MS}) begins a transaction on the two ledger partitions of the brokers that do not "
              "hold that partition, sends, flushes, and its JVM halts (Runtime.halt, like a crash): the transaction "
              "is still Ongoing when the brokers stop.",
              "6. Every ISR full, no `.deleted` file left, 2 s for the followers' high watermarks; the oracle "
              "recorded; brokers 1, 2, 3 stopped cleanly one after the other (controlled shutdown: the leaderships "
              "move to the brokers still up), then the controller. Each broker's log dir is copied whole (without "
              "`.lock`): `<version>/broker-<id>/`.",
              "",
              "The internal partition of a group id or transactional id is Kafka's partitionFor: "
              f"`Utils.abs(id.hashCode()) % {INTERNAL_PARTITIONS}` (Java's String.hashCode): "
              + ", ".join(f"`{k}` -> {partition_for(k)}" for k in (*GROUPS, *TRANSACTIONS)) + "."]
    return lines


ORACLE_TEXT = [
    "## oracle.json",
    "",
    "The cluster's answers right before the stop (never computed from the scenario), then what the copies hold:",
    "",
    "- `clusterId`, `controllerId`, `brokers` (node id -> dir), `stopOrder`.",
    "- `internalTopics`: `__consumer_offsets` and `__transaction_state`, per partition `leader`, `replicas`, `isr`, "
    "`log_end` (confluent-kafka describe_topics, list_offsets latest).",
    "- `topics`: every data topic's `topic_id`, `partitions` (`leader`, `replicas`, `isr`), `configs` (dynamic "
    "topic overrides). `logOffsets`: `<topic>-<p>` -> `log_start` (list_offsets earliest), `log_end` (latest), "
    "`last_stable` (latest, read_committed).",
    "- `groups`: per group `internalPartition` and `broker` (the `__consumer_offsets` partition of its id and the "
    "broker holding it), `topics` it read, and Java Admin describeConsumerGroups / listConsumerGroupOffsets: "
    "`type`, `state`, `protocol`, `members`, `offsets` (`<topic>-<p>` -> `offset`, `leader_epoch`, `metadata`).",
    "- `transactions`: per transactional id `internalPartition` and `broker` (its `__transaction_state` partition), "
    "and Java Admin listTransactions + describeTransactions: `producer_id`, `producer_epoch`, `state`, "
    "`timeout_ms`, `start_ms`, `partitions`. `txnOpenPartitions`: the ledger partitions txn-open wrote to. "
    "`producers`: ledger's active producers (describeProducers).",
    "- `cleanerRound1`, `cleanerRound2`: each profiles replica's cleaner checkpoint (`<topic>-<p>@<broker>`) after "
    "each round.",
    "- `copies`: per broker, from its copied dir: `nodeId`, `clusterId` (meta.properties), `partitions` (its partition "
    "dirs), `profilesCleanerOffsets`. `contentBytes` (the copies without zero tails), `buildSeconds`.",
]


def results_text(version: str, oracle: dict[str, Any]) -> list[str]:
    lines = [f"### {version}", "",
             f"Cluster id `{oracle['clusterId']}`; built in {oracle['buildSeconds']} s; the copies hold "
             f"{oracle['contentBytes']} bytes (zero tails not counted).", "",
             "| broker | internal partitions | data partitions |", "|---|---|---|"]
    for b, c in oracle["copies"].items():
        internal = [p for p in c["partitions"] if p.startswith("__") and p != "__cluster_metadata-0"]
        data = [p for p in c["partitions"] if not p.startswith("__")]
        lines.append(f"| {b} | {', '.join(internal)} | {', '.join(data)} |")
    lines.append("")
    for g, e in oracle["groups"].items():
        offsets = ", ".join(f"{tp}={o['offset']} (log end {oracle['logOffsets'][tp]['log_end']})"
                            for tp, o in e["offsets"].items())
        lines.append(f"- group `{g}` ({e['internalPartition']}, broker {e['broker']}): {e['state']}; {offsets}")
    for t, e in oracle["transactions"].items():
        parts = ", ".join(f"{tp}-{p}" for tp, p in e.get("partitions", [])) or "no partitions"
        lines.append(f"- transaction `{t}` ({e['internalPartition']}, broker {e['broker']}): {e.get('state')}, "
                     f"producer {e.get('producer_id')} epoch {e.get('producer_epoch')}; {parts}")
    stable = ", ".join(f"ledger-{p} {oracle['logOffsets'][f'ledger-{p}']['last_stable']} (log end "
                       f"{oracle['logOffsets'][f'ledger-{p}']['log_end']})" for p in oracle["txnOpenPartitions"])
    lines += [f"- last stable offsets held by txn-open: {stable}", ""]
    big = preallocated(OUT_DIR / version)
    if big:
        lines += ["Preallocated indexes the clean stop did not trim (the metadata log's active segment; copied "
                  "sparse):", ""]
        lines += [f"- `{name}`: {size} bytes, all but {kept} of them a zero tail" for name, size, kept in big]
        lines.append("")
    return lines


def readme(oracles: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# data/samples-fleet: one cluster's three brokers, for the fleet view",
        "",
        "Generated by `tests/harness/fleet_corpus.py` (the cluster: `tests/harness/replica_cluster.py`); "
        "regenerate with `make samples-fleet`. Do not edit by hand.",
        "",
        "For each Kafka version, `<version>/broker-<id>/` is broker <id>'s whole log dir (meta.properties, the root "
        "checkpoint files, `__cluster_metadata-0`, its partitions of the data topics and of `__consumer_offsets` "
        "and `__transaction_state`) copied with every node stopped cleanly, and `<version>/oracle.json` what the "
        "admin API said right before the stop. Each broker holds only some of the internal partitions, and the "
        "groups' committed offsets and the transactions' state are often on another broker than the partitions "
        "they point at: three runs over one broker's dir each, joined (the fleet view), must find what one run "
        "over all three dirs finds (consumer positions, open transactions, catalog checks, replica comparison).",
        "",
        "## Versions",
        "",
    ]
    lines += [f"- `{v}/`: Apache Kafka {v} (JARs from Maven Central), cluster id `{o['clusterId']}`."
              for v, o in oracles.items()]
    lines += ["", *settings_text(), "", *scenario_text(), "", *ORACLE_TEXT, "", "## What the brokers reported", ""]
    for version, oracle in oracles.items():
        lines += results_text(version, oracle)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return build_versions("make samples-fleet", __doc__, build_version,
                          lambda: write_readme(OUT_DIR, "oracle.json", readme), argv)


if __name__ == "__main__":
    sys.exit(main())
