"""The commands and the nightly job over an S3-compatible store and over the local copies, in one process with
one Spark session (tests/test_object_store_spark.py runs it with the AWS variables set):

    python -m tests.helpers.object_store_client WORK CORPORA_JSON

CORPORA_JSON maps each store URI to its local copy. Prints one JSON line: each command's exit codes and whether
its output over the store equals the local one (and the first difference), the nightly tables compared row for row,
the requests the store served during the store's nightly run, and every output written, for the test to search.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

from kafkalog_spark.cli import main

SNAPSHOT = "2026-11-28T00:00:00Z"
COMMANDS = ("stats", "validate", "retention-plan", "compaction-preview", "consumer-positions", "open-transactions",
            "catalog-checks")
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


def main_(work: Path, corpora: dict[str, str], requests_log: Path) -> dict:
    from pyspark.sql import SparkSession

    result: dict = {"commands": {}, "outputs": []}
    stores, locals_ = list(corpora), list(corpora.values())
    before = len(requests_log.read_text().splitlines())
    runs = {}
    for label, dirs in (("store", stores), ("local", locals_)):
        argv = ["nightly", "--warehouse", str(work / f"wh-{label}"), "--snapshot-id", SNAPSHOT,
                "--kafka-version", "3.9", "--report", str(work / f"report-{label}.html")]
        for d in dirs:
            argv += ["--log-dir", d]
        runs[label] = run_cli(*argv)
        result["outputs"] += [runs[label][1], runs[label][2], (work / f"report-{label}.html").read_text()
                              if (work / f"report-{label}.html").exists() else ""]
        if label == "store":
            result["nightly_requests"] = [json.loads(line) for line in
                                          requests_log.read_text().splitlines()[before:]]
    result["nightly_codes"] = {label: r[0] for label, r in runs.items()}
    result["nightly_stderr"] = runs["store"][2][-3000:]
    spark = SparkSession.getActiveSession()
    tables = {label: nightly_tables(spark, work / f"wh-{label}", corpora) for label in runs}
    result["tables"] = {name: {"rows": len(rows), "same": rows == tables["local"][name],
                               "difference": first_difference("\n".join(rows), "\n".join(tables["local"][name]))}
                        for name, rows in tables["store"].items()}
    result["outputs"] += ["\n".join(rows) for rows in tables["store"].values()]
    for command in COMMANDS:
        store = run_cli(command, "--json", "--engine", "spark", *stores)
        local = run_cli(command, "--json", "--engine", "spark", *locals_)
        result["commands"][command] = {"codes": [store[0], local[0]], "lines": len(local[1].splitlines()),
                                       "difference": first_difference(localised(store[1], corpora), local[1]),
                                       "stderr": store[2][-2000:]}
        result["outputs"] += [store[1], store[2]]
    log = next(d for d in stores if d.endswith("/broker/data")) + "/codec-zstd-0/00000000000000000000.log"
    store, local = run_cli("dump", "--deep-iteration", "--print-data-log", log), run_cli(
        "dump", "--deep-iteration", "--print-data-log", localised(log, corpora))
    result["commands"]["dump"] = {"codes": [store[0], local[0]], "lines": len(local[1].splitlines()),
                                  "difference": first_difference(localised(store[1], corpora), local[1]),
                                  "stderr": store[2][-2000:]}
    result["outputs"] += [store[1], store[2]]
    return result


if __name__ == "__main__":
    work_dir, corpora_json, log_path = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    print(json.dumps(main_(work_dir, json.loads(corpora_json), log_path)))
