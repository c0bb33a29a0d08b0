"""Over Spark Connect, against a real Connect server (its own JVM, started from the installed pyspark): the
source and every view, read_committed and pushdown, the nightly job into Delta, and the Databricks notebook
give what the classic engine gives.

The client runs in its own process (tests/helpers/connect_client.py): a Python process holds either a classic or a
Connect session, and this one holds the suite's classic session.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.connect_server import ConnectServer
from tests.helpers.corpus import ROOT

pytestmark = pytest.mark.field  # minutes: make test-field



@pytest.fixture(scope="module")
def connect_run(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("connect")
    with ConnectServer(warehouse=work / "catalog") as server:
        done = subprocess.run([sys.executable, "-m", "tests.helpers.connect_client", server.url, str(samples),
                               str(work)], cwd=ROOT, capture_output=True, text=True, timeout=900)
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


def golden_lines(samples: Path, pattern: str, start: bytes) -> int:
    """How many lines of kafka-dump-log's deep dumps of the broker dir's ``pattern`` files begin with ``start``."""
    return sum(line.startswith(start) for f in (samples / "golden" / "broker").glob(f"*/{pattern}.deep.txt")
               for line in f.read_bytes().split(b"\n"))


def test_every_view_reads_the_same_rows_as_the_classic_engine(spark, samples: Path, connect_run: dict) -> None:
    reader = spark.read.format("kafkalog").option("includeInternal", "true")
    classic = {v: reader.option("view", v).load(str(samples / "broker")).count() for v in connect_run["views"]}
    assert connect_run["views"] == classic
    assert set(classic) == {"records", "batches", "record_stats", "segments", "index", "partition_files"}
    # what kafka-dump-log printed, and the files on disk: every segment is below the split size (one record_stats
    # row each); the segments view also lists the .log.deleted files the cleaner left
    logs, deleted = (len(list((samples / "broker").glob(f"*/*{suffix}"))) for suffix in (".log", ".log.deleted"))
    assert {v: n for v, n in classic.items() if v != "partition_files"} == {
        "records": golden_lines(samples, "*.log", b"| offset: "),
        "batches": golden_lines(samples, "*.log", b"baseOffset: "),
        "record_stats": logs, "segments": logs + deleted,
        "index": golden_lines(samples, "*.index", b"offset: ") + golden_lines(samples, "*.timeindex", b"timestamp: ")}
    assert classic["partition_files"] > 0


def committed_txn_mixed(samples: Path) -> int:
    """txn-mixed's records a read_committed consumer sees, from kafka-dump-log's deep dumps: the data records less
    those of the transactions the .txnindex files list as aborted (and no control record)."""
    golden = samples / "golden" / "broker" / "txn-mixed-0"
    aborted = [tuple(map(int, m)) for f in golden.glob("*.txnindex.deep.txt")
               for m in re.findall(r"producerId: (\d+) firstOffset: (\d+) lastOffset: (\d+)", f.read_text())]
    batch = re.compile(r"^baseOffset: (\d+) lastOffset: \d+ count: (\d+) .*?producerId: (-?\d+) .*?"
                       r"isTransactional: (\w+) isControl: (\w+)", re.M)
    seen = 0
    for f in golden.glob("*.log.deep.txt"):
        for base, count, producer, transactional, control in batch.findall(f.read_text()):
            if control == "false" and not (transactional == "true" and any(
                    int(producer) == p and first <= int(base) <= last for p, first, last in aborted)):
                seen += int(count)
    assert len(aborted) == 3  # data/samples/README.md: 3 aborted-txn entries
    return seen


def test_isolation_and_pushdown_work_over_connect(spark, samples: Path, connect_run: dict) -> None:
    committed = (spark.read.format("kafkalog").option("topics", "txn-mixed").option("isolation", "read_committed")
                 .load(str(samples / "broker")).count())
    assert connect_run["committed_txn_mixed"] == committed == committed_txn_mixed(samples)
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
    assert connect_run["nightly"]["segment_stats"] == segments == len(list((samples / "broker").glob("*/*.log")))
    # a summary row per topic: every partition dir's topic, the internal ones too
    assert connect_run["summary_topics"] == sorted({p.name.rsplit("-", 1)[0] for p in (samples / "broker").iterdir()
                                                    if p.is_dir()})


def test_the_databricks_notebook_runs_over_connect(connect_run: dict) -> None:
    from kafkalog_spark import nightly

    nb = connect_run["notebook"]
    assert nb["summary_topics"] == ["legacy-v0", "legacy-v1"]
    assert nb["displayed"] == 1 + nb["tables"] and nb["tables"] == len(nightly.TABLES)
    # the report cell, over Connect: legacy-v0 and legacy-v1, one partition each (data/samples/README.md)
    assert nb["report"]["pages"] == 1 and nb["report"]["cards"]["partitions"] == "2"
    assert nb["report"]["cards"]["records"] == str(26 + 29)  # legacy-v0's and legacy-v1's records (README)
    # every chart but compaction's and the findings' (the legacy dirs have no compacted topic and no finding)
    assert nb["report"]["figures"] == ["fig-size-histogram", "fig-top-partitions", "fig-growth", "fig-timeline",
                                       "fig-retention"]


def test_the_cli_runs_on_a_connect_server(connect_run: dict) -> None:
    cli = connect_run["cli"]
    assert cli["code"] == 0 and "Traceback" not in cli["stderr"], cli["stderr"][-2000:]
    # tutorial-segments: 9 segments of 12 records, 4 in the last (data/samples/README.md)
    assert [r["records"] for r in cli["rows"]] == [12] * 8 + [4]
