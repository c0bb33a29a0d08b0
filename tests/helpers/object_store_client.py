"""The commands and the nightly job over an S3-compatible store and over the local copies, in one process
(tests/test_object_store_spark.py runs it with the AWS variables set, tests/test_object_store_clouds_nightly.py with
the GCS and Azure emulators'):

    python -m tests.helpers.object_store_client nightly|commands|clouds WORK CORPORA_JSON REQUESTS_LOG

CORPORA_JSON maps each store URI to its local copy (for ``clouds``, each cloud to such a map).
``nightly`` runs the nightly job over the store into a warehouse in the same store, killed mid-way, then
`kafkalog nightly` of the same snapshot and `kafkalog report` from it, on the session the command starts;
``clouds`` runs `kafkalog nightly` over each cloud's log dirs and the job over the local copies (:func:`run_clouds`);
``commands`` runs every command over both on the local engine (Sail, in this process: a process holds a classic
session or Connect sessions, not both). Prints one JSON line: each command's exit codes and the first difference
between its outputs, the requests the store served during the nightly run, the tables read back, and every output
written, for the test to search.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import io
import json
import sys
import time
from pathlib import Path

from kafkalog_spark.cli import main

SNAPSHOT = "2026-11-28T00:00:00Z"
NOW = "2026-11-28T00:00:00+00:00"  # retention, transactions and lag are judged at one time in every run
COMMANDS = ("stats", "validate", "retention-plan", "compaction-preview", "consumer-positions", "open-transactions",
            "catalog-checks")
TIMED = ("retention-plan", "compaction-preview", "consumer-positions", "open-transactions")
# The nightly job's tables go to the same server, through Hadoop's S3A (a bucket the test makes), by path.
WAREHOUSE = "s3a://warehouse/tables"
RUN_COLUMNS = {"runId", "snapshotTime", "startedTime", "writtenTime"}  # what differs between any two runs


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def localised(text: str, corpora: dict[str, str]) -> str:
    for store_uri, local in corpora.items():
        text = text.replace(store_uri, local)
    return text


def first_difference(a: str, b: str) -> str | None:
    for x, y in zip(a.splitlines(), b.splitlines(), strict=False):
        if x != y:
            return f"{x[:400]}\n!=\n{y[:400]}"
    return None if a == b else "different lengths"


def nightly_tables(spark, warehouse: str, corpora: dict[str, str]) -> dict[str, list[str]]:
    from kafkalog_spark.delta import TableLocation, read_table
    from kafkalog_spark.nightly import TABLES

    where = TableLocation(warehouse=str(warehouse))
    out = {}
    for name in TABLES:
        df = read_table(spark, where, name, SNAPSHOT)
        rows = [json.dumps({k: v for k, v in r.asDict(recursive=True).items() if k not in RUN_COLUMNS},
                           sort_keys=True, default=str) for r in df.collect()]
        out[name] = sorted(localised(r, corpora) for r in rows)
    return out


def compare_command(result: dict, corpora: dict[str, str], name: str, argv: list[str]) -> None:
    """``argv`` over the store URIs and over the local copies: exit codes, and the first difference of the outputs."""
    started = time.monotonic()
    store = run_cli(*argv)
    result["seconds"][name] = round(time.monotonic() - started, 1)
    local = run_cli(*[localised(a, corpora) for a in argv])
    result["commands"][name] = {"codes": [store[0], local[0]], "lines": len(local[1].splitlines()),
                                "difference": first_difference(localised(store[1], corpora), local[1]),
                                "stderr": store[2][-2000:]}
    result["outputs"] += [store[1], store[2]]


def run_commands(work: Path, corpora: dict[str, str], engine: str, commands: tuple[str, ...]) -> dict:
    """Each command over every corpus at once, on ``engine``; ``dump`` of one `.log` file."""
    result: dict = {"commands": {}, "outputs": [], "seconds": {}}
    for command in commands:
        at = ["--as-of" if command == "retention-plan" else "--now", NOW] if command in TIMED else []
        compare_command(result, corpora, command, [command, "--json", "--engine", engine, *at, *corpora])
    if engine == "local":
        log = next(d for d in corpora if d.endswith("/broker/data")) + "/codec-zstd-0/00000000000000000000.log"
        compare_command(result, corpora, "dump", ["dump", "--deep-iteration", "--print-data-log", log])
    return result


def nightly_config(dirs: list[str], warehouse: str, report: Path | None, snapshot_id: str = SNAPSHOT):
    """The nightly job's configuration for the comparisons: one snapshot id, Kafka 3.9's rules."""
    from kafkalog_spark import nightly
    from kafkalog_spark.delta import TableLocation
    from kafkalog_spark.kafka_versions import parse_kafka_version

    return nightly.NightlyConfig.load(None, log_dirs=tuple(dirs), location=TableLocation(warehouse=str(warehouse)),
                                      snapshot_id=snapshot_id, kafka_version=parse_kafka_version("3.9"),
                                      report=str(report) if report else None)


def run_nightly(work: Path, corpora: dict[str, str], requests_log: Path) -> dict:
    """`kafkalog nightly` over the store, its tables written to the same store (:data:`WAREHOUSE`, through the S3A
    the command's session sets up from the AWS variables), as the re-run of the same snapshot killed mid-way
    (:func:`killed_over_the_store`); with the requests it made, the tables read back and the snapshot's time (for
    the local run to be judged at the same time); then `kafkalog report` from those tables."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from kafkalog_spark.delta import TableLocation, committed
    from tests.helpers.snapshots import runs_stored

    result: dict = {"outputs": [], "seconds": {}}
    started = time.monotonic()
    result["killed"] = killed_over_the_store(list(corpora))
    result["seconds"]["killed"] = round(time.monotonic() - started, 1)
    before = len(requests_log.read_text().splitlines())
    started = time.monotonic()
    code, out, err = run_cli("nightly", "--kafka-version", "3.9", "--warehouse", WAREHOUSE, "--snapshot-id",
                             SNAPSHOT, "--report", str(work / "report-store.html"),
                             *(a for d in corpora for a in ("--log-dir", d)))
    result["seconds"]["nightly"] = round(time.monotonic() - started, 1)
    result["nightly_command"] = {"code": code, "stderr": err[-4000:]}
    result["outputs"] += [out, err]
    if code != 0:
        return result
    result["nightly_requests"] = [json.loads(line) for line in requests_log.read_text().splitlines()[before:]]
    spark = SparkSession.getActiveSession()  # the command's, with S3A
    row = committed(spark, TableLocation(warehouse=WAREHOUSE)).where(F.col("snapshotId") == SNAPSHOT).first()
    result["snapshot_time"] = row.snapshotTime.replace(tzinfo=dt.UTC).isoformat()
    result["runs_stored"] = runs_stored(spark, WAREHOUSE, SNAPSHOT)
    result["report"] = (work / "report-store.html").read_text()
    result["tables"] = nightly_tables(spark, WAREHOUSE, corpora)
    result["outputs"] += [result["report"], *("\n".join(rows) for rows in result["tables"].values())]
    # the report command reads the committed snapshot back from the store's warehouse
    report = work / "report-command.html"
    code, _, err = run_cli("report", "--warehouse", WAREHOUSE, "--snapshot-id", SNAPSHOT, "-o", str(report))
    result["report_command"] = {"code": code, "stderr": err[-2000:], "page": report.read_text() if code == 0 else ""}
    result["outputs"] += [err, result["report_command"]["page"]]
    return result


# The commands run over GCS and Azure besides `stats` (tests/test_object_store_clouds.py) and `nightly`: one of each
# kind of reading (the validation, a plan, the cleaner's model, an internal topic's state)
CLOUD_COMMANDS = ("validate", "retention-plan", "compaction-preview", "consumer-positions")
# The nightly job runs over one of them: the views and the commands read both the same way (tests/
# test_object_store_clouds.py: every view over each, with its requests), and the job over S3 in
# tests/test_object_store_spark.py (a second cloud's nightly would add minutes and no other path)
NIGHTLY_CLOUDS = ("gcs",)


def run_clouds(work: Path, clouds: dict[str, dict[str, str]], logs: dict[str, str]) -> dict:
    """`kafkalog nightly` over the log dirs of each cloud of :data:`NIGHTLY_CLOUDS` (``clouds``: cloud -> store URI
    -> local copy) into a local warehouse with its report, the dirs given by a TOML configuration (the S3 tests give
    them by ``--log-dir``); after it, the nightly job over the local copies as of that run's snapshot time. The
    tables of both, per cloud. Then :data:`CLOUD_COMMANDS` over each cloud's dirs and their local copies on the
    same session; ``marks``: each cloud's request log (``logs``) line count before them."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from kafkalog_spark.delta import TableLocation, committed
    from kafkalog_spark.nightly import run

    work.mkdir(parents=True, exist_ok=True)
    result: dict = {"outputs": [], "seconds": {}, "clouds": {}}
    for cloud in NIGHTLY_CLOUDS:
        corpora = clouds[cloud]
        warehouse, report = work / f"wh-{cloud}", work / f"report-{cloud}.html"
        config = work / f"nightly-{cloud}.toml"
        config.write_text(f"[input]\nlog_dirs = {json.dumps(list(corpora))}\ninclude_internal = true\n"
                          f"[output]\nwarehouse = {json.dumps(str(warehouse))}\n"
                          f"[report]\npath = {json.dumps(str(report))}\n")
        argv = ["--config", str(config)]
        started = time.monotonic()
        code, out, err = run_cli("nightly", "--kafka-version", "3.9", "--snapshot-id", SNAPSHOT, *argv)
        result["seconds"][cloud] = round(time.monotonic() - started, 1)
        entry: dict = {"code": code, "stderr": err[-4000:]}
        result["clouds"][cloud] = entry
        result["outputs"] += [out, err]
        if code != 0:
            continue
        spark = SparkSession.getActiveSession()  # the command's
        row = committed(spark, TableLocation(warehouse=str(warehouse))).where(F.col("snapshotId") == SNAPSHOT).first()
        local = work / f"wh-local-{cloud}"
        at = row.snapshotTime.replace(tzinfo=dt.UTC)
        run(spark, nightly_config(list(corpora.values()), str(local), None), now=functools.partial(lambda t: t, at))
        entry["tables"] = {"store": nightly_tables(spark, str(warehouse), corpora),
                           "local": nightly_tables(spark, str(local), corpora)}
        entry["report"] = report.read_text()
        result["outputs"] += [entry["report"], *("\n".join(rows) for rows in entry["tables"]["store"].values())]
    result["marks"] = {cloud: len(Path(log).read_text().splitlines()) for cloud, log in logs.items()}
    for cloud, corpora in clouds.items():
        commands = run_commands(work, corpora, "spark", CLOUD_COMMANDS)
        result["clouds"].setdefault(cloud, {})["commands"] = commands["commands"]
        result["outputs"] += commands["outputs"]
    return result


def killed_over_the_store(log_dirs: list[str]) -> dict:
    """The nightly job of ``log_dirs`` (the store's) into the store's warehouse as `kafkalog nightly` runs it next,
    SIGKILLed right after its first table's commit (tests/helpers/snapshots.py), and what the warehouse then holds,
    read from the Delta logs themselves (no session is up yet: the command starts its own): the runs of the
    snapshot each table has rows of, and those the manifest, which readers go by, commits."""
    from kafkalog_spark import nightly
    from tests.helpers.snapshots import run_killed

    run_killed(nightly_config(log_dirs, WAREHOUSE, None), nightly.TABLES[0])
    return {table: sorted(live_runs(table)) for table in (*nightly.TABLES, "snapshots")}


def live_runs(table: str) -> set[str]:
    """The runs of :data:`SNAPSHOT` whose files are live in ``table`` of :data:`WAREHOUSE`, from its Delta log:
    the partition values (snapshotId, runId) of each file added and not removed, commit by commit."""
    import boto3

    bucket, prefix = WAREHOUSE.removeprefix("s3a://").split("/", 1)
    s3 = boto3.client("s3")  # the AWS variables: the server behind the counting proxy
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{prefix}/{table}/_delta_log/")
    keys = sorted(o["Key"] for page in pages for o in page.get("Contents", []))
    if any(k.endswith(".checkpoint.parquet") for k in keys):  # a fresh warehouse has a few commits per table
        raise AssertionError(f"{table}: a Delta checkpoint; read the log with Spark instead")
    live: dict[str, tuple] = {}
    for key in (k for k in keys if k.endswith(".json")):
        for line in s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode().splitlines():
            action = json.loads(line)
            if "add" in action:
                values = action["add"]["partitionValues"]
                live[action["add"]["path"]] = (values.get("snapshotId"), values.get("runId"))
            elif "remove" in action:
                live.pop(action["remove"]["path"], None)
    return {run for snapshot, run in live.values() if snapshot == SNAPSHOT}


if __name__ == "__main__":
    mode, work_dir, corpora_json, log_path = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3]), Path(sys.argv[4])
    if mode == "nightly":
        print(json.dumps(run_nightly(work_dir, corpora_json, log_path)))
    elif mode == "clouds":  # the 4th argument: each cloud's request log, as JSON
        print(json.dumps(run_clouds(work_dir, corpora_json, json.loads(sys.argv[4]))))
    else:
        print(json.dumps(run_commands(work_dir, corpora_json, "local", COMMANDS)))
