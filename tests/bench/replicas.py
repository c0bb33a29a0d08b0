"""Three replicas of a broker-shaped log dir compared, against reading their batches, in one run.

    python -m tests.bench.replicas

The set: the object-storage benchmark's (one broker log dir of 16 partitions, 1 GB of `.log` files in 64 MiB
segments with their indexes, written through Kafka's LogSegment, tests/bench/fleet.py), built once into bench-data/,
taken as three brokers' replicas: hard links to its segment files under bench-data/replicas-store-1g/broker-N, each
with the files a broker writes beside them (meta.properties naming broker N of one cluster, each partition's
partition.metadata and leader-epoch-checkpoint). In one session, alternately and twice each after a warm-up: the
batches view of the three dirs aggregated over its header columns (the anchor), and the replica comparison
(`kafkalog compare-replicas`'s analysis: its views, the table collected). Reported: the best time of each and their
ratio (the target: at most 2). Writes bench-data/results-replicas.json.
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from pathlib import Path

from .data import DATA_DIR
from .fleet import ensure_set
from .object_store import SEGMENT_BYTES, STORE_SET
from .spark_scan import timed

RESULTS = DATA_DIR / "results-replicas.json"
BROKERS = (1, 2, 3)
CLUSTER_ID = "kafkalogBenchCluster0A"  # 22 characters, as a Uuid's text


def replica_dirs() -> list[Path]:
    """The three brokers' log dirs, made once: the set's files hard-linked, each broker's own small files written."""
    source = STORE_SET.log_dir
    root = DATA_DIR / f"replicas-{STORE_SET.name}"
    dirs = [root / f"broker-{b}" for b in BROKERS]
    topic_ids = {p.name: base64.urlsafe_b64encode(uuid.uuid5(uuid.NAMESPACE_URL, p.name).bytes).decode().rstrip("=")
                 for p in source.iterdir() if p.is_dir()}
    for broker, d in zip(BROKERS, dirs, strict=True):
        for part in sorted(p for p in source.iterdir() if p.is_dir()):
            target = d / part.name
            target.mkdir(parents=True, exist_ok=True)
            for f in part.iterdir():
                if not (target / f.name).exists():
                    os.link(f, target / f.name)
            (target / "partition.metadata").write_text(f"version: 0\ntopic_id: {topic_ids[part.name]}\n")
            (target / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
        (d / "meta.properties").write_text(f"version=1\nnode.id={broker}\ncluster.id={CLUSTER_ID}\n")
    return dirs


def main() -> None:
    from pyspark.sql import functions as F

    from kafkalog_spark.config import TopicConfigs
    from kafkalog_spark.nightly.pipeline import replica_table, replica_views
    from kafkalog_spark.session import local_session

    info = ensure_set(STORE_SET, SEGMENT_BYTES)
    dirs = [str(d) for d in replica_dirs()]
    gb = sum(f.stat().st_size for f in STORE_SET.log_dir.rglob("*.log")) / 1e9
    print(f"set: 3 replicas of {gb:.2f} GB ({info['records']} records each)", flush=True)
    spark = local_session("kafkalog-bench", delta=False, extra={"spark.ui.showConsoleProgress": "false"})
    configs = TopicConfigs.of(None)

    def batches() -> int:
        df = spark.read.format("kafkalog").option("view", "batches").load(dirs)
        # the header columns the comparison reads, so that every batch header is decoded (a bare count is not)
        return df.agg(F.count("*"), F.sum("crc"), F.max("lastOffset"), F.max("partitionLeaderEpoch")).collect()[0][0]

    def compare() -> list:
        rows, _ = replica_table(spark, dirs, replica_views(spark, dirs, True), configs)
        return rows.collect()

    try:
        batch_count, rows = batches(), compare()  # warm-up: numba caches, the workers
        runs: dict[str, list[float]] = {"batches": [], "compare": []}
        for _ in range(2):
            runs["batches"].append(timed(batches)[0])
            runs["compare"].append(timed(compare)[0])
    finally:
        spark.stop()
    best = {k: round(min(v), 1) for k, v in runs.items()}
    statuses = sorted({r.status for r in rows})
    results = {"gb_per_replica": round(gb, 3), "replicas": len(dirs), "batches": batch_count, "rows": len(rows),
               "statuses": statuses, "seconds": runs, "best": best,
               "ratio": round(best["compare"] / best["batches"], 2)}
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"| batches view of 3 replicas | {best['batches']} s | replica comparison | {best['compare']} s | "
          f"{results['ratio']}x | {len(rows)} rows, {statuses} |", flush=True)


if __name__ == "__main__":
    main()
