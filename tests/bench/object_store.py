"""Log dirs in an S3-compatible store over a slow link against the same on local disk, in one run.

    python -m tests.bench.object_store [--delay-ms 20] [--jobs stats nightly]

The set: one broker log dir of 16 partitions, 1 GB of `.log` files in 64 MiB segments with their indexes, written
through Kafka's own LogSegment (tests/bench/java/GenSegment.java, as the fleet benchmark's sets), built once into
bench-data/. It is uploaded to moto's S3 server on loopback behind the counting proxy of tests/helpers/s3_proxy.py,
which holds every request for ``--delay-ms`` (a round trip to a store in another zone), and each job runs as its
users run it, in a fresh process: over the local dir, then over ``s3://``. Reported: each job's wall time on both,
their ratio (the target: at most 2), and the requests per GB by kind. Writes bench-data/results-object-store.json.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from tests.helpers.object_store import kinds, s3_server

from .data import DATA_DIR, MIB
from .fleet import FleetSet, ensure_set, run_job

RESULTS = DATA_DIR / "results-object-store.json"
STORE_SET = FleetSet("store-1g", 10**9, 16)
SEGMENT_BYTES = 64 * MIB


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--delay-ms", type=float, default=20.0)
    p.add_argument("--jobs", nargs="+", default=["stats", "nightly"])
    args = p.parse_args()
    info = ensure_set(STORE_SET, SEGMENT_BYTES)
    log_dir = STORE_SET.log_dir
    files = [f for f in log_dir.rglob("*") if f.is_file()]
    gb = sum(f.stat().st_size for f in files) / 1e9
    print(f"set: {len(list(log_dir.iterdir()))} entries, {len(files)} files, {gb:.2f} GB, "
          f"{info['records']} records; link delay {args.delay_ms} ms")
    results = {"delay_ms": args.delay_ms, "gb": round(gb, 3), "files": len(files), "jobs": {}}
    with tempfile.TemporaryDirectory() as tmp, s3_server(Path(tmp), delay_ms=args.delay_ms) as s3:
        s3.upload(log_dir, "bench", "broker-1/data")
        env = os.environ | s3.env()
        for job in args.jobs:
            row = {}
            for where, path in (("local", str(log_dir)), ("store", "s3://bench/broker-1/data")):
                work = Path(tmp) / f"{job}-{where}"
                work.mkdir()
                mark = s3.mark()
                row[where] = run_job(job, path, work, env)
                if where == "store":
                    row["requests_per_gb"] = {k: round(v / gb) for k, v in kinds(s3.requests(mark)).items()}
            row["ratio"] = round(row["store"]["seconds"] / row["local"]["seconds"], 2)
            results["jobs"][job] = row
            print(f"| {job} | {row['local']['seconds']} s | {row['store']['seconds']} s | {row['ratio']}x | "
                  f"{row['requests_per_gb']} |", flush=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
