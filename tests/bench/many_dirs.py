"""Memory against the number of log dirs: `validate` or the nightly job over N small log dirs, all in one job,
with a small driver heap, in a fresh process; prints one JSON line (dirs, seconds, findings or rows, the driver
JVM's peak heap and its live heap after the run, and the Python driver's peak RSS).

Each log dir holds copies of two partitions of the sample corpus (data/samples/broker: tutorial-segments-0,
txn-mixed-0; about 220 KB), so every dir must give the same findings and the same rows, and those of one dir
analysed alone: the same partitions in N dirs read at once must stay N logs. Issue 13's reproduction: `validate`
over 14 small log dirs ran the driver out of Java heap, because every dir's views and checks were unioned into one
plan.

    python -m tests.bench.many_dirs --job validate --dirs 50 --driver-memory 1g      # make many-dirs
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PARTITIONS = ("tutorial-segments-0", "txn-mixed-0")
AS_OF = dt.datetime.now(dt.UTC).replace(microsecond=0)


def make_dirs(root: Path, n: int) -> list[str]:
    dirs = []
    for i in range(n):
        d = root / f"broker-{i:03d}"
        for part in PARTITIONS:
            shutil.copytree(REPO / "data" / "samples" / "broker" / part, d / part)
            # a leftover of an interrupted clean (a stray_temp_file warning): every dir has findings to count
            (d / part / "00000000000000000000.log.cleaned").write_bytes(b"")
        dirs.append(str(d))
    return dirs


def heap_peak_mb(spark) -> tuple[float, float]:
    """The JVM's peak heap use over its lifetime (the sum of its heap pools' peaks) and its maximum heap, MiB."""
    mf = spark.sparkContext._jvm.java.lang.management.ManagementFactory
    peak = sum(p.getPeakUsage().getUsed() for p in mf.getMemoryPoolMXBeans() if str(p.getType()) == "Heap memory")
    return peak / 2**20, mf.getMemoryMXBean().getHeapMemoryUsage().getMax() / 2**20


def live_heap_mb(spark) -> float:
    """The driver JVM's heap in use right after a full collection, MiB."""
    jvm = spark.sparkContext._jvm
    jvm.java.lang.System.gc()
    return jvm.java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 2**20


# The tables whose rows are compared dir by dir (the cluster tables are each cluster's, not each dir's).
COMPARED = ("segment_stats", "partition_stats", "log_dir_stats", "index_findings", "retention_plan",
            "retention_forecast", "compaction_preview", "compaction_preview_segments", "topic_configs", "log_offsets")


def nightly_tables(spark, dirs: list[str], warehouse: str, snapshot: str) -> dict:
    """The nightly job's tables over ``dirs``, as of :data:`AS_OF` (runs to compare need the same clock)."""
    from kafkalog_spark import nightly
    from kafkalog_spark.delta import TableLocation
    from kafkalog_spark.kafka_versions import KafkaVersion

    config = nightly.NightlyConfig(log_dirs=tuple(dirs), location=TableLocation(warehouse=warehouse),
                                   snapshot_id=snapshot, kafka_version=KafkaVersion.V3_9)
    return nightly.run(spark, config, now=lambda: AS_OF)


def rows_by_dir(tables: dict, dirs: list[str]) -> dict[str, list[str]]:
    """Each dir's rows of the :data:`COMPARED` tables as sorted JSON lines, its own path and the run's
    columns (snapshot, run, times of the run) taken out, so that copies of the same partitions compare equal."""
    out: dict[str, list[str]] = {d: [] for d in dirs}
    for name in COMPARED:
        df = tables[name]
        for r in df.drop(*[c for c in df.columns if c.startswith(("snapshot", "run"))]).collect():
            row = r.asDict(recursive=True)
            log_dir = row.pop("logDir")
            text = json.dumps(row, sort_keys=True, default=str).replace(log_dir + "/", "")
            out[log_dir].append(f"{name} {text}")
    return {d: sorted(rows) for d, rows in out.items()}


def run(job: str, n: int, driver_memory: str) -> dict:
    from kafkalog_spark.session import local_session

    spark = local_session("many-dirs", master="local[2]", extra={"spark.driver.memory": driver_memory})
    with tempfile.TemporaryDirectory() as tmp:
        dirs = make_dirs(Path(tmp) / "logs", n)
        start = time.monotonic()
        if job == "validate":
            from kafkalog_spark.analysis.index_validation import validate_rows

            rows = [r.asDict() for r in validate_rows(spark, dirs)]
            per_dir = {d: sorted((r["check"], r["severity"], r["file"].removeprefix(d), r["position"]) for r in rows
                                 if r["file"].startswith(d + "/")) for d in dirs}
            out = {"findings": len(rows), "same_findings_in_every_dir": all(per_dir.values()) and len(
                {json.dumps(v) for v in per_dir.values()}) == 1, "errors": sum(r["severity"] == "error" for r in rows)}
        else:
            tables = nightly_tables(spark, dirs, f"{tmp}/wh", "many")
            job_seconds = time.monotonic() - start
            per_dir = rows_by_dir(tables, dirs)
            alone_start = time.monotonic()
            alone = rows_by_dir(nightly_tables(spark, dirs[:1], f"{tmp}/wh-alone", "alone"), dirs[:1])
            out = {"job_seconds": round(job_seconds, 1),
                   "one_dir_alone_seconds": round(time.monotonic() - alone_start, 1),
                   "segment_stats_rows": tables["segment_stats"].count(),
                   "log_dirs_in_segment_stats": tables["segment_stats"].select("logDir").distinct().count(),
                   "same_rows_in_every_dir": len({json.dumps(v) for v in per_dir.values()}) == 1,
                   "rows_as_one_dir_alone": per_dir[dirs[0]] == alone[dirs[0]],
                   "heap_after_gc_mb": round(live_heap_mb(spark))}
        seconds = time.monotonic() - start
    heap, heap_max = heap_peak_mb(spark)
    return {"job": job, "dirs": n, "seconds": round(seconds, 1), **out, "driver_heap_peak_mb": round(heap),
            "driver_heap_max_mb": round(heap_max),
            "python_driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--job", choices=("validate", "nightly"), default="validate")
    ap.add_argument("--dirs", type=int, default=50)
    ap.add_argument("--driver-memory", default="1g")
    args = ap.parse_args(argv)
    result = run(args.job, args.dirs, args.driver_memory)
    print(json.dumps(result), flush=True)
    # Every dir is a copy of the same two partitions: anything uneven means a dir was dropped or read twice.
    even = result.get("same_findings_in_every_dir", result.get("same_rows_in_every_dir"))
    complete = result.get("log_dirs_in_segment_stats", args.dirs) == args.dirs
    return 0 if even and complete and result.get("rows_as_one_dir_alone", True) else 1


if __name__ == "__main__":
    sys.exit(main())
