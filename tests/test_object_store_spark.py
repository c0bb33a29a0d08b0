"""The commands and the nightly job over log dirs in an S3-compatible store (moto's server on loopback, behind the
counting proxy), on Spark, against the same commands and job over the local copies: every corpus at once, every
command's output, every nightly table row for row, the requests the nightly run made, and no secret anywhere.

The client runs in its own process (tests/helpers/object_store_client.py) with the AWS variables set before its
Spark session starts, as a user's job gets them: the executors' Python workers inherit them from the JVM.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.corpus import ROOT
from tests.helpers.object_store import SECRET, kinds, s3_server
from tests.test_object_store import BUCKET, CORPORA

pytestmark = pytest.mark.stores  # minutes: make test-stores

# The nightly job reads these together: the sample broker's log dir and every other corpus of a 3.9 broker.
NIGHTLY_CORPORA = ("broker", "legacy", "live-copy", "internal-3.9", "tiered-3.9")


@pytest.fixture(scope="module")
def client_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("s3-spark")
    with s3_server(work) as s3:
        corpora = {}
        for name in NIGHTLY_CORPORA:
            local = work / name
            shutil.copytree(ROOT / "data" / CORPORA[name], local)
            s3.upload(local, BUCKET, f"{name}/data")
            corpora[f"s3://{BUCKET}/{name}/data"] = str(local)
        done = subprocess.run([sys.executable, "-m", "tests.helpers.object_store_client", str(work / "out"),
                               json.dumps(corpora), str(s3.log)], cwd=ROOT, capture_output=True, text=True,
                              env=os.environ | s3.env(), timeout=1800)
        written = kinds(s3.requests())
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["stderr"] = done.stderr
    result["all_requests"] = written
    result["local"] = corpora
    return result


def test_the_nightly_job_over_the_store_writes_the_local_tables(client_run: dict) -> None:
    assert client_run["nightly_codes"] == {"store": 0, "local": 0}, client_run["nightly_stderr"]
    different = {name: t["difference"] for name, t in client_run["tables"].items() if not t["same"]}
    assert not different
    assert client_run["tables"]["segment_stats"]["rows"] > 50


@pytest.mark.parametrize("command", ["stats", "validate", "retention-plan", "compaction-preview",
                                     "consumer-positions", "open-transactions", "catalog-checks", "dump"])
def test_every_command_over_the_store_prints_what_it_prints_locally(client_run: dict, command: str) -> None:
    run = client_run["commands"][command]
    assert run["codes"][0] == run["codes"][1] and run["codes"][0] in (0, 1), run["stderr"]
    assert run["difference"] is None
    assert run["lines"] > 0


def test_the_nightly_run_pays_few_requests(client_run: dict) -> None:
    """What the store served the nightly job: no file asked for its size, each file fetched once per view that
    reads it, each `.log` in 8 MiB ranges, nothing written (the warehouse is local here)."""
    made = client_run["nightly_requests"]
    count = kinds(made)
    assert set(count) <= {"LIST", "HEAD", "GET"} and count["GET"] > 0
    heads = {r["path"] for r in made if r["method"] == "HEAD"}
    assert heads <= {f"/{BUCKET}/{name}/data" for name in NIGHTLY_CORPORA}  # log dirs, never a file
    sizes = {f"/{BUCKET}/{name}/data/{p.relative_to(Path(local)).as_posix()}": p.stat().st_size
             for uri, local in client_run["local"].items() for name in [uri.split("/")[3]]
             for p in Path(local).rglob("*") if p.is_file()}
    fetched: dict[str, int] = {}
    for r in made:
        if r["method"] == "GET" and r["path"] in sizes:
            fetched[r["path"]] = fetched.get(r["path"], 0) + 1
    for path, n in fetched.items():
        if path.endswith((".index", ".timeindex", ".txnindex")):
            assert n == 1, (path, n)  # each index file once per job
        elif path.endswith(".log"):
            assert n <= 3 * math.ceil(sizes[path] / (8 << 20)), (path, n)  # the views that decode it, 8 MiB each
    keys = len(sizes)
    print(f"nightly over the store: {dict(count)} for {keys} keys, {sum(sizes.values())} bytes")


def test_no_secret_in_any_output_and_nothing_written(client_run: dict) -> None:
    everything = "\n".join(client_run["outputs"]) + client_run["stderr"]
    assert SECRET not in everything
    assert set(client_run["all_requests"]) <= {"LIST", "HEAD", "GET"}
