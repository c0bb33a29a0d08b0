"""The commands and the nightly job over an S3-compatible store and over the local copies, in one process
(tests/test_object_store_spark.py runs it with the AWS variables set):

    python -m tests.helpers.object_store_client nightly|commands WORK CORPORA_JSON REQUESTS_LOG

CORPORA_JSON maps each store URI to its local copy. ``nightly`` runs the nightly job over the store (and ``stats``
over both) on one Spark session; ``commands`` runs every command over both on the local engine (Sail, in this
process: a process holds a classic session or Connect sessions, not both). Prints one JSON line: each command's exit
codes and the first difference between its outputs, the requests the store served during the nightly run, and every
output written, for the test to search.
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


def nightly_tables(spark, warehouse: Path, corpora: dict[str, str]) -> dict[str, list[str]]:
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


def nightly_config(dirs: list[str], warehouse: Path, report: Path):
    """The nightly job's configuration for the comparisons: one snapshot id, Kafka 3.9's rules."""
    from kafkalog_spark import nightly
    from kafkalog_spark.delta import TableLocation
    from kafkalog_spark.kafka_versions import parse_kafka_version

    return nightly.NightlyConfig.load(None, log_dirs=tuple(dirs), location=TableLocation(warehouse=str(warehouse)),
                                      snapshot_id=SNAPSHOT, kafka_version=parse_kafka_version("3.9"),
                                      report=str(report))


def run_nightly(work: Path, corpora: dict[str, str], requests_log: Path) -> dict:
    """The nightly job over the store (into WORK/wh-store; the test runs it over the local copies and compares),
    with the requests it made; then ``stats`` on Spark over the store and the local copies, whose tasks read the
    store in the executors' Python workers."""
    from kafkalog_spark import nightly
    from kafkalog_spark.session import local_session

    spark = local_session("kafkalog-store-test", delta=True)
    result: dict = {"commands": {}, "outputs": [], "seconds": {}}
    before = len(requests_log.read_text().splitlines())
    started = time.monotonic()
    nightly.run(spark, nightly_config(list(corpora), work / "wh-store", work / "report-store.html"),
                now=lambda: dt.datetime.fromisoformat(NOW))
    result["seconds"]["nightly"] = round(time.monotonic() - started, 1)
    result["nightly_requests"] = [json.loads(line) for line in requests_log.read_text().splitlines()[before:]]
    result["outputs"].append((work / "report-store.html").read_text())
    result["outputs"] += ["\n".join(rows) for rows in nightly_tables(spark, work / "wh-store", corpora).values()]
    commands = run_commands(work, corpora, "spark", ("stats",))
    result["commands"] = commands["commands"]
    result["seconds"] |= commands["seconds"]
    result["outputs"] += commands["outputs"]
    return result


if __name__ == "__main__":
    mode, work_dir, corpora_json, log_path = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3]), Path(sys.argv[4])
    if mode == "nightly":
        print(json.dumps(run_nightly(work_dir, corpora_json, log_path)))
    else:
        print(json.dumps(run_commands(work_dir, corpora_json, "local", COMMANDS)))
