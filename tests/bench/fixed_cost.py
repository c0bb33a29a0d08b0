"""The nightly job's fixed cost against its anchor, in one run:

    python -m tests.bench.fixed_cost [--rounds 2]

The job: `kafkalog nightly` on the fleet benchmark's 1 MB set (one partition of 1 MB), in a fresh process, into a
new warehouse, as a first run makes it (every table created). The anchor: a fresh process that starts the session
the job starts (a local session with Delta's jars, quiet) and makes the commits the job made, counted from the job's
Delta logs: as many tables, each with as many one-row commits as the job's table of that name got, four tables at a
time as the job writes them. The two alternate, ``--rounds`` of each. The target (the job at most 1.5x its anchor)
is judged on the best of each, and each pair's ratio is printed: absolute times on a shared machine say little.
Writes bench-data/results-fixed-cost.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .data import DATA_DIR
from .fleet import SETS, ensure_set, run_job

RESULTS = DATA_DIR / "results-fixed-cost.json"
TARGET = 1.5
THREADS = 4  # the job's PARALLEL_WRITES


def job_commits(warehouse: Path) -> dict[str, int]:
    """Each Delta table of ``warehouse`` and the commits in its log."""
    return {log.parent.name: len(list(log.glob("*.json"))) for log in sorted(warehouse.glob("*/_delta_log"))}


def anchor(warehouse: str, commits: dict[str, int]) -> None:
    """The anchor's process: the job's session, then ``commits`` (table -> one-row commits), four tables at once."""
    from kafkalog_spark.session import local_session

    spark = local_session("kafkalog-anchor", delta=True, quiet=True)

    def write(table: str) -> None:
        for i in range(commits[table]):
            (spark.createDataFrame([(table, i)], "name string, commit int").write.format("delta").mode("append")
             .save(f"{warehouse}/{table}"))

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(write, commits))
    spark.stop()


def run_anchor(workdir: Path, commits: dict[str, int]) -> dict:
    """The anchor in a fresh process, timed as the job is."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tests.bench.fixed_cost", "--anchor", str(workdir / "warehouse"),
                           json.dumps(commits)], capture_output=True, text=True, cwd=Path(__file__).parents[2])
    seconds = round(time.monotonic() - started, 1)
    if done.returncode != 0:
        return {"failed": done.stderr[-2000:], "seconds": seconds}
    return {"seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--anchor", nargs=2, metavar=("WAREHOUSE", "COMMITS_JSON"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.anchor:
        anchor(args.anchor[0], json.loads(args.anchor[1]))
        return 0
    one = SETS["1m"]
    ensure_set(one)
    pairs = []
    with tempfile.TemporaryDirectory(prefix="fixed-cost-", dir=DATA_DIR) as tmp:
        for i in range(args.rounds):
            job_dir, anchor_dir = Path(tmp) / f"job-{i}", Path(tmp) / f"anchor-{i}"
            job_dir.mkdir()
            anchor_dir.mkdir()
            print(f"  round {i + 1}: the job ...", file=sys.stderr, flush=True)
            job = run_job("nightly", one.log_dir, job_dir)
            if "failed" in job:
                print(job["failed"], file=sys.stderr)
                return 1
            commits = job_commits(job_dir / "warehouse")
            print(f"  round {i + 1}: the anchor ({sum(commits.values())} commits to {len(commits)} tables) ...",
                  file=sys.stderr, flush=True)
            base = run_anchor(anchor_dir, commits)
            if "failed" in base:
                print(base["failed"], file=sys.stderr)
                return 1
            pairs.append({"job": job["seconds"], "anchor": base["seconds"], "commits": sum(commits.values()),
                          "tables": len(commits), "ratio": round(job["seconds"] / base["seconds"], 2),
                          "job_memory_mib": job["memory_mib"]})
    best = round(min(p["job"] for p in pairs) / min(p["anchor"] for p in pairs), 2)
    result = {"pairs": pairs, "best_ratio": best, "target": TARGET, "met": best <= TARGET}
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print("| round | nightly job, 1 MB set (s) | anchor: session + the same Delta commits (s) | commits | ratio |")
    print("|---|---:|---:|---:|---:|")
    for i, p in enumerate(pairs, 1):
        print(f"| {i} | {p['job']} | {p['anchor']} | {p['commits']} | {p['ratio']} |")
    print(f"best of each: {best}x (target: at most {TARGET}x, {'met' if best <= TARGET else 'not met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
