"""Google Cloud Storage and Azure Blob Storage emulators on loopback for the tests, each its own process: Google's
JSON API by fake-gcs-server (built from its Go module), Azure's Blob service by Azurite (from npm). Both are built
or installed once into the repository's `.cache/` (as the Kafka harness caches its JARs there), under a file lock
and renamed into place whole, so that test processes side by side never use a half-installed one. Each emulator is
a context manager (a free port, waited for until it answers, stopped on exit, its output in a log file) that
uploads a local tree as ``gsutil rsync``/``azcopy`` write it: one object per file, keys its relative path with
``/``, no directory markers; then each local file's mtime is set to its object's time of last modification, so
that a read of the local copy and of the store see the same times.

Why these two: fake-gcs-server is what gcsfs's own tests run against, and serves what gcsfs reads with: the JSON
API's listings paginated (``maxResults``, ``pageToken``), media downloads with ``Range``, object resources with
``size`` and ``updated``. gcp-storage-emulator (PyPI) answers every listing in one page whatever ``maxResults``
says, so a listing over 1,000 keys would not be paged as on GCS. Azurite is Microsoft's own emulator.
"""

from __future__ import annotations

import calendar
import datetime as dt
import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from tests.harness.broker import CACHE_DIR
from tests.harness.processes import free_port, wait_answering

FAKE_GCS_SERVER = "github.com/fsouza/fake-gcs-server"
FAKE_GCS_VERSION = "v1.56.1"
AZURITE_VERSION = "3.37.0"
# Azurite's development account and its key, as Microsoft publishes them (every Azure SDK's "UseDevelopmentStorage"):
# the only account Azurite serves unless told otherwise. Every output of a test is searched for the key.
AZURITE_ACCOUNT = "devstoreaccount1"
# Any request a credential chain would send to the GCE metadata server stays on loopback, on a closed port:
# google-auth asks it when no other credential is found (the tests expect gcsfs never to get there).
NO_METADATA_SERVER = {"GCE_METADATA_HOST": "127.0.0.1:9", "GCE_METADATA_IP": "127.0.0.1:9", "NO_GCE_CHECK": "true"}
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


class EmulatorError(RuntimeError):
    """An emulator that could not be installed or started: the message says what to install or where its log is."""


def _cached(name: str, target: str, build: Callable[[Path], None]) -> Path:
    """``.cache/<name>/<target>``, made once by ``build`` (given an empty staging dir, renamed to ``.cache/<name>``
    when it returns): concurrent callers wait on the lock, and a build that failed half-way leaves nothing."""
    home = CACHE_DIR / name
    if (home / target).exists():
        return home / target
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / target).exists():
            staging = CACHE_DIR / f"{name}.staging"
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
            build(staging)
            if not (staging / target).exists():
                raise EmulatorError(f"building {name} made no {target}")
            shutil.rmtree(home, ignore_errors=True)
            staging.rename(home)
    return home / target


def _run(cmd: list[str], what: str, **kwargs) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise EmulatorError(f"{what} failed ({' '.join(cmd)}):\n{(done.stdout + done.stderr)[-3000:]}")


def _require(tool: str, why: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise EmulatorError(f"{tool} not found on PATH: {why}")
    return found


def fake_gcs_server() -> Path:
    """fake-gcs-server's binary, built with ``go install`` from the Go module proxy on first use (a minute or two)."""
    go = _require("go", f"the GCS tests build {FAKE_GCS_SERVER} with it")

    def build(staging: Path) -> None:
        # GOTOOLCHAIN=local: the Go here builds it, or the build fails; it never fetches another toolchain
        _run([go, "install", f"{FAKE_GCS_SERVER}@{FAKE_GCS_VERSION}"], "go install",
             env=os.environ | {"GOBIN": str(staging), "GOTOOLCHAIN": "local"})

    return _cached(f"fake-gcs-server-{FAKE_GCS_VERSION}", "fake-gcs-server", build)


def azurite_blob() -> Path:
    """Azurite's Blob service launcher (node_modules/.bin/azurite-blob), installed from npm on first use."""
    npm = _require("npm", "the Azure tests install Azurite with it")
    _require("node", "Azurite runs on Node.js")

    def build(staging: Path) -> None:
        _run([npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--ignore-scripts",
              "--loglevel=error", f"azurite@{AZURITE_VERSION}"], "npm install")

    return _cached(f"azurite-{AZURITE_VERSION}", "node_modules/.bin/azurite-blob", build)


@contextmanager
def _process(cmd: list[str], log: Path, url: str) -> Iterator[None]:
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        wait_answering(url, proc, log)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def _utc_ns(when: dt.datetime) -> int:
    """``when`` in nanoseconds since the epoch, exactly (a float would round GCS's microseconds)."""
    return (calendar.timegm(when.utctimetuple()) * 1_000_000 + when.microsecond) * 1000


def _local_files(local: Path) -> dict[str, Path]:
    return {p.relative_to(local).as_posix(): p for p in sorted(local.rglob("*")) if p.is_file()}


def _set_mtimes(files: dict[str, Path], modified: dict[str, dt.datetime]) -> None:
    for rel, p in files.items():
        ns = _utc_ns(modified[rel])
        os.utime(p, ns=(ns, ns))


@dataclass
class GcsEmulator:
    endpoint: str
    log: Path

    def env(self) -> dict[str, str]:
        """What a user of a GCS emulator sets (Google's client libraries read it; gcsfs does), and nothing else."""
        return {"STORAGE_EMULATOR_HOST": self.endpoint}

    def filesystem(self):
        from gcsfs.core import GCSFileSystem

        return GCSFileSystem(endpoint_url=self.endpoint, token="anon", skip_instance_cache=True)

    def upload(self, local: Path, bucket: str, prefix: str) -> None:
        """``local``'s files under ``gs://bucket/prefix/`` (the bucket made if missing), then their mtimes set to
        the objects' ``updated``."""
        fs = self.filesystem()
        if not fs.exists(bucket):
            fs.mkdir(bucket)
        files = _local_files(local)
        fs.pipe({f"{bucket}/{prefix}/{rel}": p.read_bytes() for rel, p in files.items()})
        listed = fs.find(f"{bucket}/{prefix}", detail=True)
        _set_mtimes(files, {name[len(bucket) + len(prefix) + 2:]: dt.datetime.fromisoformat(o["updated"])
                            for name, o in listed.items()})


@contextmanager
def gcs_emulator(tmp: Path) -> Iterator[GcsEmulator]:
    """fake-gcs-server on 127.0.0.1, objects in memory, plain HTTP, stopped on exit."""
    binary = fake_gcs_server()
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = tmp / "fake-gcs-server.log"
    cmd = [str(binary), "-backend", "memory", "-scheme", "http", "-host", "127.0.0.1", "-port", str(port),
           "-external-url", endpoint, "-log-level", "warn"]
    with _process(cmd, log, f"{endpoint}/storage/v1/b"):
        yield GcsEmulator(endpoint, log)


@dataclass
class AzureEmulator:
    blob_endpoint: str  # the account's Blob endpoint: http://127.0.0.1:PORT/devstoreaccount1
    log: Path
    account: str = AZURITE_ACCOUNT
    key: str = AZURITE_KEY

    @property
    def connection_string(self) -> str:
        return (f"DefaultEndpointsProtocol=http;AccountName={self.account};AccountKey={self.key};"
                f"BlobEndpoint={self.blob_endpoint};")

    def env(self) -> dict[str, str]:
        """What a user of Azurite sets, as Microsoft documents it: the account's connection string."""
        return {"AZURE_STORAGE_CONNECTION_STRING": self.connection_string}

    def upload(self, local: Path, container: str, prefix: str) -> None:
        """``local``'s files under ``container/prefix/`` (the container made if missing), one block blob each, then
        their mtimes set to the blobs' Last-Modified."""
        from azure.core.exceptions import ResourceExistsError
        from azure.storage.blob import BlobServiceClient

        service = BlobServiceClient.from_connection_string(self.connection_string)
        try:
            service.create_container(container)
        except ResourceExistsError:
            pass
        client = service.get_container_client(container)
        files = _local_files(local)
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda item: client.upload_blob(f"{prefix}/{item[0]}", item[1].read_bytes()),
                          files.items()))
        _set_mtimes(files, {b.name[len(prefix) + 1:]: b.last_modified
                            for b in client.list_blobs(name_starts_with=f"{prefix}/")})


@contextmanager
def azurite(tmp: Path) -> Iterator[AzureEmulator]:
    """Azurite's Blob service alone on 127.0.0.1 (its workspace under ``tmp``, no telemetry), stopped on exit."""
    launcher = azurite_blob()
    port = free_port()
    workspace = tmp / "azurite"
    workspace.mkdir()
    log = tmp / "azurite.log"
    cmd = [str(launcher), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(workspace),
           "--skipApiVersionCheck", "--loose", "--silent", "--disableTelemetry"]
    blob_endpoint = f"http://127.0.0.1:{port}/{AZURITE_ACCOUNT}"
    with _process(cmd, log, f"{blob_endpoint}?comp=list"):
        yield AzureEmulator(blob_endpoint, log)


def request_kind(cloud: str, request: dict, bucket: str) -> tuple[str, str]:
    """(LIST, META, GET or BUCKET, the object's key) of a request to an emulator of ``cloud`` ("gcs" or "azure") as
    the counting proxy logged it (tests/helpers/s3_proxy.py): a listing, a lookup of one object's metadata or
    properties, a read of its bytes, a question about the bucket (container)."""
    path, query = request["path"], request["query"]
    if cloud == "gcs":  # the JSON API: /storage/v1/b/BUCKET[/o[/KEY]], reads under /download/... ?alt=media
        key = path.partition(f"/b/{bucket}/o/")[2]
        kind = ("GET" if "alt=media" in query else "META" if key else
                "LIST" if path.endswith(f"/b/{bucket}/o") else "BUCKET")
        return kind, unquote(key)
    key = path.removeprefix(f"/{AZURITE_ACCOUNT}/{bucket}").lstrip("/")  # Blob API: /ACCOUNT/CONTAINER/KEY
    kind = ("LIST" if "comp=list" in query else "BUCKET" if "restype=container" in query else
            "GET" if request["method"] == "GET" else "META")
    return kind, key
