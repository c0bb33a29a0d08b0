"""The broker-shaped benchmark: the nightly job on log dirs shaped like a real broker's, against read_log's decoder and
against its anchor, in one run.

    python -m tests.bench.broker_shaped [--sets 1g 8g]

Each set is one broker log dir written through Kafka's own code (tests/bench/java/GenSegment.java): partitions
sized as a broker's are, a few large ones with Kafka's default 1 GiB segments (the last one active), a few dozen of
tens of MB in one segment, and a long tail of small partitions with one or two small segments. Every partition dir
has what a broker writes beside its segments (.index, .timeindex, a producer snapshot at each roll and at the clean
shutdown, partition.metadata, leader-epoch-checkpoint), and the log dir's root the files of a KRaft broker's clean
shutdown (recovery-point-offset-checkpoint, replication-offset-checkpoint, log-start-offset-checkpoint,
meta.properties), written with Kafka's own writers. The counts of partitions, segments and files are printed.

In the same run, each in a fresh process as `kafkalog nightly` runs (tests/bench/fleet.py's run_job):

- the anchor: a bare local session with Delta's jars making as many one-row commits to as many tables as the job
  made (tests/bench/fixed_cost.py), and the nightly job on the fleet benchmark's 1 MB set (the job's fixed cost);
- per set: read_log's decoder over every segment in one process (the records view into Arrow, one thread), the
  nightly job, and `kafkalog report` of the job's snapshot (as a user runs it: on the local engine, which reads a
  warehouse on this machine without a JVM; and with --engine spark, the same page from a Spark session).

Reported, as ratios of the same run: the fixed cost against the anchor (target: at most 1.5x); per byte, the set's
bytes over the job's time less the fixed cost, against the decoder's rate times the cores (target: at least 0.8);
the report's wall time (target: under 15 s);
per segment (target: the job's cost at most 2x the decoder's divided by the cores), a bound on the set with the most
segments (each side's whole time, the job's less the fixed cost, over the segments) and, where one run's noise
allows, both sets' times split into a part per byte and a part per segment (:func:`split_costs`). Writes
bench-data/results-broker-shaped.json and prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from .data import DATA_DIR
from .fixed_cost import job_commits, run_anchor
from .fleet import BATCH_BYTES, CODECS, decode_single_process, ensure_set, generate, run_job, write_partitions
from .fleet import SETS as FLEET_SETS

RESULTS = DATA_DIR / "results-broker-shaped.json"
GENERATOR_VERSION = "GenSegment.java fleet v2 + checkpoints v1"
GIB, KIB = 1 << 30, 1 << 10
CLUSTER_ID = "kafkalogBenchCluster0A"  # a KRaft cluster id: 22 characters of URL-safe base64
FIXED_TARGET, PER_BYTE_TARGET, PER_SEGMENT_TARGET = 1.5, 0.8, 2.0
REPORT_TARGET_S = 15


@dataclass(frozen=True)
class TopicShape:
    """``partitions`` partitions of a topic, each about ``partition_bytes`` of `.log`, rolled at ``segment_bytes``."""

    topic: str
    partitions: int
    partition_bytes: int
    segment_bytes: int


@dataclass(frozen=True)
class BrokerSet:
    name: str
    topics: tuple[TopicShape, ...]

    @property
    def log_dir(self) -> Path:
        return DATA_DIR / f"broker-{self.name}" / "broker"


# Most of a broker's bytes are in a few busy partitions; most of its partitions are small and idle.
SETS = {s.name: s for s in (
    BrokerSet("1g", (TopicShape("clicks", 2, 400 * 10**6, GIB),
                     TopicShape("orders", 20, 75 * 10**5, GIB),
                     TopicShape("audit", 500, 100 * 10**3, 64 * KIB))),
    BrokerSet("8g", (TopicShape("clicks", 4, 1500 * 10**6, GIB),
                     TopicShape("orders", 48, 35 * 10**6, GIB),
                     TopicShape("audit", 2000, 160 * 10**3, 100 * KIB))),
)}


def ensure_broker_set(broker: BrokerSet) -> dict:
    """The set's log dir, generated on first use; returns its counts (records, batches, bytes, partitions, segments,
    files by kind)."""
    meta = broker.log_dir.parent / "dataset.json"
    settings = {"topics": [asdict(t) for t in broker.topics], "batch_bytes": BATCH_BYTES, "codecs": CODECS,
                "generator": GENERATOR_VERSION}
    cached = json.loads(meta.read_text()) if meta.exists() else {}
    if cached.get("settings") == settings:
        return cached
    shutil.rmtree(broker.log_dir.parent, ignore_errors=True)
    broker.log_dir.mkdir(parents=True)
    totals: Counter[str] = Counter()
    for seed, t in enumerate(broker.topics, 1):
        print(f"generating broker set {broker.name}: {t.partitions} partition(s) of {t.topic} ...", file=sys.stderr,
              flush=True)
        totals.update(write_partitions(broker.log_dir, t.topic, t.partitions, t.partition_bytes, t.segment_bytes, seed))
    generate("checkpoints", str(broker.log_dir), CLUSTER_ID, "1")
    info = {**totals, **file_counts(broker.log_dir), "settings": settings}
    meta.write_text(json.dumps(info, indent=2) + "\n")
    return info


def file_counts(log_dir: Path) -> dict:
    """Partitions, segments and the files of each kind in ``log_dir`` (the root's by name)."""
    kinds: Counter[str] = Counter()
    for path in log_dir.rglob("*"):
        if path.is_file():
            kinds[path.suffix if path.stem.isdigit() else path.name] += 1
    partitions = sum(1 for p in log_dir.iterdir() if p.is_dir())
    return {"partitions": partitions, "segments": kinds[".log"], "files": dict(sorted(kinds.items()))}


def split_costs(a: tuple[float, int, int], b: tuple[float, int, int]) -> tuple[float, float] | None:
    """(seconds per byte, seconds per segment) from two sets' (seconds, bytes, segments), solving
    ``seconds = bytes * per_byte + segments * per_segment`` for both; None when the sets do not tell them apart."""
    (ta, ba, sa), (tb, bb, sb) = a, b
    det = ba * sb - bb * sa
    if det == 0:
        return None
    return (ta * sb - tb * sa) / det, (ba * tb - bb * ta) / det


def bench_set(broker: BrokerSet, fixed: float) -> dict:
    info = ensure_broker_set(broker)
    cores = os.cpu_count() or 1
    print(f"  {broker.name}: {info['partitions']} partitions, {info['segments']} segments, "
          f"{info['bytes'] / 1e6:,.0f} MB; decoding in one process ...", file=sys.stderr, flush=True)
    decode = decode_single_process(broker.log_dir)
    print(f"  {broker.name}: the nightly job ...", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix=f"broker-{broker.name}-", dir=DATA_DIR) as tmp:
        for step in ("nightly", "report", "report-spark"):  # run_job's report reads ../nightly/warehouse
            (Path(tmp) / step).mkdir()
        job = run_job("nightly", broker.log_dir, Path(tmp) / "nightly")
        reports = {}
        if "failed" not in job:
            print(f"  {broker.name}: the report, on the local engine and on Spark ...", file=sys.stderr, flush=True)
            reports = {"report": run_job("report", broker.log_dir, Path(tmp) / "report"),
                       "report_spark": run_job("report", broker.log_dir, Path(tmp) / "report-spark",
                                               args=["--engine", "spark"])}
    result = {"set": broker.name, **{k: info[k] for k in ("partitions", "segments", "bytes", "records", "files")},
              "cores": cores, "decode": decode, "nightly": job, **reports}
    if "failed" not in job:
        decode_rate = info["bytes"] / decode["seconds"]
        result["nightly_mb_s_above_fixed"] = round(info["bytes"] / (job["seconds"] - fixed) / 1e6, 1)
        result["per_byte_vs_decode_x_cores"] = round(info["bytes"] / (job["seconds"] - fixed) / (decode_rate * cores),
                                                     3)
    return result


def per_segment(results: list[dict], fixed: float) -> dict | None:
    """Per segment, on the set with the most segments: the job's time above the fixed cost and the decoder's time,
    each over the segments (a bound: their bytes' cost counted in); and, from two sets, each side's cost split into a
    part per byte and a part per segment (None where the two sets do not tell them apart in this run: a negative
    part, the noise of one run each)."""
    done = [r for r in results if "failed" not in r["nightly"]]
    if not done:
        return None
    big = max(done, key=lambda r: r["segments"])
    cores = big["cores"]
    job_bound = (big["nightly"]["seconds"] - fixed) / big["segments"]
    decode_bound = big["decode"]["seconds"] / big["segments"]
    out = {"set": big["set"], "job_ms_per_segment_bound": round(job_bound * 1e3, 2),
           "decode_ms_per_segment_bound": round(decode_bound * 1e3, 3),
           "job_vs_decode_over_cores_bound": round(job_bound / (decode_bound / cores), 2)}
    if len(done) < 2:
        return out
    a, b = done[0], done[1]
    job = split_costs((a["nightly"]["seconds"] - fixed, a["bytes"], a["segments"]),
                      (b["nightly"]["seconds"] - fixed, b["bytes"], b["segments"]))
    dec = split_costs((a["decode"]["seconds"], a["bytes"], a["segments"]),
                      (b["decode"]["seconds"], b["bytes"], b["segments"]))
    if job and dec and min(*job, *dec) > 0:
        out |= {"job_ms_per_segment": round(job[1] * 1e3, 2), "decode_ms_per_segment": round(dec[1] * 1e3, 3),
                "job_vs_decode_per_segment_over_cores": round(job[1] / (dec[1] / cores), 2)}
    return out


def _seconds(job: dict | None) -> str:
    if job is None:
        return "-"
    return "failed" if "failed" in job else str(job["seconds"])


def markdown(anchor: dict, fixed_job: dict, results: list[dict], split: dict | None) -> str:
    ratio = fixed_job["seconds"] / anchor["seconds"]
    lines = ["| set | partitions | segments | files beside the segments | MB of `.log` | decode, 1 process s "
             "(MB/s x cores) | nightly s | nightly MB/s above the fixed cost | per byte: vs decode x cores | "
             f"report s, local engine (on Spark) (target: under {REPORT_TARGET_S} s) |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        others = ", ".join(f"{n} {k}" for k, n in r["files"].items() if k != ".log")
        rate = r["bytes"] / r["decode"]["seconds"] * r["cores"] / 1e6
        lines.append(f"| {r['set']} | {r['partitions']:,} | {r['segments']:,} | {others} | {r['bytes'] / 1e6:,.0f} | "
                     f"{r['decode']['seconds']} ({rate:,.0f}) | {r['nightly'].get('seconds')} | "
                     f"{r.get('nightly_mb_s_above_fixed', 'failed')} | {r.get('per_byte_vs_decode_x_cores', '')} | "
                     f"{_seconds(r.get('report'))} ({_seconds(r.get('report_spark'))}) |")
    lines += ["", f"Fixed cost: the nightly job on the 1 MB set {fixed_job['seconds']} s, its anchor (a bare session "
              f"with Delta, {anchor['commits']} one-row commits to {anchor['tables']} tables) {anchor['seconds']} s: "
              f"{ratio:.2f}x (target: at most {FIXED_TARGET}x, {'met' if ratio <= FIXED_TARGET else 'not met'})."]
    if split:
        lines.append(f"Per segment, bound (all of the {split['set']} set's time over its segments): the job "
                     f"{split['job_ms_per_segment_bound']} ms a segment above the fixed cost, the decoder "
                     f"{split['decode_ms_per_segment_bound']} ms in one process: "
                     f"{split['job_vs_decode_over_cores_bound']}x the decoder's divided by the cores (target: at most "
                     f"{PER_SEGMENT_TARGET}x).")
        if "job_ms_per_segment" in split:
            lines.append(f"Per segment, from both sets' times split into per byte and per segment: the job "
                         f"{split['job_ms_per_segment']} ms, the decoder {split['decode_ms_per_segment']} ms: "
                         f"{split['job_vs_decode_per_segment_over_cores']}x.")
        else:
            lines.append("The two sets' times do not split into a part per byte and a part per segment in this run "
                         "(a negative part: one run each).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    args = ap.parse_args(argv)
    one = FLEET_SETS["1m"]
    ensure_set(one)
    for name in args.sets:  # generated before anything is timed
        ensure_broker_set(SETS[name])
    with tempfile.TemporaryDirectory(prefix="broker-fixed-", dir=DATA_DIR) as tmp:
        jobs = []
        for i in range(2):  # the first job of a machine's session pays what one process does once (caches, Ivy)
            (Path(tmp) / f"job-{i}").mkdir()
            print("  fixed cost: the nightly job on the 1 MB set ...", file=sys.stderr, flush=True)
            jobs.append(run_job("nightly", one.log_dir, Path(tmp) / f"job-{i}"))
        fixed_job = jobs[-1]
        if "failed" in fixed_job:
            print(fixed_job["failed"], file=sys.stderr)
            return 1
        commits = job_commits(Path(tmp) / "job-1" / "warehouse")
        (Path(tmp) / "anchor").mkdir()
        print(f"  the anchor ({sum(commits.values())} commits to {len(commits)} tables) ...", file=sys.stderr,
              flush=True)
        anchor = run_anchor(Path(tmp) / "anchor", commits) | {"commits": sum(commits.values()),
                                                               "tables": len(commits)}
    if "failed" in anchor:
        print(anchor["failed"], file=sys.stderr)
        return 1
    fixed = fixed_job["seconds"]
    results = [bench_set(SETS[name], fixed) for name in args.sets]
    split = per_segment(results, fixed)
    RESULTS.write_text(json.dumps({"anchor": anchor, "fixed": fixed_job, "sets": results, "split": split}, indent=2)
                       + "\n")
    print(markdown(anchor, fixed_job, results, split))
    failed = [(r["set"], job, r[job]["failed"]) for r in results for job in ("nightly", "report", "report_spark")
              if "failed" in r.get(job, {})]
    for name, job, message in failed:
        print(f"failed: {name}: {job}: {message}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
