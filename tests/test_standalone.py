"""The source and the nightly job on a real multi-process cluster: a Spark standalone master and two workers on
loopback (tests/harness/standalone.py), so executors are separate JVMs with their own Python workers, and the
driver is spark-submit's, as in production. The cluster's results must equal the single-process reader's and a
local session's, table by table."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from kafkalog_spark import nightly
from kafkalog_spark.delta import TableLocation, read_table
from kafkalog_spark.delta.packages import delta_spark_confs
from kafkalog_spark.kafka_versions import KafkaVersion
from tests.harness.standalone import StandaloneCluster
from tests.helpers.corpus import ROOT

pytestmark = pytest.mark.cluster

# What says which run wrote a row and when, not what the row says: the retention plan's and the compaction
# preview's clock is the run's (and a clean's new delete horizon is that clock + delete.retention.ms)
RUN_COLUMNS = {"snapshotId", "snapshotTime", "runId", "asOfMs", "nowMs", "newDeleteHorizonMs"}
# Sized for two cores, as anyone sizes these for their cluster (Spark's defaults are 200 and Delta's 50)
SMALL_CLUSTER_CONFS = {"spark.sql.shuffle.partitions": "4", "spark.databricks.delta.snapshotPartitions": "2"}
# A few partitions of the corpus, one of each kind the analyses treat apart: rolled segments, a transactional
# topic with aborts, a compacted topic before and after its clean, a compressed one, an internal one
PARTITIONS = ("tutorial-segments-0", "txn-mixed-0", "compacted-dirty-0", "compacted-cleaned-0", "codec-zstd-0",
              "__consumer_offsets-0")


@pytest.fixture(scope="module")
def log_dir(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("cluster-input") / "broker"
    for name in PARTITIONS:
        shutil.copytree(samples / "broker" / name, root / name)
    for f in (samples / "broker").iterdir():
        if f.is_file():  # the log dir's checkpoint files
            shutil.copy(f, root / f.name)
    return str(root)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    with StandaloneCluster(tmp_path_factory.mktemp("standalone"), workers=2) as c:
        yield c


def golden_counts(samples: Path, view: str) -> list[list]:
    """[topic, partition, rows, sum of offsets] per partition of PARTITIONS, from kafka-dump-log's deep dumps of
    their segments: records (`| offset: N` lines) or batches (their `lastOffset: N`), as the probe reports them."""
    pattern = rb"(?m)^\| offset: (\d+) " if view == "records" else rb"(?m)^baseOffset: \d+ lastOffset: (\d+) "
    out = []
    for name in PARTITIONS:
        topic, partition = name.rsplit("-", 1)
        values = [int(v) for g in (samples / "golden" / "broker" / name).glob("*.log.deep.txt")
                  for v in re.findall(pattern, g.read_bytes())]
        out.append([topic, int(partition), len(values), sum(values)])
    return sorted(out)


def expected_rows(samples: Path) -> dict[str, int]:
    """The nightly tables' row counts over PARTITIONS, from the corpus (data/samples/README.md, the files) and the
    tables' grain (README.md's table list); index_findings' are counted by expected_findings."""
    broker = samples / "broker"
    segments = {name: len(list((broker / name).glob("*.log"))) for name in PARTITIONS}  # live segments
    compacted = ("compacted-dirty-0", "compacted-cleaned-0", "__consumer_offsets-0")  # conf/samples-topics.ini
    return {
        "segment_stats": sum(segments.values()), "retention_plan": sum(segments.values()),
        "partition_stats": len(PARTITIONS), "log_offsets": len(PARTITIONS), "catalog_checks": len(PARTITIONS),
        "replica_comparison": len(PARTITIONS),  # one broker: each partition its only replica, its leader
        "log_dir_stats": 1, "topic_configs": len(PARTITIONS),  # one partition per topic
        "retention_forecast": len(PARTITIONS) * 15,  # days 0 to 14
        "compaction_preview": len(compacted), "compaction_preview_segments": sum(segments[n] for n in compacted),
        # samples-group committed tutorial-segments-0 and hello-round-robin-0..2 (not copied: partition_not_on_disk)
        "consumer_positions": 1 + 3,
        "open_transactions": 0,  # the broker shut down cleanly with every transaction of txn-mixed ended
        "index_findings": sum(expected_findings(samples).values()),
        "tiered_storage": 0,  # no topic of the corpus is tiered
    }


def expected_findings(samples: Path) -> Counter:
    """index_findings' checks over PARTITIONS: the log dir's checkpoints name the 20 partitions of the corpus, only 6
    are copied; compacted-cleaned-0 has its cleaned-away segments pending deletion (a `.log.deleted` each), and its
    compaction left segments whose first batch is above their name and offsets in no segment (dump-log's goldens)."""
    broker = samples / "broker"
    copied = {tuple(name.rsplit("-", 1)) for name in PARTITIONS}
    found: Counter = Counter()
    for checkpoint in broker.glob("*-offset-checkpoint"):
        entries = [tuple(line.split()[:2]) for line in checkpoint.read_text().splitlines()[2:]]
        found["checkpoint_missing_partition"] += sum(e not in copied for e in entries)
    for name in PARTITIONS:
        found["stray_temp_file"] += len(list((broker / name).glob("*.log.deleted")))
        spans = []  # (name's offset, first batch's base offset, last batch's last offset) per segment
        for g in sorted((samples / "golden" / "broker" / name).glob("*.log.deep.txt")):
            batches = re.findall(rb"(?m)^baseOffset: (\d+) lastOffset: (\d+) ", g.read_bytes())
            spans.append((int(g.name[:20]), int(batches[0][0]), int(batches[-1][1])))
        found["segment_first_offset_above_name"] += sum(first > base for base, first, _ in spans)
        found["segment_offset_gap"] += sum(last + 1 < following[0]
                                           for (_, _, last), following in zip(spans, spans[1:], strict=False))
    return +found


def _run(cmd: list[str], cluster: StandaloneCluster, timeout: int = 600) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, env=cluster.env(), cwd=ROOT, timeout=timeout)
    assert done.returncode == 0, f"exit {done.returncode}:\n{done.stderr[-4000:]}"
    return done


def test_source_on_two_executor_jvms(cluster, log_dir: str, samples: Path) -> None:
    done = _run(cluster.submit(["tests/harness/cluster_probe.py", "2", log_dir]), cluster)
    probe = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("PROBE "))[6:])
    assert probe["executors"] == 2
    assert probe["executor_jvms"] == 2  # Python workers under two executor JVMs, not the driver's
    per_executor = probe["source_tasks_per_executor"]
    assert len(per_executor) == 2 and min(per_executor.values()) >= 1, per_executor  # both decoded splits
    for view in ("records", "batches"):
        assert probe[f"{view}_tasks"] >= 2
        assert probe[f"spark_{view}"] == probe[f"local_{view}"] == golden_counts(samples, view)
    # data/samples/README.md: 857 records in 218 batches
    assert [sum(n for _, _, n, _ in probe[f"spark_{v}"]) for v in ("records", "batches")] == [857, 218]


def _rows(spark, location: TableLocation, table: str, snapshot: str) -> list[tuple]:
    df = read_table(spark, location, table, snapshot)
    columns = sorted(c for c in df.columns if c not in RUN_COLUMNS)
    return sorted((tuple(r) for r in df.select(*columns).collect()), key=repr)


def test_nightly_job_on_the_cluster_equals_a_local_session(cluster, spark, log_dir: str, tmp_path: Path,
                                                           samples: Path) -> None:
    confs = {**delta_spark_confs(), **SMALL_CLUSTER_CONFS}
    packages = confs.pop("spark.jars.packages")
    cluster_wh = tmp_path / "cluster-warehouse"
    done = _run(cluster.submit(["jobs/nightly.py", "--config", "conf/nightly.toml", "--log-dir", log_dir,
                                "--warehouse", str(cluster_wh), "--snapshot-id", "cluster",
                                "--report", str(tmp_path / "cluster.html")], confs, packages), cluster)
    # kafkalog nightly, in the session spark-submit made: on the cluster's master, not a local one of its own
    # (spark-submit runs the Python driver with its stderr merged into its own stdout)
    said = [line for line in (done.stdout + done.stderr).splitlines() if "kafkalog: " in line]
    assert any(re.search(r"kafkalog: on spark://127\.0\.0\.1:\d+", line) for line in said), said
    # the job's report, written by the driver, of this run's snapshot
    assert "snapshot cluster, taken " in (tmp_path / "cluster.html").read_text()
    local = nightly.NightlyConfig.load(str(ROOT / "conf" / "nightly.toml"), log_dirs=(log_dir,),
                                       location=TableLocation(warehouse=str(tmp_path / "local-warehouse")),
                                       snapshot_id="local", report=str(tmp_path / "local.html"))
    assert local.kafka_version == KafkaVersion.V3_9
    nightly.run(spark, local)
    expected = expected_rows(samples)
    assert set(expected) == set(nightly.TABLES)
    for table in nightly.TABLES:
        on_cluster = _rows(spark, TableLocation(warehouse=str(cluster_wh)), table, "cluster")
        on_local = _rows(spark, local.location, table, "local")
        only_cluster = [r for r in on_cluster if r not in on_local][:3]
        only_local = [r for r in on_local if r not in on_cluster][:3]
        assert on_cluster == on_local, f"{table}: cluster only {only_cluster}, local only {only_local}"
        assert len(on_cluster) == expected[table], table
    findings = read_table(spark, TableLocation(warehouse=str(cluster_wh)), "index_findings", "cluster")
    assert Counter(r.check for r in findings.select("check").collect()) == expected_findings(samples)
