"""A multi-broker KRaft cluster on 127.0.0.1: one dedicated controller and N brokers, each its own java process.

Used by `make samples-replicas` (tests/harness/replica_corpus.py) to make replicas of a partition diverge:

    dist = KafkaDistribution("3.9.2")
    with ReplicaCluster(dist, work_dir, brokers=3) as cluster:     # formats every node, starts them all
        cluster.create_topic("t", [[1, 2, 3]], {"min.insync.replicas": 1})
        acks = cluster.produce("t", 0, [(b"k", b"v")], acks="all")   # [Delivery(offset=0, acknowledged=True)]
        cluster.stop_node(2)                                         # clean stop: controlled shutdown
        cluster.describe_partition("t", 0)                           # leader, replicas, ISR, leader epoch
        cluster.start_node(2)                                        # the same log dir: it rejoins
    # leaving the block stops every node cleanly

The controller (node id `CONTROLLER_ID`, `process.roles=controller`) keeps its metadata log in its own dir; the
brokers (node ids 1..N, `process.roles=broker`) have one log dir each. Every node is formatted with the same
cluster id and the static quorum `controller.quorum.voters` (3.9 and 4.x both accept it). Ports are fixed for
the cluster's life, so a broker restarted on its log dir comes back at the same address.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .broker import HarnessError, KafkaBroker, KafkaDistribution, random_kafka_uuid
from .processes import free_port

CONTROLLER_ID = 100

# Every node: the listener layout of KafkaBroker, split by role.
_COMMON_PROPS: dict[str, Any] = {
    "controller.listener.names": "CONTROLLER",
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
}
# The controller looks for leaderless partitions of topics with unclean.leader.election.enable=true every
# `unclean.leader.election.interval.ms` (5 minutes by default, 3.9 and 4.x alike); a broker that unfences
# triggers the same election at once, this is the fallback.
CONTROLLER_PROPS: dict[str, Any] = {"unclean.leader.election.interval.ms": 1000}


def broker_defaults(kafka_major: str, brokers: int) -> dict[str, Any]:
    """What every broker of a cluster of `brokers` needs: internal topics whose replication fits it."""
    rf = min(3, brokers)
    props: dict[str, Any] = {
        "num.partitions": 1,
        "auto.create.topics.enable": "false",
        "offsets.topic.replication.factor": rf,
        # librdkafka's consumer needs a group.id and looks its coordinator up even when only assigned
        # partitions, which creates __consumer_offsets: one partition is enough for that.
        "offsets.topic.num.partitions": 1,
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": 1,
        "group.initial.rebalance.delay.ms": 0,
    }
    if kafka_major != "3":  # __share_group_state (KIP-932) exists from 4.x on
        props.update({"share.coordinator.state.topic.replication.factor": rf,
                      "share.coordinator.state.topic.min.isr": 1})
    return props


@dataclass(frozen=True)
class Delivery:
    """One produced record and what its delivery report said."""

    key: bytes | None
    value: bytes | None
    offset: int  # -1 when not acknowledged
    acknowledged: bool
    error: str | None = None


@dataclass(frozen=True)
class PartitionState:
    """A partition as the admin API describes it; leader None when offline (then leader_epoch is None too)."""

    leader: int | None
    replicas: list[int]
    isr: list[int]
    leader_epoch: int | None


class ClusterNode(KafkaBroker):
    """One node of a ReplicaCluster: KafkaBroker's config files and process handling (clean or unclean stop,
    server.log) with a single role and the cluster's fixed ports and cluster id."""

    def __init__(self, cluster: ReplicaCluster, node_id: int, work_dir: Path,
                 extra_props: Mapping[str, Any] | None = None, heap: str = "384m") -> None:
        super().__init__(cluster.dist, extra_props, work_dir=work_dir, log_dir=work_dir / "logs",
                         node_id=node_id, heap=heap)
        self.cluster = cluster
        self.cluster_id = cluster.cluster_id
        self.controller_port = cluster.controller_port
        self.port = cluster.controller_port if self.is_controller else free_port()

    @property
    def is_controller(self) -> bool:
        return self.node_id == CONTROLLER_ID

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def properties(self) -> dict[str, Any]:
        props: dict[str, Any] = {
            "node.id": self.node_id,
            "controller.quorum.voters": f"{CONTROLLER_ID}@127.0.0.1:{self.controller_port}",
            "log.dirs": str(self.log_dir),
            **_COMMON_PROPS,
        }
        if self.is_controller:
            props.update({"process.roles": "controller",
                          "listeners": f"CONTROLLER://127.0.0.1:{self.controller_port}"})
        else:
            props.update({
                "process.roles": "broker",
                "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                "inter.broker.listener.name": "PLAINTEXT",
                **self.cluster.broker_defaults(),
            })
        props.update(self.extra_props)
        return props

    def format(self) -> None:
        """Format the storage once (kafka-storage format), with the cluster's id."""
        if not (self.log_dir / "meta.properties").exists():
            config = self._write_config()
            self.dist.run_java("kafka.tools.StorageTool", "format", "-t", self.cluster_id, "-c", str(config))

    def launch(self) -> None:
        """Start the JVM without waiting (several nodes boot side by side); `wait_ready` waits."""
        if self.running:
            raise HarnessError(f"node {self.node_id} already running")
        self.format()
        config = self._write_config()
        cmd = self.dist.java_cmd("kafka.Kafka", str(config), jvm_opts=(
            f"-Xmx{self.heap}", self.dist.log4j_option(self.work_dir / "log4j.properties"),
            f"-Dkafka.logs.dir={self.work_dir}"))
        with open(self.work_dir / "console.log", "ab") as console:
            self.process = subprocess.Popen(cmd, stdout=console, stderr=subprocess.STDOUT, cwd=self.work_dir)

    def start(self, timeout: float = 120.0) -> ClusterNode:
        self.launch()
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float = 120.0) -> None:
        """The controller: its port accepts connections. A broker: its metadata lists it among the brokers
        (a broker only serves clients once the controller has unfenced it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running:
                raise HarnessError(f"node {self.node_id} exited with {self.process and self.process.returncode} "
                                   f"during startup:\n{self._tail()}")
            if self._answers():
                return
            time.sleep(0.5)
        self.kill()
        raise HarnessError(f"node {self.node_id} not ready after {timeout}s:\n{self._tail()}")

    def _answers(self) -> bool:
        if self.is_controller:
            try:
                socket.create_connection(("127.0.0.1", self.controller_port), timeout=1).close()
                return True
            except OSError:
                return False
        from confluent_kafka.admin import AdminClient

        try:
            brokers = AdminClient(self.client_config()).list_topics(timeout=2).brokers
        except Exception:  # noqa: BLE001 - KafkaException until the listener is up
            return False
        return self.node_id in brokers

    def log_size(self) -> int:
        """server.log's current length: where lines logged from now on start."""
        return self.server_log.stat().st_size if self.server_log.exists() else 0

    def log_lines(self, since: int = 0) -> list[str]:
        """server.log's lines from byte `since` on."""
        if not self.server_log.exists():
            return []
        with open(self.server_log, "rb") as f:
            f.seek(since)
            return f.read().decode("utf-8", "replace").splitlines()


class ReplicaCluster:
    """A dedicated KRaft controller and `brokers` brokers (node ids 1..N) under `work_dir`: `controller/` and
    `broker-<id>/` (each with server.properties, server.log and its log dir `logs/`)."""

    def __init__(self, dist: KafkaDistribution, work_dir: Path, brokers: int = 3, *,
                 broker_props: Mapping[str, Any] | None = None,
                 per_broker_props: Mapping[int, Mapping[str, Any]] | None = None,
                 controller_props: Mapping[str, Any] | None = None) -> None:
        self.dist = dist.ensure()
        self.work_dir = Path(work_dir)
        self.size = brokers
        self.broker_props = dict(broker_props or {})
        self.cluster_id = random_kafka_uuid()
        self.controller_port = free_port()
        self.controller = ClusterNode(self, CONTROLLER_ID, self.work_dir / "controller",
                                      {**CONTROLLER_PROPS, **(controller_props or {})}, heap="256m")
        self.brokers = {
            i: ClusterNode(self, i, self.work_dir / f"broker-{i}", (per_broker_props or {}).get(i))
            for i in range(1, brokers + 1)
        }
        self._admin: Any = None

    # ---- nodes ----

    def broker_defaults(self) -> dict[str, Any]:
        return {**broker_defaults(self.dist.major, self.size), **self.broker_props}

    def node(self, node_id: int) -> ClusterNode:
        return self.controller if node_id == CONTROLLER_ID else self.brokers[node_id]

    def start(self, timeout: float = 180.0) -> ReplicaCluster:
        """Format every node, start the controller, then all brokers side by side."""
        for node in (self.controller, *self.brokers.values()):
            node.format()
        self.controller.start(timeout)
        self.start_brokers(list(self.brokers), timeout)
        return self

    def start_brokers(self, ids: Sequence[int], timeout: float = 180.0) -> None:
        """Start these brokers together (on their existing log dirs) and wait until each is unfenced."""
        self._admin = None
        for i in ids:
            self.brokers[i].launch()
        for i in ids:
            self.brokers[i].wait_ready(timeout)

    def start_node(self, node_id: int, timeout: float = 180.0) -> None:
        """Start (or restart, on the same log dir) one node and wait until it is ready."""
        self._admin = None
        self.node(node_id).start(timeout)

    def stop_node(self, node_id: int, clean: bool = True) -> None:
        """Stop one node: SIGTERM (a broker's controlled shutdown first moves its leaderships away and leaves
        the ISRs) or, with clean=False, SIGKILL."""
        self._admin = None
        self.node(node_id).stop(clean=clean)

    def kill_node(self, node_id: int) -> None:
        self.stop_node(node_id, clean=False)

    def running_brokers(self) -> list[int]:
        return [i for i, b in self.brokers.items() if b.running]

    def stop(self) -> None:
        """Stop every broker, then the controller, all cleanly (a node that does not stop in time is killed)."""
        self._admin = None
        for node in (*self.brokers.values(), self.controller):
            try:
                node.stop(clean=True)
            except HarnessError:
                node.kill()

    def __enter__(self) -> ReplicaCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- clients ----

    @property
    def bootstrap(self) -> str:
        """The running brokers (all of them if none runs: a client then waits for one)."""
        ids = self.running_brokers() or list(self.brokers)
        return ",".join(self.brokers[i].bootstrap for i in ids)

    def client_config(self, **extra: Any) -> dict[str, Any]:
        return {"bootstrap.servers": self.bootstrap, "log_level": 0, **extra}

    def admin(self) -> Any:
        """An AdminClient on the running brokers, made anew after any start or stop."""
        from confluent_kafka.admin import AdminClient

        if self._admin is None:
            self._admin = AdminClient(self.client_config())
        return self._admin

    def create_topic(self, name: str, assignment: Sequence[Sequence[int]],
                     config: Mapping[str, Any] | None = None) -> None:
        """Create a topic with an explicit replica assignment: one list of broker ids per partition, the first
        of each its preferred leader."""
        from confluent_kafka.admin import NewTopic

        topic = NewTopic(name, num_partitions=len(assignment), replica_assignment=[list(r) for r in assignment],
                         config={k: str(v) for k, v in (config or {}).items()})
        self.admin().create_topics([topic], operation_timeout=30)[name].result(timeout=60)
        # the scenarios count on each partition starting out led by its preferred replica
        self.wait_for(lambda: all(self.describe_partition(name, p).leader == r[0]
                                  for p, r in enumerate(assignment)), f"{name}'s preferred leaders", 60)

    def alter_topic_config(self, name: str, config: Mapping[str, Any]) -> None:
        self._alter_configs("TOPIC", name, config)

    def alter_broker_config(self, broker: int, config: Mapping[str, Any]) -> None:
        """Per-broker dynamic config (kept in the metadata log)."""
        self._alter_configs("BROKER", str(broker), config)

    def _alter_configs(self, kind: str, name: str, config: Mapping[str, Any]) -> None:
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

        entries = [ConfigEntry(k, str(v), incremental_operation=AlterConfigOpType.SET) for k, v in config.items()]
        resource = ConfigResource(getattr(ConfigResource.Type, kind), name, incremental_configs=entries)
        for future in self.admin().incremental_alter_configs([resource]).values():
            future.result(timeout=60)

    def produce(self, topic: str, partition: int, records: Iterable[tuple[bytes | None, bytes | None]], *,
                acks: str = "all", batch: int = 10, timeout: float = 60.0) -> list[Delivery]:
        """Produce to one partition with librdkafka, `batch` records per flush; return each record's delivery
        report. Idempotence is off (acks=1 needs that) and one request is in flight at a time, so the offsets
        follow the order of `records`."""
        from confluent_kafka import Producer

        producer = Producer(self.client_config(**{
            "acks": acks, "enable.idempotence": False, "max.in.flight.requests.per.connection": 1,
            "linger.ms": 5, "message.timeout.ms": int(timeout * 1000)}))
        reports: dict[int, Delivery] = {}

        def report(n: int, key: bytes | None, value: bytes | None) -> Any:
            def on_delivery(err: Any, msg: Any) -> None:
                if err is None:
                    reports[n] = Delivery(key, value, msg.offset(), True)
                else:
                    reports[n] = Delivery(key, value, -1, False, str(err))
            return on_delivery

        records = list(records)
        for n, (key, value) in enumerate(records):
            producer.produce(topic, value, key, partition=partition, on_delivery=report(n, key, value))
            if (n + 1) % batch == 0:
                producer.flush(timeout)
        producer.flush(timeout)
        return [reports.get(n, Delivery(k, v, -1, False, "no delivery report")) for n, (k, v) in enumerate(records)]

    def describe_partition(self, topic: str, partition: int) -> PartitionState:
        """Leader, replicas and ISR (describe_topics) and the leader epoch: list_offsets(latest) answered by the
        leader carries its current epoch (confluent-kafka's describe_topics does not show it)."""
        from confluent_kafka import TopicCollection, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        described = self.admin().describe_topics(TopicCollection([topic]), request_timeout=30)
        info = next(p for p in described[topic].result(timeout=60).partitions if p.id == partition)
        leader = info.leader.id if info.leader is not None and info.leader.id >= 0 else None
        epoch = None
        if leader is not None:
            tp = TopicPartition(topic, partition)
            offsets = self.admin().list_offsets({tp: OffsetSpec.latest()}, request_timeout=30)
            epoch = next(iter(offsets.values())).result(timeout=60).leader_epoch
        return PartitionState(leader, [n.id for n in info.replicas], sorted(n.id for n in info.isr), epoch)

    def topic_id(self, topic: str) -> str:
        """The topic's id as Kafka prints a Uuid (as in partition.metadata)."""
        import base64

        from confluent_kafka import TopicCollection

        described = self.admin().describe_topics(TopicCollection([topic]), request_timeout=30)
        uuid = described[topic].result(timeout=60).topic_id
        raw = (uuid.get_most_significant_bits().to_bytes(8, "big", signed=True)
               + uuid.get_least_significant_bits().to_bytes(8, "big", signed=True))
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def elect_unclean(self, topic: str, partition: int) -> None:
        """Ask the controller for an unclean election (kafka-leader-election --election-type unclean)."""
        from confluent_kafka import ElectionType, TopicPartition

        tp = TopicPartition(topic, partition)
        result = self.admin().elect_leaders(ElectionType.UNCLEAN, [tp]).result(timeout=60)
        for error in result.values():
            if error is not None:
                raise HarnessError(f"unclean election of {topic}-{partition} failed: {error}")

    def read_partition(self, topic: str, partition: int,
                       timeout: float = 60.0) -> list[tuple[int, bytes | None, bytes | None]]:
        """(offset, key, value) of every record a consumer reads from the leader, up to the high watermark."""
        from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

        consumer = Consumer(self.client_config(**{
            "group.id": "replica-cluster-read", "enable.auto.commit": False, "enable.partition.eof": True}))
        try:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
            consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
            out: list[tuple[int, bytes | None, bytes | None]] = []
            deadline = time.monotonic() + timeout
            while (not out or out[-1][0] < high - 1) and high > low:
                if time.monotonic() > deadline:
                    raise HarnessError(f"read {len(out)} records of {topic}-{partition} up to {high} in {timeout}s")
                msg = consumer.poll(1.0)
                if msg is None:
                    continue
                if msg.error():
                    if msg.error().code() == KafkaError._PARTITION_EOF:
                        break
                    continue
                out.append((msg.offset(), msg.key(), msg.value()))
            return out
        finally:
            consumer.close()

    # ---- waiting and copying ----

    @staticmethod
    def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        """Poll `condition()` (errors count as not yet) until true, or HarnessError naming `what`."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if condition():
                    return
            except Exception:  # noqa: BLE001 - e.g. no leader yet, metadata not propagated
                pass
            if time.monotonic() > deadline:
                raise HarnessError(f"timed out after {timeout}s waiting for {what}")
            time.sleep(0.5)

    def wait_for_isr(self, topic: str, partition: int, isr: Iterable[int], timeout: float = 60.0) -> None:
        want = sorted(isr)
        self.wait_for(lambda: self.describe_partition(topic, partition).isr == want,
                      f"{topic}-{partition} ISR {want}", timeout)

    def copy_log_dir(self, broker: int, dest: Path) -> Path:
        """Copy one broker's whole log dir (without `.lock`) to `dest`; the broker must be stopped. Zero runs stay
        holes (see copy_sparse)."""
        if self.brokers[broker].running:
            raise HarnessError(f"broker {broker} is running: stop it before copying its log dir")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(self.brokers[broker].log_dir, dest, copy_function=copy_sparse,
                        ignore=shutil.ignore_patterns(".lock"))
        return dest


_CHUNK = 64 * 1024


def copy_sparse(src: str, dest: str) -> None:
    """shutil.copy2, but 64 KiB runs of zeros are skipped (holes) rather than written: a 4.x broker's clean
    stop leaves the metadata log's active indexes preallocated, 10 MiB of zeros each, sparse in the log dir."""
    with open(src, "rb") as fin, open(dest, "wb") as fout:
        while chunk := fin.read(_CHUNK):
            if chunk.count(0) == len(chunk):
                fout.seek(len(chunk), 1)
            else:
                fout.write(chunk)
        fout.truncate()  # the length, also when the file ends in a hole
    shutil.copystat(src, dest)
