"""Log dirs in an S3-compatible store: a real server on loopback (moto's standalone server, behind a proxy that
counts, slows and fails requests), every corpus uploaded as ``aws s3 sync`` writes it, only the standard AWS
variables set. Every view of the source (planning, then its tasks, as the Spark source runs them), read_committed,
pushdown, ``read_log`` and the command line's checks over ``s3://`` give what they give over the local copy; the
requests are counted; throttling, refusals, a missing bucket, wrong credentials and a connection cut mid-file end
as retries, finding rows or one-line errors; nothing is written to the store; the secret is never printed.

The commands and the nightly job over the store, on Spark: tests/test_object_store_spark.py.
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

from kafkalog_spark.log import object_stores
from kafkalog_spark.source.datasource import KafkaLogDataSource
from tests.helpers.corpus import ROOT
from tests.helpers.object_store import CORPORA, SECRET, S3Server, kinds, s3_server, store_environment

VIEWS = ("records", "batches", "record_stats", "segments", "index", "partition_files")
STATE_VIEWS = ("consumer_offsets", "group_metadata", "transactions", "cluster_metadata", "topic_catalog")
BUCKET = "fleet"
CHUNK = 8 * 1024 * 1024


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    """The server, every corpus under ``s3://fleet/<name>/data`` and a local copy of each (whose file times are
    the objects' upload times, as a store knows no other), and the AWS variables set for this module only."""
    tmp = tmp_path_factory.mktemp("s3")
    with s3_server(tmp) as s3:
        local = {}
        for name, rel in CORPORA.items():
            local[name] = tmp / name
            shutil.copytree(ROOT / "data" / rel, local[name])
            s3.upload(local[name], BUCKET, f"{name}/data")
        with store_environment(s3.env()):
            yield s3, local


def uri(name: str) -> str:
    return f"s3://{BUCKET}/{name}/data"


def view_rows(path: str, view: str, filters: tuple = (), **options: str) -> list[dict]:
    """The rows of ``view`` as the Spark source makes them (planning, then every task, after ``filters`` were
    offered to it), without Spark; paths in them as they are."""
    source = KafkaLogDataSource({"path": path, "view": view, "includeInternal": "true", **options})
    reader = source.reader(source.schema())
    left = list(reader.pushFilters(list(filters)))
    assert len(left) < len(filters) or not filters  # the source took at least one of them
    return [row for part in reader.partitions() for batch in reader.read(part) for row in batch.to_pylist()]


def same_rows(over_store: list[dict], local: list[dict], store_path: str, local_path: Path) -> None:
    """The rows read from the store are the local copy's, the store's URI where the local path was."""
    text = json.dumps(local, sort_keys=True, default=str).replace(str(local_path), store_path)
    assert json.dumps(over_store, sort_keys=True, default=str) == text


@pytest.mark.parametrize("corpus", CORPORA)
def test_every_view_reads_the_same_rows_from_the_store(store, corpus: str) -> None:
    s3, local = store
    for view in VIEWS + STATE_VIEWS:
        rows = view_rows(uri(corpus), view)
        same_rows(rows, view_rows(str(local[corpus]), view), uri(corpus), local[corpus])
        if view == "records" and corpus == "broker":
            assert len(rows) > 1000
    assert kinds(s3.requests()).keys() <= {"LIST", "HEAD", "GET"}  # nothing written, ever


def test_read_committed_and_pushdown_over_the_store(store) -> None:
    from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual

    s3, local = store
    committed = {"topics": "txn-mixed", "isolation": "read_committed"}
    rows = view_rows(uri("broker"), "records", **committed)
    same_rows(rows, view_rows(str(local["broker"]), "records", **committed), uri("broker"), local["broker"])
    assert 0 < len(rows) < len(view_rows(uri("broker"), "records", topics="txn-mixed"))
    pushed = (EqualTo(("topic",), "tutorial-segments"), GreaterThanOrEqual(("offset",), 96))
    m = s3.mark()
    rows = view_rows(uri("broker"), "records", pushed)
    logs = {r["path"] for r in s3.requests(m) if r["method"] == "GET" and r["path"].endswith(".log")}
    assert sorted(r["offset"] for r in rows if r["topic"] == "tutorial-segments") == [96, 97, 98, 99]
    # pruned by the pushed filters: only the last segment of tutorial-segments was fetched
    assert logs == {f"/{BUCKET}/broker/data/tutorial-segments-0/00000000000000000096.log"}


def test_read_log_and_globs_over_the_store(store) -> None:
    from kafkalog_spark import read_log

    _, local = store
    for view in ("records", "batches"):
        table = read_log(f"s3://{BUCKET}/b*/data/tutorial-segments-*", view)  # "broker" alone matches
        same_rows(table.to_pylist(), read_log(str(local["broker"] / "tutorial-segments-*"), view).to_pylist(),
                  uri("broker"), local["broker"])
        assert table.num_rows == (100 if view == "records" else 100)  # README: one record per batch


def test_a_tiered_partitions_remote_store_in_the_store(store, tmp_path: Path) -> None:
    """The log dir and a LocalTieredStorage remote store both in the bucket (remoteStorage an s3:// prefix): the
    views read the remote tier as they do from the local copies."""
    s3, _ = store
    local = tmp_path / "middle"
    shutil.copytree(ROOT / "data" / "samples-internal" / "4.4.0" / "tiered-restart" / "middle", local)
    s3.upload(local, BUCKET, "tiered")
    for view in ("records", "segments", "index"):
        rows = view_rows(f"s3://{BUCKET}/tiered/broker", view, remoteStorage=f"s3://{BUCKET}/tiered/remote-store",
                         topics="restart")
        same_rows(rows, view_rows(str(local / "broker"), view, remoteStorage=str(local / "remote-store"),
                                  topics="restart"), f"s3://{BUCKET}/tiered", local)
        assert {r["tier"] for r in rows if r["problem"] is None} == {"local", "remote"}
    assert kinds(s3.requests()).keys() <= {"LIST", "HEAD", "GET"}


def test_requests_are_what_a_store_charges_for(store) -> None:
    """One listing of the log dir (1,000 keys a request), no HEAD for a file whose size the listing gave, each
    `.log` in ranged GETs of 8 MiB (never one per batch), each index file fetched once, nothing written."""
    s3, local = store
    keys = sum(1 for p in local["broker"].rglob("*") if p.is_file())
    sizes = {f"/{BUCKET}/broker/data/{p.relative_to(local['broker']).as_posix()}": p.stat().st_size
             for p in local["broker"].rglob("*") if p.is_file()}
    for view in ("record_stats", "segments"):
        m = s3.mark()
        view_rows(uri("broker"), view)
        made = s3.requests(m)
        count = kinds(made)
        assert set(count) <= {"LIST", "HEAD", "GET"}
        assert count["LIST"] <= 2 + math.ceil(keys / 1000)  # the dir's existence, then one recursive listing
        assert [r["path"] for r in made if r["method"] == "HEAD"] == [f"/{BUCKET}/broker/data"]  # the dir, not files
        gets = [r for r in made if r["method"] == "GET" and r["path"] in sizes]
        fetched = {}
        for r in gets:
            fetched[r["path"]] = fetched.get(r["path"], 0) + 1
            assert r["range"], r  # ranged GETs only
        for path, n in fetched.items():  # one GET per 8 MiB of each file, each file once
            assert n <= math.ceil(sizes[path] / CHUNK), (path, n)
        if view == "segments":  # the index files, each once; empty ones never
            indexes = {p for p, size in sizes.items() if p.endswith((".index", ".timeindex")) and size}
            assert indexes <= set(fetched)


def test_a_jobs_file_cache_fetches_each_small_file_once(store) -> None:
    """Within :func:`~kafkalog_spark.log.object_stores.file_cache` (the nightly job on a local session), the views
    that read the same small files whole (the segments and index views the `.index` and `.timeindex` files, the
    decoding views' planning and the partition_files view each `.txnindex`) fetch each one once, with the same
    rows; the cache's directory is gone afterwards. Without it, each view fetches them again."""
    s3, local = store
    small = (".index", ".timeindex", ".txnindex")
    sizes = {f"/{BUCKET}/broker/data/{p.relative_to(local['broker']).as_posix()}": p.stat().st_size
             for p in local["broker"].rglob("*") if p.is_file() and p.suffix in small}
    views = ("segments", "index", "partition_files", "batches", "record_stats")

    def fetches(cached: bool) -> tuple[dict[str, int], dict[str, list[dict]], str | None]:
        m = s3.mark()
        with object_stores.file_cache(cached):
            directory = object_stores.configured().file_cache
            rows = {view: view_rows(uri("broker"), view, **object_stores.configured().to_options())
                    for view in views}
        gets: dict[str, int] = {}
        for r in s3.requests(m):
            if r["method"] == "GET" and r["path"] in sizes:
                gets[r["path"]] = gets.get(r["path"], 0) + 1
        return gets, rows, directory

    once, rows, directory = fetches(True)
    again, rows_uncached, _ = fetches(False)
    assert rows == rows_uncached and directory and not Path(directory).exists()
    assert object_stores.configured().file_cache is None
    assert set(once) == {p for p, size in sizes.items() if size} and set(once.values()) == {1}, once
    assert max(again.values()) > 1  # what the cache saves: each index file is read by two views at least


def test_throttling_is_retried_and_a_cut_connection_resumes(store) -> None:
    s3, local = store
    expected = view_rows(str(local["broker"]), "batches", topics="codec-zstd")
    for fault in ({"status": 503, "count": 3, "match": "codec-zstd-0/00000000000000000080.log"},
                  {"reset_after": 1000, "count": 1, "match": "codec-zstd-0/00000000000000000200.log"}):
        m = s3.mark()
        s3.set_fault(fault)
        try:
            rows = view_rows(uri("broker"), "batches", topics="codec-zstd")
        finally:
            s3.set_fault(None)
        same_rows(rows, expected, uri("broker"), local["broker"])
        assert not any(r["problem"] for r in rows)
        statuses = [r["status"] for r in s3.requests(m) if fault["match"] in r["path"]]
        assert statuses == ([503, 503, 503, 206] if "status" in fault else [-1, 206])  # each fault met, then read


def test_a_refused_file_is_a_finding_naming_it(store) -> None:
    """403 on every GET of one segment, through the SDK's retries: a problem row naming the file, the other
    segments read."""
    s3, local = store
    target = "codec-zstd-0/00000000000000000080.log"
    s3.set_fault({"status": 403, "count": 1000, "match": target})
    try:
        rows = view_rows(uri("broker"), "batches", topics="codec-zstd")
    finally:
        s3.set_fault(None)
    problems = [r["problem"] for r in rows if r["problem"]]
    assert [(p["kind"], p["file"]) for p in problems] == [("unreadable_file", f"{uri('broker')}/{target}")]
    assert "PermissionError" in problems[0]["detail"] and SECRET not in json.dumps(rows, default=str)
    local_rows = view_rows(str(local["broker"]), "batches", topics="codec-zstd")
    assert len([r for r in rows if not r["problem"]]) == len(local_rows) - 6  # README: 6 batches in that segment


def kafkalog(s3: S3Server, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkalog_spark.cli", *args], capture_output=True, text=True,
                          env=os.environ | s3.env() | env, cwd=ROOT, timeout=300)


@pytest.mark.parametrize(("args", "env", "expected"), [
    (["stats", "s3://no-such-bucket/data"], {}, "LOGDIR s3://no-such-bucket/data: no such bucket, file or directory"),
    (["validate", f"s3://{BUCKET}/broker/no-such-dir"], {},
     f"LOGDIR s3://{BUCKET}/broker/no-such-dir: no such bucket, file or directory"),
    (["retention-plan", f"s3://{BUCKET}/broker/data/meta.properties"], {},
     f"LOGDIR s3://{BUCKET}/broker/data/meta.properties: not a directory"),
    (["stats", "gs://bucket/data"], {"PYTHONPATH": "<gcsfs missing>"}, "reading gcs URIs needs the gcsfs package"),
    # no credentials anywhere: none in the environment, no config files, no instance metadata service
    (["stats", f"s3://{BUCKET}/broker/data"], {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
                                               "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_CONFIG_FILE":
                                               "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true"},
     f"LOGDIR s3://{BUCKET}/broker/data: access denied (NoCredentialsError: Unable to locate credentials)"),
])
def test_a_store_path_that_cannot_be_read_is_one_line_and_exit_2(store, args, env, expected, tmp_path: Path) -> None:
    s3, _ = store
    if env.get("PYTHONPATH") == "<gcsfs missing>":  # the tests install gcsfs: a user may not have it
        (tmp_path / "gcsfs").mkdir()
        (tmp_path / "gcsfs" / "__init__.py").write_text("raise ImportError('No module named gcsfs')\n")
        env = {"PYTHONPATH": str(tmp_path)}
    done = kafkalog(s3, *args, **env)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_wrong_credentials_are_one_line_without_the_secret(store, tmp_path: Path) -> None:
    """Every request refused as S3 refuses a bad signature (403, from the proxy: moto accepts any key unless its
    IAM is set up): the command ends before Spark starts, in one line, and never prints the secret."""
    s3, _ = store
    s3.set_fault({"status": 403, "count": 1000, "match": f"/{BUCKET}"})
    try:
        done = kafkalog(s3, "stats", uri("broker"))
    finally:
        s3.set_fault(None)
    assert done.returncode == 2
    assert f"LOGDIR {uri('broker')}: access denied" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert SECRET not in done.stdout + done.stderr


def test_endpoint_region_and_anonymous_access_as_options(store, monkeypatch: pytest.MonkeyPatch) -> None:
    """No AWS variable at all: the endpoint, the region and anonymous access given as the source's options (the
    CLI's --store-* options become these) read the bucket, which moto serves to anyone."""
    s3, local = store
    public = "public-corpus"  # a bucket anyone may list and read, as a public dataset's
    admin = s3.client()
    admin.create_bucket(Bucket=public, CreateBucketConfiguration={"LocationConstraint": "eu-west-3"}, ACL="public-read")
    for p in sorted(local["legacy"].rglob("*")):
        if p.is_file():
            admin.put_object(Bucket=public, Key=f"legacy/data/{p.relative_to(local['legacy']).as_posix()}",
                             Body=p.read_bytes(), ACL="public-read")
    for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    options = object_stores.StoreOptions(s3.endpoint, "eu-west-3", anonymous=True).to_options()
    assert options == {"storeEndpoint": s3.endpoint, "storeRegion": "eu-west-3", "storeAnonymous": "true"}
    m = s3.mark()
    rows = view_rows(f"s3://{public}/legacy/data", "batches", **options)
    same_rows(rows, view_rows(str(local["legacy"]), "batches"), f"s3://{public}/legacy/data", local["legacy"])
    assert len(rows) > 0 and kinds(s3.requests(m))["GET"] > 0  # read through the endpoint the options named
    done = kafkalog(s3, "--store-endpoint", "http://127.0.0.1:9", "stats", uri("legacy"),
                    AWS_ENDPOINT_URL="", AWS_EC2_METADATA_DISABLED="true")
    assert done.returncode == 2 and "LOGDIR s3://fleet/legacy/data: cannot read it" in done.stderr, done.stderr
