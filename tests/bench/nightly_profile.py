"""Where the nightly job's time goes, stage by stage, on one log dir (a fleet set by default):

    python -m tests.bench.nightly_profile [--set 100m | --log-dir DIR] [--driver-memory 1g]

One local[2] session (warmed up on the set first: JVM, numba, Delta's classes), then, wall time each:
  - the decode alone, one process, the records and the batches views (what the Spark stages are built on);
  - each view read by Spark and counted, not cached (decode + Arrow to the JVM + the Python worker round trip),
    then the records view cached (what the job does), then a count of the cache (a re-scan);
  - the analyses' planning (the driver's collects), then each table computed on the cached views;
  - the whole job again (nightly.run) into the warm-up's warehouse, as a nightly run finds its tables, each Delta
    commit timed as it happens.
Prints one JSON object and a markdown table.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from .fleet import SETS, ensure_set

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=list(SETS), default="100m")
    ap.add_argument("--log-dir", help="profile this log dir instead of a fleet set")
    ap.add_argument("--driver-memory", default="1g")
    args = ap.parse_args(argv)
    if args.log_dir:
        log_dir = args.log_dir
    else:
        ensure_set(SETS[args.set])
        log_dir = str(SETS[args.set].log_dir)

    from kafkalog_spark import nightly
    from kafkalog_spark.delta import TableLocation
    from kafkalog_spark.session import local_session
    from kafkalog_spark.source import read_views, register

    from .decoders import ours

    spark = local_session("nightly-profile", master="local[2]", extra={"spark.driver.memory": args.driver_memory})
    register(spark)
    stages: list[tuple[str, float]] = []
    mark = [time.monotonic()]

    def lap(name: str) -> None:
        now = time.monotonic()
        stages.append((name, round(now - mark[0], 2)))
        mark[0] = now

    with tempfile.TemporaryDirectory(prefix="profile-") as tmp:
        config = nightly.NightlyConfig(log_dirs=(log_dir,), location=TableLocation(warehouse=f"{tmp}/wh"))
        nightly.run(spark, config)  # warm-up, not reported; creates the tables
        ours("records", Path(log_dir), end=1 << 20)  # the decoder's compiled code loaded in this process too
        mark[0] = time.monotonic()
        for view in ("records", "batches"):
            ours(view, Path(log_dir))
            lap(f"decode alone, one process: {view} view")
        views = read_views(spark, [log_dir], nightly.VIEWS, includeInternal="true")
        for name, df in views.items():
            df.count()
            lap(f"Spark reads the {name} view (not cached)")
        cached = nightly.read_cached_views(spark, [log_dir])
        for name, df in cached.items():
            df.count()
            lap(f"Spark reads and caches the {name} view")
        cached["records"].count()
        lap("count of the cached records view (re-scan of the cache)")
        tables = nightly.compute(spark, cached, nightly.topic_configs(config), [log_dir], int(time.time() * 1000))
        lap("analyses' planning (driver collects on the cached views)")
        for name, df in tables.items():
            df.count()
            lap(f"table {name} on the cached views")
        for df in cached.values():
            df.unpersist()
        mark[0] = time.monotonic()
        total = time.monotonic()
        nightly.run(spark, config, after_commit=lambda name: lap(f"nightly.run: until the {name} commit"))
        stages.append(("nightly.run, total", round(time.monotonic() - total, 2)))
    spark.stop()
    print(json.dumps({"log_dir": log_dir, "stages": stages}))
    print("| stage | wall s |\n|---|---:|")
    for name, seconds in stages:
        print(f"| {name} | {seconds} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
