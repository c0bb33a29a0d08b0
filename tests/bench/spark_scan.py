"""End-to-end Spark scan benchmark (`make bench`, second part).

On a >= 1 GiB log dir written by Kafka's own producer code (uncompressed, 16 KiB batches), in one run:
- the records view's ``count`` + ``sum(length(value))`` on local[2] versus
  ``kafka-dump-log --deep-iteration`` over the same file (wall time; goal >= 2x faster),
- the batches view versus the records view (goal >= 20x faster),
- one 1 GiB segment on 2 cores versus 1 (goal >= 1.7x; the 1-core run is pinned to one CPU with taskset),
- the Python workers' peak memory (VmHWM) as the segment grows 256 MiB -> 512 MiB -> 1 GiB (goal: flat).
Results are printed and written to bench-data/results-spark.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from .data import DATA_DIR, GENERATOR, MIB, batch_boundary, kafka_classpath

SIZES_MIB = (256, 512, 1024)


def dataset(size_mib: int) -> Path:
    """A log dir holding one uncompressed segment of ``size_mib``; smaller ones are prefixes of the 1 GiB one."""
    log_dir = DATA_DIR / f"spark-{size_mib}"
    seg = log_dir / "bench-spark-0" / "00000000000000000000.log"
    if seg.exists():
        return log_dir
    big = DATA_DIR / "spark-1024" / "bench-spark-0" / "00000000000000000000.log"
    if not big.exists():
        big.parent.mkdir(parents=True, exist_ok=True)
        print("building a 1 GiB segment with kafka-clients ...", flush=True)
        subprocess.run(["java", "-Xmx1g", "-cp", kafka_classpath(), str(GENERATOR), str(big), "none",
                        str(1024 * MIB), str(16 * 1024), "7", "bench-spark"], check=True, capture_output=True)
    if size_mib != 1024:
        seg.parent.mkdir(parents=True, exist_ok=True)
        with open(big, "rb") as src:
            head = src.read(size_mib * MIB + 64 * 1024)
        seg.write_bytes(head[:batch_boundary(head, size_mib * MIB)])
    return log_dir


class WorkerMemory:
    """Polls /proc for PySpark worker processes and keeps their peak resident size (VmHWM)."""

    def __init__(self) -> None:
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                    if b"pyspark.daemon" not in cmd and b"pyspark.worker" not in cmd:
                        continue
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("VmHWM:"):
                            self.peak_kib = max(self.peak_kib, int(line.split()[1]))
                except OSError:
                    continue
            time.sleep(0.05)

    def __enter__(self) -> WorkerMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def timed(fn) -> tuple[float, object]:
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


def spark_runs(master: str, log_dir: Path, views: tuple[str, ...]) -> dict[str, float]:
    from pyspark.sql import functions as F

    from kafkalog_spark.session import local_session

    spark = local_session("kafkalog-bench", master=master, delta=False,
                          extra={"spark.python.worker.reuse": "true", "spark.ui.showConsoleProgress": "false"})
    out: dict[str, float] = {}
    try:
        for view in views:
            def query(view: str = view) -> list:
                # A new DataFrame each time: re-running one would skip its finished shuffle stage.
                df = spark.read.format("kafkalog").option("view", view).load(
                    str(log_dir))
                agg = df.agg(F.count("*"), F.sum(F.length("value"))) if view == "records" else df.agg(F.count("*"))
                return agg.collect()

            query()  # warm-up: numba caches, worker start
            out[view], rows = min((timed(query) for _ in range(2)), key=lambda t: t[0])
            out[f"{view}_rows"] = rows[0][0]
    finally:
        spark.stop()
    return out


def worker_peak(log_dir: Path) -> int:
    """Peak worker memory (KiB) for a records-view scan of one segment in ONE task (no splitting)."""
    from pyspark.sql import functions as F

    from kafkalog_spark.session import local_session

    spark = local_session("kafkalog-bench-mem", master="local[1]", delta=False,
                          extra={"spark.python.worker.reuse": "false", "spark.ui.showConsoleProgress": "false"})
    try:
        df = spark.read.format("kafkalog").option("maxSplitBytes", "4g").load(str(log_dir))
        with WorkerMemory() as mem:
            df.agg(F.sum(F.length("value"))).collect()
        return mem.peak_kib
    finally:
        spark.stop()


def dump_log(log_dir: Path) -> float:
    from tests.harness.broker import KafkaDistribution

    dist = KafkaDistribution().ensure()
    seg = next(log_dir.glob("*/*.log"))
    cmd = dist.java_cmd("kafka.tools.DumpLogSegments", "--files", str(seg), "--deep-iteration")
    elapsed, _ = timed(lambda: subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True))
    return elapsed


def one_core(log_dir: Path) -> dict[str, float]:
    """The records view on ONE CPU: a local[1] session alone would still overlap its Python worker and
    its JVM task thread on two cores, so the whole process tree is pinned to CPU 0."""
    if shutil.which("taskset") is None:
        raise SystemExit("taskset not found (util-linux): needed to measure on one core")
    cmd = ["taskset", "-c", "0", sys.executable, "-m", "tests.bench.spark_scan", "--one-core", str(log_dir)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=DATA_DIR.parent).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--one-core":
        print(json.dumps(spark_runs("local[1]", Path(sys.argv[2]), ("records",))))
        return 0
    if shutil.which("java") is None:
        raise SystemExit("java not found")
    big = dataset(1024)
    size = sum(p.stat().st_size for p in big.glob("*/*.log"))
    two = spark_runs("local[2]", big, ("records", "batches"))
    one = one_core(big)
    dump = dump_log(big)
    peaks = {mib: worker_peak(dataset(mib)) for mib in SIZES_MIB}
    results = {
        "segment_bytes": size, "records": two["records_rows"],
        "records_view_2cores_s": two["records"], "batches_view_2cores_s": two["batches"],
        "records_view_1core_s": one["records"], "dump_log_deep_s": dump,
        "vs_dump_log": dump / two["records"], "batches_vs_records": two["records"] / two["batches"],
        "two_vs_one_core": one["records"] / two["records"],
        "worker_peak_mib": {str(k): round(v / 1024) for k, v in peaks.items()},
    }
    (DATA_DIR / "results-spark.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nSpark scan of one {size / MIB:.0f} MiB segment ({two['records_rows']:,} records), wall time:")
    print("| measure | time | ratio | goal |\n|---|---|---|---|")
    print(f"| records view count + sum(length(value)), local[2] | {two['records']:.1f} s | "
          f"{results['vs_dump_log']:.1f}x faster than kafka-dump-log --deep-iteration ({dump:.1f} s) | >= 2x |")
    print(f"| batches view count, local[2] | {two['batches']:.2f} s | "
          f"{results['batches_vs_records']:.1f}x faster than the records view | >= 20x |")
    print(f"| records view, local[2] vs local[1] | {one['records']:.1f} s on 1 core | "
          f"{results['two_vs_one_core']:.2f}x faster on 2 cores | >= 1.7x |")
    print("| Python worker peak memory, one task per segment | "
          + ", ".join(f"{k} MiB segment: {v} MiB" for k, v in results["worker_peak_mib"].items()) + " | | flat |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
