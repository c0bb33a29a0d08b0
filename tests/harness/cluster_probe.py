"""The `kafkalog` source on a cluster (spark-submit this with --master): waits for the executors, reads the
records and batches views of the given paths, and prints one JSON line: each view's row count and offset sum
per topic-partition from Spark and from the single-process reader in the driver, and which executor JVMs ran
the source's Python workers.

    spark-submit --master spark://... tests/harness/cluster_probe.py <executors> <path> [<path> ...]
"""

from __future__ import annotations

import json
import os
import sys
import time


def jvm_of_python_worker() -> tuple[int, int]:
    """(this Python worker's pid, the pid of the executor JVM above it: the worker's daemon's parent)."""
    daemon = os.getppid()
    with open(f"/proc/{daemon}/stat") as f:
        stat = f.read()
    return os.getpid(), int(stat[stat.rindex(")") + 2:].split()[1])


def tasks_per_executor(spark) -> dict[str, int]:
    """Tasks each executor has run so far (Spark's status store, kept with or without a UI)."""
    summaries = spark.sparkContext._jsc.sc().statusStore().executorList(True)
    out = {}
    for i in range(summaries.size()):
        e = summaries.apply(i)
        if e.id() != "driver":
            out[e.id()] = e.totalTasks()
    return out


def main(argv: list[str]) -> int:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from kafkalog_spark import read_log
    from kafkalog_spark.source import register

    executors, paths = int(argv[0]), argv[1:]
    spark = SparkSession.builder.appName("kafkalog-cluster-probe").getOrCreate()
    register(spark)
    deadline = time.monotonic() + 120
    while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1 < executors:  # minus the driver
        if time.monotonic() > deadline:
            raise SystemExit(f"fewer than {executors} executors registered in 120 s")
        time.sleep(0.5)
    out: dict = {"executors": spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1}
    for view in ("records", "batches"):
        # small splits: several tasks even on a small corpus, for both executors to take some
        df = (spark.read.format("kafkalog").option("view", view).option("includeInternal", "true")
              .option("maxSplitBytes", "16k").option("openCostBytes", "4k").load(paths))
        offset = "offset" if view == "records" else "lastOffset"
        rows = df.where("problem is null").groupBy("topic", "partition").agg(
            F.count("*").alias("n"), F.sum(offset).alias("s")).collect()
        out[f"spark_{view}"] = sorted([r.topic, r.partition, r.n, r.s] for r in rows)
        local = read_log(paths, view=view, findings=[])
        table = local.group_by(["topic", "partition"]).aggregate([(offset, "count"), (offset, "sum")])
        topics = {r[0] for r in out[f"spark_{view}"]}
        out[f"local_{view}"] = sorted([t, p, n, s] for t, p, n, s in zip(
            *(table.column(c).to_pylist() for c in ("topic", "partition", f"{offset}_count", f"{offset}_sum")),
            strict=True) if t in topics)
        out[f"{view}_tasks"] = df.rdd.getNumPartitions()
    out["source_tasks_per_executor"] = tasks_per_executor(spark)
    pairs = spark.sparkContext.parallelize(range(16), 16).map(lambda _: jvm_of_python_worker()).collect()
    out["executor_jvms"] = len({jvm for _, jvm in pairs})
    print("PROBE " + json.dumps(out), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
