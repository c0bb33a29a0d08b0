"""The nightly job and `stats` over log dirs in an S3-compatible store (moto's server on loopback, behind the
counting proxy), on Spark, against the same over the local copies: every nightly table row for row, the requests
the nightly run made, and no secret anywhere.

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

from tests.helpers.corpus import ROOT
from tests.helpers.object_store import SECRET, kinds, s3_server
from tests.helpers.object_store_client import NOW, first_difference, nightly_config, nightly_tables
from tests.test_object_store import BUCKET, CORPORA

pytestmark = pytest.mark.stores  # minutes: make test-stores

# The nightly job reads these together: the sample broker's log dir and the internal topics' corpus of a 3.9 broker
# (the source's views are compared on every corpus in tests/test_object_store.py, the commands in
# tests/test_object_store_commands.py).
NIGHTLY_CORPORA = ("broker", "internal-3.9")


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
    """The nightly job over the store (the client's session) and over the local copies (this process's), its
    tables of both, and ``stats`` on Spark over both."""
    work = tmp_path_factory.mktemp("s3-spark")
    with s3_server(work) as s3:
        nightly, corpora = run_client("nightly", work, NIGHTLY_CORPORA, s3)
        written = kinds(s3.requests())
    out = work / "out"
    from kafkalog_spark.nightly import run

    run(spark, nightly_config(list(corpora.values()), out / "wh-local", out / "report-local.html"),
        now=lambda: dt.datetime.fromisoformat(NOW))
    tables = {label: nightly_tables(spark, out / f"wh-{label}", corpora) for label in ("store", "local")}
    return {"nightly": nightly, "tables": tables, "local": corpora, "all_requests": written}


def test_the_nightly_job_over_the_store_writes_the_local_tables(runs: dict) -> None:
    store, local = runs["tables"]["store"], runs["tables"]["local"]
    assert set(store) == set(local) and len(store["segment_stats"]) > 50
    different = {name: first_difference("\n".join(rows), "\n".join(local[name]))
                 for name, rows in store.items() if rows != local[name]}
    assert not different


def test_stats_on_spark_over_the_store_prints_what_it_prints_locally(runs: dict) -> None:
    run = runs["nightly"]["commands"]["stats"]
    assert run["codes"] == [0, 0], run["stderr"]
    assert run["difference"] is None and run["lines"] > 50


def test_the_nightly_run_pays_few_requests(runs: dict) -> None:
    """What the store served the nightly job: no file asked for its size, each index file fetched once per view
    that reads it, each `.log` in ranges of 8 MiB (or to its end), nothing written (the warehouse is local here)."""
    made = runs["nightly"]["nightly_requests"]
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


def test_no_secret_in_any_output_and_nothing_written(runs: dict) -> None:
    everything = "\n".join(runs["nightly"]["outputs"])
    assert SECRET not in everything and len(everything) > 100_000
    assert set(runs["all_requests"]) <= {"LIST", "HEAD", "GET"}
