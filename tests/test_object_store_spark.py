"""`kafkalog nightly` over log dirs in an S3-compatible store (moto's server on loopback, behind the counting
proxy), on Spark, its Delta tables written to the same store through S3A, against the nightly job over the local
copies: every table row for row, the reports read back from the store, a run killed mid-way before it, the requests
the run made, and no secret anywhere. Then the commands over Spark Connect, whose server reads the store.

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
from tests.harness.connect_server import ConnectServer
from tests.helpers.corpus import ROOT
from tests.helpers.object_store import REGION, SECRET, kinds, s3_server
from tests.helpers.object_store_client import WAREHOUSE, first_difference, localised, nightly_config, nightly_tables
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
    into the store's warehouse leaves rows that no reader sees (the manifest commits no run of the snapshot); the
    `kafkalog nightly` that follows, of the same snapshot, makes it whole, with one run's rows in each table (and
    those rows equal a local run's: test_the_nightly_job_over_the_store_writes_the_local_tables)."""
    killed = runs["nightly"]["killed"]
    assert len(killed[TABLES[0]]) == 1 and killed["snapshots"] == []  # written, not committed
    written = {table for table in TABLES if killed[table]}
    assert written < set(TABLES), written  # killed before its last table
    # the killed run's rows removed: each table stores the re-run's rows alone (none where the snapshot has none)
    local = runs["tables"]["local"]
    assert runs["nightly"]["runs_stored"] == {t: min(1, len(local[t])) for t in TABLES}
    print(f"killed over the store after {sorted(written)}: {runs['nightly']['seconds']}")


def test_the_nightly_run_pays_few_requests(runs: dict) -> None:
    """What the store served the nightly job from the log dirs: no file asked for its size, each index file fetched
    once in the job, each `.log` in ranges of 8 MiB (or to its end), nothing written; its writes went to the
    warehouse's bucket only."""
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
    # every non-empty index file of a live partition (a dir `-delete` awaits removal: not read), each once in the job,
    # though several views read them (the job's file cache on a local session)
    small = {path for path in sizes if path.endswith((".index", ".timeindex", ".txnindex")) and sizes[path]
             and not path.rsplit("/", 2)[1].endswith("-delete")}
    assert small <= set(fetched) and {path: fetched[path] for path in small} == dict.fromkeys(small, 1)
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


@pytest.fixture(scope="module")
def over_connect(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`kafkalog --remote` over the sample broker's log dir in the store and over its local copy, through a Spark
    Connect server started with the AWS variables (as a shared cluster holds its credentials: the source plans in the
    server's Python workers and reads in its executors'), each command's exit codes, outputs and the requests."""
    work = tmp_path_factory.mktemp("s3-connect")
    with s3_server(work) as s3:
        local = work / "broker"
        shutil.copytree(ROOT / "data" / CORPORA["broker"], local)
        s3.upload(local, BUCKET, "broker/data")
        corpora = {f"s3://{BUCKET}/broker/data": str(local)}
        before = len(s3.requests())
        with pytest.MonkeyPatch.context() as env:
            for name, value in s3.env().items():
                env.setenv(name, value)
            with ConnectServer(warehouse=work / "catalog") as server:
                done = {(command, where): subprocess.run(
                            [sys.executable, "-m", "kafkalog_spark.cli", "--remote", server.url, command, "--json",
                             where], cwd=work, capture_output=True, text=True, timeout=600)
                        for command in ("stats", "validate") for where in (*corpora, *corpora.values())}
                server_log = server.log.read_text(errors="replace")
        made = s3.requests()[before:]
    return {"done": done, "corpora": corpora, "requests": made, "server_log": server_log}


@pytest.mark.parametrize("command", ["stats", "validate"])
def test_commands_over_spark_connect_read_the_store(over_connect: dict, command: str) -> None:
    """Over Spark Connect the store is read where the session runs (the server's planning and tasks), with the
    environment it was given: the same rows as the same command over the local copy, on the same server."""
    (store_uri, local), = over_connect["corpora"].items()
    store, copy = over_connect["done"][command, store_uri], over_connect["done"][command, local]
    assert store.returncode == copy.returncode and store.returncode in (0, 1), store.stderr[-2000:]
    rows = copy.stdout.splitlines()  # stats: a row per segment; validate: the findings (the cleaner's leftovers)
    assert len(rows) > (20 if command == "stats" else 0)
    assert first_difference(localised(store.stdout, over_connect["corpora"]), copy.stdout) is None


def test_over_spark_connect_the_store_is_only_read_and_no_secret_is_shown(over_connect: dict) -> None:
    made = kinds(over_connect["requests"])
    assert set(made) <= {"LIST", "HEAD", "GET"} and made["GET"] > 0, made
    outputs = [over_connect["server_log"], *(d.stdout + d.stderr for d in over_connect["done"].values())]
    assert not [text for text in outputs if SECRET in text]
