"""Log dirs in Google Cloud Storage and Azure, each read from a real emulator on loopback
(:mod:`tests.helpers.cloud_emulators`: fake-gcs-server, Azurite), the clients pointed at it as each platform
documents: ``STORAGE_EMULATOR_HOST`` for ``gs://`` (anonymous there, as Google's own client library is), the
development account's ``AZURE_STORAGE_CONNECTION_STRING`` for
``abfss://container@devstoreaccount1.dfs.core.windows.net/...``, or its name and key with ``--store-endpoint``.
As tests/test_object_store.py does for S3: every view of two corpora, ``read_log`` and a glob over the store, and
``kafkalog stats`` give what they give over the local copy; a missing bucket or key is one line and exit 2; the key
is never printed.

Both emulators' times of last modification stand for the files' as the real clouds' do: the local copies' mtimes
are set to them (GCS's ``updated``, which gcsfs lists as the JSON API gives it, RFC 3339 in milliseconds on GCS and
in microseconds here; Azure's ``Last-Modified``, whole seconds on Azure and Azurite alike).
"""

from __future__ import annotations

import base64
import json
import math
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from kafkalog_spark.log import object_stores
from tests.harness.processes import free_port
from tests.helpers.cloud_emulators import (
    AZURITE_ACCOUNT,
    AZURITE_KEY,
    NO_METADATA_SERVER,
    azurite,
    gcs_emulator,
    request_kind,
)
from tests.helpers.corpus import ROOT
from tests.helpers.object_store import CORPORA, counting_proxy, store_environment
from tests.test_object_store import CHUNK, STATE_VIEWS, VIEWS, same_rows, view_rows

BUCKET = "fleet"
NAMES = ("broker", "internal-3.9")  # data/samples/broker and data/samples-internal/3.9.2/broker


class Cloud:
    """One emulator with the corpora uploaded: ``base`` is the store URI that stands where ``local`` (the local
    copies' root, ``local/<name>/data``) stands, so that ``base/<name>/data`` is corpus ``name`` in the store.
    ``emulator`` is reached through the counting proxy (its endpoint is the proxy's); ``requests`` are the ones it
    logged."""

    def __init__(self, kind: str, emulator, base: str, local: Path, secrets: tuple[str, ...], log: Path) -> None:
        self.kind, self.emulator, self.base, self.local, self.secrets = kind, emulator, base, local, secrets
        self.log = log

    def requests(self, since: int = 0) -> list[dict]:
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [json.loads(line) for line in lines[since:]]

    def uri(self, name: str) -> str:
        return f"{self.base}/{name}/data"

    def path(self, name: str) -> Path:
        return self.local / name / "data"

    def env(self) -> dict[str, str]:
        return self.emulator.env() | (NO_METADATA_SERVER if self.kind == "gcs" else {})


@pytest.fixture(scope="module", params=["gcs", "azure"])
def cloud(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The emulator, both corpora uploaded under ``<base>/<name>/data``, their local copies, and the emulator's
    environment set for the tests of this cloud only."""
    kind = request.param
    tmp = tmp_path_factory.mktemp(kind)
    local = tmp / "copies"
    log = tmp / "requests.jsonl"
    with (gcs_emulator(tmp) if kind == "gcs" else azurite(tmp)) as emulator:
        base = (f"gs://{BUCKET}" if kind == "gcs" else
                f"abfss://{BUCKET}@{AZURITE_ACCOUNT}.dfs.core.windows.net")
        for name in NAMES:
            shutil.copytree(ROOT / "data" / CORPORA[name], local / name / "data")
            emulator.upload(local / name / "data", BUCKET, f"{name}/data")
        server = emulator.endpoint if kind == "gcs" else emulator.blob_endpoint.rpartition("/")[0]
        with counting_proxy(server, log) as endpoint:
            counted = (replace(emulator, endpoint=endpoint) if kind == "gcs"
                       else replace(emulator, blob_endpoint=f"{endpoint}/{AZURITE_ACCOUNT}"))
            # no secret for GCS: an emulator is read anonymously, as Google's client libraries read it
            cloud = Cloud(kind, counted, base, local, () if kind == "gcs" else (AZURITE_KEY,), log)
            with store_environment(cloud.env()):
                yield cloud


@pytest.mark.parametrize("name", NAMES)
def test_every_view_reads_the_same_rows_from_the_store(cloud: Cloud, name: str) -> None:
    for view in VIEWS + STATE_VIEWS:
        rows = view_rows(cloud.uri(name), view)
        same_rows(rows, view_rows(str(cloud.path(name)), view), cloud.uri(name), cloud.path(name))
        if view == "records":
            assert len(rows) > (1000 if name == "broker" else 100)


def test_requests_are_what_the_store_charges_for(cloud: Cloud) -> None:
    """As over S3 (tests/test_object_store.py): a view read (planning, then each task, which keeps no listing of
    its own) lists the log dir once (1,000 keys a request), looks up no file the listing gave (gcsfs's and adlfs's
    files look their object up when opened for reading, a listing and a GET, or a HEAD, per `.log` split), reads each
    file in ranged GETs of 8 MiB, and writes nothing."""
    local = cloud.path("broker")
    sizes = {f"broker/data/{p.relative_to(local).as_posix()}": p.stat().st_size for p in local.rglob("*")
             if p.is_file()}
    for view in ("record_stats", "segments"):
        m = len(cloud.requests())
        assert view_rows(cloud.uri("broker"), view)
        made = cloud.requests(m)
        assert {r["method"] for r in made} <= {"GET", "HEAD"}, made  # nothing written
        by_kind: dict[str, list[tuple[str, dict]]] = {}
        for r in made:
            kind, key = request_kind(cloud.kind, r, BUCKET)
            by_kind.setdefault(kind, []).append((key, r))
        assert len(by_kind.get("LIST", [])) <= 2 + math.ceil(len(sizes) / 1000), (view, by_kind.get("LIST"))
        # the log dir's own existence (no object has its name), never a file's
        assert {key for key, _ in by_kind.get("META", [])} <= {"broker/data"}, (view, by_kind.get("META"))
        assert len(by_kind.get("META", [])) <= 2 and not by_kind.get("BUCKET"), (view, by_kind)
        fetched: dict[str, int] = {}
        for key, r in by_kind.get("GET", []):
            assert key in sizes and r["range"], r  # ranged reads of listed files only
            fetched[key] = fetched.get(key, 0) + 1
        for key, n in fetched.items():
            assert n <= math.ceil(sizes[key] / CHUNK), (view, key, n)
        if view == "record_stats":  # every non-empty `.log` decoded
            assert {key for key, size in sizes.items() if key.endswith(".log") and size} <= set(fetched)


def test_read_log_and_globs_over_the_store(cloud: Cloud) -> None:
    from kafkalog_spark import read_log

    for view in ("records", "batches"):
        table = read_log(f"{cloud.base}/b*/data/tutorial-segments-*", view)  # "broker" alone matches
        same_rows(table.to_pylist(), read_log(str(cloud.path("broker") / "tutorial-segments-*"), view).to_pylist(),
                  cloud.uri("broker"), cloud.path("broker"))
        assert table.num_rows == 100  # README: one record per batch
    # every corpus at once: the glob is expanded over the store's listing
    table = read_log(f"{cloud.base}/*/data", "batches")
    same_rows(table.to_pylist(), read_log(str(cloud.local / "*" / "data"), "batches").to_pylist(), cloud.base,
              cloud.local)
    assert table.num_rows == sum(read_log(str(cloud.path(n)), "batches").num_rows for n in NAMES)


def kafkalog(cloud: Cloud, *args: str, **env: str | None) -> subprocess.CompletedProcess:
    """The CLI in its own process with the emulator's environment (and ``env``: None unsets a variable); no output of
    it may hold a secret."""
    full = {k: v for k, v in (os.environ | cloud.env() | env).items() if v is not None}
    done = subprocess.run([sys.executable, "-m", "kafkalog_spark.cli", *args], capture_output=True, text=True,
                          env=full, cwd=ROOT, timeout=300)
    for secret in cloud.secrets:
        assert secret not in done.stdout + done.stderr
    return done


def test_stats_over_the_store_prints_the_local_copys(cloud: Cloud) -> None:
    with ThreadPoolExecutor(2) as pool:  # side by side: each waits on its engine's start more than on a core
        over_store, local = pool.map(lambda dirs: kafkalog(cloud, "stats", "--json", "--engine", "local", *dirs),
                                     [[cloud.uri(n) for n in NAMES], [str(cloud.path(n)) for n in NAMES]])
    assert over_store.returncode == 0, over_store.stderr
    assert local.returncode == 0, local.stderr
    rows = [json.loads(line) for line in over_store.stdout.splitlines()]
    assert rows == [json.loads(line) for line in local.stdout.replace(str(cloud.local), cloud.base).splitlines()]
    assert {r["logDir"] for r in rows} == {cloud.uri(n) for n in NAMES} and sum(r["records"] for r in rows) > 1000


@pytest.mark.parametrize("missing", ["bucket", "key"])
def test_a_missing_bucket_or_key_is_one_line_and_exit_2(cloud: Cloud, missing: str) -> None:
    uri = (cloud.uri("broker").replace(BUCKET, "no-such-bucket", 1) if missing == "bucket"
           else f"{cloud.base}/broker/no-such-dir")
    done = kafkalog(cloud, "stats", uri)
    assert done.returncode == 2, done.stderr
    assert f"LOGDIR {uri}: no such bucket, file or directory" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr


def test_credentials_as_a_user_gives_them(cloud: Cloud, monkeypatch: pytest.MonkeyPatch) -> None:
    """GCS: under STORAGE_EMULATOR_HOST no credential chain runs (google-auth's would ask the GCE metadata server)
    and gcsfs's JSON-API filesystem reads, not its default one since gcsfs 2026.3, which first asks the Storage
    Control API over gRPC (no emulator serves it; it is retried for 60 s); or the emulator is the ``storeEndpoint``
    option, with ``storeAnonymous``. Azure: no connection string, the account (from the URI) and its key from the
    environment, Azurite's endpoint as the ``storeEndpoint`` option and the CLI's ``--store-endpoint``."""
    if cloud.kind == "gcs":
        import gcsfs.core

        fs, _ = object_stores.resolve(cloud.uri("broker"))
        assert type(fs.handler.fs) is gcsfs.core.GCSFileSystem and fs.handler.fs.credentials.token == "anon"
        # no STORAGE_EMULATOR_HOST: the emulator as the source's storeEndpoint, read anonymously
        monkeypatch.delenv("STORAGE_EMULATOR_HOST")
        options = object_stores.StoreOptions(cloud.emulator.endpoint, anonymous=True).to_options()
        rows = view_rows(cloud.uri("internal-3.9"), "batches", **options)
        same_rows(rows, view_rows(str(cloud.path("internal-3.9")), "batches"), cloud.uri("internal-3.9"),
                  cloud.path("internal-3.9"))
        assert rows
        return
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING")
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_KEY", AZURITE_KEY)
    options = object_stores.StoreOptions(cloud.emulator.blob_endpoint).to_options()
    rows = view_rows(cloud.uri("internal-3.9"), "batches", **options)
    same_rows(rows, view_rows(str(cloud.path("internal-3.9")), "batches"), cloud.uri("internal-3.9"),
              cloud.path("internal-3.9"))
    assert rows
    env = {"AZURE_STORAGE_CONNECTION_STRING": None, "AZURE_STORAGE_ACCOUNT_KEY": AZURITE_KEY}
    missing = f"abfss://no-such-container@{AZURITE_ACCOUNT}.dfs.core.windows.net/data"
    done = kafkalog(cloud, "--store-endpoint", cloud.emulator.blob_endpoint, "stats", missing, **env)
    assert done.returncode == 2 and f"LOGDIR {missing}: no such bucket, file or directory" in done.stderr, done.stderr
    # a wrong key: refused by the server (403), one line saying so, the key not in it
    wrong = base64.b64encode(b"not the account's key, 64 bytes long, as Azure's keys are......").decode()
    done = kafkalog(cloud, "--store-endpoint", cloud.emulator.blob_endpoint, "stats", cloud.uri("broker"),
                    **env | {"AZURE_STORAGE_ACCOUNT_KEY": wrong})
    assert done.returncode == 2 and f"LOGDIR {cloud.uri('broker')}: access denied" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and wrong not in done.stderr + done.stdout


def test_a_gcs_listing_over_one_page_is_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """1,001 keys: gcsfs lists 1,000 a request and follows ``nextPageToken`` (fake-gcs-server pages as GCS does),
    and the recursive listing the readers take (:class:`~kafkalog_spark.log.object_stores.ObjectStoreHandler`)
    holds every key with its size."""
    import pyarrow.fs as pafs

    tree = tmp_path / "tree"
    for i in range(1001):
        (tree / f"p-{i % 7}").mkdir(parents=True, exist_ok=True)
        (tree / f"p-{i % 7}" / f"{i:020d}.log").write_bytes(b"x" * (i % 13))
    with gcs_emulator(tmp_path) as gcs:
        gcs.upload(tree, "paged", "data")
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs.endpoint)
        for k, v in NO_METADATA_SERVER.items():
            monkeypatch.setenv(k, v)
        fs, inner = object_stores.resolve("gs://paged/data")
        listed = {i.path: i.size for i in fs.get_file_info(pafs.FileSelector(inner, recursive=True))
                  if i.type == pafs.FileType.File}
    assert listed == {f"paged/data/{p.relative_to(tree).as_posix()}": p.stat().st_size
                      for p in tree.rglob("*.log")}


def test_an_unreachable_gcs_endpoint_is_one_line_after_gcsfs_retries(tmp_path: Path) -> None:
    """No server where ``STORAGE_EMULATOR_HOST`` points: gcsfs retries (six attempts with backoff: about 30 s) and
    logs each request it gives up on with its traceback; the user sees one line naming the URI, exit 2."""
    closed = free_port()  # nothing listens on it
    env = os.environ | NO_METADATA_SERVER | {"STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{closed}"}
    done = subprocess.run([sys.executable, "-m", "kafkalog_spark.cli", "stats", "gs://fleet/broker/data"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("kafkalog stats: error: LOGDIR gs://fleet/broker/data: cannot read it"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
