"""The benchmark data set: one broker-style log dir per codec, written once by Kafka's own code.

    bench-data/<codec>/bench-<codec>-0/00000000000000000000.log   >= 256 MiB, offsets from 0, contiguous
    bench-data/dataset-<codec>.json                                what was written, with which settings

The segments are produced by tests/bench/java/GenSegment.java (kafka-clients' ProducerBatch and
MemoryRecordsBuilder, 16 KiB producer batches) run with the Java single-file source launcher. The JARs
come from the broker harness (tests/harness/broker.py, Kafka 3.9.2) when it is there; otherwise
kafka-clients and its dependencies are fetched with Maven into `.cache/`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "bench-data"
CACHE_DIR = REPO_ROOT / ".cache"
GENERATOR = Path(__file__).resolve().parent / "java" / "GenSegment.java"
KAFKA_VERSION = "3.9.2"
CODECS = ("none", "lz4", "zstd")
MIB = 1024 * 1024

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kafkalog-spark.bench</groupId>
  <artifactId>kafka-clients-libs</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-clients</artifactId>
      <version>{version}</version></dependency>
  </dependencies>
</project>
"""


@dataclass(frozen=True)
class Settings:
    """What the generator is asked for; a cached data set is reused only if these match."""

    min_bytes: int = 256 * MIB
    batch_bytes: int = 16 * 1024  # the producer's batch.size
    kafka_version: str = KAFKA_VERSION
    generator: str = "GenSegment.java v1"


@dataclass(frozen=True)
class Dataset:
    codec: str
    log_dir: Path  # the broker log dir: holds the partition dir bench-<codec>-0
    segment: Path
    records: int
    batches: int
    bytes: int


def _segment_path(codec: str) -> Path:
    return DATA_DIR / codec / f"bench-{codec}-0" / f"{0:020d}.log"


def _meta_path(codec: str) -> Path:
    return DATA_DIR / f"dataset-{codec}.json"


def kafka_classpath() -> str:
    """Classpath with kafka-clients and its compression libraries."""
    try:
        from tests.harness.broker import KafkaDistribution
    except ImportError:
        return _own_classpath()
    return KafkaDistribution(KAFKA_VERSION).ensure().classpath


def _own_classpath() -> str:
    home = CACHE_DIR / f"bench-kafka-clients-{KAFKA_VERSION}"
    libs = home / "libs"
    if not (libs / ".complete").exists():
        if shutil.which("mvn") is None:
            raise RuntimeError("mvn not found: needed once to fetch kafka-clients from Maven Central")
        home.mkdir(parents=True, exist_ok=True)
        (home / "pom.xml").write_text(_POM.format(version=KAFKA_VERSION))
        shutil.rmtree(libs, ignore_errors=True)
        subprocess.run(["mvn", "-q", "-B", "-f", str(home / "pom.xml"), "dependency:copy-dependencies",
                        f"-DoutputDirectory={libs}", "-DincludeScope=runtime"], check=True)
        (libs / ".complete").write_text(KAFKA_VERSION + "\n")
    return str(libs / "*")


def _cached(codec: str, settings: Settings) -> Dataset | None:
    meta, seg = _meta_path(codec), _segment_path(codec)
    if not (meta.exists() and seg.exists()):
        return None
    info = json.loads(meta.read_text())
    if info.get("settings") != asdict(settings) or info.get("bytes") != seg.stat().st_size:
        return None
    return Dataset(codec, seg.parents[1], seg, info["records"], info["batches"], info["bytes"])


def _parse_summary(text: str) -> dict[str, int]:
    fields = dict(part.split("=", 1) for part in text.strip().splitlines()[-1].split())
    return {k: int(fields[k]) for k in ("records", "batches", "bytes")}


def ensure_datasets(settings: Settings = Settings(), codecs: tuple[str, ...] = CODECS,
                    log: bool = True) -> dict[str, Dataset]:
    """The data set of every codec, generating the missing ones (in parallel, one JVM per codec)."""
    out = {c: d for c in codecs if (d := _cached(c, settings)) is not None}
    missing = [c for c in codecs if c not in out]
    if not missing:
        return out
    if shutil.which("java") is None:
        raise RuntimeError("java not found: the benchmark data set is written by Kafka's own Java code")
    classpath = kafka_classpath()
    started = time.perf_counter()
    if log:
        print(f"building the data set for {', '.join(missing)} ({settings.min_bytes // MIB} MiB each) "
              f"with kafka-clients {settings.kafka_version} ...", file=sys.stderr, flush=True)
    procs = {}
    for seed, codec in enumerate(missing, start=1):
        seg = _segment_path(codec)
        shutil.rmtree(seg.parents[1], ignore_errors=True)
        seg.parent.mkdir(parents=True)
        cmd = ["java", "-Xmx1g", "-cp", classpath, str(GENERATOR), str(seg), codec, str(settings.min_bytes),
               str(settings.batch_bytes), str(seed), f"bench-{codec}"]
        procs[codec] = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for codec, proc in procs.items():
        stdout, stderr = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"GenSegment.java failed for {codec} (exit {proc.returncode}):\n"
                               f"{stderr[-3000:]}")
        info = {**_parse_summary(stdout), "codec": codec, "settings": asdict(settings)}
        _meta_path(codec).write_text(json.dumps(info, indent=2) + "\n")
        out[codec] = _cached(codec, settings)  # type: ignore[assignment]
    if log:
        print(f"data set built in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return {c: out[c] for c in codecs}


def batch_boundary(data: bytes, limit: int) -> int:
    """The end of the last whole entry that ends at or before ``limit`` (entries are framed by their
    12-byte offset/size prefix)."""
    pos = 0
    while pos + 12 <= len(data):
        end = pos + 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
        if end > limit:
            break
        pos = end
    return pos


def read_prefix(path: Path, limit: int) -> bytes:
    """The file's first whole batches, up to ``limit`` bytes."""
    with open(path, "rb") as f:
        data = f.read(limit + 64 * 1024)
    return data[:batch_boundary(data, limit)]
