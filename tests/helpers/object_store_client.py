"""The commands and the nightly job over an S3-compatible store and over the local copies, in one process
(tests/test_object_store_spark.py runs it with the AWS variables set):

    python -m tests.helpers.object_store_client nightly|commands WORK CORPORA_JSON REQUESTS_LOG

CORPORA_JSON maps each store URI to its local copy. ``nightly`` runs `kafkalog nightly` over the store into a
warehouse in the same store, `kafkalog report` from it and a run killed mid-way, on the session the command starts;
``commands`` runs every command over both on the local engine (Sail, in this process: a process holds a classic
session or Connect sessions, not both). Prints one JSON line: each command's exit codes and the first difference
between its outputs, the requests the store served during the nightly run, the tables read back, and every output
written, for the test to search.
"""

from __future__ import annotations

import contextlib
import datetime as dt
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
KILLED = "killed-over-s3"
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
    the command's session sets up from the AWS variables), with the requests it made, the tables read back and the
    snapshot's time (for the local run to be judged at the same time); `kafkalog report` from those tables; then
    :func:`killed_over_the_store`, on the session the command started."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from kafkalog_spark.delta import TableLocation, committed

    result: dict = {"outputs": [], "seconds": {}}
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
    result["report"] = (work / "report-store.html").read_text()
    result["tables"] = nightly_tables(spark, WAREHOUSE, corpora)
    result["outputs"] += [result["report"], *("\n".join(rows) for rows in result["tables"].values())]
    # the report command reads the committed snapshot back from the store's warehouse
    report = work / "report-command.html"
    code, _, err = run_cli("report", "--warehouse", WAREHOUSE, "--snapshot-id", SNAPSHOT, "-o", str(report))
    result["report_command"] = {"code": code, "stderr": err[-2000:], "page": report.read_text() if code == 0 else ""}
    result["outputs"] += [err, result["report_command"]["page"]]
    result["killed"] = killed_over_the_store(spark, work)
    return result


def killed_over_the_store(spark, work: Path) -> dict:
    """The nightly job of a small log dir (local) into the store's warehouse, SIGKILLed right after its first
    table's commit (tests/helpers/snapshots.py): what readers then see of it and of the committed snapshot, then
    the same snapshot run again in this session, and how many runs' rows each table stores."""
    import shutil

    from kafkalog_spark import nightly
    from tests.helpers.corpus import SAMPLES
    from tests.helpers.snapshots import PARTITIONS, counts, run_killed, runs_stored

    log_dir = work / "kill-logs"
    for part in PARTITIONS:
        shutil.copytree(SAMPLES / "broker" / part, log_dir / part)
    config = nightly_config([str(log_dir)], WAREHOUSE, None, snapshot_id=KILLED)
    committed_before = counts(spark, WAREHOUSE, SNAPSHOT)
    started = time.monotonic()
    run_killed(config, nightly.TABLES[0])
    seen = {"killed": counts(spark, WAREHOUSE, KILLED), "committed": counts(spark, WAREHOUSE, SNAPSHOT),
            "committed_before": committed_before}
    nightly.run(spark, config, now=lambda: dt.datetime.fromisoformat(NOW))
    seen |= {"rerun": counts(spark, WAREHOUSE, KILLED), "runs_stored": runs_stored(spark, WAREHOUSE, KILLED),
             "seconds": round(time.monotonic() - started, 1)}
    return seen


if __name__ == "__main__":
    mode, work_dir, corpora_json, log_path = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3]), Path(sys.argv[4])
    if mode == "nightly":
        print(json.dumps(run_nightly(work_dir, corpora_json, log_path)))
    else:
        print(json.dumps(run_commands(work_dir, corpora_json, "local", COMMANDS)))
