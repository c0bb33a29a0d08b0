"""`make samples-replicas`: the log dirs of a 3-broker KRaft cluster whose replicas diverge, with the brokers' own
behaviour on rejoin recorded as oracle.

For each Kafka version (3.9.2, 4.4.0) a cluster on loopback (tests/harness/replica_cluster.py: a dedicated
controller, node id 100, and brokers 1..3) plays four scenarios, each in its own topic (RF=3): `healthy` (all
replicas in sync), `behind` (a follower stopped while the leader kept writing), `unclean` (acknowledged records on
the old leader, then an unclean election and a divergent tail on the new one) and `compacted` (each broker's
cleaner at a different point). With every broker stopped cleanly, each broker's log dir is copied: that copy is
the corpus. Then the brokers are restarted on their own log dirs (the copy stays untouched): the old replicas
rejoin and truncate or catch up. The oracle records, per replica, the truncation the broker logged and which of
the copy's records the partition no longer holds (read back with a consumer).

    python -m tests.harness.replica_corpus [--kafka 3.9.2] [--kafka 4.4.0]   (default: both)

Writes data/samples-replicas/<version>/broker-<id>/ (each broker's whole log dir, without `.lock`),
data/samples-replicas/<version>/oracle.json and data/samples-replicas/README.md. Each version is built in
.cache/samples-replicas-build/<version> and replaces its output only when the whole run succeeded and the oracle
passed its checks (otherwise the build dir is kept for a look at the brokers' server.log).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.harness.broker import CACHE_DIR, REPO_ROOT, HarnessError, KafkaDistribution, dump_log
from tests.harness.corpus_builds import build_versions, cluster_settings_text, write_readme
from tests.harness.make_samples import read_offset_checkpoint
from tests.harness.replica_cluster import (
    CONTROLLER_ID,
    CONTROLLER_PROPS,
    Delivery,
    PartitionState,
    ReplicaCluster,
    broker_defaults,
)

OUT_DIR = REPO_ROOT / "data" / "samples-replicas"
BUILD_DIR = CACHE_DIR / "samples-replicas-build"
BROKERS = (1, 2, 3)
SIZE_LIMIT = 5 * 2**20

# Small segments, so that replicas hold several and roll them at their own points: 3.9 takes segment.bytes this
# small, 4.x only through internal.segment.bytes (KIP-1030's 1 MiB minimum).
SEGMENT_BYTES = 2048
BROKER_PROPS: dict[str, Any] = {
    # The cleaner takes any dirty segment at once (topic compacted sets no min.cleanable.dirty.ratio of its own,
    # so each broker's default applies).
    "log.cleaner.min.cleanable.ratio": 0.01,
    "log.cleaner.backoff.ms": 500,
    # Segments the cleaner replaced are deleted after 1 s: none left as `.deleted` in the copy.
    "file.delete.delay.ms": 1000,
}
# Broker 3 never cleans (deprecated in 4.x, still honoured); broker 2 stops cleaning after the first round.
PER_BROKER_PROPS: dict[int, dict[str, Any]] = {3: {"log.cleaner.enable": "false"}}
STOP_CLEANING: dict[str, Any] = {"log.cleaner.min.cleanable.ratio": 1.0}  # the dirty ratio never exceeds 1.0

COMPACTED_KEYS = 8
COMPACTED_ROUND = 250
HEALTHY_RECORDS = 200
BEHIND_RECORDS = (100, 100)
# unclean: records per phase, in order, and who leads then
UNCLEAN_PHASES = (("leader-3", 50), ("leader-1", 20), ("leader-1-alone", 50), ("leader-2-unclean", 30))
_UNCLEAN = dict(UNCLEAN_PHASES)
UNCLEAN_ELECTION_WAIT_S = 30


@dataclass(frozen=True)
class Topic:
    name: str
    assignment: tuple[tuple[int, ...], ...]  # per partition; the first replica is the preferred leader
    config: dict[str, Any]
    text: str


TOPICS: dict[str, Topic] = {t.name: t for t in (
    Topic("healthy", ((1, 2, 3), (2, 3, 1)), {},
          f"{HEALTHY_RECORDS} records per partition with acks=all while all three brokers run; nothing else."),
    Topic("behind", ((1, 2, 3),), {},
          f"{BEHIND_RECORDS[0]} records (acks=all) with all in sync; broker 3 stops cleanly; "
          f"{BEHIND_RECORDS[1]} more (acks=all, ISR [1, 2]). Broker 3 stays down until the copy."),
    Topic("unclean", ((3, 1, 2),), {"unclean.leader.election.enable": "true", "min.insync.replicas": 1},
          f"{_UNCLEAN['leader-3']} records (acks=all) led by broker 3, all in sync; broker 3 stops (clean election: "
          f"broker 1 leads); {_UNCLEAN['leader-1']} records (ISR [1, 2]); broker 2 stops; "
          f"{_UNCLEAN['leader-1-alone']} records acknowledged by broker 1 alone (ISR [1]); broker 1 stops (no "
          "broker left); broker 2 starts and the controller elects it uncleanly; "
          f"{_UNCLEAN['leader-2-unclean']} records on broker 2; broker 2 stops."),
    Topic("compacted", ((1, 2, 3),), {"cleanup.policy": "compact"},
          f"{COMPACTED_ROUND} updates to {COMPACTED_KEYS} keys (acks=all); brokers 1 and 2 clean them; broker 2 "
          f"gets the dynamic config log.cleaner.min.cleanable.ratio=1.0 (it cleans no more); {COMPACTED_ROUND} "
          "more updates; broker 1 cleans again. Broker 3 never cleans (log.cleaner.enable=false)."),
)}
PARTITIONS = [(t.name, p) for t in TOPICS.values() for p in range(len(t.assignment))]


def log(msg: str) -> None:
    print(f"[samples-replicas] {msg}", flush=True)


def tp_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def topic_config(topic: Topic, version: str) -> dict[str, Any]:
    segment = "segment.bytes" if version.startswith("3.") else "internal.segment.bytes"
    return {**topic.config, segment: SEGMENT_BYTES}


# ---- the scenarios ----

@dataclass
class Play:
    """The cluster and what the scenarios record on the way: every delivery report, the partitions' states
    at each step, the order brokers stopped in, the unclean election."""

    cluster: ReplicaCluster
    deliveries: dict[tuple[str, int], list[Delivery]] = field(default_factory=dict)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    stop_order: list[int] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    phase: str = "scenario"  # then "rejoin"

    def produce(self, topic: str, partition: int, label: str, numbers: Iterable[int],
                key: Callable[[int], str] | None = None) -> list[Delivery]:
        """acks=all records valued `<topic>|<label>|<n>`, keyed `<topic>-<n>` (or key(n)); each must be
        acknowledged. Keys and values are ASCII without spaces, as DumpLogSegments prints them back."""
        records = [((key(n) if key else f"{topic}-{n:03d}").encode(), f"{topic}|{label}|{n:03d}".encode())
                   for n in numbers]
        got = self.cluster.produce(topic, partition, records, acks="all")
        self.deliveries.setdefault((topic, partition), []).extend(got)
        failed = [d for d in got if not d.acknowledged]
        if failed:
            raise HarnessError(f"{len(failed)} of {len(got)} records to {topic}-{partition} ({label}) not "
                               f"acknowledged: {failed[0].error}")
        return got

    def snapshot(self, step: str) -> None:
        """Each partition's leader, leader epoch and ISR as the admin API answers now."""
        if not self.cluster.running_brokers():
            return
        states = {tp_name(t, p): state_json(self.cluster.describe_partition(t, p)) for t, p in PARTITIONS}
        self.timeline.append({"phase": self.phase, "step": step, "partitions": states})

    def stop(self, broker: int) -> None:
        self.snapshot(f"before broker {broker} stops")
        self.cluster.stop_node(broker)
        self.stop_order.append(broker)
        log(f"broker {broker} stopped")

    def start(self, broker: int) -> None:
        self.cluster.start_node(broker)
        self.snapshot(f"after broker {broker} started")
        log(f"broker {broker} started")


def state_json(state: PartitionState) -> dict[str, Any]:
    return {"leader": state.leader, "leaderEpoch": state.leader_epoch, "isr": state.isr}


def settle(play: Play) -> None:
    """Every ISR full, then 2 s for the followers to learn the last high watermark (next fetch response)."""
    for topic, p in PARTITIONS:
        play.cluster.wait_for_isr(topic, p, BROKERS, 60)
    time.sleep(2)


def compacted_key(n: int) -> str:
    return f"key-{n % COMPACTED_KEYS}"


def compacted_rounds(play: Play) -> None:
    cluster = play.cluster
    play.produce("compacted", 0, "round-1", range(COMPACTED_ROUND), compacted_key)
    play.facts["cleanerAfterRound1"] = {b: wait_cleaned(cluster, b) for b in (1, 2)}
    cluster.alter_broker_config(2, STOP_CLEANING)
    cluster.wait_for(lambda: broker_config(cluster, 2, "log.cleaner.min.cleanable.ratio") == "1.0",
                     "broker 2 to apply log.cleaner.min.cleanable.ratio=1.0")
    play.produce("compacted", 0, "round-2", range(COMPACTED_ROUND, 2 * COMPACTED_ROUND), compacted_key)
    play.facts["cleanerAfterRound2"] = {1: wait_cleaned(cluster, 1)}
    log(f"compacted: cleaner offsets after round 1 {play.facts['cleanerAfterRound1']}, "
        f"after round 2 {play.facts['cleanerAfterRound2']}")


def wait_cleaned(cluster: ReplicaCluster, broker: int, timeout: float = 90.0) -> int:
    """Until the broker's cleaner checkpoint for compacted-0 reaches its active segment: all of it cleaned."""
    log_dir = cluster.brokers[broker].log_dir
    done = -1

    def cleaned() -> bool:
        nonlocal done
        active = max(int(p.stem) for p in (log_dir / "compacted-0").glob("*.log"))
        done = read_offset_checkpoint(log_dir / "cleaner-offset-checkpoint").get(("compacted", 0), -1)
        return done >= active

    cluster.wait_for(cleaned, f"broker {broker}'s cleaner on compacted-0", timeout)
    return done


def broker_config(cluster: ReplicaCluster, broker: int, name: str) -> str | None:
    from confluent_kafka.admin import ConfigResource

    resource = ConfigResource(ConfigResource.Type.BROKER, str(broker))
    entries = cluster.admin().describe_configs([resource])[resource].result(timeout=30)
    return entries[name].value if name in entries else None


def elect_unclean(play: Play) -> None:
    """Broker 2 starts alone: unclean-0 has no live ISR member, and the controller must elect broker 2 uncleanly
    (at its unfencing, else within unclean.leader.election.interval.ms); if it has not after
    UNCLEAN_ELECTION_WAIT_S, the admin API asks for it."""
    cluster = play.cluster
    before = play.timeline[-1]["partitions"]["unclean-0"]
    mark = cluster.controller.log_size()
    play.start(2)
    trigger = "controller"
    try:
        cluster.wait_for(lambda: cluster.describe_partition("unclean", 0).leader == 2,
                         "the unclean election of broker 2", UNCLEAN_ELECTION_WAIT_S)
    except HarnessError:
        trigger = "admin electLeaders(UNCLEAN)"
        cluster.elect_unclean("unclean", 0)
        cluster.wait_for(lambda: cluster.describe_partition("unclean", 0).leader == 2, "broker 2 to lead")
    after = state_json(cluster.describe_partition("unclean", 0))
    if after["leader"] == before["leader"] or not after["leaderEpoch"] > before["leaderEpoch"]:
        raise HarnessError(f"no unclean election on unclean-0: before {before}, after {after}")
    lines = controller_election_lines(cluster, mark)
    if any("Triggering unclean leader election" in line for line in lines):
        trigger = "controller, its periodic check (unclean.leader.election.interval.ms)"
    elif trigger == "controller" and any("handleBrokerUnfenced" in line for line in lines):
        trigger = "controller, when it unfenced broker 2 (handleBrokerUnfenced)"
    play.facts["uncleanElection"] = {"trigger": trigger, "before": before, "after": after,
                                     "controllerLogLines": lines}
    log(f"unclean election ({trigger}): {before} -> {after}")


def controller_election_lines(cluster: ReplicaCluster, since: int) -> list[str]:
    """The controller's lines about broker 2's unfencing and unclean-0's unclean election (PartitionChangeBuilder
    names the topic id, ReplicationControlManager the partition)."""
    topic_id = cluster.topic_id("unclean")
    wanted = re.compile(rf"(topicId {re.escape(topic_id)}, partition 0 .*unclean election"
                        r"|UNCLEAN partition change for unclean-0 |Triggering unclean leader election .*unclean-0"
                        r"|request from broker 2 to unfence|handleBrokerUnfenced)")
    return [line for line in cluster.controller.log_lines(since) if wanted.search(line)]


def play_scenarios(play: Play) -> None:
    """All four scenarios on one timeline (they share the brokers); ends with every broker stopped."""
    cluster = play.cluster
    for p in range(len(TOPICS["healthy"].assignment)):
        play.produce("healthy", p, f"p{p}", range(HEALTHY_RECORDS))
    compacted_rounds(play)
    play.produce("behind", 0, "all-in-sync", range(BEHIND_RECORDS[0]))
    unclean = unclean_phases()
    play.produce("unclean", 0, "leader-3", unclean["leader-3"])
    settle(play)
    play.stop(3)  # behind's lagging follower; unclean's leader, which moves cleanly to broker 1
    cluster.wait_for(lambda: cluster.describe_partition("unclean", 0).leader == 1, "broker 1 to lead unclean-0")
    cluster.wait_for_isr("behind", 0, [1, 2])
    play.produce("behind", 0, "broker-3-down", range(BEHIND_RECORDS[0], sum(BEHIND_RECORDS)))
    play.produce("unclean", 0, "leader-1", unclean["leader-1"])
    play.stop(2)
    cluster.wait_for_isr("unclean", 0, [1])
    play.produce("unclean", 0, "leader-1-alone", unclean["leader-1-alone"])  # acknowledged by broker 1 alone
    play.stop(1)
    elect_unclean(play)
    play.produce("unclean", 0, "leader-2-unclean", unclean["leader-2-unclean"])
    play.stop(2)


def unclean_phases() -> dict[str, range]:
    """Each phase's record numbers, consecutive across the phases."""
    out, start = {}, 0
    for label, count in UNCLEAN_PHASES:
        out[label] = range(start, start + count)
        start += count
    return out


# ---- the controller's view at the copy ----

_DUMP_PAYLOAD = re.compile(r"^\| offset: (\d+) .*?payload: (\{.*\})\s*$")


def metadata_at_copy(cluster: ReplicaCluster) -> dict[tuple[str, int], dict[str, Any]]:
    """Each partition's registration as the controller holds it now, replayed from its metadata log
    (DumpLogSegments --cluster-metadata-decoder): a PartitionChangeRecord that names a leader bumps the leader
    epoch (PartitionRegistration.merge); fields it leaves out are unchanged."""
    files = sorted((cluster.controller.log_dir / "__cluster_metadata-0").glob("*.log"))
    out, err = dump_log(files, "--cluster-metadata-decoder", dist=cluster.dist)
    names: dict[str, str] = {}
    parts: dict[tuple[str, int], dict[str, Any]] = {}
    for match in filter(None, map(_DUMP_PAYLOAD.match, out.splitlines())):
        record = json.loads(match.group(2))
        data = record["data"]
        if record["type"] == "TOPIC_RECORD":
            names[data["topicId"]] = data["name"]
        elif record["type"] == "PARTITION_RECORD":
            parts[(data["topicId"], data["partitionId"])] = {
                "leader": data["leader"], "leaderEpoch": data["leaderEpoch"], "isr": data["isr"],
                "elr": data.get("eligibleLeaderReplicas") or []}
        elif record["type"] == "PARTITION_CHANGE_RECORD":
            _merge(parts[(data["topicId"], data["partitionId"])], data)
    if not parts:
        raise HarnessError(f"no partition records in the controller's metadata log:\n{err[-2000:]}")
    return {(names[tid], p): state for (tid, p), state in parts.items() if names[tid] in TOPICS}


def _merge(state: dict[str, Any], change: dict[str, Any]) -> None:
    if change.get("leader", -2) != -2:  # -2: NO_LEADER_CHANGE
        state["leader"] = change["leader"]
        state["leaderEpoch"] += 1
    if change.get("isr") is not None:
        state["isr"] = change["isr"]
    if change.get("eligibleLeaderReplicas") is not None:
        state["elr"] = change["eligibleLeaderReplicas"]


# ---- the rejoin ----

# The lines that say a replica's log was cut: Kafka's fetcher (AbstractFetcherThread, logged by
# kafka.server.ReplicaFetcherThread), the log itself (UnifiedLog) and the fetcher's out-of-range reset.
TRUNCATION_LINE = re.compile(r"[Tt]runcat|Reset fetch offset")
FETCHER_TRUNCATION = re.compile(r"Truncating partition (\S+) with TruncationState\(offset=(\d+), completed=(\w+)\)")
LOG_TRUNCATION = re.compile(r"Truncating to offset (\d+)|Truncate and start at offset (\d+)"
                            r"|to current leader's latest offset (\d+)")


def restart_order(stop_order: list[int]) -> list[int]:
    """Last stopped first: the broker that held the ISR at the end must lead again before any other broker
    could be elected uncleanly in its place (unclean-0 allows that)."""
    order: list[int] = []
    for broker in reversed(stop_order):
        if broker not in order:
            order.append(broker)
    return order + [b for b in BROKERS if b not in order]


@dataclass
class Rejoin:
    order: list[int]
    lines: dict[int, list[str]]  # broker -> its server.log lines since the restart
    states: dict[tuple[str, int], PartitionState]
    read_back: dict[tuple[str, int], list[tuple[int, bytes | None, bytes | None]]]


def rejoin(play: Play, at_copy: dict[tuple[str, int], dict[str, Any]]) -> Rejoin:
    """Restart the brokers on their own log dirs, one by one (each partition a broker may lead gets its leader
    before the next broker starts), wait until every replica is back in the ISR, read every partition back."""
    cluster = play.cluster
    play.phase = "rejoin"
    marks = {b: cluster.brokers[b].log_size() for b in BROKERS}
    order = restart_order(play.stop_order)
    for broker in order:
        play.start(broker)
        electable = [tp for tp, s in at_copy.items() if broker in s["isr"] + s["elr"]]
        cluster.wait_for(lambda tps=electable: all(cluster.describe_partition(*tp).leader is not None for tp in tps),
                         f"leaders for {electable}", 60)
    for topic, p in PARTITIONS:
        cluster.wait_for_isr(topic, p, BROKERS, 180)
    play.snapshot("every replica back in the ISR")
    states = {tp: cluster.describe_partition(*tp) for tp in PARTITIONS}
    read_back = {tp: cluster.read_partition(*tp) for tp in PARTITIONS}
    lines = {b: cluster.brokers[b].log_lines(marks[b]) for b in BROKERS}
    return Rejoin(order, lines, states, read_back)


def truncation_lines(lines: list[str], topic: str, partition: int) -> list[str]:
    name = re.compile(rf"(?<![\w.-]){re.escape(tp_name(topic, partition))}(?!\d)")
    return [line for line in lines if TRUNCATION_LINE.search(line) and name.search(line)]


def truncated_to(lines: list[str]) -> int | None:
    """The fetcher's last completed TruncationState offset; else the log's own last truncation offset."""
    fetcher = [int(m.group(2)) for m in map(FETCHER_TRUNCATION.search, lines) if m and m.group(3) == "true"]
    if fetcher:
        return fetcher[-1]
    own = [int(next(g for g in m.groups() if g)) for m in map(LOG_TRUNCATION.search, lines) if m]
    return own[-1] if own else None


# ---- the copy ----

_BATCH = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+) .*partitionLeaderEpoch: (-?\d+)")
_RECORD = re.compile(r"^\| offset: (\d+) .*? key: (.*?) payload: (.*)$")


@dataclass
class ReplicaCopy:
    records: list[tuple[int, str, str]] = field(default_factory=list)  # offset, key, value as dumped
    batches: list[tuple[int, int, int]] = field(default_factory=list)  # base, last offset, leader epoch
    segments: list[int] = field(default_factory=list)  # base offsets

    @property
    def log_end_offset(self) -> int:
        return max([last + 1 for _, last, _ in self.batches] + self.segments + [0])


def read_copies(build: Path, version: str) -> dict[tuple[int, str, int], ReplicaCopy]:
    """Every copied replica's batches and records, from one DumpLogSegments --deep-iteration --print-data-log
    over all their segments (paths relative to the build dir)."""
    copies: dict[tuple[int, str, int], ReplicaCopy] = {}
    files = []
    for b in BROKERS:
        for topic, p in PARTITIONS:
            copy = copies[(b, topic, p)] = ReplicaCopy()
            for seg in sorted((build / f"broker-{b}" / tp_name(topic, p)).glob("*.log")):
                copy.segments.append(int(seg.stem))
                files.append(seg.relative_to(build))
    out, err = dump_log(files, "--deep-iteration", "--print-data-log", dist=KafkaDistribution(version), cwd=build)
    current = None
    for line in out.splitlines():
        if line.startswith("Dumping "):
            broker_dir, part_dir = Path(line.split(" ", 1)[1]).parts[-3:-1]
            topic, p = part_dir.rsplit("-", 1)
            current = copies[(int(broker_dir.split("-")[1]), topic, int(p))]
        elif (m := _BATCH.match(line)) and current is not None:
            current.batches.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
        elif (m := _RECORD.match(line)) and current is not None:
            current.records.append((int(m.group(1)), m.group(2), m.group(3)))
    if not any(c.records for c in copies.values()):
        raise HarnessError(f"DumpLogSegments printed no records:\n{err[-2000:]}")
    return copies


def epoch_checkpoint(path: Path) -> list[str]:
    """The entry lines (`<epoch> <start offset>`) of a leader-epoch-checkpoint: after version and count."""
    return [line for line in path.read_text().splitlines()[2:] if line.strip()] if path.exists() else []


# ---- the oracle ----

def replica_json(build: Path, broker: int, topic: str, partition: int, copy: ReplicaCopy, lines: list[str],
                 read_back: set[tuple[int, str, str]], acked: set[tuple[int, str, str]]) -> dict[str, Any]:
    root = build / f"broker-{broker}"
    cut = truncated_to(lines)
    dropped = [r for r in copy.records if cut is not None and r[0] >= cut and r not in read_back]

    def checkpoint(name: str) -> int | None:
        return read_offset_checkpoint(root / name).get((topic, partition))

    return {
        "logEndOffsetAtCopy": copy.log_end_offset,
        "highWatermarkAtCopy": checkpoint("replication-offset-checkpoint"),
        "logStartOffsetAtCopy": checkpoint("log-start-offset-checkpoint"),
        "cleanerOffsetAtCopy": checkpoint("cleaner-offset-checkpoint"),
        "leaderEpochCheckpoint": epoch_checkpoint(root / tp_name(topic, partition) / "leader-epoch-checkpoint"),
        "records": len(copy.records),
        "batches": len(copy.batches),
        "truncatedTo": cut,
        "truncationLogLines": lines,
        "droppedOffsets": [r[0] for r in dropped],
        "acknowledgedDropped": [r[0] for r in dropped if r in acked],
        # every record of the copy the read-back lacks, truncated or not: for compacted also what the leader's
        # cleaner removed
        "absentFromReadBack": [r[0] for r in copy.records if r not in read_back],
    }


def text_records(records: Iterable[tuple[int, bytes | None, bytes | None]]) -> set[tuple[int, str, str]]:
    """(offset, key, value) as DumpLogSegments prints them (UTF-8; all keys and values here are ASCII)."""
    return {(o, (k or b"").decode(), (v or b"").decode()) for o, k, v in records}


def partition_json(build: Path, play: Play, topic: str, partition: int, at_copy: dict[str, Any],
                   copies: dict[tuple[int, str, int], ReplicaCopy], back: Rejoin) -> dict[str, Any]:
    tp = (topic, partition)
    deliveries = play.deliveries.get(tp, [])
    acked = text_records((d.offset, d.key, d.value) for d in deliveries if d.acknowledged)
    read_back = text_records(back.read_back[tp])
    online = [(e["step"], e["partitions"][tp_name(*tp)]) for e in play.timeline
              if e["partitions"][tp_name(*tp)]["leader"] is not None and e["phase"] == "scenario"]
    last_step, last_online = online[-1]
    meta = (build / "broker-1" / tp_name(*tp) / "partition.metadata").read_text()
    entry: dict[str, Any] = {
        "scenario": topic, "topic": topic, "partition": partition,
        "topicId": re.search(r"topic_id: (\S+)", meta).group(1),
        "assignedReplicas": list(TOPICS[topic].assignment[partition]),
        "leaderAtCopy": at_copy["leader"], "leaderEpochAtCopy": at_copy["leaderEpoch"],
        "isrAtCopy": at_copy["isr"], "elrAtCopy": at_copy["elr"],
        "leaderAtCopySource": "the controller's metadata log with every broker down (-1: no leader)",
        "lastOnlineLeader": {"leader": last_online["leader"], "leaderEpoch": last_online["leaderEpoch"],
                             "isr": last_online["isr"], "recorded": last_step,
                             "source": "admin API (describe_topics, list_offsets) while it led"},
        "produced": {"records": len(deliveries), "acknowledged": len(acked)},
        "afterRejoin": {**state_json(back.states[tp]), "records": len(read_back),
                        "logEndOffset": max((o for o, _, _ in read_back), default=-1) + 1},
        "replicas": {str(b): replica_json(build, b, topic, partition, copies[(b, topic, partition)],
                                          truncation_lines(back.lines[b], topic, partition), read_back, acked)
                     for b in BROKERS},
    }
    if topic == "unclean":
        entry["uncleanElection"] = play.facts["uncleanElection"]
    return entry


def build_oracle(build: Path, play: Play, at_copy: dict[tuple[str, int], dict[str, Any]], back: Rejoin,
                 copies: dict[tuple[int, str, int], ReplicaCopy]) -> dict[str, Any]:
    return {
        "kafkaVersion": play.cluster.dist.version,
        "clusterId": play.cluster.cluster_id,
        "controllerId": CONTROLLER_ID,
        "brokers": {str(b): f"broker-{b}" for b in BROKERS},
        "stopOrder": play.stop_order,
        "rejoinOrder": back.order,
        "cleanerOffsets": {k: {str(b): o for b, o in v.items()} for k, v in play.facts.items()
                           if k.startswith("cleaner")},
        "partitions": [partition_json(build, play, t, p, at_copy[(t, p)], copies, back) for t, p in PARTITIONS],
        "timeline": play.timeline,
    }


def check(oracle: dict[str, Any], copies: dict[tuple[int, str, int], ReplicaCopy]) -> tuple[list[str], list[str]]:
    """(problems, notes): where the brokers did not leave what the scenarios meant to (problems fail the run)."""
    problems: list[str] = []
    notes: list[str] = []
    for part in oracle["partitions"]:
        problems += replica_problems(part)
        notes += [f"{part['topic']}-{part['partition']} broker {b}: high watermark {r['highWatermarkAtCopy']}, "
                  f"log end {r['logEndOffsetAtCopy']}" for b, r in part["replicas"].items()
                  if part["topic"] == "healthy" and r["highWatermarkAtCopy"] != r["logEndOffsetAtCopy"]]
    by_topic = {p["topic"]: p["replicas"] for p in oracle["partitions"] if p["partition"] == 0}
    if not by_topic["unclean"]["1"]["acknowledgedDropped"]:
        problems.append("unclean-0: the old leader (broker 1) lost no acknowledged record")
    if not by_topic["behind"]["3"]["logEndOffsetAtCopy"] < by_topic["behind"]["1"]["logEndOffsetAtCopy"]:
        problems.append("behind-0: broker 3 is not behind broker 1")
    if len({r["cleanerOffsetAtCopy"] for r in by_topic["compacted"].values()}) < len(BROKERS):
        notes.append("compacted-0: the brokers' cleaner offsets are not all different")
    latest = {b: {k: v for _, k, v in sorted(copies[(b, "compacted", 0)].records)} for b in BROKERS}
    problems += [f"compacted-0: broker {b}'s latest value per key differs from broker 1's"
                 for b in BROKERS if latest[b] != latest[1]]
    return problems, notes


def replica_problems(part: dict[str, Any]) -> list[str]:
    name = tp_name(part["topic"], part["partition"])
    problems = []
    for b, r in part["replicas"].items():
        if part["topic"] != "compacted" and r["absentFromReadBack"] != r["droppedOffsets"]:
            problems.append(f"{name} broker {b}: records missing from the read-back below its truncation offset")
        if part["topic"] != "unclean" and r["droppedOffsets"]:
            problems.append(f"{name} broker {b} dropped {len(r['droppedOffsets'])} records")
        cut = r["truncatedTo"]
        if part["topic"] != "unclean" and cut is not None and cut < r["logEndOffsetAtCopy"]:
            problems.append(f"{name} broker {b} truncated below its log end, to {r['truncatedTo']}")
    return problems


# ---- one version ----

def sanitize(oracle: dict[str, Any], cluster: ReplicaCluster) -> dict[str, Any]:
    """Names in place of the build machine's paths (UnifiedLog's lines name the log dir)."""
    text = json.dumps(oracle)
    for node in (*cluster.brokers.values(), cluster.controller):
        name = f"broker-{node.node_id}" if node.node_id != CONTROLLER_ID else "controller"
        text = text.replace(json.dumps(str(node.log_dir))[1:-1], f"<{name} log dir>")
    text = text.replace(json.dumps(str(REPO_ROOT))[1:-1], "<repo>")
    return json.loads(text)


def run(version: str, build: Path) -> tuple[dict[str, Any], dict[tuple[int, str, int], ReplicaCopy]]:
    dist = KafkaDistribution(version).ensure()
    cluster = ReplicaCluster(dist, build / "cluster", len(BROKERS), broker_props=BROKER_PROPS,
                             per_broker_props=PER_BROKER_PROPS)
    play = Play(cluster)
    try:
        cluster.start()
        log(f"Kafka {version}: controller {CONTROLLER_ID} and brokers {BROKERS} up; topics {', '.join(TOPICS)}")
        for t in TOPICS.values():
            cluster.create_topic(t.name, t.assignment, topic_config(t, version))
        play.snapshot("topics created")
        play_scenarios(play)
        for b in BROKERS:
            cluster.copy_log_dir(b, build / f"broker-{b}")
        log("every broker down: log dirs copied")
        at_copy = metadata_at_copy(cluster)
        back = rejoin(play, at_copy)
        log(f"rejoined in the order {back.order}; every replica back in the ISR")
    finally:
        cluster.stop()
    copies = read_copies(build, version)
    return sanitize(build_oracle(build, play, at_copy, back, copies), cluster), copies


def write_version(version: str, build: Path) -> Path:
    """Replace data/samples-replicas/<version> by the build's copies and oracle, staged next to it first."""
    target = OUT_DIR / version
    staged = OUT_DIR / f".{version}.new"
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    for name in [f"broker-{b}" for b in BROKERS] + ["oracle.json"]:
        (build / name).rename(staged / name)
    shutil.rmtree(target, ignore_errors=True)
    staged.rename(target)
    return target


def content_size(path: Path) -> int:
    """The bytes of every file under `path` but their zero tails: 4.x's clean stop leaves the metadata log's
    active indexes preallocated (10 MiB of zeros each, sparse on disk, a few KiB in git)."""
    return sum(len(f.read_bytes().rstrip(bytes(1))) for f in path.rglob("*") if f.is_file())


def preallocated(version_dir: Path) -> list[tuple[str, int, int]]:
    """(path, length, length without the zero tail) of the copied files over 1 MiB."""
    return [(str(f.relative_to(version_dir)), f.stat().st_size, len(f.read_bytes().rstrip(bytes(1))))
            for f in sorted(version_dir.rglob("*")) if f.is_file() and f.stat().st_size > 2**20]


def to_json(oracle: dict[str, Any]) -> str:
    """Indented JSON with lists of numbers on one line each."""
    text = json.dumps(oracle, indent=1)
    return re.sub(r"\[\s+(-?\d+(?:,\s+-?\d+)*)\s+\]", lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]",
                  text) + "\n"


def build_version(version: str) -> bool:
    """Build one version; False (the build dir kept, the output unchanged) when the oracle fails its checks."""
    started = time.monotonic()
    build = BUILD_DIR / version
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir(parents=True)
    oracle, copies = run(version, build)
    (build / "oracle.json").write_text(to_json(oracle))
    problems, notes = check(oracle, copies)
    size = sum(content_size(build / f"broker-{b}") for b in BROKERS)
    if size > SIZE_LIMIT:
        problems.append(f"the copies hold {size} bytes (without zero tails), over {SIZE_LIMIT}")
    for note in notes:
        log(f"note: {note}")
    for problem in problems:
        log(f"problem: {problem}")
    if problems:
        log(f"kept {build.relative_to(REPO_ROOT)} (oracle.json, cluster/*/server.log); output unchanged")
        return False
    target = write_version(version, build)
    shutil.rmtree(build)
    log(f"wrote {target.relative_to(REPO_ROOT)} ({size} bytes without zero tails) in "
        f"{round(time.monotonic() - started)} s")
    return True


# ---- README ----

def settings_text() -> list[str]:
    lines = cluster_settings_text(
        f"One dedicated controller (node id {CONTROLLER_ID}, `process.roles=controller`, its own metadata dir, the "
        "static quorum `controller.quorum.voters`) and brokers 1, 2, 3 (`process.roles=broker`, one log dir each), "
        "all formatted with the same cluster id, on free loopback ports. The controller also has:", CONTROLLER_PROPS,
        lambda version: {**broker_defaults(version.split(".")[0], len(BROKERS)), **BROKER_PROPS})
    for b, props in PER_BROKER_PROPS.items():
        lines += [f"Broker {b} also: " + ", ".join(f"`{k}={v}`" for k, v in props.items()) + "."]
    lines += ["", "Topics (RF=3, explicit replica assignment, the first replica of each partition its preferred "
              f"leader), each with segments of {SEGMENT_BYTES} bytes (`segment.bytes` on 3.9, "
              "`internal.segment.bytes` on 4.x, whose `segment.bytes` has a 1 MiB minimum):", ""]
    for t in TOPICS.values():
        config = ", ".join(f"`{k}={v}`" for k, v in t.config.items())
        lines.append(f"- `{t.name}`: replicas {[list(a) for a in t.assignment]}" + (f", {config}" if config else "")
                     + f". {t.text}")
    return lines


SCENARIO_TEXT = [
    "## Timeline",
    "",
    "The scenarios share the brokers, so they run on one timeline (`timeline` in oracle.json has each "
    "partition's leader, leader epoch and ISR at every step, from the admin API):",
    "",
    "1. All brokers up: `healthy` written; `compacted` round 1, both cleaners done, broker 2's dynamic "
    "config, round 2, broker 1's cleaner done; `behind` and `unclean` first records; every ISR full.",
    "2. Broker 3 stops cleanly (controlled shutdown): it leaves every ISR; unclean-0's leadership moves to broker 1.",
    f"3. `behind` gets {BEHIND_RECORDS[1]} more records, `unclean` {_UNCLEAN['leader-1']} (ISR [1, 2]).",
    f"4. Broker 2 stops; unclean-0's ISR is [1]; {_UNCLEAN['leader-1-alone']} records acknowledged (acks=all, "
    "min.insync.replicas=1) by broker 1 alone.",
    "5. Broker 1 stops: no broker runs. Broker 2 starts; the controller elects it leader of unclean-0 uncleanly "
    f"(`uncleanElection` in oracle.json: how, and the controller's own lines); {_UNCLEAN['leader-2-unclean']} "
    "records on broker 2. The other "
    "partitions stay offline (their last ISR member, broker 1, is down).",
    "6. Broker 2 stops. With every broker down, each log dir is copied (without `.lock`): `<version>/broker-<id>/`.",
    "",
    "## The oracle: rejoin",
    "",
    "After the copy the brokers restart on their own log dirs (the copy is not touched again), last stopped "
    "first, each only once every partition it may lead has a leader (so no unclean election picks another "
    "broker for unclean-0), until every replica is back in the ISR. Then each partition is read back with "
    "a consumer (librdkafka, from the leader, up to the high watermark).",
    "",
    "Per partition: `topicId`, `leaderAtCopy` / `leaderEpochAtCopy` / `isrAtCopy` / `elrAtCopy` (the controller's "
    "metadata log replayed with every broker down: leader -1 when none runs), `lastOnlineLeader` (the admin API "
    "at the last step the partition had a leader), `afterRejoin` (leader, epoch, ISR, the records read back). "
    "Per replica:",
    "",
    "- `logEndOffsetAtCopy` (DumpLogSegments on the copy: last offset + 1), `highWatermarkAtCopy`, "
    "`logStartOffsetAtCopy`, `cleanerOffsetAtCopy` (the copy's root checkpoint files; null: not listed), "
    "`leaderEpochCheckpoint` (the copy's entries, `<epoch> <start offset>`).",
    "- `truncatedTo`: the offset of the broker's own last completed `Truncating partition ... with "
    "TruncationState(offset=N, completed=true)` line after the restart (else of its log's `Truncating to offset "
    "N`); null when it logged none. `truncationLogLines`: every line of its server.log after the restart that "
    "names the partition and a truncation (log dirs written as `<broker-N log dir>`).",
    "- `droppedOffsets`: the copy's records at offsets >= `truncatedTo` that the read-back lacks (same offset, "
    "key and value); `acknowledgedDropped`: those the producer had an acknowledgement for (delivery report with "
    "that offset, key and value). `absentFromReadBack`: every record of the copy the read-back lacks (for "
    "`compacted` also what the leader's cleaner removed).",
]

LINE_SOURCES = [
    "## Truncation lines",
    "",
    "What the rejoining brokers logged (the logger closes each line). On both versions the fetcher is "
    "`kafka.server.AbstractFetcherThread` (core, Scala; logger `kafka.server.ReplicaFetcherThread`):",
    "",
    "    Truncating partition <tp> with TruncationState(offset=N, completed=true|false) due to leader epoch and "
    "offset EpochEndOffset(...)",
    "    Truncating partition <tp> with TruncationState(offset=N, completed=true) due to local high watermark N",
    "",
    "(`TruncationState(...)` is `kafka.server.OffsetTruncationState.toString`.) The log itself: 3.9's "
    "`kafka.log.UnifiedLog` (core, Scala), 4.x's `org.apache.kafka.storage.internals.log.UnifiedLog` (storage, "
    "Java), both `[UnifiedLog partition=<tp>, dir=<log dir>] Truncating to offset N` (or `Truncating to N has no "
    "effect as the largest offset in the log is M`), followed by `LocalLog`'s `Deleting segments as part of log "
    "truncation: ...` when whole segments go. 4.x's UnifiedLog first warns `Truncating <tp> to offset N below "
    "high watermark HW`; 3.9 has that warning in `kafka.server.ReplicaFetcherThread.truncate`, checked after "
    "the log's truncation has already lowered the high watermark, so 3.9 does not print it here.",
]


def results_text(version: str, oracle: dict[str, Any]) -> list[str]:
    lines = [f"### {version}", "",
             f"Cluster id `{oracle['clusterId']}`; brokers stopped in the order {oracle['stopOrder']}, restarted "
             f"in the order {oracle['rejoinOrder']}.", "",
             "| partition | broker | LEO | HW | truncatedTo | dropped | acknowledged dropped "
             "| leader-epoch-checkpoint |",
             "|---|---|---|---|---|---|---|---|"]
    for part in oracle["partitions"]:
        for b, r in part["replicas"].items():
            lines.append(f"| {part['topic']}-{part['partition']} | {b} | {r['logEndOffsetAtCopy']} | "
                         f"{r['highWatermarkAtCopy']} | {json.dumps(r['truncatedTo'])} | {len(r['droppedOffsets'])} | "
                         f"{len(r['acknowledgedDropped'])} | {'; '.join(r['leaderEpochCheckpoint'])} |")
    unclean = next(p for p in oracle["partitions"] if p["topic"] == "unclean")
    election = unclean["uncleanElection"]
    lines += ["", f"unclean-0: elected by the {election['trigger']}: {_state(election['before'])} before, "
              f"{_state(election['after'])} after; at the copy leader {unclean['leaderAtCopy']}, epoch "
              f"{unclean['leaderEpochAtCopy']}, ISR {unclean['isrAtCopy']}, ELR {unclean['elrAtCopy']}. "
              "The controller logged:", ""]
    lines += [f"    {line}" for line in election["controllerLogLines"]]
    lines += ["", "The old leader's (broker 1) truncation lines:", ""]
    lines += [f"    {line}" for line in unclean["replicas"]["1"]["truncationLogLines"]]
    cleaner = {k: ", ".join(f"broker {b} {o}" for b, o in v.items()) for k, v in oracle["cleanerOffsets"].items()}
    lines += ["", f"compacted-0: cleaner offsets after round 1 {cleaner['cleanerAfterRound1']}, after round 2 "
              f"{cleaner['cleanerAfterRound2']}.", ""]
    big = preallocated(OUT_DIR / version)
    if big:
        lines += ["Preallocated indexes the clean stop did not trim (the metadata log's active segment):", ""]
        lines += [f"- `{name}`: {size} bytes, all but {kept} of them a zero tail" for name, size, kept in big]
        lines.append("")
    return lines


def _state(state: dict[str, Any]) -> str:
    return f"leader {state['leader']}, epoch {state['leaderEpoch']}, ISR {state['isr']}"


def readme(oracles: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# data/samples-replicas: diverging replicas of a 3-broker KRaft cluster, with the brokers' rejoin as oracle",
        "",
        "Generated by `tests/harness/replica_corpus.py` (the cluster: `tests/harness/replica_cluster.py`); "
        "regenerate with `make samples-replicas`. Do not edit by hand.",
        "",
        "For each Kafka version, `<version>/broker-<id>/` is broker <id>'s whole log dir (meta.properties, the root "
        "checkpoint files, `__cluster_metadata-0`, the four topics' partitions) copied while every broker was "
        "stopped (each cleanly), and `<version>/oracle.json` what the brokers did when they came back on those "
        "log dirs: which replica truncated where, and which of the copy's records (acknowledged ones among them) "
        "the partition lost.",
        "",
        "## Versions",
        "",
    ]
    lines += [f"- `{v}/`: Apache Kafka {v} (JARs from Maven Central), cluster id `{o['clusterId']}`."
              for v, o in oracles.items()]
    lines += ["", *settings_text(), "", *SCENARIO_TEXT, "", *LINE_SOURCES, "", "## What the brokers did", ""]
    for version, oracle in oracles.items():
        lines += results_text(version, oracle)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return build_versions("make samples-replicas", __doc__, build_version,
                          lambda: write_readme(OUT_DIR, "oracle.json", readme), argv)


if __name__ == "__main__":
    sys.exit(main())
