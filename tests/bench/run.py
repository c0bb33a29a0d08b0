"""`make bench`: the decoder benchmark. kafkalog_spark's records and batches views against kafka-python's
and aiokafka's decoders, on the same Kafka-written segments (none, lz4, zstd), one core each.

    .venv/bin/python -m tests.bench.run [--reps 3] [--peer-mib 32] [--codecs none lz4 zstd] [--no-verify]
                                        [--no-breakdown]

Builds the data set on first use (see tests/bench/data.py), prints a table, the target verdicts, where the
records view's time goes (tests/bench/breakdown.py) and the markdown block for docs/benchmarks.md, and writes
everything to bench-data/results-decoder.json. Ratios compare decoders on
the same bytes (the first --peer-mib MiB of each file). Profiles: `.venv/bin/python -m tests.bench.hotspots`.
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

from . import breakdown, codec_bound, decoders, report, verify
from .data import CODECS, DATA_DIR, MIB, Dataset, Settings, ensure_datasets, read_prefix
from .timing import measure

RESULTS = DATA_DIR / "results-decoder.json"
WARMUP_BYTES = 1 * MIB


def warm_page_cache(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(16 * MIB):
            pass


def bench_codec(ds: Dataset, reps: int, peer_bytes: int, log: Callable[[str], None]) -> report.CodecResult:
    """Time the four decoders on one codec's files; our records view also on the peers' prefix."""
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
    ours_prefix = measure(lambda: decoders.ours("records", ds.log_dir, end=len(prefix)), len(prefix), max(reps, 5))
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
    alone = None
    sections, section_records, codec = codec_bound.compressed_sections(prefix)
    if codec is not None:
        log(f"  {ds.codec}: the codec library alone ...")
        if section_records != ours_prefix.records:
            raise AssertionError(f"the prefix's batches declare {section_records} records, ours {ours_prefix.records}")
        alone = measure(lambda: (section_records, len(sections)) if codec_bound.decompress_all(sections, codec)
                        else (0, 0), len(prefix), max(reps, 5))
    return report.CodecResult(ds.codec, ds.bytes, records, batches, ours_prefix, aio, kp, alone)


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
    ap.add_argument("--no-breakdown", action="store_true", help="skip timing the records view stage by stage")
    args = ap.parse_args(argv)
    started = time.perf_counter()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    pa.set_cpu_count(1)  # one core per decoder: no Arrow helper threads
    pa.set_io_thread_count(1)
    settings = Settings()
    datasets = ensure_datasets(settings, tuple(args.codecs))
    log(f"timing (best of {args.reps} by CPU time; peers on the first {args.peer_mib} MiB of each file) ...")
    results, checks, stages = [], {}, {}
    for codec, ds in datasets.items():
        result = bench_codec(ds, args.reps, args.peer_mib * MIB, log)
        results.append(result)
        if not args.no_breakdown:
            log(f"  {codec}: records view stage by stage ...")
            n, _, seconds = breakdown.breakdown(ds, args.reps)
            stages[codec] = {k: v / n * 1e9 for k, v in seconds.items()}
        if not args.no_verify:
            log(f"  {codec}: comparing with kafka-python ...")
            checks[codec] = verify.check(ds, result.records.records)

    rows = [report.row(r) for r in results]
    verdicts = report.verdicts(results)
    env = environment()
    notes = {
        "reps": str(args.reps), "peer_mib": str(args.peer_mib),
        "dataset": f"a {settings.min_bytes // MIB} MiB segment of {settings.batch_bytes // 1024} KiB batches "
                   f"written by kafka-clients {settings.kafka_version}'s producer code",
        "environment": f"{env['cpu']}, Python {env['python']}; numba {env['packages']['numba']}, pyarrow "
                       f"{env['packages']['pyarrow']}, aiokafka {env['packages']['aiokafka']}"
                       + (" (Cython)" if env["aiokafka_cython"] else " (pure Python!)")
                       + f", kafka-python {env['packages']['kafka-python']}",
    }
    markdown = report.markdown_block(results, verdicts, stages, notes)
    elapsed = time.perf_counter() - started
    print(f"\nkafkalog_spark decoder benchmark: one thread each, rates from the CPU time of the best of "
          f"{args.reps} runs;\nMB = 10^6 bytes of .log file. Our views read the whole segment of each codec, "
          f"and our records view\nalso its first {args.peer_mib} MiB, which aiokafka and kafka-python decode "
          "from memory: the ratios compare those\nsame bytes. Every decoder checks CRCs. aiokafka: "
          + ("its Cython extension." if decoders.aiokafka_is_cython() else "its pure-Python fallback (!)"))
    print()
    print(report.text_table(rows))
    print("\nTargets:")
    print(report.verdict_lines(verdicts))
    if stages:
        print("\n" + report.breakdown_table(stages))
        for reason in report.miss_reasons(verdicts, stages):
            print(f"  {reason}")
    if checks:
        print("\nAgreement with kafka-python:")
        for codec, c in checks.items():
            status = "agree" if c["agree"] else "DISAGREE"
            print(f"  {codec}: {status} ({c['records']:,} records, {c['batches']:,} batches counted; "
                  f"{c['records_compared_field_by_field']:,} records compared field by field)")
            for p in c["problems"]:
                print(f"    - {p}")
    print("\nMarkdown (docs/benchmarks.md):\n")
    print(markdown)

    out = {
        "environment": env,
        "settings": {"reps": args.reps, "peer_prefix_bytes": args.peer_mib * MIB, "clock": "process CPU time",
                     "ratios": "same bytes: records view, aiokafka and kafka-python on the peer prefix",
                     "dataset": asdict(settings)},
        "datasets": {c: {"records": d.records, "batches": d.batches, "bytes": d.bytes}
                     for c, d in datasets.items()},
        "results": {r.codec: {"records_view": r.records.as_dict(), "batches_view": r.batches.as_dict(),
                              "records_view_on_peer_prefix": r.records_prefix.as_dict(),
                              "aiokafka": r.aiokafka.as_dict(), "kafka_python": r.kafka_python.as_dict(),
                              "records_view_vs_aiokafka": round(r.vs_aiokafka, 3),
                              "records_view_vs_kafka_python": round(r.vs_kafka_python, 2),
                              "records_view_ns_per_record_by_stage": {k: round(v, 1) for k, v in
                                                                       stages.get(r.codec, {}).items()}}
                    for r in results},
        "targets": verdicts,
        "agreement_with_kafka_python": checks,
        "markdown": markdown,
        "elapsed_s": round(elapsed, 1),
    }
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nwrote {RESULTS.relative_to(DATA_DIR.parent)} ({elapsed:.0f} s in all)")
    return 0 if all(c["agree"] for c in checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
