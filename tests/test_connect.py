"""Over Spark Connect, against a real Connect server (its own JVM, started from the installed pyspark): the
source and every view, read_committed and pushdown, the nightly job into Delta, and the Databricks notebook
give what the classic engine gives.

The client runs in its own process (tests/connect_client.py): a Python process holds either a classic or a
Connect session, and this one holds the suite's classic session.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.connect_server import ConnectServer

pytestmark = pytest.mark.field  # minutes: make test-field

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def connect_run(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("connect")
    with ConnectServer(warehouse=work / "catalog") as server:
        done = subprocess.run([sys.executable, "-m", "tests.connect_client", server.url, str(samples), str(work)],
                              cwd=ROOT, capture_output=True, text=True, timeout=900)
        cli = subprocess.run([sys.executable, "-m", "kafkalog_spark.cli", "--remote", server.url, "stats", "--json",
                              str(samples / "broker" / "tutorial-segments-0")],
                             cwd=work, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["work"] = str(work)
    result["cli"] = {"code": cli.returncode, "stderr": cli.stderr,
                     "rows": [json.loads(line) for line in cli.stdout.splitlines() if line.startswith("{")]}
    return result


def test_the_session_is_a_connect_session(connect_run: dict) -> None:
    assert connect_run["connect"] is True


def test_every_view_reads_the_same_rows_as_the_classic_engine(spark, samples: Path, connect_run: dict) -> None:
    reader = spark.read.format("kafkalog").option("includeInternal", "true")
    classic = {v: reader.option("view", v).load(str(samples / "broker")).count() for v in connect_run["views"]}
    assert connect_run["views"] == classic
    assert min(classic.values()) > 0 and set(classic) == {"records", "batches", "record_stats", "segments", "index",
                                                            "partition_files"}


def test_isolation_and_pushdown_work_over_connect(spark, samples: Path, connect_run: dict) -> None:
    committed = (spark.read.format("kafkalog").option("topics", "txn-mixed").option("isolation", "read_committed")
                 .load(str(samples / "broker")).count())
    assert connect_run["committed_txn_mixed"] == committed > 0
    assert connect_run["pushdown_rows"] == [96, 97, 98, 99]  # tutorial-segments: 100 records, offsets 0..99


def test_the_nightly_job_writes_every_table_over_connect(spark, samples: Path, connect_run: dict) -> None:
    from kafkalog_spark import nightly
    from kafkalog_spark.delta import TableLocation, read_table

    assert set(connect_run["nightly"]) == set(nightly.TABLES)
    where = TableLocation(warehouse=str(Path(connect_run["work"]) / "wh"))
    for name, rows in connect_run["nightly"].items():  # what the server wrote, read back by the classic engine
        assert read_table(spark, where, name, "connect").count() == rows
    segments = spark.read.format("kafkalog").option("view", "segments").option("includeInternal", "true").load(
        str(samples / "broker")).where("problem is null and status = 'live'").count()
    assert connect_run["nightly"]["segment_stats"] == segments
    assert "tutorial-segments" in connect_run["summary_topics"]


def test_the_databricks_notebook_runs_over_connect(connect_run: dict) -> None:
    nb = connect_run["notebook"]
    assert nb["summary_topics"] == ["legacy-v0", "legacy-v1"]
    assert nb["displayed"] == 1 + nb["tables"]
    # the report cell, over Connect: legacy-v0 and legacy-v1, one partition each (data/samples/README.md)
    assert nb["report"]["pages"] == 1 and nb["report"]["cards"]["partitions"] == "2"
    assert "fig-top-partitions" in nb["report"]["figures"]


def test_the_cli_runs_on_a_connect_server(connect_run: dict) -> None:
    cli = connect_run["cli"]
    assert cli["code"] == 0 and "Traceback" not in cli["stderr"], cli["stderr"][-2000:]
    # tutorial-segments: 9 segments of 12 records, 4 in the last (data/samples/README.md)
    assert [r["records"] for r in cli["rows"]] == [12] * 8 + [4]
