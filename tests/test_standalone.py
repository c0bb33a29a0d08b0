"""The source and the nightly job on a real multi-process cluster: a Spark standalone master and two workers on
loopback (tests/harness/standalone.py), so executors are separate JVMs with their own Python workers, and the
driver is spark-submit's, as in production. The cluster's results must equal the single-process reader's and a
local session's, table by table."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from kafkalog_spark import nightly
from kafkalog_spark.delta import TableLocation, read_table
from kafkalog_spark.delta.packages import delta_spark_confs
from kafkalog_spark.kafka_versions import KafkaVersion
from tests.harness.standalone import StandaloneCluster

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parent.parent
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


def _run(cmd: list[str], cluster: StandaloneCluster, timeout: int = 600) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, env=cluster.env(), cwd=REPO, timeout=timeout)
    assert done.returncode == 0, f"exit {done.returncode}:\n{done.stderr[-4000:]}"
    return done


def test_source_on_two_executor_jvms(cluster, log_dir: str) -> None:
    done = _run(cluster.submit(["tests/harness/cluster_probe.py", "2", log_dir]), cluster)
    probe = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("PROBE "))[6:])
    assert probe["executors"] == 2
    assert probe["executor_jvms"] == 2  # Python workers under two executor JVMs, not the driver's
    per_executor = probe["source_tasks_per_executor"]
    assert len(per_executor) == 2 and min(per_executor.values()) >= 1, per_executor  # both decoded splits
    for view in ("records", "batches"):
        assert probe[f"{view}_tasks"] >= 2
        assert probe[f"spark_{view}"] == probe[f"local_{view}"]
        assert len(probe[f"spark_{view}"]) == len(PARTITIONS)
    assert sum(n for _, _, n, _ in probe["spark_records"]) > sum(n for _, _, n, _ in probe["spark_batches"])


def _rows(spark, location: TableLocation, table: str, snapshot: str) -> list[tuple]:
    df = read_table(spark, location, table, snapshot)
    columns = sorted(c for c in df.columns if c not in RUN_COLUMNS)
    return sorted((tuple(r) for r in df.select(*columns).collect()), key=repr)


def test_nightly_job_on_the_cluster_equals_a_local_session(cluster, spark, log_dir: str, tmp_path: Path) -> None:
    confs = {**delta_spark_confs(), **SMALL_CLUSTER_CONFS}
    packages = confs.pop("spark.jars.packages")
    cluster_wh = tmp_path / "cluster-warehouse"
    _run(cluster.submit(["jobs/nightly.py", "--config", "conf/nightly.toml", "--log-dir", log_dir,
                         "--warehouse", str(cluster_wh), "--snapshot-id", "cluster",
                         "--report", str(tmp_path / "cluster.html")], confs, packages), cluster)
    assert (tmp_path / "cluster.html").stat().st_size > 0  # the job's report, written by the driver
    local = nightly.NightlyConfig.load(str(REPO / "conf" / "nightly.toml"), log_dirs=(log_dir,),
                                       location=TableLocation(warehouse=str(tmp_path / "local-warehouse")),
                                       snapshot_id="local", report=str(tmp_path / "local.html"))
    assert local.kafka_version == KafkaVersion.V3_9
    nightly.run(spark, local)
    for table in nightly.TABLES:
        on_cluster = _rows(spark, TableLocation(warehouse=str(cluster_wh)), table, "cluster")
        on_local = _rows(spark, local.location, table, "local")
        only_cluster = [r for r in on_cluster if r not in on_local][:3]
        only_local = [r for r in on_local if r not in on_cluster][:3]
        assert on_cluster == on_local, f"{table}: cluster only {only_cluster}, local only {only_local}"
        # the copied partitions are sound and no transaction is left open in them (their broker shut down
        # cleanly): those two tables are empty on both, every other table has rows
        if table not in ("index_findings", "open_transactions"):
            assert on_cluster, table
