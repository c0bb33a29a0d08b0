"""Where our decoder spends its time: cProfile over the benchmark files, read as the benchmark reads them
(Arrow batches streamed and dropped, as Spark does) or, with --collect, kept in one table as read_log does
(every batch then needs fresh memory, and page faults show in the compiled functions).

    .venv/bin/python -m tests.bench.hotspots [--view records|batches] [--top 20] [--collect] [codec ...]

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
from kafkalog_spark.log.reader import iter_segment, segment_files

from .data import CODECS, Dataset, ensure_datasets


def _stream(ds: Dataset, view: str, findings: list[Finding]) -> int:
    rows = 0
    for path in segment_files(str(ds.log_dir)):
        for batch in iter_segment(path, view, findings):
            rows += batch.num_rows
    return rows


def profile_read_log(ds: Dataset, view: str = "records", top: int = 20, collect: bool = False) -> str:
    findings: list[Finding] = []
    read_log(str(ds.log_dir), view, findings=findings, end=1 << 20)  # load the compiled code first
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    rows = read_log(str(ds.log_dir), view, findings=findings).num_rows if collect else _stream(ds, view, findings)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    how = "read_log, kept" if collect else "streamed"
    out.write(f"== {ds.codec}, {view} view ({how}): {rows:,} rows, {ds.bytes / 2**20:.0f} MiB, "
              f"{stats.total_tt:.2f} CPU s under cProfile ==\n")
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("codecs", nargs="*", help=f"any of {', '.join(CODECS)} (default: all)")
    ap.add_argument("--view", default="records", choices=("records", "batches"))
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--collect", action="store_true", help="keep every batch in one table (read_log)")
    args = ap.parse_args(argv)
    pa.set_cpu_count(1)  # as in the benchmark: one core
    if unknown := set(args.codecs) - set(CODECS):
        ap.error(f"unknown codecs: {sorted(unknown)}")
    for ds in ensure_datasets(codecs=tuple(args.codecs or CODECS)).values():
        print(profile_read_log(ds, args.view, args.top, args.collect))


if __name__ == "__main__":
    main()
