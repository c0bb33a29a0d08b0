"""A real S3-compatible server on loopback for the tests: moto's standalone server (its own process), behind the
counting proxy of :mod:`tests.helpers.s3_proxy`, with corpora uploaded as ``aws s3 sync`` writes them."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.harness.processes import free_port, wait_answering

ROOT = Path(__file__).resolve().parents[2]
# Credentials that exist only here: every output of a test is searched for the secret.
ACCESS_KEY = "AKIAKAFKALOGTEST0001"
SECRET = "kafkalogTestSecret+Do-Not-Print/7f3e"
REGION = "eu-west-3"

# Every corpus the brokers wrote: Kafka 3.9 and 4.x log dirs, the legacy formats, a copy taken while the broker
# ran, and the internal topics' and tiered topics' dirs.
CORPORA = {
    "broker": "samples/broker", "legacy": "samples/legacy", "live-copy": "samples/live-copy",
    "kafka4-broker": "samples-kafka4/broker", "kafka4-live-copy": "samples-kafka4/live-copy",
    "internal-3.9": "samples-internal/3.9.2/broker", "internal-4.4": "samples-internal/4.4.0/broker",
    "tiered-3.9": "samples-internal/3.9.2/tiered",
}


@dataclass
class S3Server:
    endpoint: str  # the proxy's: what the code under test is given
    server_endpoint: str  # moto's own: uploads and checks that are not counted
    log: Path

    def env(self) -> dict[str, str]:
        """The standard AWS variables a user of an S3-compatible server sets, and nothing else of ours."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_REGION": REGION}

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.server_endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET, region_name=REGION)

    def mark(self) -> int:
        return len(self.requests())

    def requests(self, since: int = 0) -> list[dict]:
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [json.loads(line) for line in lines[since:]]

    def set_fault(self, fault: dict | None) -> None:
        req = urllib.request.Request(f"{self.endpoint}/__proxy/faults", data=json.dumps(fault or {}).encode()
                                     if fault else b"", method="POST")
        urllib.request.urlopen(req, timeout=10).close()

    def upload(self, local: Path, bucket: str, prefix: str) -> None:
        """``local``'s files under ``s3://bucket/prefix/``, keys as ``aws s3 sync`` writes them (no directory
        markers); then each local file's mtime is set to its object's LastModified, so that a read of the local
        copy and of the bucket see the same times."""
        s3 = self.client()
        try:
            s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
        except s3.exceptions.BucketAlreadyOwnedByYou:
            pass
        files = sorted(p for p in local.rglob("*") if p.is_file())
        with ThreadPoolExecutor(8) as pool:  # one PUT each: the corpora's files are small
            list(pool.map(lambda p: s3.put_object(Bucket=bucket, Key=f"{prefix}/{p.relative_to(local).as_posix()}",
                                                  Body=p.read_bytes()), files))
        modified = {}
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{prefix}/"):
            modified.update({o["Key"]: o["LastModified"] for o in page.get("Contents", [])})
        for p in files:
            when: dt.datetime = modified[f"{prefix}/{p.relative_to(local).as_posix()}"]
            os.utime(p, ns=(int(when.timestamp() * 1e9),) * 2)


def kinds(requests: list[dict]) -> Counter:
    """Requests by what they cost: LIST, HEAD, GET (of an object), and every write (PUT, POST, DELETE)."""
    out: Counter = Counter()
    for r in requests:
        if r["method"] == "GET":
            out["LIST" if "list-type" in r["query"] or r["path"].count("/") <= 1 else "GET"] += 1
        else:
            out[r["method"]] += 1
    return out


@contextmanager
def s3_server(tmp: Path, delay_ms: float = 0):
    """moto's server and the proxy in front of it, stopped on exit."""
    port = free_port()
    moto = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = tmp / "s3-requests.jsonl"
    try:
        with counting_proxy(f"http://127.0.0.1:{port}", log, delay_ms) as endpoint:
            wait_answering(f"http://127.0.0.1:{port}/moto-api/", moto)
            yield S3Server(endpoint, f"http://127.0.0.1:{port}", log)
    finally:
        moto.terminate()
        moto.wait(timeout=30)


@contextmanager
def counting_proxy(upstream: str, log: Path, delay_ms: float = 0):
    """The proxy of :mod:`tests.helpers.s3_proxy` in front of ``upstream`` (any store's HTTP API), each request
    logged to ``log``; yields its endpoint, stopped on exit."""
    proxy = subprocess.Popen([sys.executable, "-m", "tests.helpers.s3_proxy", "--upstream", upstream,
                              "--log", str(log), "--delay-ms", str(delay_ms)], stdout=subprocess.PIPE, cwd=ROOT)
    try:
        yield f"http://127.0.0.1:{int(proxy.stdout.readline())}"
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)


@contextmanager
def store_environment(env: dict[str, str]):
    """``env`` set in this process for the block (a store's variables, as a user's shell sets them), then the
    variables as they were and the readers' store options back to none."""
    from kafkalog_spark.log import object_stores

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        object_stores.configure(object_stores.StoreOptions())
