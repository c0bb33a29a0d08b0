"""`make bench`: the decoder benchmark. kafkalog_spark's records and batches views against kafka-python's
and aiokafka's decoders, on the same Kafka-written segments (none, lz4, zstd), one core each.

    .venv/bin/python -m tests.bench.run [--reps 3] [--peer-mib 32] [--codecs none lz4 zstd] [--no-verify]

Builds the data set on first use (see tests/bench/data.py), prints a table, the target verdicts and a
markdown table for the README, and writes everything to bench-data/results-decoder.json. Where the
time goes: `.venv/bin/python -m tests.bench.hotspots`.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pyarrow as pa

from . import decoders, report, verify
from .data import CODECS, DATA_DIR, MIB, Dataset, Settings, ensure_datasets, read_prefix
from .timing import Timing, measure

RESULTS = DATA_DIR / "results-decoder.json"
WARMUP_BYTES = 1 * MIB


def warm_page_cache(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(16 * MIB):
            pass


def bench_codec(ds: Dataset, reps: int, peer_bytes: int, log: Callable[[str], None]) -> tuple[
        report.CodecResult, Timing]:
    """Time the four decoders on one codec's files; also our records view on the peers' prefix."""
    warm_page_cache(ds.segment)
    prefix = read_prefix(ds.segment, peer_bytes)
    small = read_prefix(ds.segment, WARMUP_BYTES)
    # Warm-up (excluded): loads numba's compiled code, imports codecs, fills caches.
    for view in ("records", "batches"):
        decoders.ours(view, ds.log_dir, end=WARMUP_BYTES)
    decoders.aiokafka(small)
    decoders.kafka_python(small)

    log(f"  {ds.codec}: records view ...")
    records = measure(lambda: decoders.ours("records", ds.log_dir), ds.bytes, reps)
    log(f"  {ds.codec}: batches view ...")
    batches = measure(lambda: decoders.ours("batches", ds.log_dir), ds.bytes, max(reps, 5))
    ours_prefix = measure(lambda: decoders.ours("records", ds.log_dir, end=len(prefix)), len(prefix), reps)
    log(f"  {ds.codec}: aiokafka ...")
    aio = measure(lambda: decoders.aiokafka(prefix), len(prefix), reps)
    log(f"  {ds.codec}: kafka-python ...")
    kp = measure(lambda: decoders.kafka_python(prefix), len(prefix), reps)
    for name, t in (("aiokafka", aio), ("kafka-python", kp)):
        if t.records != ours_prefix.records:
            raise AssertionError(f"{name} decoded {t.records} records of the prefix, "
                                 f"ours {ours_prefix.records}")
    if records.records != batches.records:
        raise AssertionError(f"records view {records.records} rows, batches declare {batches.records}")
    return report.CodecResult(ds.codec, ds.bytes, records, batches, aio, kp), ours_prefix


def environment() -> dict[str, Any]:
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    models = [x.split(":", 1)[1].strip() for x in lines if x.startswith("model name")]
    cpu = models[0] if models else platform.processor()
    pkgs = ("kafkalog-spark", "numba", "numpy", "pyarrow", "zstandard", "lz4", "crc32c", "kafka-python",
            "aiokafka")
    return {"cpu": cpu, "python": platform.python_version(), "platform": platform.platform(),
            "packages": {p: version(p) for p in pkgs}, "aiokafka_cython": decoders.aiokafka_is_cython()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions per decoder (best is kept)")
    ap.add_argument("--peer-mib", type=int, default=32, help="prefix of each file the peers decode (MiB)")
    ap.add_argument("--codecs", nargs="+", default=list(CODECS), choices=CODECS)
    ap.add_argument("--no-verify", action="store_true", help="skip the comparison with kafka-python")
    args = ap.parse_args(argv)
    started = time.perf_counter()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    pa.set_cpu_count(1)  # one core per decoder: no Arrow helper threads
    pa.set_io_thread_count(1)
    settings = Settings()
    datasets = ensure_datasets(settings, tuple(args.codecs))
    log(f"timing (best of {args.reps} by CPU time; peers on the first {args.peer_mib} MiB of each file) ...")
    results, prefix_runs, checks = [], {}, {}
    for codec, ds in datasets.items():
        result, prefix_runs[codec] = bench_codec(ds, args.reps, args.peer_mib * MIB, log)
        results.append(result)
        if not args.no_verify:
            log(f"  {codec}: comparing with kafka-python ...")
            checks[codec] = verify.check(ds, result.records.records)

    rows = [r.row() for r in results]
    verdicts = report.verdicts(results)
    elapsed = time.perf_counter() - started
    print(f"\nkafkalog_spark decoder benchmark: one thread each, rates from the CPU time of the best of "
          f"{args.reps} runs;\nMB = 10^6 bytes of .log file. Our views read the whole segment of each codec; "
          f"aiokafka and kafka-python\ndecode the first {args.peer_mib} MiB of the same file from memory. "
          "Every decoder checks CRCs. aiokafka: "
          + ("its Cython extension." if decoders.aiokafka_is_cython() else "its pure-Python fallback (!)"))
    print()
    print(report.text_table(rows))
    print("\nOur records view on the peers' prefix (same bytes): "
          + ", ".join(f"{c} {t.records_per_s / 1e6:.2f} Mrec/s" for c, t in prefix_runs.items()))
    print("\nTargets:")
    print(report.verdict_lines(verdicts))
    if checks:
        print("\nAgreement with kafka-python:")
        for codec, c in checks.items():
            status = "agree" if c["agree"] else "DISAGREE"
            print(f"  {codec}: {status} ({c['records']:,} records, {c['batches']:,} batches counted; "
                  f"{c['records_compared_field_by_field']:,} records compared field by field)")
            for p in c["problems"]:
                print(f"    - {p}")
    print("\nMarkdown (README):\n")
    print(report.markdown_table(rows))
    print(f"\n(one core each, CPU time, best of {args.reps}; {settings.min_bytes // MIB} MiB segments of "
          f"{settings.batch_bytes // 1024} KiB batches written by kafka-clients {settings.kafka_version}; "
          f"aiokafka and kafka-python timed on the first {args.peer_mib} MiB)")

    out = {
        "environment": environment(),
        "settings": {"reps": args.reps, "peer_prefix_bytes": args.peer_mib * MIB, "clock": "process CPU time",
                     "dataset": asdict(settings)},
        "datasets": {c: {"records": d.records, "batches": d.batches, "bytes": d.bytes}
                     for c, d in datasets.items()},
        "results": {r.codec: {"records_view": r.records.as_dict(), "batches_view": r.batches.as_dict(),
                              "records_view_on_peer_prefix": prefix_runs[r.codec].as_dict(),
                              "aiokafka": r.aiokafka.as_dict(), "kafka_python": r.kafka_python.as_dict(),
                              "records_view_vs_aiokafka": round(r.vs_aiokafka, 3),
                              "records_view_vs_kafka_python": round(r.vs_kafka_python, 2)} for r in results},
        "targets": verdicts,
        "agreement_with_kafka_python": checks,
        "markdown": report.markdown_table(rows),
        "elapsed_s": round(elapsed, 1),
    }
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nwrote {RESULTS.relative_to(DATA_DIR.parent)} ({elapsed:.0f} s in all)")
    return 0 if all(c["agree"] for c in checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
