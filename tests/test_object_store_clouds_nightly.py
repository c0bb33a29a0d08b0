"""`kafkalog nightly` over log dirs in Google Cloud Storage (fake-gcs-server on loopback, behind the counting proxy),
on Spark, against the nightly job over the local copies: every table row for row and the requests the run made of
the store; then a command of each kind of reading over GCS and Azure (Azurite, behind its proxy) and over the local
copies, on the same session, and the Azure key in no output. The dirs are given by a TOML configuration (by
``--log-dir`` over S3); the tables go to a local warehouse (the warehouse in a store is tested over S3A in
tests/test_object_store_spark.py). One cloud runs the job (:data:`NIGHTLY_CLOUDS`): every view over each cloud is
tested in tests/test_object_store_clouds.py.

The client runs in its own process (tests/helpers/object_store_client.py ``clouds``) with the emulators' variables
set before its session starts, as a user's job gets them: the executors' Python workers inherit them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers.cloud_emulators import (
    AZURITE_ACCOUNT,
    AZURITE_KEY,
    NO_METADATA_SERVER,
    azurite,
    gcs_emulator,
    request_kind,
)
from tests.helpers.corpus import ROOT
from tests.helpers.object_store import CORPORA, counting_proxy
from tests.helpers.object_store_client import CLOUD_COMMANDS, NIGHTLY_CLOUDS
from tests.helpers.report_page import Page

pytestmark = pytest.mark.stores  # minutes: make test-stores

BUCKET = "fleet"
NIGHTLY_CORPORA = ("broker", "internal-3.9")  # as tests/test_object_store_spark.py's nightly job reads them
BASES = {"gcs": f"gs://{BUCKET}", "azure": f"abfss://{BUCKET}@{AZURITE_ACCOUNT}.dfs.core.windows.net"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Both emulators with the nightly corpora uploaded, the client's runs over them, and each proxy's requests."""
    work = tmp_path_factory.mktemp("clouds-nightly")
    corpora: dict[str, dict[str, str]] = {}
    logs = {cloud: work / f"{cloud}-requests.jsonl" for cloud in BASES}
    env = dict(NO_METADATA_SERVER)
    with ExitStack() as stack:
        for cloud, base in BASES.items():
            (work / cloud).mkdir()
            emulator = stack.enter_context(gcs_emulator(work / cloud) if cloud == "gcs" else azurite(work / cloud))
            corpora[cloud] = {}
            for name in NIGHTLY_CORPORA:
                local = work / cloud / name
                shutil.copytree(ROOT / "data" / CORPORA[name], local)
                emulator.upload(local, BUCKET, f"{name}/data")
                corpora[cloud][f"{base}/{name}/data"] = str(local)
            if cloud == "gcs":
                endpoint = stack.enter_context(counting_proxy(emulator.endpoint, logs[cloud]))
                env |= replace(emulator, endpoint=endpoint).env()
            else:
                endpoint = stack.enter_context(counting_proxy(emulator.blob_endpoint.rpartition("/")[0], logs[cloud]))
                env |= replace(emulator, blob_endpoint=f"{endpoint}/{AZURITE_ACCOUNT}").env()
        done = subprocess.run([sys.executable, "-m", "tests.helpers.object_store_client", "clouds", str(work / "out"),
                               json.dumps(corpora), json.dumps({c: str(p) for c, p in logs.items()})], cwd=ROOT,
                              capture_output=True, text=True, env=os.environ | env, timeout=1800)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["outputs"].append(done.stderr)
    print(f"clouds: seconds {result['seconds']}")
    result["corpora"] = corpora
    # the nightly job's requests (the commands' come after the marks)
    result["requests"] = {cloud: [json.loads(line) for line in log.read_text().splitlines()[:result["marks"][cloud]]]
                          for cloud, log in logs.items()}
    return result


@pytest.mark.parametrize("cloud", NIGHTLY_CLOUDS)
def test_the_nightly_job_over_the_store_writes_the_local_tables(runs: dict, cloud: str) -> None:
    run = runs["clouds"][cloud]
    assert run["code"] == 0, run["stderr"]
    store, local = run["tables"]["store"], run["tables"]["local"]
    assert set(store) == set(local) and len(store["segment_stats"]) > 50
    for table in local:
        assert store[table] == local[table], table
    # the report names the log dirs as given, in the store
    page = Page(run["report"])
    assert int(page.cards["segments"]) > 50 and all(uri in run["report"] for uri in runs["corpora"][cloud])


@pytest.mark.parametrize("cloud", NIGHTLY_CLOUDS)
def test_the_nightly_run_pays_few_requests(runs: dict, cloud: str) -> None:
    """As over S3: nothing written, no file looked up (its size came from the listing), the log dirs listed a few
    times for the whole job (one recursive listing a view, 1,000 keys a request), each non-empty index file of a
    live partition fetched once in the job, each `.log` in ranges of 8 MiB or to its end."""
    made = runs["requests"][cloud]
    assert {r["method"] for r in made} <= {"GET", "HEAD"} and made
    sizes = {f"{name}/data/{p.relative_to(Path(local)).as_posix()}": p.stat().st_size
             for uri, local in runs["corpora"][cloud].items() for name in [uri.rsplit("/", 2)[1]]
             for p in Path(local).rglob("*") if p.is_file()}
    by_kind: dict[str, list[tuple[str, dict]]] = {}
    for r in made:
        kind, key = request_kind(cloud, r, BUCKET)
        by_kind.setdefault(kind, []).append((key, r))
    counts = {kind: len(v) for kind, v in by_kind.items()}
    print(f"nightly over {cloud}: {counts} for {len(sizes)} keys, {sum(sizes.values())} bytes")
    assert {key for key, _ in by_kind.get("META", [])} <= {f"{name}/data" for name in NIGHTLY_CORPORA}
    assert not by_kind.get("BUCKET")
    fetched: dict[str, int] = {}
    for key, r in by_kind.get("GET", []):
        assert key in sizes and r["range"], r
        fetched[key] = fetched.get(key, 0) + 1
        if key.endswith(".log"):  # a chunk at a time, never a batch at a time
            first, last = map(int, r["range"].removeprefix("bytes=").split("-"))
            assert last - first + 1 >= min(8 << 20, sizes[key] - first), r
    small = {key for key, size in sizes.items() if key.endswith((".index", ".timeindex", ".txnindex")) and size
             and not key.rsplit("/", 2)[1].endswith("-delete")}
    assert small and {key: fetched.get(key) for key in small} == dict.fromkeys(small, 1)
    # every view lists the dirs once: a few dozen listings for the job, not one per file or per task
    assert counts.get("LIST", 0) < len(sizes) / 4, counts


@pytest.mark.parametrize("cloud", BASES)
@pytest.mark.parametrize("command", CLOUD_COMMANDS)
def test_the_commands_over_the_store_print_what_they_print_locally(runs: dict, cloud: str, command: str) -> None:
    run = runs["clouds"][cloud]["commands"][command]
    assert run["codes"][0] == run["codes"][1] and run["codes"][0] in (0, 1), run["stderr"]
    assert run["difference"] is None and run["lines"] > 0


def test_no_secret_in_any_output(runs: dict) -> None:
    everything = "\n".join(runs["outputs"])
    assert AZURITE_KEY not in everything and len(everything) > 100_000
