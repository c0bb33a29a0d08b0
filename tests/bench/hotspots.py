"""Where our decoder spends its time: cProfile over read_log on the benchmark files.

    .venv/bin/python -m tests.bench.hotspots [--view records|batches] [--top 20] [codec ...]

Times are process CPU time (the machine may be shared). numba-compiled functions show as single entries
(their own time is the compiled loop).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

import pyarrow as pa

from kafkalog_spark import Finding, read_log

from .data import CODECS, Dataset, ensure_datasets


def profile_read_log(ds: Dataset, view: str = "records", top: int = 20) -> str:
    findings: list[Finding] = []
    read_log(str(ds.log_dir), view, findings=findings, end=1 << 20)  # load the compiled code first
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    table = read_log(str(ds.log_dir), view, findings=findings)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    out.write(f"== {ds.codec}, {view} view: {table.num_rows:,} rows, {ds.bytes / 2**20:.0f} MiB, "
              f"{stats.total_tt:.2f} CPU s under cProfile ==\n")
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("codecs", nargs="*", help=f"any of {', '.join(CODECS)} (default: all)")
    ap.add_argument("--view", default="records", choices=("records", "batches"))
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args(argv)
    pa.set_cpu_count(1)  # as in the benchmark: one core
    if unknown := set(args.codecs) - set(CODECS):
        ap.error(f"unknown codecs: {sorted(unknown)}")
    for ds in ensure_datasets(codecs=tuple(args.codecs or CODECS)).values():
        print(profile_read_log(ds, args.view, args.top))


if __name__ == "__main__":
    main()
