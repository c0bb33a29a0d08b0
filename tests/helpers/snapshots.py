"""The nightly job in a process of its own, SIGKILLed right after one of its Delta commits or not, and a table's rows
as stored: the all-or-nothing tests of snapshots (tests/test_snapshots.py: every boundary; tests/test_nightly.py: a
re-run killed between two tables) and the fleet's brokers run side by side (tests/test_nightly_fleet.py) share them."""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import subprocess
import sys
import tempfile
import textwrap

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafkalog_spark import nightly
from kafkalog_spark.delta import TableLocation, read_table
from kafkalog_spark.delta.snapshots import RUN_COLUMN

JOB_TIMEOUT = 600
# The sample broker's partitions a killed run reads: small, with transactions, so every table gets rows.
PARTITIONS = ("tutorial-segments-0", "txn-mixed-0")

KILLED_JOB = textwrap.dedent("""
    import datetime, json, os, signal, sys
    from kafkalog_spark import nightly
    from kafkalog_spark.delta import TableLocation
    from kafkalog_spark.kafka_versions import KafkaVersion
    from kafkalog_spark.session import local_session
    from kafkalog_spark.session.warehouse_store import warehouse_confs

    args, kill_after = json.loads(sys.argv[1]), sys.argv[2]
    spark = local_session("kill-test", master=args.get("master", "local[2]"), extra=warehouse_confs(args["warehouse"]))
    config = nightly.NightlyConfig(log_dirs=tuple(args["log_dirs"]),
                                   location=TableLocation(warehouse=args["warehouse"]),
                                   snapshot_id=args["snapshot_id"], topic_config=args["topic_config"],
                                   kafka_version=KafkaVersion(args["kafka_version"]), fleet=args.get("fleet", False))
    now = datetime.datetime.fromisoformat(args["now"]) if args.get("now") else None

    def after_commit(name):
        if name == kill_after:  # the whole job at once, as a node or container dies: driver, JVM, workers
            os.killpg(os.getpgid(0), signal.SIGKILL)

    nightly.run(spark, config, now=now and (lambda: now), after_commit=after_commit)
""")


def run_killed(config: nightly.NightlyConfig, kill_after: str) -> None:
    """Run the nightly job of ``config`` in a process group of its own that SIGKILLs itself right after the Delta
    commit named ``kill_after``; fails unless it died there."""
    returncode, stderr = ended(start_job(config, kill_after))
    assert returncode == -9, stderr  # killed where asked, not failed or finished


def start_job(config: nightly.NightlyConfig, kill_after: str = "", *, now: dt.datetime | None = None,
              master: str = "local[2]") -> subprocess.Popen:
    """The nightly job of ``config`` started in a process of its own (and a process group of its own, which SIGKILLs
    itself right after the Delta commit named ``kill_after``, if given), as of ``now``; :func:`ended` waits for it."""
    args = {"log_dirs": list(config.log_dirs), "warehouse": config.location.warehouse,
            "snapshot_id": config.snapshot_id, "topic_config": config.topic_config,
            "kafka_version": config.kafka_version.value, "fleet": config.fleet, "master": master,
            "now": now.isoformat() if now else None}
    env = os.environ | {"PYSPARK_PYTHON": sys.executable}
    # stderr to a file, not a pipe: jobs run side by side must not wait for their reader
    log = tempfile.TemporaryFile(mode="w+")
    job = subprocess.Popen([sys.executable, "-c", KILLED_JOB, json.dumps(args), kill_after], env=env,
                           start_new_session=True, stdout=subprocess.DEVNULL, stderr=log, text=True)
    job.log = log
    return job


def ended(job: subprocess.Popen) -> tuple[int, str]:
    """The return code of a job of :func:`start_job` once it ends, and the end of its stderr."""
    try:
        returncode = job.wait(timeout=JOB_TIMEOUT)
    finally:
        if job.returncode is None:
            os.killpg(job.pid, 9)
    job.log.seek(0)
    return returncode, job.log.read()[-2000:]


def raw_rows(spark, warehouse: str, table: str, snapshot_id: str):
    """A table's rows of ``snapshot_id`` as stored, committed or not."""
    return spark.read.format("delta").load(f"{warehouse}/{table}").where(F.col("snapshotId") == snapshot_id)


def counts(spark, warehouse: str, snapshot_id: str) -> dict[str, int]:
    """Each table's rows of ``snapshot_id`` as readers see them, in one query."""
    where = TableLocation(warehouse=warehouse)
    per_table = [read_table(spark, where, t, snapshot_id).select(F.lit(t).alias("table")) for t in nightly.TABLES]
    found = functools.reduce(DataFrame.unionAll, per_table).groupBy("table").count().collect()
    return dict.fromkeys(nightly.TABLES, 0) | {r.table: r["count"] for r in found}


def runs_stored(spark, warehouse: str, snapshot_id: str) -> dict[str, int]:
    """How many runs' rows of ``snapshot_id`` each table stores, committed or not, in one query."""
    per_table = [raw_rows(spark, warehouse, t, snapshot_id).select(F.lit(t).alias("table"), RUN_COLUMN)
                 for t in nightly.TABLES]
    found = functools.reduce(DataFrame.unionAll, per_table).distinct().groupBy("table").count().collect()
    return dict.fromkeys(nightly.TABLES, 0) | {r.table: r["count"] for r in found}
