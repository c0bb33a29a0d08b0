"""`kafkalog stats|validate` on one log dir with each engine, each run in a fresh process as a user runs it: wall
seconds of several runs, their median, and the peak resident memory of the process (with the local engine the
whole engine; with Spark only the Python driver, the JVM being its child).

    python -m tests.bench.engines [--runs 5] [--engines local spark] [--commands stats validate] [LOGDIR]

LOGDIR defaults to the 3.9.2 corpus's broker log dir (data/samples/broker). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_once(command: str, engine: str, log_dir: str) -> tuple[float, int, float, float]:
    """(wall seconds, exit code, peak RSS of the process in MiB, its CPU seconds) of one fresh ``kafkalog``
    process. CPU and memory are the process's own and of the children it waited for: with Spark, not the JVM."""
    args = [sys.executable, "-m", "kafkalog_spark.cli", command, log_dir, "--json", "--engine", engine]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode not in (0, 1):  # validate exits 1 on findings at the gate
        raise RuntimeError(f"{' '.join(args)} exited {proc.returncode}: {err[-2000:]}")
    return wall, proc.returncode, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("log_dir", nargs="?", default=str(ROOT / "data" / "samples" / "broker"))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--engines", nargs="+", default=["local", "spark"], choices=["local", "spark"])
    p.add_argument("--commands", nargs="+", default=["stats", "validate"], choices=["stats", "validate"])
    args = p.parse_args(argv)
    print(f"log dir: {args.log_dir}; {args.runs} runs each, in turn; load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    print("| command | engine | median wall s | runs (s) | median CPU s | exit code | peak RSS MiB |")
    print("|---|---|---:|---|---:|---:|---:|")
    for command in args.commands:
        for engine in args.engines:
            runs = [run_once(command, engine, args.log_dir) for _ in range(args.runs)]
            walls = [r[0] for r in runs]
            print(f"| {command} | {engine} | {statistics.median(walls):.2f} | {', '.join(f'{w:.2f}' for w in walls)} "
                  f"| {statistics.median(r[3] for r in runs):.2f} | {runs[0][1]} | {max(r[2] for r in runs):.0f} |",
                  flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
