"""The incremental nightly benchmark: a second run with a seventh of the bytes new, against the first, in one run.

    python -m tests.bench.incremental [--sets 1g 4g]

Each set is one broker log dir written through Kafka's own LogSegment (tests/bench/java/GenSegment.java, as the
fleet benchmark's: 16 KiB producer batches, none/lz4/zstd across the partitions, each segment with its .index and
.timeindex), shaped like a busy broker's: seven segments a partition, each about 1/7 of it (48 MB on the 1 GB set).
The log dir the jobs read is a copy made of hard links (the files keep their identity): first without each
partition's last segment, then with it, as if each partition had rolled once since: a seventh of the bytes new.

Measured, each job in a fresh process as `kafkalog nightly` runs (tests/bench/fleet.py: wall time, peak memory of
the JVM, the Python driver and the Python workers): the fixed cost (the nightly job on the fleet benchmark's 1 MB
set, the second of two runs, and the run after it into the same warehouse, which decodes nothing: a second run's
own fixed cost, its planning over the warehouse included), the first run (every segment decoded), the second run
(incremental: only the new segments decoded, the others read back) and a full run of the same dirs (``--full``).
The target: the second run's time less the fixed cost at most 0.3x the first run's less the fixed cost (also given
with the second run's own fixed cost). Writes bench-data/results-incremental.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

from .data import DATA_DIR
from .fleet import SETS as FLEET_SETS
from .fleet import FleetSet, ensure_set, run_job

RESULTS = DATA_DIR / "results-incremental.json"
SEGMENTS_PER_PARTITION = 7
SETS = {s.name: s for s in (FleetSet("inc-1g", 10**9, 3), FleetSet("inc-4g", 4 * 10**9, 12))}


def _segment_bytes(fleet: FleetSet) -> int:
    """Seven segments a partition: the last holds what is left (a little less than the others)."""
    return int(fleet.bytes / fleet.partitions / SEGMENTS_PER_PARTITION * 1.01)


def _last_segments(log_dir: Path) -> dict[Path, int]:
    """Each partition dir's last segment's base offset."""
    return {d: max(int(p.stem) for p in d.glob("*.log")) for d in log_dir.iterdir() if d.is_dir()}


def link_copy(log_dir: Path, target: Path, with_last: bool) -> int:
    """Hard links of ``log_dir``'s files in ``target`` (made once), without or (then) with each partition's last
    segment's files and the producer snapshots from its base offset on (the last one a clean shutdown's, at the
    log end); returns the bytes of `.log` files linked in all."""
    last = _last_segments(log_dir)
    for path in log_dir.rglob("*"):
        if path.is_dir():
            continue
        rel = path.relative_to(log_dir)
        held_back = path.parent in last and path.stem.isdigit() and int(path.stem) >= last[path.parent]
        dest = target / rel
        if (held_back and not with_last) or dest.exists():
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, dest)
    return sum(p.stat().st_size for p in target.rglob("*.log"))


def manifest(warehouse: Path) -> list[dict]:
    """The manifest's rows (the table only grows: every parquet file of it is a row group of live rows)."""
    files = sorted((warehouse / "snapshots").rglob("*.parquet"))
    rows = [r for f in files for r in pq.read_table(f).to_pylist()]
    return sorted(rows, key=lambda r: r["committedTime"])


def bench_set(fleet: FleetSet, fixed: dict) -> dict:
    info = ensure_set(fleet, _segment_bytes(fleet))
    with tempfile.TemporaryDirectory(prefix="incremental-", dir=DATA_DIR) as tmp:
        work, broker = Path(tmp) / "nightly", Path(tmp) / "broker"
        work.mkdir()
        before = link_copy(fleet.log_dir, broker, with_last=False)
        print(f"  {fleet.name}: first run ...", file=sys.stderr, flush=True)
        first = run_job("nightly", broker, work, args=["--snapshot-id", "first"])
        after = link_copy(fleet.log_dir, broker, with_last=True)
        print(f"  {fleet.name}: second run ...", file=sys.stderr, flush=True)
        second = run_job("nightly", broker, work, args=["--snapshot-id", "second"])
        print(f"  {fleet.name}: full run ...", file=sys.stderr, flush=True)
        full = run_job("nightly", broker, work, args=["--snapshot-id", "full", "--full"])
        counts = {r["snapshotId"]: {k: r.get(k) for k in ("segmentsDecoded", "segmentsReused", "bytesDecoded",
                                                           "bytesReused")} for r in manifest(work / "warehouse")}
        # the run a broker's host makes: --polite (its Spark smaller), a first run into a warehouse of its own
        print(f"  {fleet.name}: polite run ...", file=sys.stderr, flush=True)
        (Path(tmp) / "polite").mkdir()
        polite = run_job("nightly", broker, Path(tmp) / "polite", args=["--polite"])
    base, base_next = fixed["seconds"], fixed["incremental"]["seconds"]
    return {"set": fleet.name, "partitions": fleet.partitions, "records": info["records"],
            "bytes_first": before, "bytes_second": after, "new_fraction": round(1 - before / after, 3),
            "fixed": fixed, "first": first, "second": second, "full": full, "polite": polite, "counts": counts,
            "second_vs_first_less_fixed": round((second["seconds"] - base) / (first["seconds"] - base), 3),
            # each run less the fixed cost of its kind: a second run's includes planning over the warehouse
            "second_vs_first_less_own_fixed": round((second["seconds"] - base_next) / (first["seconds"] - base), 3)}


def _memory(job: dict) -> str:
    m = job["memory_mib"]
    return f"{m['total']} ({m['jvm']} JVM)"


def markdown(results: list[dict]) -> str:
    lines = ["| set | run | wall s | segments decoded / reused | MB decoded / reused | peak MiB, all processes "
             "(JVM) |", "|---|---|---:|---:|---:|---:|"]
    for s in results:
        label = f"{s['bytes_second'] / 1e6:,.0f} MB, {s['partitions']} partitions"
        lines.append(f"| {label} | fixed cost (1 MB set) | {s['fixed']['seconds']} | | | {_memory(s['fixed'])} |")
        inc = s["fixed"]["incremental"]
        lines.append(f"| | fixed cost of a second run (1 MB set, nothing new) | {inc['seconds']} | | | "
                     f"{_memory(inc)} |")
        for run in ("first", "second", "full"):
            c = s["counts"].get(run, {})
            lines.append(f"| | {run} | {s[run]['seconds']} | {c.get('segmentsDecoded')} / {c.get('segmentsReused')} "
                         f"| {(c.get('bytesDecoded') or 0) / 1e6:,.0f} / {(c.get('bytesReused') or 0) / 1e6:,.0f} | "
                         f"{_memory(s[run])} |")
        lines.append(f"| | polite full run (`--polite`) | {s['polite']['seconds']} | | | {_memory(s['polite'])} |")
        lines.append(f"| | second less fixed / first less fixed | {s['second_vs_first_less_fixed']} (target "
                     f"0.3; new bytes: {s['new_fraction']}) | | | |")
        lines.append(f"| | second less a second run's fixed cost / first less fixed | "
                     f"{s['second_vs_first_less_own_fixed']} | | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", choices=[n.removeprefix("inc-") for n in SETS], default=["1g"])
    args = ap.parse_args(argv)
    one = FLEET_SETS["1m"]
    ensure_set(one)
    runs = []
    for _ in range(2):  # the first job of a session also pays what one process does once (caches, Ivy): the second
        with tempfile.TemporaryDirectory(prefix="incremental-fixed-", dir=DATA_DIR) as tmp:
            print("  fixed cost: the nightly job on the 1 MB set ...", file=sys.stderr, flush=True)
            runs.append(run_job("nightly", one.log_dir, Path(tmp)))
            if len(runs) == 2:  # and its next run: the incremental run's own fixed cost (the manifest, read-back)
                print("  fixed cost: its next run, incremental ...", file=sys.stderr, flush=True)
                runs.append(run_job("nightly", one.log_dir, Path(tmp), args=["--snapshot-id", "second"]))
    fixed = {**runs[1], "incremental": runs[2]}
    results = [bench_set(SETS[f"inc-{name}"], fixed) for name in args.sets]
    failed = [f"{s['set']} {run}" for s in results for run in ("first", "second", "full") if "failed" in s[run]]
    RESULTS.write_text(json.dumps(results, indent=2, default=str) + "\n")
    if "failed" not in fixed and not failed:
        print(markdown(results))
    for name in failed:
        print(f"failed: {name}", file=sys.stderr)
    return 1 if failed or "failed" in fixed else 0


if __name__ == "__main__":
    sys.exit(main())
