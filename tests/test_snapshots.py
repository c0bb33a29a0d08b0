"""Snapshots all-or-nothing, and snapshot ids that cannot reach a predicate.

The nightly job runs in a subprocess that SIGKILLs its whole process group (the Python driver, the JVM, the
workers) right after one of its Delta commits; readers must then see the snapshot whole or not at all, earlier
snapshots untouched, and a re-run of the same snapshot id must complete it, leaving one run's rows. ``make test``
kills once (tests/test_nightly.py: a re-run of a committed snapshot, killed between two tables); ``make
kill-matrix`` (KAFKALOG_KILL_MATRIX=1) kills at every boundary here."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from kafkalog_spark import nightly
from kafkalog_spark.config import ConfigError
from kafkalog_spark.delta import MANIFEST, TableLocation, read_table
from kafkalog_spark.delta.snapshots import RUN_COLUMN
from kafkalog_spark.kafka_versions import KafkaVersion

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
INJECTION = "a\\' OR 1=1 --"  # Spark SQL reads \' as an escaped quote: pasted into replaceWhere, it matched all
PARTITIONS = ("tutorial-segments-0", "txn-mixed-0")  # small, with transactions: every table gets rows
# Every commit the job makes, in order: one per table, the manifest, then the clean-up of each table.
COMMITS = (*nightly.TABLES, MANIFEST, *(f"clean-up {t}" for t in nightly.TABLES))
MATRIX = bool(os.environ.get("KAFKALOG_KILL_MATRIX"))  # make kill-matrix
JOB_TIMEOUT = 600

KILLED_JOB = textwrap.dedent("""
    import json, os, signal, sys
    from kafkalog_spark import nightly
    from kafkalog_spark.delta import TableLocation
    from kafkalog_spark.kafka_versions import KafkaVersion
    from kafkalog_spark.session import local_session

    args, kill_after = json.loads(sys.argv[1]), sys.argv[2]
    spark = local_session("kill-test", master="local[2]")
    config = nightly.NightlyConfig(log_dirs=tuple(args["log_dirs"]),
                                   location=TableLocation(warehouse=args["warehouse"]),
                                   snapshot_id=args["snapshot_id"], topic_config=args["topic_config"],
                                   kafka_version=KafkaVersion(args["kafka_version"]))

    def after_commit(name):
        if name == kill_after:  # the whole job at once, as a node or container dies: driver, JVM, workers
            os.killpg(os.getpgid(0), signal.SIGKILL)

    nightly.run(spark, config, after_commit=after_commit)
""")


@pytest.fixture(scope="module")
def log_dir(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("snapshots") / "logs"
    for part in PARTITIONS:
        shutil.copytree(samples / "broker" / part, root / part)
    return str(root)


def config_for(log_dir: str, warehouse: str, snapshot_id: str) -> nightly.NightlyConfig:
    return nightly.NightlyConfig(log_dirs=(log_dir,), location=TableLocation(warehouse=warehouse),
                                 snapshot_id=snapshot_id, kafka_version=KafkaVersion.V3_9)


@pytest.fixture(scope="module")
def warehouse(spark, log_dir: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A warehouse holding the committed snapshot ``s1``."""
    path = str(tmp_path_factory.mktemp("warehouse"))
    nightly.run(spark, config_for(log_dir, path, "s1"), now=lambda: T0)
    return path


def counts(spark, warehouse: str, snapshot_id: str) -> dict[str, int]:
    where = TableLocation(warehouse=warehouse)
    return {t: read_table(spark, where, t, snapshot_id).count() for t in nightly.TABLES}


@pytest.fixture(scope="module")
def s1_counts(spark, warehouse: str) -> dict[str, int]:
    found = counts(spark, warehouse, "s1")
    assert all(found[t] > 0 for t in ("segment_stats", "partition_stats", "retention_plan", "topic_configs"))
    return found


def test_an_injected_snapshot_id_is_refused_everywhere_before_any_write(tmp_path: Path, capsys) -> None:
    from kafkalog_spark.cli import main
    from kafkalog_spark.delta import append_rows, commit

    warehouse = tmp_path / "warehouse"
    (warehouse / "segment_stats").mkdir(parents=True)
    (warehouse / "segment_stats" / "earlier-snapshot").write_text("kept")
    before = sorted((p, p.stat().st_mtime_ns) for p in warehouse.rglob("*"))
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    # the command line: one line, exit 2, before Spark starts
    assert main(["nightly", "--log-dir", str(log_dir), "--warehouse", str(warehouse), "--snapshot-id", INJECTION]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "snapshot id" in err and "Traceback" not in err
    # the TOML file; the Python API and the notebook's widgets (both build a NightlyConfig); the Delta layer
    toml = tmp_path / "nightly.toml"
    escaped = INJECTION.replace("\\", "\\\\")  # TOML's basic string: \\ is one backslash
    toml.write_text(f"[output]\nwarehouse = '{warehouse}'\n[snapshot]\nid = \"{escaped}\"\n")
    with pytest.raises(ConfigError, match="snapshot"):
        nightly.NightlyConfig.load(str(toml))
    with pytest.raises(ValueError, match="snapshot id"):
        config_for(str(log_dir), str(warehouse), INJECTION)
    where = TableLocation(warehouse=str(warehouse))
    for call in (lambda: read_table(None, where, "segment_stats", INJECTION),
                 lambda: append_rows(None, where, "segment_stats", INJECTION, T0, "0" * 32),
                 lambda: commit(None, where, INJECTION, T0, "0" * 32, ["segment_stats"])):
        with pytest.raises(ValueError, match="snapshot id"):
            call()
    assert sorted((p, p.stat().st_mtime_ns) for p in warehouse.rglob("*")) == before


def test_table_and_schema_names_are_checked() -> None:
    with pytest.raises(ValueError, match="schema"):
        TableLocation(catalog="main", schema="x; DROP TABLE y")
    with pytest.raises(ValueError, match="table name"):
        TableLocation(warehouse="w").name("../elsewhere")
    with pytest.raises(ValueError, match="manifest"):
        nightly.NightlyConfig(log_dirs=("d",), location=TableLocation(warehouse="w"),
                              table_names={t: t for t in nightly.TABLES} | {"segment_stats": MANIFEST})


def run_killed(config: nightly.NightlyConfig, kill_after: str) -> None:
    """Run the nightly job of ``config`` in a process group of its own that SIGKILLs itself right after the Delta
    commit named ``kill_after``; fails unless it died there."""
    args = {"log_dirs": list(config.log_dirs), "warehouse": config.location.warehouse,
            "snapshot_id": config.snapshot_id, "topic_config": config.topic_config,
            "kafka_version": config.kafka_version.value}
    env = os.environ | {"PYSPARK_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, "-c", KILLED_JOB, json.dumps(args), kill_after], env=env,
                          start_new_session=True, capture_output=True, text=True, timeout=JOB_TIMEOUT)
    assert done.returncode == -9, done.stderr[-2000:]  # killed where asked, not failed or finished


def raw_rows(spark, warehouse: str, table: str, snapshot_id: str):
    """A table's rows of ``snapshot_id`` as stored, committed or not."""
    return spark.read.format("delta").load(f"{warehouse}/{table}").where(F.col("snapshotId") == snapshot_id)


@pytest.mark.skipif(not MATRIX, reason="the kill matrix: make kill-matrix")
@pytest.mark.parametrize("kill_after", COMMITS)
def test_a_killed_run_leaves_nothing_or_everything_and_a_rerun_completes_it(spark, log_dir, warehouse, s1_counts,
                                                                             kill_after: str) -> None:
    snapshot_id = f"k-{COMMITS.index(kill_after)}"
    run_killed(config_for(log_dir, warehouse, snapshot_id), kill_after)
    seen = counts(spark, warehouse, snapshot_id)
    committed = COMMITS.index(kill_after) >= COMMITS.index(MANIFEST)
    assert seen == (s1_counts if committed else dict.fromkeys(nightly.TABLES, 0))
    assert counts(spark, warehouse, "s1") == s1_counts  # other snapshots untouched

    nightly.run(spark, config_for(log_dir, warehouse, snapshot_id), now=lambda: T0)  # the re-run
    assert counts(spark, warehouse, snapshot_id) == s1_counts
    for t in nightly.TABLES:  # the killed run's rows are gone, not just hidden: one run's rows remain
        assert raw_rows(spark, warehouse, t, snapshot_id).select(RUN_COLUMN).distinct().count() == min(
            1, s1_counts[t]), t
