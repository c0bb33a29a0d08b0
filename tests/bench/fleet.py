"""The fleet benchmark: the jobs (nightly, report, stats, validate) on generated broker log dirs against the decoder
they are built on, in one run.

    python -m tests.bench.fleet [--sets 1m 100m 1g 4g] [--jobs nightly report stats validate stats-local ...]

Each set is one broker log dir of partitions written through Kafka's own LogSegment (tests/bench/java/GenSegment.java
fleet: 16 KiB producer batches of ~100-byte JSON records with keys, none/lz4/zstd in turn across the partitions,
2 MiB segments with their .index and .timeindex), built once into bench-data/fleet-<set>/. The 1m set (one
partition, 1 MB) measures each job's fixed cost.

For each set: the single-process decode of every record (the records view into Arrow, one thread), then each job
as its command-line users run it, each in a fresh process: `kafkalog nightly --log-dir <dir>` and `kafkalog report
--warehouse <the nightly job's>` on a local Spark session with default settings, `kafkalog stats|validate <dir>
--engine spark`, and the same with `--engine local` (stats-local, validate-local). Measured: wall time, MB/s,
records/s, and the peak memory of the driver's JVM (in local mode the executors run in it), of the Python driver
and of all Python workers at once, sampled from /proc. Then each job's marginal throughput: the bytes a set adds
to the next smaller one over the time they add. Writes bench-data/results-fleet.json and prints markdown tables.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .data import DATA_DIR, GENERATOR, MIB, kafka_classpath
from .decoders import ours

RESULTS = DATA_DIR / "results-fleet.json"
SEGMENT_BYTES = 2 * MIB
BATCH_BYTES = 16 * 1024
CODECS = "none,lz4,zstd"
GENERATOR_VERSION = "GenSegment.java fleet v2"
# stats and validate run on Spark (--engine spark); the -local jobs on the local engine (--engine local)
JOBS = ("nightly", "report", "stats", "validate", "stats-local", "validate-local")


@dataclass(frozen=True)
class FleetSet:
    name: str
    bytes: int  # about this many bytes of .log files in all
    partitions: int

    @property
    def log_dir(self) -> Path:
        return DATA_DIR / f"fleet-{self.name}" / "broker"


# 1m, one partition of 1 MB, is each job's fixed cost: the JVM, the session, its queries and commits
SETS = {s.name: s for s in (FleetSet("1m", 10**6, 1), FleetSet("100m", 100 * 10**6, 20),
                            FleetSet("1g", 10**9, 200), FleetSet("4g", 4 * 10**9, 1000))}


def ensure_set(fleet: FleetSet, segment_bytes: int = SEGMENT_BYTES) -> dict:
    """The set's log dir, generated on first use; returns what was written (records, batches, bytes)."""
    meta = fleet.log_dir.parent / "dataset.json"
    settings = {"bytes": fleet.bytes, "partitions": fleet.partitions, "segment_bytes": segment_bytes,
                "batch_bytes": BATCH_BYTES, "codecs": CODECS, "generator": GENERATOR_VERSION}
    cached = json.loads(meta.read_text()) if meta.exists() else {}
    if cached.get("settings") == settings:
        return cached
    shutil.rmtree(fleet.log_dir.parent, ignore_errors=True)
    fleet.log_dir.mkdir(parents=True)
    print(f"generating fleet set {fleet.name} ({fleet.partitions} partitions) ...", file=sys.stderr, flush=True)
    totals = write_partitions(fleet.log_dir, "fleet", fleet.partitions, fleet.bytes // fleet.partitions, segment_bytes)
    info = {**totals, "settings": settings}
    meta.write_text(json.dumps(info, indent=2) + "\n")
    return info


def generate(*args: str) -> str:
    """GenSegment.java run with ``args`` (Kafka's jars on its classpath); its output."""
    return subprocess.run(["java", "-Xmx1g", "-cp", kafka_classpath(), str(GENERATOR), *args], capture_output=True,
                          text=True, check=True).stdout


def write_partitions(log_dir: Path, topic: str, partitions: int, partition_bytes: int, segment_bytes: int,
                     seed: int = 1) -> dict[str, int]:
    """``partitions`` partitions of ``topic`` in ``log_dir``, each about ``partition_bytes`` of `.log` rolled at
    ``segment_bytes`` (GenSegment.java's fleet mode); returns the records, batches and bytes written in all."""
    out = generate("fleet", str(log_dir), str(partitions), str(partition_bytes), str(segment_bytes), str(BATCH_BYTES),
                   str(seed), topic, CODECS)
    totals = {"records": 0, "batches": 0, "bytes": 0}
    for line in out.splitlines():
        for field in line.split()[1:]:
            key, value = field.split("=")
            totals[key] += int(value)
    return totals


class PeakMemory:
    """Peak memory of a process tree, sampled from /proc every 0.2 s: the JVM, the Python driver (the root) and the
    Python workers (everything else), each the peak of the group's sum, and ``total``, the peak of the three at one
    sample. The workers are forked from one daemon
    and share its pages, so their resident sets double-count: ``python_workers`` sums their proportional set
    sizes (PSS, shared pages split among the sharers), ``python_workers_rss`` their resident sets, and
    ``python_workers_count`` is the most alive at once."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.peaks = {"jvm": 0, "python_driver": 0, "python_workers": 0, "python_workers_rss": 0, "total": 0}
        self.most_workers = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, int]:
        self._stop.set()
        self._thread.join()
        return {**{k: round(v / MIB) for k, v in self.peaks.items()}, "python_workers_count": self.most_workers}

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            groups = dict.fromkeys(self.peaks, 0)
            workers = 0
            for pid, name in _descendants(self.root):
                rss, pss = _resident(pid)
                if rss is None:
                    continue  # ended meanwhile
                if pid == self.root:
                    groups["python_driver"] += rss
                elif name == "java":
                    groups["jvm"] += rss
                else:
                    groups["python_workers"] += pss
                    groups["python_workers_rss"] += rss
                    workers += 1
            # the whole job at one moment: what the processes hold together, shared pages once
            groups["total"] = groups["jvm"] + groups["python_driver"] + groups["python_workers"]
            for k, v in groups.items():
                self.peaks[k] = max(self.peaks[k], v)
            self.most_workers = max(self.most_workers, workers)


def _resident(pid: int) -> tuple[int | None, int]:
    """A process's resident and proportional set sizes in bytes (None: it has ended)."""
    try:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:])
        return int(fields["Rss"].split()[0]) * 1024, int(fields["Pss"].split()[0]) * 1024
    except (OSError, KeyError, ValueError, IndexError):
        return None, 0


def _descendants(root: int) -> list[tuple[int, str]]:
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
            children.setdefault(int(rest[1]), []).append(int(entry))
            names[int(entry)] = name
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append((pid, names.get(pid, "")))
        todo += children.get(pid, [])
    return out


def run_job(job: str, log_dir: Path | str, workdir: Path, env: dict[str, str] | None = None,
            args: list[str] | tuple[str, ...] = ()) -> dict:
    """One job in a fresh process, as a user runs it (in ``env``, with more command-line ``args``); its wall time and
    peak memory. ``report`` reads the tables the nightly job wrote into ``workdir/../nightly``."""
    cli = [sys.executable, "-m", "kafkalog_spark.cli", "-q"]
    if job == "nightly":
        cmd = cli + ["nightly", "--log-dir", str(log_dir), "--warehouse", str(workdir / "warehouse")]
    elif job == "report":
        cmd = cli + ["report", "--warehouse", str(workdir.parent / "nightly" / "warehouse"), "-o",
                     str(workdir / "report.html")]
    else:
        command, _, engine = job.partition("-")  # stats and validate on Spark, stats-local on the local engine
        cmd = cli + [command, str(log_dir), "--engine", engine or "spark"]
    cmd += list(args)
    started = time.monotonic()
    with open(workdir / f"{job}.out", "wb") as out, open(workdir / f"{job}.err", "wb") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=workdir, env=env)
        memory = PeakMemory(proc.pid)
        code = proc.wait()
        peaks = memory.stop()
    seconds = time.monotonic() - started
    ok = code == 0 or (job.startswith("validate") and code == 1)  # 1: findings at the gate, a verdict, not a failure
    if not ok:
        err = (workdir / f"{job}.err").read_text(errors="replace")
        cause = next((line for line in err.splitlines() if "OutOfMemoryError" in line), "")
        return {"job": job, "failed": f"exit {code}: {cause}\n{err[-2000:]}", "out_of_memory": bool(cause),
                "seconds": round(seconds, 1), "memory_mib": peaks}
    result = {"job": job, "seconds": round(seconds, 1), "memory_mib": peaks}
    if job == "report":
        result["page_bytes"] = (workdir / "report.html").stat().st_size
    return result


def decode_single_process(log_dir: Path) -> dict:
    ours("records", log_dir, end=1 << 20)  # warm-up: the compiled code loaded, the codecs imported
    rounds, started = 0, time.monotonic()
    while not rounds or time.monotonic() - started < 0.5:  # a small set is decoded again, for a measurable time
        records, _ = ours("records", log_dir)
        rounds += 1
    return {"seconds": round((time.monotonic() - started) / rounds, 4), "records": records}


def bench_set(fleet: FleetSet, jobs: list[str]) -> dict:
    info = ensure_set(fleet)
    cores = os.cpu_count() or 1
    decode = decode_single_process(fleet.log_dir)
    decode_rate = info["bytes"] / decode["seconds"]
    results = {"set": fleet.name, "partitions": fleet.partitions, "records": info["records"],
               "bytes": info["bytes"], "cores": cores, "decode_single_process": decode,
               "decode_mb_s_x_cores": round(decode_rate * cores / 1e6, 1), "jobs": []}
    with tempfile.TemporaryDirectory(prefix="fleet-") as tmp:
        for job in jobs:
            print(f"  {fleet.name}: {job} ...", file=sys.stderr, flush=True)
            (Path(tmp) / job).mkdir()
            r = run_job(job, fleet.log_dir, Path(tmp) / job)
            if "failed" not in r:
                r["mb_s"] = round(info["bytes"] / r["seconds"] / 1e6, 1)
                r["records_s"] = round(info["records"] / r["seconds"])
                r["vs_decode_x_cores"] = round(info["bytes"] / r["seconds"] / (decode_rate * cores), 3)
            results["jobs"].append(r)
    return results


def markdown(results: list[dict]) -> str:
    lines = ["| set | job | wall s | MB/s | M records/s | vs decode x cores | peak JVM MiB | peak workers MiB: PSS "
             "(RSS), most at once |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for s in results:
        label = f"{s['bytes'] / 1e6:,.0f} MB, {s['partitions']} partitions, {s['records'] / 1e6:.1f} M records"
        d = s["decode_single_process"]
        lines.append(f"| {label} | decode, 1 process (x {s['cores']} cores) | {d['seconds']} | "
                     f"{s['bytes'] / d['seconds'] / 1e6:,.0f} (x {s['cores']}: {s['decode_mb_s_x_cores']:,.0f}) | "
                     f"{d['records'] / d['seconds'] / 1e6:.2f} | | | |")
        for j in s["jobs"]:
            m = j["memory_mib"]
            if "failed" in j:
                why = "out of Java heap" if j.get("out_of_memory") else "failed"
                lines.append(f"| | {j['job']} | {why} after {j['seconds']} s | | | | {m['jvm']} | {_workers(m)} |")
                continue
            name = j["job"] + (f" ({j['page_bytes'] / 1e6:.1f} MB page)" if "page_bytes" in j else "")
            lines.append(f"| | {name} | {j['seconds']} | {j['mb_s']} | {j['records_s'] / 1e6:.2f} | "
                         f"{j['vs_decode_x_cores']} | {m['jvm']} | {_workers(m)} |")
    return "\n".join(lines + marginal(results))


def marginal(results: list[dict]) -> list[str]:
    """Each job's throughput on the bytes one set adds to the next smaller one, its fixed cost taken out: what a
    larger input costs per byte, against the larger set's decode x cores."""
    by_size = sorted(results, key=lambda s: s["bytes"])
    lines = []
    for small, large in itertools.pairwise(by_size):
        added = large["bytes"] - small["bytes"]
        before = {j["job"]: j["seconds"] for j in small["jobs"] if "failed" not in j}
        for j in large["jobs"]:
            if "failed" in j or j["job"] not in before or j["seconds"] <= before[j["job"]]:
                continue
            rate = added / (j["seconds"] - before[j["job"]])
            lines.append(f"| {small['set']} -> {large['set']} | {j['job']} | {j['seconds'] - before[j['job']]:.1f} "
                         f"| {rate / 1e6:,.1f} | {rate / 1e6 / large['decode_mb_s_x_cores']:.3f} |")
    if not lines:
        return []
    return ["", "| from set -> set | job | added wall s | added MB/s | vs decode x cores |", "|---|---|---:|---:|---:|",
            *lines]


def _workers(memory: dict) -> str:
    return f"{memory['python_workers']} ({memory['python_workers_rss']}), {memory['python_workers_count']}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", choices=list(SETS), default=["1m", "100m", "1g"])
    ap.add_argument("--jobs", nargs="+", choices=JOBS, default=list(JOBS), help="report needs nightly before it")
    args = ap.parse_args(argv)
    results = [bench_set(SETS[name], args.jobs) for name in args.sets]
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(markdown(results))
    failed = [f"{s['set']} {j['job']}" for s in results for j in s["jobs"] if "failed" in j]
    for name in failed:
        print(f"failed: {name}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
