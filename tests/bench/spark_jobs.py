"""How many Spark jobs a nightly run makes, how long one of them was running, and on which table:

    python -m tests.bench.spark_jobs [--set 1m | --broker-set 1g | --log-dir DIR] [--runs 3]

One local[2] session with Spark's event log on runs the nightly job ``--runs`` times over the same log dir into
one warehouse (the first run decodes every segment, the next ones find nothing new, as a nightly run on a quiet
broker does). From the event log, per run: its wall time, its Spark jobs, the time at least one job was running and
the time none was (the driver's planning and Delta's commits); and per root SQL execution of the run (a table's
write holds every job its plan runs, the adaptive plan's stages and broadcasts among them), its jobs and their summed
time, named by the table it writes. Prints one JSON object and markdown tables.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections import defaultdict
from pathlib import Path


def _events(event_dir: str) -> list[dict]:
    files = [p for p in Path(event_dir).rglob("*") if p.is_file() and p.stat().st_size]
    return [json.loads(line) for p in files for line in p.read_text().splitlines() if line]


def _table_of(plan: str) -> str | None:
    """The table a SQL execution writes (its SaveIntoDataSourceCommand's path), else None."""
    details = re.search(r"\(\d+\) SaveIntoDataSourceCommand\n", plan)  # the node's details, below the tree
    found = re.search(r"path=([^,)\]\s]*)", plan[details.end():details.end() + 2000]) if details else None
    return found.group(1).rstrip("/").rsplit("/", 1)[-1] if found else None


def summarize(events: list[dict], runs: list[tuple[float, float]]) -> list[dict]:
    """Per run (its start and end, epoch seconds): jobs, busy and idle seconds, and jobs by what they ran for."""
    jobs: dict[int, dict] = {}
    plans: dict[int, str | None] = {}
    for e in events:
        kind = e["Event"]
        if kind.endswith("SQLExecutionStart"):
            plans[e["executionId"]] = _table_of(e.get("physicalPlanDescription", ""))
        elif kind == "SparkListenerJobStart":
            p = e.get("Properties") or {}
            root = p.get("spark.sql.execution.root.id") or p.get("spark.sql.execution.id")
            jobs[e["Job ID"]] = {"start": e["Submission Time"] / 1000, "end": None,
                                 "root": int(root) if root is not None else None}
        elif kind == "SparkListenerJobEnd" and e["Job ID"] in jobs:
            jobs[e["Job ID"]]["end"] = e["Completion Time"] / 1000
    out = []
    for start, end in runs:
        mine = sorted((j for j in jobs.values() if start <= j["start"] <= end and j["end"]), key=lambda j: j["start"])
        busy, reached = 0.0, start
        for j in mine:
            begin = max(j["start"], reached)
            if j["end"] > begin:
                busy, reached = busy + j["end"] - begin, j["end"]
        by: dict[str, list] = defaultdict(lambda: [0, 0.0])
        for j in mine:
            what = plans.get(j["root"]) if j["root"] is not None else None
            name = f"write {what}" if what else "other queries (collects, caching, Delta's own)"
            by[name][0] += 1
            by[name][1] += j["end"] - j["start"]
        out.append({"seconds": round(end - start, 1), "jobs": len(mine), "job_running_s": round(busy, 1),
                    "no_job_s": round(end - start - busy, 1),
                    "by": {k: [v[0], round(v[1], 2)] for k, v in sorted(by.items(), key=lambda kv: -kv[1][0])}})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--set", default="1m", help="a fleet set (tests.bench.fleet): 1m is the job's fixed cost")
    where.add_argument("--broker-set", help="a broker-shaped set (tests.bench.broker_shaped): 1g, 8g")
    where.add_argument("--log-dir", help="this log dir instead of a generated set")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    if args.log_dir:
        log_dir = args.log_dir
    elif args.broker_set:
        from .broker_shaped import SETS as BROKER_SETS
        from .broker_shaped import ensure_broker_set

        broker = BROKER_SETS[args.broker_set]
        ensure_broker_set(broker)
        log_dir = str(broker.log_dir)
    else:
        from .fleet import SETS, ensure_set

        ensure_set(SETS[args.set])
        log_dir = str(SETS[args.set].log_dir)

    from kafkalog_spark import nightly
    from kafkalog_spark.delta import TableLocation
    from kafkalog_spark.session import local_session

    with tempfile.TemporaryDirectory(prefix="spark-jobs-") as tmp:
        Path(f"{tmp}/events").mkdir()
        spark = local_session("spark-jobs", master="local[2]", warehouse=f"{tmp}/spark-warehouse", extra={
            "spark.eventLog.enabled": "true", "spark.eventLog.dir": f"{tmp}/events",
            "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"})
        config = nightly.NightlyConfig(log_dirs=(log_dir,), location=TableLocation(warehouse=f"{tmp}/wh"))
        runs = []
        for _ in range(args.runs):
            start = time.time()
            nightly.run(spark, config)
            runs.append((start, time.time()))
        spark.stop()  # the event log complete
        summary = summarize(_events(f"{tmp}/events"), runs)
    print(json.dumps({"log_dir": log_dir, "runs": summary}))
    print("| run | wall s | Spark jobs | a job running, s | no job running, s |\n|---|---:|---:|---:|---:|")
    for i, r in enumerate(summary, 1):
        print(f"| {i} | {r['seconds']} | {r['jobs']} | {r['job_running_s']} | {r['no_job_s']} |")
    for i, r in enumerate(summary, 1):
        print(f"\nrun {i}, jobs by what they ran for (jobs, their summed seconds):")
        print("| for | jobs | s |\n|---|---:|---:|")
        for name, (count, seconds) in r["by"].items():
            print(f"| {name} | {count} | {seconds} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
