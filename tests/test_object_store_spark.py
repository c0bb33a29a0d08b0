"""`kafkalog nightly` over log dirs in an S3-compatible store (moto's server on loopback, behind the counting
proxy), on Spark, its Delta tables written to the same store through S3A, against the nightly job over the local
copies: every table row for row, the reports read back from the store, a run killed mid-way, the requests the run
made, and no secret anywhere.

The clients run in their own processes (tests/helpers/object_store_client.py) with the AWS variables set before
a session starts, as a user's job gets them: the executors' Python workers inherit them from the JVM.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafkalog_spark.nightly import TABLES
from tests.helpers.corpus import ROOT
from tests.helpers.object_store import REGION, SECRET, kinds, s3_server
from tests.helpers.object_store_client import WAREHOUSE, first_difference, nightly_config, nightly_tables
from tests.helpers.report_page import Page
from tests.test_object_store import BUCKET, CORPORA

pytestmark = pytest.mark.stores  # minutes: make test-stores

# The nightly job reads these together: the sample broker's log dir and the internal topics' corpus of a 3.9 broker
# (the source's views are compared on every corpus in tests/test_object_store.py, the commands in
# tests/test_object_store_commands.py).
NIGHTLY_CORPORA = ("broker", "internal-3.9")
WAREHOUSE_BUCKET = WAREHOUSE.split("/")[2]  # the job's tables: s3a:// on the same server


def run_client(mode: str, work: Path, names, s3) -> tuple[dict, dict[str, str]]:
    """The client in its own process, over ``names`` uploaded to the store and copied locally."""
    corpora = {}
    for name in names:
        local = work / name
        shutil.copytree(ROOT / "data" / CORPORA[name], local)
        s3.upload(local, BUCKET, f"{name}/data")
        corpora[f"s3://{BUCKET}/{name}/data"] = str(local)
    done = subprocess.run([sys.executable, "-m", "tests.helpers.object_store_client", mode, str(work / "out"),
                           json.dumps(corpora), str(s3.log)], cwd=ROOT, capture_output=True, text=True,
                          env=os.environ | s3.env(), timeout=1800)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["outputs"].append(done.stderr)
    print(f"{mode}: seconds {result['seconds']}")
    return result, corpora


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`kafkalog nightly` over the store into a warehouse in the store (the client's session, which it starts),
    and the nightly job over the local copies (this process's session) as of the same time, the tables of both."""
    work = tmp_path_factory.mktemp("s3-spark")
    with s3_server(work) as s3:
        s3.client().create_bucket(Bucket=WAREHOUSE_BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})
        nightly, corpora = run_client("nightly", work, NIGHTLY_CORPORA, s3)
        everything = s3.requests()
    assert nightly["nightly_command"]["code"] == 0, nightly["nightly_command"]["stderr"]
    out = work / "out"
    from kafkalog_spark.nightly import run

    # as of the store's run (the command took the clock's time)
    run(spark, nightly_config(list(corpora.values()), str(out / "wh-local"), out / "report-local.html"),
        now=lambda: dt.datetime.fromisoformat(nightly["snapshot_time"]))
    tables = {"store": nightly["tables"], "local": nightly_tables(spark, str(out / "wh-local"), corpora)}
    return {"nightly": nightly, "tables": tables, "local": corpora, "all_requests": everything,
            "local_report": Page((out / "report-local.html").read_text())}


def test_the_nightly_job_over_the_store_writes_the_local_tables(runs: dict) -> None:
    store, local = runs["tables"]["store"], runs["tables"]["local"]
    assert set(store) == set(local) and len(store["segment_stats"]) > 50
    different = {name: first_difference("\n".join(rows), "\n".join(local[name]))
                 for name, rows in store.items() if rows != local[name]}
    assert not different


def test_the_reports_read_the_snapshot_back_from_the_store(runs: dict) -> None:
    """The job's report (written from the committed snapshot, as readers see it) and `kafkalog report --warehouse
    s3a://...` both read the tables back from the store: the same summary as the job's report over the local copies."""
    command = runs["nightly"]["report_command"]
    assert command["code"] == 0, command["stderr"]
    local = runs["local_report"].cards
    assert int(local["segments"]) > 50
    assert Page(runs["nightly"]["report"]).cards == Page(command["page"]).cards == local


def test_a_run_killed_over_the_store_shows_nothing_and_a_rerun_completes_it(runs: dict) -> None:
    """Snapshots stay all-or-nothing with the tables in S3: the job SIGKILLed right after its first table's commit
    into the store's warehouse leaves readers nothing of its snapshot and the committed one untouched; run again, it
    is whole, with one run's rows in each table."""
    killed = runs["nightly"]["killed"]
    assert killed["killed"] == dict.fromkeys(TABLES, 0)
    assert killed["committed"] == killed["committed_before"] and killed["committed"]["segment_stats"] > 50
    rerun = killed["rerun"]
    # data/samples/README.md: tutorial-segments 9 segments, txn-mixed 5; two partitions, one topic each
    assert {t: rerun[t] for t in ("segment_stats", "partition_stats", "retention_plan", "topic_configs")} == {
        "segment_stats": 9 + 5, "partition_stats": 2, "retention_plan": 9 + 5, "topic_configs": 2}
    assert killed["runs_stored"] == {t: min(1, n) for t, n in rerun.items()}
    print(f"killed over the store, then re-run: {killed['seconds']} s")


def test_the_nightly_run_pays_few_requests(runs: dict) -> None:
    """What the store served the nightly job from the log dirs: no file asked for its size, each index file fetched
    once per view that reads it, each `.log` in ranges of 8 MiB (or to its end), nothing written; its writes went to
    the warehouse's bucket only."""
    everything = runs["nightly"]["nightly_requests"]
    made = [r for r in everything if not r["path"].startswith(f"/{WAREHOUSE_BUCKET}")]
    assert {r["method"] for r in everything if r not in made} >= {"PUT", "GET"}  # the tables, written and read back
    count = kinds(made)
    heads = {r["path"] for r in made if r["method"] == "HEAD"}
    print(f"nightly over the store: {dict(count)}; HEAD: {sorted(heads)}")
    assert set(count) <= {"LIST", "HEAD", "GET"} and count["GET"] > 0
    assert heads <= {f"/{BUCKET}/{name}/data" for name in NIGHTLY_CORPORA}  # log dirs, never a file
    sizes = {f"/{BUCKET}/{name}/data/{p.relative_to(Path(local)).as_posix()}": p.stat().st_size
             for uri, local in runs["local"].items() for name in [uri.split("/")[3]]
             for p in Path(local).rglob("*") if p.is_file()}
    fetched: dict[str, int] = {}
    for r in made:
        if r["method"] == "GET" and r["path"] in sizes:
            fetched[r["path"]] = fetched.get(r["path"], 0) + 1
    for path, n in fetched.items():
        if path.endswith((".index", ".timeindex")):
            # the segments view and the index view each read an index file once (once per job is not reached)
            assert n <= 2, (path, n)
        elif path.endswith(".txnindex"):
            assert n <= 3, (path, n)  # each of the three views that decode `.log` files plans with it
    for r in made:  # a `.log` is read a chunk at a time, never a batch at a time: each GET spans 8 MiB or the rest
        if r["method"] == "GET" and r["path"].endswith(".log") and r["path"] in sizes:
            first, last = map(int, r["range"].removeprefix("bytes=").split("-"))
            assert last - first + 1 >= min(8 << 20, sizes[r["path"]] - first), r
    keys = len(sizes)
    print(f"nightly over the store: {dict(count)} for {keys} keys, {sum(sizes.values())} bytes")


def test_no_secret_in_any_output_and_nothing_written_to_the_log_dirs(runs: dict) -> None:
    everything = "\n".join(runs["nightly"]["outputs"])
    assert SECRET not in everything and len(everything) > 100_000
    # the log dirs' bucket, the input: only read (the tables were written to their own bucket)
    read = kinds([r for r in runs["all_requests"] if r["path"] == f"/{BUCKET}" or r["path"].startswith(f"/{BUCKET}/")])
    assert set(read) <= {"LIST", "HEAD", "GET"} and read["GET"] > 0
