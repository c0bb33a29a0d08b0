"""Where the records view's CPU time goes, per record: each stage of the decoder timed (process CPU time,
exclusive of the stages it calls) while the benchmark files are streamed as `make bench` streams them.

    .venv/bin/python -m tests.bench.breakdown [--reps 3] [codec ...]

The stages wrap module functions for the duration of a run; the timer calls add ~1 us per call (a few
ns per record: per-batch calls are the decompressors and the CRC loop's caller, not the CRC itself).
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import contextmanager

import pyarrow as pa

from kafkalog_spark.format import batches, records
from kafkalog_spark.log import file_records

from .data import CODECS, Dataset, ensure_datasets
from .decoders import ours

# (module, attribute, stage)
STAGES = [
    (file_records, "_read_into", "read the file (page cache to buffer)"),
    (file_records, "scan_entries", "entry framing"),
    (batches.V2Headers, "parse", "batch headers + CRC-32C"),
    (records, "lz4_frames", "decompress"),
    (records, "zstd_frames", "decompress"),
    (records, "_python_batch", "decompress"),
    (records, "decode_records", "decode records into Arrow buffers (one compiled pass)"),
    (records, "_decode", "assemble Arrow arrays (labels, batch)"),
]
OTHER = "other Python (chunking, grouping, glue)"


class _Timers:
    def __init__(self) -> None:
        self.exclusive: dict[str, float] = defaultdict(float)
        self._stack: list[list] = []  # [stage, start, time spent in nested stages]

    def wrap(self, stage: str, fn: Callable) -> Callable:
        def timed(*args, **kwargs):
            self._stack.append([stage, time.process_time(), 0.0])
            try:
                return fn(*args, **kwargs)
            finally:
                name, start, nested = self._stack.pop()
                spent = time.process_time() - start
                self.exclusive[name] += spent - nested
                if self._stack:
                    self._stack[-1][2] += spent

        return timed


@contextmanager
def _instrumented(timers: _Timers):
    saved = []
    for owner, attr, stage in STAGES:
        original = owner.__dict__[attr]
        fn = original.__func__ if isinstance(original, classmethod) else original
        wrapped = timers.wrap(stage, fn)
        setattr(owner, attr, classmethod(wrapped) if isinstance(original, classmethod) else wrapped)
        saved.append((owner, attr, original))
    try:
        yield
    finally:
        for owner, attr, original in saved:
            setattr(owner, attr, original)


def _stage_names() -> list[str]:
    return list(dict.fromkeys(stage for _, _, stage in STAGES))


def breakdown(ds: Dataset, reps: int = 3) -> tuple[int, float, dict[str, float]]:
    """(records, best total CPU s, {stage: CPU s}) of the records view over ``ds``: the run with the
    lowest total of ``reps``."""
    ours("records", ds.log_dir, end=1 << 20)  # compiled code loaded
    best: tuple[int, float, dict[str, float]] | None = None
    for _ in range(reps):
        timers = _Timers()
        with _instrumented(timers):
            start = time.process_time()
            n, _ = ours("records", ds.log_dir)
            total = time.process_time() - start
        stages = {name: timers.exclusive.get(name, 0.0) for name in _stage_names()}
        stages[OTHER] = total - sum(stages.values())
        if best is None or total < best[1]:
            best = (n, total, stages)
    assert best is not None
    return best


def table(results: dict[str, tuple[int, float, dict[str, float]]]) -> str:
    """Markdown table: ns per record of each stage, per codec."""
    codecs = list(results)
    names = [*_stage_names(), OTHER]
    lines = ["| stage (CPU ns per record) | " + " | ".join(codecs) + " |", "|---" + "|---:" * len(codecs) + "|"]
    for name in names:
        cells = [f"{results[c][2].get(name, 0.0) / results[c][0] * 1e9:.1f}" for c in codecs]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| **total** | " + " | ".join(f"**{results[c][1] / results[c][0] * 1e9:.0f}**" for c in codecs)
                 + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("codecs", nargs="*", help=f"any of {', '.join(CODECS)} (default: all)")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    if unknown := set(args.codecs) - set(CODECS):
        ap.error(f"unknown codecs: {sorted(unknown)}")
    pa.set_cpu_count(1)
    datasets = ensure_datasets(codecs=tuple(args.codecs or CODECS))
    print(table({c: breakdown(ds, args.reps) for c, ds in datasets.items()}))


if __name__ == "__main__":
    main()
