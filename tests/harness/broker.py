"""Run real Apache Kafka brokers (single-node KRaft) and Kafka's own tools from Maven Central JARs.

Used by `make samples` (tests/harness/make_samples.py) and by tests that want a live broker:

    dist = KafkaDistribution()                 # fetches the JARs into .cache/kafka-<version>/libs once
    with KafkaBroker(dist, {"log.cleaner.backoff.ms": 1000}) as broker:
        broker.create_topic("t", config={"segment.bytes": 1000})
        ...produce to broker.bootstrap...
    # leaving the block stops the broker cleanly (SIGTERM), so indexes are trimmed and checkpoints written
    out, err = dump_log([some_log_file], "--deep-iteration", dist=dist)

Tips for tests: the broker starts its retention, recovery-point and log-start checkpoint tasks only
`log.initial.task.delay.ms` (30000) after startup; pass e.g. {"log.initial.task.delay.ms": 1000,
"log.retention.check.interval.ms": 1000} to see retention act within seconds. `stop()` then `start()`
restarts on the same log dir (storage is formatted only once); `snapshot(dest)` copies the log dir, also
while running; `kill()` is an unclean stop. Set KAFKA_HARNESS_KEEP=1 to keep the temp work dir (server.log).
"""

from __future__ import annotations

import base64
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .processes import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = REPO_ROOT / ".cache"
JAVA_SRC_DIR = Path(__file__).resolve().parent / "java"
KAFKA_3 = "3.9.2"
# The newest Kafka on Maven Central (late 2026). kafka-tools 4.4.0 is there too, but its POM names
# jetty-ee10-servlets 12.0.39, which Central does not serve; the dump tool never touches Jetty's servlets,
# so that one group is excluded instead of falling back to an older kafka-tools.
KAFKA_4 = "4.4.0"
DEFAULT_VERSION = KAFKA_3
VERSIONS = (KAFKA_3, KAFKA_4)
# 3.9.x still accepts tiny segment.bytes such as 1000; 4.x has a 1 MiB minimum (KIP-1030) and takes small
# segments only through the internal.segment.bytes topic config.

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafkalog-spark.harness</groupId>
  <artifactId>kafka-dist</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""
_ARTIFACTS = ("kafka_2.13", "kafka-tools", "kafka-clients", "kafka-storage", "kafka-server")
_EXCLUSIONS = {("kafka-tools", KAFKA_4): ("org.eclipse.jetty.ee10", "*")}
# The logging binding the Apache tarball of each major ships: Kafka 3.x logs through slf4j 1.7 + log4j 1.x
# (reload4j); Kafka 4.x through log4j2 (KIP-653).
_EXTRA_DEPS = {
    "3": (("org.slf4j", "slf4j-reload4j", "1.7.36"),),
    "4": (("org.apache.logging.log4j", "log4j-slf4j-impl", "2.25.5"),),
}

TOOLS_LOG4J = """log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
"""

BROKER_LOG4J = """log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File={path}
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
"""

TOOLS_LOG4J2 = """rootLogger.level = WARN
rootLogger.appenderRef.stderr.ref = STDERR
appender.stderr.type = Console
appender.stderr.name = STDERR
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
"""

BROKER_LOG4J2 = """rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {path}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
"""

# Java 17 picks stdout's charset from the locale; pin UTF-8 so payload text is reproducible.
_UTF8_OPTS = ("-Dfile.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8", "-Dsun.stderr.encoding=UTF-8")


class HarnessError(RuntimeError):
    """The environment cannot run the harness (missing tool, no network, broker failed)."""


def _require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise HarnessError(f"'{tool}' not found on PATH: the Kafka harness needs Java 17+ (java) and Maven (mvn)")
    return path


MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2/"


def _central_hint() -> str:
    """Say whether Maven Central answers, since `mvn -q` hides download errors behind e.g.
    "No plugin found for prefix 'dependency'"."""
    import urllib.request

    try:
        urllib.request.urlopen(MAVEN_CENTRAL, timeout=15).close()
    except Exception as e:  # noqa: BLE001 - any failure means unreachable
        return f"Maven Central ({MAVEN_CENTRAL}) is unreachable from this machine: {e}."
    return "Maven Central is reachable; check the Maven output below (proxy/mirror settings?)."


def random_kafka_uuid() -> str:
    """A Kafka Uuid string (22-char URL-safe base64); like Uuid.randomUuid, never starting with '-'."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _dependency_xml(group: str, artifact: str, version: str) -> str:
    xml = f"<groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version>"
    excluded = _EXCLUSIONS.get((artifact, version))
    if excluded:
        xml += (f"<exclusions><exclusion><groupId>{excluded[0]}</groupId><artifactId>{excluded[1]}</artifactId>"
                "</exclusion></exclusions>")
    return f"    <dependency>{xml}</dependency>"


class KafkaDistribution:
    """Apache Kafka JARs fetched from Maven Central into `.cache/kafka-<version>/libs` (reused when present)."""

    def __init__(self, version: str = DEFAULT_VERSION, cache_dir: Path = CACHE_DIR) -> None:
        if version not in VERSIONS:
            raise HarnessError(f"no harness for Kafka {version}; known: {', '.join(VERSIONS)}")
        self.version = version
        self.major = version.split(".")[0]
        self.home = cache_dir / f"kafka-{version}"
        self.libs = self.home / "libs"
        self._ready = self.libs / ".complete"

    def ensure(self) -> KafkaDistribution:
        _require("java")
        if self._ready.exists():
            return self
        self.home.mkdir(parents=True, exist_ok=True)
        # test processes running side by side (pytest -n) fetch a version once: the others wait for it
        with open(self.home.parent / f".kafka-{self.version}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not self._ready.exists():
                self._fetch()
        return self

    def _fetch(self) -> None:
        mvn = _require("mvn")
        deps = [("org.apache.kafka", a, self.version) for a in _ARTIFACTS] + list(_EXTRA_DEPS[self.major])
        xml = "\n".join(_dependency_xml(g, a, v) for g, a, v in deps)
        pom = self.home / "pom.xml"
        pom.write_text(_POM.format(deps=xml))
        staging = self.home / "libs.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        cmd = [mvn, "-q", "-B", "-f", str(pom), "dependency:copy-dependencies", f"-DoutputDirectory={staging}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            out = (proc.stdout + proc.stderr)[-3000:]
            raise HarnessError(f"Fetching Kafka {self.version} JARs with Maven failed. {_central_hint()}\n{out}")
        shutil.rmtree(self.libs, ignore_errors=True)
        staging.rename(self.libs)  # only a complete download becomes the cache
        self._ready.write_text(self.version + "\n")

    @property
    def classpath(self) -> str:
        return str(self.libs / "*")

    @property
    def dump_log_segments(self) -> str:
        """The class behind kafka-dump-log.sh: Scala in core up to 3.x, Java in kafka-tools since 4.0."""
        return "kafka.tools.DumpLogSegments" if self.major == "3" else "org.apache.kafka.tools.DumpLogSegments"

    def log4j_option(self, path: Path) -> str:
        return f"-Dlog4j.configuration=file:{path}" if self.major == "3" else f"-Dlog4j2.configurationFile={path}"

    def log4j_text(self, broker_log: Path | None = None) -> str:
        """The tools' (stderr, WARN) or a broker's (file, INFO) logging config in this version's syntax."""
        if broker_log is None:
            return TOOLS_LOG4J if self.major == "3" else TOOLS_LOG4J2
        return (BROKER_LOG4J if self.major == "3" else BROKER_LOG4J2).format(path=broker_log)

    def tools_log4j(self) -> Path:
        path = self.home / "tools-log4j.properties"
        if not path.exists():  # written whole, then renamed: a tool started meanwhile never reads half of it
            staged = path.with_name(f"{path.name}.{os.getpid()}")
            staged.write_text(self.log4j_text())
            staged.replace(path)
        return path

    def java_cmd(self, main: str, *args: str, jvm_opts: Sequence[str] = ()) -> list[str]:
        """Command line running `main` (a class name, or a .java file for the source launcher)."""
        self.ensure()
        return [
            _require("java"), *_UTF8_OPTS, self.log4j_option(self.tools_log4j()), *jvm_opts,
            "-cp", self.classpath, main, *args,
        ]

    def run_java(self, main: str, *args: str, cwd: Path | None = None, check: bool = True,
                 jvm_opts: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
        """Run a Kafka main class or a harness program from tests/harness/java/ (name ending in .java)."""
        if main.endswith(".java"):
            main = str(JAVA_SRC_DIR / main)
        raw = subprocess.run(self.java_cmd(main, *args, jvm_opts=jvm_opts), cwd=cwd, capture_output=True)
        # Decode by hand: text=True would also translate a \r printed inside a payload into \n.
        proc = subprocess.CompletedProcess(raw.args, raw.returncode, raw.stdout.decode("utf-8", "replace"),
                                           raw.stderr.decode("utf-8", "replace"))
        if check and proc.returncode != 0:
            raise HarnessError(f"{Path(main).name} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n"
                               f"{proc.stderr[-4000:]}")
        return proc


def dump_log(files: Sequence[Path | str], *flags: str, dist: KafkaDistribution | None = None,
             cwd: Path | None = None) -> tuple[str, str]:
    """Run Kafka's DumpLogSegments (kafka-dump-log.sh) on `files`; return (stdout, stderr).

    Example flags: "--deep-iteration", "--print-data-log", "--verify-index-only", "--index-sanity-check".
    """
    dist = dist or KafkaDistribution()
    joined = ",".join(str(f) for f in files)
    proc = dist.run_java(dist.dump_log_segments, "--files", joined, *flags, cwd=cwd, check=False)
    return proc.stdout, proc.stderr


class KafkaBroker:
    """A single-node KRaft broker (process.roles=broker,controller) on 127.0.0.1, as a java subprocess.

    `work_dir` holds server.properties, the broker's own logs (server.log) and, unless `log_dir` is
    given, the Kafka log directory `work_dir/logs`. Storage is formatted on first start only, so a
    stopped broker can be started again on the same log dir (e.g. after changing topic configs).
    """

    def __init__(self, dist: KafkaDistribution, extra_props: Mapping[str, Any] | None = None, *,
                 work_dir: Path | None = None, log_dir: Path | None = None, node_id: int = 1,
                 heap: str = "768m") -> None:
        self.dist = dist
        self.extra_props = dict(extra_props or {})
        self._own_work_dir = work_dir is None
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="kafka-broker-"))
        self.log_dir = Path(log_dir or self.work_dir / "logs")
        self.node_id = node_id
        self.heap = heap
        self.port = 0
        self.controller_port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.cluster_id = random_kafka_uuid()
        self._admin: Any = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def server_log(self) -> Path:
        return self.work_dir / "server.log"

    def properties(self) -> dict[str, Any]:
        props: dict[str, Any] = {
            "process.roles": "broker,controller",
            "node.id": self.node_id,
            "controller.quorum.voters": f"{self.node_id}@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.log_dir),
            "num.partitions": 1,
            "auto.create.topics.enable": "false",
            # A single node cannot satisfy the default replication factor 3 of the internal topics.
            "offsets.topic.replication.factor": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "group.initial.rebalance.delay.ms": 0,
        }
        props.update(self.extra_props)
        return props

    def _write_config(self) -> Path:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        (self.work_dir / "log4j.properties").write_text(self.dist.log4j_text(self.server_log))
        path = self.work_dir / "server.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in self.properties().items()))
        return path

    def start(self, timeout: float = 120.0) -> KafkaBroker:
        if self.process is not None:
            raise HarnessError("broker already running")
        self.dist.ensure()
        self.port, self.controller_port = free_port(), free_port()
        config = self._write_config()
        if not (self.log_dir / "meta.properties").exists():
            self.dist.run_java("kafka.tools.StorageTool", "format", "-t", self.cluster_id, "-c", str(config))
        cmd = self.dist.java_cmd("kafka.Kafka", str(config), jvm_opts=(
            f"-Xmx{self.heap}", self.dist.log4j_option(self.work_dir / "log4j.properties"),
            f"-Dkafka.logs.dir={self.work_dir}"))
        with open(self.work_dir / "console.log", "ab") as console:
            self.process = subprocess.Popen(cmd, stdout=console, stderr=subprocess.STDOUT, cwd=self.work_dir)
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        from confluent_kafka.admin import AdminClient  # imported lazily: only needed with a live broker

        admin = AdminClient(self.client_config())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise HarnessError(f"broker exited with {self.process.returncode} during startup:\n{self._tail()}")
            try:
                if admin.list_topics(timeout=2).brokers:  # only unfenced brokers are listed
                    self._admin = admin
                    return
            except Exception:  # noqa: BLE001 - KafkaException until the listener is up
                pass
            time.sleep(0.5)
        self.kill()
        raise HarnessError(f"broker not ready after {timeout}s:\n{self._tail()}")

    def _tail(self, chars: int = 4000) -> str:
        parts = []
        for name in ("console.log", "server.log"):
            path = self.work_dir / name
            if path.exists():
                parts.append(f"--- {name}\n" + path.read_text(errors="replace")[-chars:])
        return "\n".join(parts)

    def client_config(self, **extra: Any) -> dict[str, Any]:
        """librdkafka config for this broker; log_level 0 hides the connection noise while it starts."""
        return {"bootstrap.servers": self.bootstrap, "log_level": 0, **extra}

    def admin(self) -> Any:
        """A confluent-kafka AdminClient kept for the broker's lifetime (its futures die with it)."""
        if self._admin is None:
            raise HarnessError("broker not started")
        return self._admin

    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, Any] | None = None) -> None:
        from confluent_kafka.admin import NewTopic

        topic = NewTopic(name, num_partitions=partitions, replication_factor=1,
                         config={k: str(v) for k, v in (config or {}).items()})
        self.admin().create_topics([topic], operation_timeout=30)[name].result(timeout=60)

    def alter_topic_config(self, name: str, config: Mapping[str, Any]) -> None:
        """Incrementally set topic configs (other overrides are kept)."""
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

        entries = [ConfigEntry(k, str(v), incremental_operation=AlterConfigOpType.SET) for k, v in config.items()]
        resource = ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=entries)
        for future in self.admin().incremental_alter_configs([resource]).values():
            future.result(timeout=60)

    def partition_dir(self, topic: str, partition: int = 0) -> Path:
        return self.log_dir / f"{topic}-{partition}"

    def snapshot(self, dest: Path, only: Sequence[str] | None = None) -> Path:
        """Copy the log dir (or just the entries named in `only`) to `dest`, without the lock file.

        Works while the broker runs (a "live copy": active indexes still preallocated) or after stop.
        """
        dest.mkdir(parents=True, exist_ok=True)
        names = only if only is not None else sorted(p.name for p in self.log_dir.iterdir())
        for name in names:
            src = self.log_dir / name
            if name == ".lock" or not src.exists():
                continue
            if src.is_dir():
                shutil.copytree(src, dest / name)
            else:
                shutil.copy2(src, dest / name)
        return dest

    def stop(self, clean: bool = True, timeout: float = 120.0) -> None:
        """Stop the broker: SIGTERM and wait (clean: indexes trimmed, checkpoints and clean-shutdown
        marker written), or SIGKILL when clean is False (like a crash)."""
        self._admin = None
        if self.process is None:
            return
        if clean:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise HarnessError(f"broker did not stop within {timeout}s; killed it") from None
        else:
            self.process.kill()
            self.process.wait()
        self.process = None

    def kill(self) -> None:
        """Unclean stop (SIGKILL): active segment indexes keep their preallocated zero tail."""
        self.stop(clean=False)

    def cleanup(self) -> None:
        """Remove the work dir if this object created it."""
        if self._own_work_dir and self.process is None:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def __enter__(self) -> KafkaBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop(clean=True)
        finally:
            if os.environ.get("KAFKA_HARNESS_KEEP") is None:
                self.cleanup()
