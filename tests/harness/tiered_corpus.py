"""A tiered-storage corpus (KIP-405): `__remote_log_metadata` and the tiered topics' log dirs, written by real brokers.

For each Kafka version (3.9.2, 4.4.0) a single-node KRaft broker on loopback runs with
`remote.log.storage.system.enable=true`, Kafka's own test RemoteStorageManager `LocalTieredStorage` (a directory
on this machine, no network) and the default TopicBasedRemoteLogMetadataManager, which records every copy and
delete in `__remote_log_metadata`. The scenario:

- `tiered` (remote.storage.enable, small segments, local.retention.ms=1000, retention.ms=-1): produced to, its
  closed segments copied to the remote store and deleted locally (COPY_SEGMENT_STARTED / _FINISHED); then
  `retention.bytes` shrinks and the oldest remote segments are deleted (DELETE_SEGMENT_STARTED / _FINISHED);
- `tiered-doomed`: tiered the same way, then the topic is deleted, so its remote segments are deleted (their
  DELETE_SEGMENT_STARTED / _FINISHED). A KRaft broker writes no RemotePartitionDeleteMetadata for that (no broker
  code calls RemoteLogMetadataManager.putRemotePartitionDeleteMetadata, in 3.9.2 or 4.x; only ZooKeeper mode's
  controller did), so tests/harness/java/RemotePartitionDelete.java then writes the partition's
  DELETE_PARTITION_MARKED, _STARTED and _FINISHED through Kafka's own TopicBasedRemoteLogMetadataManager.

The broker is stopped cleanly and its log dir copied to data/samples-internal/<version>/tiered/broker/, without
`.lock` and without `__cluster_metadata-0` (a 4.4.0 broker leaves its metadata log's indexes preallocated, 20 MiB
of zeros, and data/samples-internal/<version>/broker has a metadata log already), with oracle.json: what the
broker and the remote store said before the stop (topic ids, log offsets, the remote store's segment files) and
README.md. The remote store itself is not kept.

    python -m tests.harness.tiered_corpus [--kafka 3.9.2] [--kafka 4.4.0]   (default: both)
    python -m tests.harness.tiered_corpus --goldens-only                     (the corpus kept, its goldens anew)

Then the goldens: kafka-dump-log 3.9.2's and 4.4.0's output on every file (tests/harness/golden.py's modes, into
`golden/` for the broker's own version and `golden-<other>/`), and --remote-log-metadata-decoder's on every file
of `__remote_log_metadata-*` (tests/harness/message_schemas.py, into `decoder-goldens/`).

LocalTieredStorage lives in the `kafka-storage` *test* JAR (classifier `test`); it also calls the `kafka-clients`
test JAR's TestUtils (only without a `dir`, but the class names it). Maven Central has both for 3.9.2 but neither
for 4.4.0 (nor its sources), so the 4.4.0 broker loads them from 4.3.1, the newest version that has them: the
RemoteStorageManager interface it implements is kafka-storage-api's, 4.4.0's own on the classpath. The one class
the 4.3.1 LocalTieredStorage names that 4.4.0 no longer has, org.apache.kafka.common.utils.LogContext (moved to
`...utils.internals`), is bridged by tests/harness/java/shim/, compiled into the cache for 4.4.0 only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.harness import message_schemas
from tests.harness.broker import (
    CACHE_DIR,
    JAVA_SRC_DIR,
    KAFKA_3,
    KAFKA_4,
    REPO_ROOT,
    VERSIONS,
    HarnessError,
    KafkaBroker,
    KafkaDistribution,
    _central_hint,
    _require,
    dump_log,
)
from tests.harness.golden import GOLDEN_DIR, MODES, write_golden

OUT_DIR = REPO_ROOT / "data" / "samples-internal"
BUILD_DIR = CACHE_DIR / "samples-tiered-build"
CORPUS_NAME = "tiered"  # data/samples-internal/<version>/tiered
NODE_ID = 1
REMOTE_LOG_METADATA = "__remote_log_metadata"
METADATA_LOG = "__cluster_metadata-0"
LOCAL_TIERED_STORAGE = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"
# The broker's version -> the version of the test JARs that hold LocalTieredStorage (4.4.0 has none on Central)
TEST_JARS_VERSION = {KAFKA_3: KAFKA_3, KAFKA_4: "4.3.1"}
TEST_JARS = ("kafka-storage", "kafka-clients")
# Broker versions whose classpath needs the bridge classes of tests/harness/java/shim/
SHIMMED = (KAFKA_4,)
SHIM_SRC = JAVA_SRC_DIR / "shim"

KEPT, DOOMED = "tiered", "tiered-doomed"
SEGMENT_BYTES = 2048
RECORD_BYTES = 100
RECORDS = {KEPT: 120, DOOMED: 40}  # about 11 and 4 segments
# After the copies: keep about this much of `tiered` (local and remote), so the oldest remote segments go
RETENTION_BYTES_AFTER = 8 * SEGMENT_BYTES
WAIT_S = 180

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafkalog-spark.harness</groupId>
  <artifactId>kafka-tiered-storage-test-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""


def log(msg: str) -> None:
    print(f"[samples-tiered] {msg}", flush=True)


class TieredDistribution(KafkaDistribution):
    """A Kafka distribution with LocalTieredStorage's test JARs on the classpath too (in their own directory:
    the distribution's cache stays as the other harnesses made it)."""

    def __init__(self, version: str) -> None:
        super().__init__(version)
        self.test_jars_version = TEST_JARS_VERSION[version]
        self.test_libs = CACHE_DIR / f"kafka-test-jars-{self.test_jars_version}"
        self.shim = CACHE_DIR / f"kafka-{version}-tiered-shim" if version in SHIMMED else None

    def ensure(self) -> TieredDistribution:
        super().ensure()
        if not (self.test_libs / ".complete").exists():
            self._fetch_test_jars()
        if self.shim is not None and not (self.shim / ".complete").exists():
            self._compile_shim()
        return self

    def _compile_shim(self) -> None:
        assert self.shim is not None
        shutil.rmtree(self.shim, ignore_errors=True)
        sources = [str(p) for p in sorted(SHIM_SRC.rglob("*.java"))]
        proc = subprocess.run([_require("javac"), "-nowarn", "-cp", str(self.libs / "*"), "-d", str(self.shim),
                               *sources], capture_output=True, text=True)
        if proc.returncode != 0:
            raise HarnessError(f"compiling {SHIM_SRC.relative_to(REPO_ROOT)} failed:\n{proc.stderr[-3000:]}")
        (self.shim / ".complete").write_text(self.version + "\n")

    def _fetch_test_jars(self) -> None:
        done = self.test_libs / ".complete"
        mvn = _require("mvn")
        home = self.test_libs.parent / f"{self.test_libs.name}.build"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        deps = "\n".join(f"    <dependency><groupId>org.apache.kafka</groupId><artifactId>{a}</artifactId>"
                         f"<version>{self.test_jars_version}</version><classifier>test</classifier>"
                         "<scope>test</scope></dependency>" for a in TEST_JARS)
        (home / "pom.xml").write_text(_POM.format(deps=deps))
        cmd = [mvn, "-q", "-B", "-f", str(home / "pom.xml"), "dependency:copy-dependencies", "-DexcludeTransitive=true",
               "-DincludeClassifiers=test", f"-DoutputDirectory={home / 'libs'}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            out = (proc.stdout + proc.stderr)[-3000:]
            raise HarnessError(f"Fetching the Kafka {self.test_jars_version} test JARs failed. "
                               f"{_central_hint()}\n{out}")
        got = sorted(p.name for p in (home / "libs").glob("*.jar"))
        if len(got) != len(TEST_JARS):
            raise HarnessError(f"expected the test JARs of {', '.join(TEST_JARS)}, got {got}")
        shutil.rmtree(self.test_libs, ignore_errors=True)
        (home / "libs").rename(self.test_libs)
        shutil.rmtree(home, ignore_errors=True)
        done.write_text(self.test_jars_version + "\n")

    @property
    def classpath(self) -> str:
        # the shim after the broker's own JARs: it only adds a class they no longer have
        shim = [str(self.shim)] if self.shim is not None else []
        return os.pathsep.join([str(self.libs / "*"), *shim, str(self.test_libs / "*")])


def broker_props(remote_dir: Path) -> dict[str, Any]:
    return {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": LOCAL_TIERED_STORAGE,
        "remote.log.storage.manager.impl.prefix": "rsm.config.",
        "rsm.config.dir": str(remote_dir),
        # TopicBasedRemoteLogMetadataManager's own producer and consumer reach the broker through this listener
        "remote.log.metadata.manager.listener.name": "PLAINTEXT",
        "remote.log.metadata.manager.impl.prefix": "rlmm.config.",
        "rlmm.config.remote.log.metadata.topic.num.partitions": 2,
        "rlmm.config.remote.log.metadata.topic.replication.factor": 1,
        # copy and expire every second, check local retention every second (defaults: 30 s, 5 min)
        "remote.log.manager.task.interval.ms": 1000,
        "log.retention.check.interval.ms": 1000,
        "log.initial.task.delay.ms": 1000,
        # the deleted topic's `-delete` dir stays past the stop (as in the internal corpus); the segments deleted
        # locally go sooner (the topics' own file.delete.delay.ms)
        "file.delete.delay.ms": 600000,
        "log.flush.offset.checkpoint.interval.ms": 5000,
        "log.flush.start.offset.checkpoint.interval.ms": 5000,
    }


def topic_config(version: str) -> dict[str, Any]:
    # 4.x: segment.bytes has a 1 MiB minimum (KIP-1030); internal.segment.bytes takes small segments
    segment = "segment.bytes" if version == KAFKA_3 else "internal.segment.bytes"
    return {"remote.storage.enable": "true", segment: SEGMENT_BYTES, "local.retention.ms": 1000,
            "retention.ms": -1, "segment.index.bytes": 4096, "file.delete.delay.ms": 1000}


def produce(broker: KafkaBroker, topic: str, count: int) -> None:
    from confluent_kafka import Producer

    errors: list[Any] = []
    producer = Producer(broker.client_config(**{"acks": "all", "linger.ms": 0, "batch.size": RECORD_BYTES * 3}))
    for i in range(count):
        value = f"{topic} #{i:05d} ".encode().ljust(RECORD_BYTES, b".")
        producer.produce(topic, value=value, key=f"k{i % 7}".encode(), partition=0,
                         on_delivery=lambda err, _msg: err and errors.append(err))
        producer.poll(0)
    if producer.flush(60) or errors:
        raise HarnessError(f"producing to {topic} failed: {errors[:3]}")


def remote_segments(remote_dir: Path, topic: str) -> list[str]:
    """The segment files LocalTieredStorage holds for `topic` (partition 0): `<offset>-<segment uuid>.log`."""
    return sorted(p.name for p in remote_dir.glob(f"*/{topic}-0-*/*.log"))


def local_segments(broker: KafkaBroker, topic: str) -> list[str]:
    return sorted(p.name for p in broker.partition_dir(topic).glob("*.log"))


def wait(what: str, done: Any, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise HarnessError(f"not within {timeout:.0f} s: {what}")
        time.sleep(0.5)


def settled(state: Any, quiet_s: float = 5.0) -> None:
    """Until `state()` has not changed for `quiet_s` seconds."""
    last, since = state(), time.monotonic()
    deadline = since + WAIT_S
    while time.monotonic() - since < quiet_s:
        if time.monotonic() > deadline:
            raise HarnessError(f"still changing after {WAIT_S} s: {last}")
        time.sleep(0.5)
        now = state()
        if now != last:
            last, since = now, time.monotonic()


def wait_tiered(broker: KafkaBroker, remote_dir: Path, topic: str) -> None:
    """Until every closed segment is in the remote store and gone locally (only the active one is left)."""
    wait(f"{topic}'s closed segments copied and deleted locally",
         lambda: len(local_segments(broker, topic)) == 1 and remote_segments(remote_dir, topic))


def topic_id(broker: KafkaBroker, name: str) -> str:
    from confluent_kafka import TopicCollection

    from tests.harness.internal_corpus import kafka_uuid

    futures = broker.admin().describe_topics(TopicCollection([name]), request_timeout=60)
    return kafka_uuid(futures[name].result(timeout=60).topic_id)


def log_offsets(broker: KafkaBroker, topic: str) -> dict[str, int]:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    out = {}
    for which, spec in (("log_start", OffsetSpec.earliest()), ("log_end", OffsetSpec.latest())):
        futures = broker.admin().list_offsets({TopicPartition(topic, 0): spec}, request_timeout=60)
        out[which] = next(iter(futures.values())).result(timeout=60).offset
    return out


def _states(log_dir: Path, version: str) -> list[str]:
    """The states kafka-dump-log's --remote-log-metadata-decoder prints for every `__remote_log_metadata` record."""
    logs = sorted(log_dir.glob(f"{REMOTE_LOG_METADATA}-*/*.log"))
    out, _ = dump_log(logs, "--remote-log-metadata-decoder", dist=KafkaDistribution(version))
    return re.findall(r"state=(\w+)", out)


def run(version: str, build: Path) -> dict[str, Any]:
    dist = TieredDistribution(version).ensure()
    remote_dir = build / "remote-store"
    broker = KafkaBroker(dist, broker_props(remote_dir), work_dir=build / "work", node_id=NODE_ID)
    try:
        broker.start()
        log(f"broker {version} up at {broker.bootstrap} (LocalTieredStorage from the "
            f"{dist.test_jars_version} test JARs)")
        ids = {}
        for topic in (KEPT, DOOMED):
            broker.create_topic(topic, 1, topic_config(version))
            ids[topic] = topic_id(broker, topic)
            produce(broker, topic, RECORDS[topic])
            log(f"produced {RECORDS[topic]} records to {topic} ({ids[topic]})")
        for topic in (KEPT, DOOMED):
            wait_tiered(broker, remote_dir, topic)
            log(f"{topic}: {len(remote_segments(remote_dir, topic))} segments in the remote store, "
                f"{len(local_segments(broker, topic))} local")
        copied = remote_segments(remote_dir, KEPT)
        broker.alter_topic_config(KEPT, {"retention.bytes": RETENTION_BYTES_AFTER})
        wait(f"{KEPT}'s oldest remote segments deleted (retention.bytes {RETENTION_BYTES_AFTER})",
             lambda: 0 < len(remote_segments(remote_dir, KEPT)) < len(copied))
        settled(lambda: remote_segments(remote_dir, KEPT))  # the expiry may take more than one round
        log(f"{KEPT}: {len(remote_segments(remote_dir, KEPT))} of {len(copied)} remote segments kept")
        broker.admin().delete_topics([DOOMED], operation_timeout=30)[DOOMED].result(timeout=60)
        wait(f"{DOOMED}'s remote segments deleted", lambda: not remote_segments(remote_dir, DOOMED))
        log(f"deleted {DOOMED}: no remote segment left; its RemotePartitionDeleteMetadata through Kafka's RLMM")
        scratch = build / "rlmm-scratch"
        scratch.mkdir()
        dist.run_java("RemotePartitionDelete.java", broker.bootstrap, ids[DOOMED], DOOMED, "0", str(NODE_ID),
                      str(broker.properties()["rlmm.config.remote.log.metadata.topic.num.partitions"]), str(scratch))
        oracle = {
            "kafka": version,
            "test_jars": dist.test_jars_version,
            "topics": {KEPT: {"topic_id": ids[KEPT], **log_offsets(broker, KEPT)}},
            "deleted_topics": {DOOMED: ids[DOOMED]},
            "segment_bytes": SEGMENT_BYTES,
            "retention_bytes_after": RETENTION_BYTES_AFTER,
            "remote_segments_copied": {KEPT: copied},
            "remote_segments_at_stop": {KEPT: remote_segments(remote_dir, KEPT),
                                        DOOMED: remote_segments(remote_dir, DOOMED)},
        }
        log("stopping the broker cleanly")
        broker.stop(clean=True)
        broker.snapshot(build / "out" / "broker", only=[p.name for p in sorted(broker.log_dir.iterdir())
                                                        if p.name != METADATA_LOG])
    finally:
        broker.stop(clean=True)
    states = _states(build / "out" / "broker", version)
    oracle["remote_log_metadata_states"] = {s: states.count(s) for s in sorted(set(states))}
    want = {"COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED", "DELETE_SEGMENT_FINISHED",
            "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED"}
    if want - set(states):
        raise HarnessError(f"__remote_log_metadata lacks {sorted(want - set(states))}: {sorted(set(states))}")
    (build / "out" / "oracle.json").write_text(json.dumps(oracle, indent=1) + "\n")
    return oracle


def readme(oracle: dict[str, Any]) -> str:
    """What the corpus is and what the broker said, next to it (the oracle in words)."""
    version = oracle["kafka"]
    other = next(v for v in VERSIONS if v != version)
    kept, doomed = oracle["topics"][KEPT], oracle["deleted_topics"][DOOMED]
    states = ", ".join(f"{s} x{n}" for s, n in oracle["remote_log_metadata_states"].items())
    return "\n".join([
        f"# Tiered storage (KIP-405), Kafka {version}",
        "",
        "Written by `python -m tests.harness.tiered_corpus` (tests/harness/tiered_corpus.py says how): a "
        f"single-node KRaft {version} broker with `remote.log.storage.system.enable=true`, Kafka's LocalTieredStorage "
        f"(from the {oracle['test_jars']} `kafka-storage` test JAR) as the remote store and the default "
        "TopicBasedRemoteLogMetadataManager, stopped cleanly. `broker/` is its log dir without `.lock` and without "
        "`__cluster_metadata-0`; the remote store is not kept.",
        "",
        f"- `{KEPT}` (topic id {kept['topic_id']}): {SEGMENT_BYTES}-byte segments, all copied to the remote store "
        f"and deleted locally; then retention.bytes={RETENTION_BYTES_AFTER} deleted the oldest remote ones. Log "
        f"start {kept['log_start']}, log end {kept['log_end']} (list_offsets before the stop).",
        f"- `{DOOMED}` (topic id {doomed}): tiered, then deleted (its `-delete` dir stays); its remote segments "
        "deleted by the broker, then its DELETE_PARTITION_MARKED, _STARTED and _FINISHED written through Kafka's "
        "TopicBasedRemoteLogMetadataManager (tests/harness/java/RemotePartitionDelete.java): a KRaft broker writes "
        "none.",
        f"- `__remote_log_metadata-0`, `-1`: the states kafka-dump-log {version} prints: {states}.",
        "- `oracle.json`: the topic ids, log offsets, and the remote store's segment files after the copies and at "
        "the stop.",
        f"- `golden/`, `golden-{other}/`: kafka-dump-log {version}'s and {other}'s output on every file of `broker/` "
        "in the modes of tests/harness/golden.py (tests/test_remote_log_metadata_dump.py); `decoder-goldens/`: "
        "both tools' --remote-log-metadata-decoder on every file of the `__remote_log_metadata` partitions "
        "(tests/test_internal_topic_dump.py).",
        "",
    ])


def write_goldens(version: str) -> int:
    """kafka-dump-log's own output on the corpus: every dumpable file in every mode of tests/harness/golden.py,
    by the broker's version (`golden/`) and the other one (`golden-<version>/`); returns the number of runs. (The
    --remote-log-metadata-decoder goldens are tests/harness/message_schemas.py's, in `decoder-goldens/`.)"""
    root = OUT_DIR / version / CORPUS_NAME
    corpus = set((root / "broker").rglob("*"))
    runs = 0
    for tool in VERSIONS:
        gdir = GOLDEN_DIR if tool == version else f"{GOLDEN_DIR}-{tool}"
        shutil.rmtree(root / gdir, ignore_errors=True)
        # One mode at a time on the corpus as the broker left it: the tool dumps a .timeindex with its segment's
        # OffsetIndex, whose constructor creates the .index where it is missing (the deleted topic's dir has
        # none), so a later run on the same file would meet an empty .index the broker never wrote (the first
        # run dies of "Invalid max index size: -1", a later one passes). The made files go after each mode.
        for mode in (*MODES, "decoded"):
            runs += write_golden(root, KafkaDistribution(tool).ensure(), gdir, modes=[mode])
            for made in set((root / "broker").rglob("*")) - corpus:
                made.unlink()
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.tiered_corpus", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kafka", action="append", choices=VERSIONS, help="only this broker version (repeatable)")
    parser.add_argument("--goldens-only", action="store_true",
                        help="keep the corpus, write its goldens again (both tools, every mode and the decoder)")
    args = parser.parse_args(argv)
    versions = args.kafka or list(VERSIONS)
    for version in versions:
        started = time.monotonic()
        target = OUT_DIR / version / CORPUS_NAME
        if not args.goldens_only:
            build = BUILD_DIR / version
            shutil.rmtree(build, ignore_errors=True)
            build.mkdir(parents=True)
            try:
                oracle = run(version, build)
            except HarnessError as e:
                print(f"tiered corpus: {e}", file=sys.stderr)
                return 1
            shutil.rmtree(target, ignore_errors=True)
            target.parent.mkdir(parents=True, exist_ok=True)
            (build / "out").rename(target)
            size = sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
            log(f"wrote {os.path.relpath(target, REPO_ROOT)} ({size} bytes; states "
                f"{oracle['remote_log_metadata_states']}) in {round(time.monotonic() - started)} s")
        log(f"{write_goldens(version)} kafka-dump-log runs into {os.path.relpath(target, REPO_ROOT)}/{GOLDEN_DIR}*/")
        (target / "README.md").write_text(readme(json.loads((target / "oracle.json").read_text())))
    # the decoder goldens of every tiered corpus (and of the crafted segments), from one list of cases
    log(f"{message_schemas.write_goldens([message_schemas.REMOTE_FLAG])} --remote-log-metadata-decoder goldens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
