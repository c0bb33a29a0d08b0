"""Peak memory of decoding decompression bombs, measured in a fresh process.

    python -m tests.fuzz.bombs CAP_MIB CODEC [CODEC ...] [--size-mib N] [--python-only]

CODEC is gzip, snappy-xerial, snappy-raw, lz4 (the Java client's frames), lz4-frame (the LZ4 library's),
zstd (a frame that declares its decompressed size) or zstd-stream (one that does not, with a 128 MiB window).
Each bomb is one CRC-valid v2 batch holding one record of N MiB of zeros (default: twice the cap), read with
``max_decompressed`` = CAP_MIB MiB. The bombs are built first; then a fresh process decodes a small batch of
each codec (so that every library is loaded) and then each bomb, starting the peak over before each (Linux's
VmHWM). It prints one JSON line: per bomb, the RSS before (baseline) and the peak while reading it (MiB),
and the findings. tests/test_fuzz_decoders.py asserts on it.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import kafkalog_spark
from tests.fuzz import builder

CODECS = {"gzip": builder.GZIP, "snappy-xerial": builder.SNAPPY, "snappy-raw": builder.SNAPPY,
          "lz4": builder.LZ4, "lz4-frame": builder.LZ4, "zstd": builder.ZSTD, "zstd-stream": builder.ZSTD}
MIB = 1 << 20
REPO = Path(__file__).resolve().parents[2]


def _payload(codec: str, raw: bytes) -> bytes:
    import lz4.frame
    import zstandard
    from cramjam import snappy

    if codec == "snappy-xerial":
        return builder.xerial_snappy(raw)
    if codec == "snappy-raw":
        return bytes(snappy.compress_raw(raw))
    if codec == "lz4":
        return builder.java_lz4(raw, 0x40)
    if codec == "lz4-frame":
        return lz4.frame.compress(raw)
    if codec == "zstd":  # the frame declares its decompressed size
        return zstandard.ZstdCompressor(level=3).compress(raw)
    if codec == "zstd-stream":  # no declared size (as zstd-jni's stream writes), and the largest window libzstd
        # decodes by default (2^27): the worst case for memory
        params = zstandard.ZstdCompressionParameters.from_level(3, window_log=27, write_content_size=False)
        return zstandard.ZstdCompressor(compression_params=params).compress(raw)
    return builder.compress(builder.GZIP, raw, random.Random(0))


def bomb_batch(codec: str, size: int) -> bytes:
    """One v2 batch, one record of ``size`` zero bytes, compressed with ``codec`` (its CRC valid)."""
    raw = builder.encode_record(builder.Record(None, bytes(size)), 0)
    spec = builder.BatchSpec(0, [builder.Record(None, b"")], codec=CODECS[codec])
    batch = bytearray(builder.v2_batch(spec, random.Random(0)))
    batch = batch[:61] + _payload(codec, raw)
    batch[8:12] = (len(batch) - 12).to_bytes(4, "big")
    return builder.fix_crc(batch)


def _vm_hwm() -> float | None:
    try:
        status = Path("/proc/self/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024
    except (OSError, StopIteration):
        return None


def reset_peak() -> bool:
    """Start the peak over from the current RSS (Linux: writing 5 to clear_refs resets VmHWM)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return _vm_hwm() is not None
    except OSError:
        return False


# Without VmHWM, ru_maxrss: a peak over the whole process (and what the parent held when it started it)
PEAK_SOURCE = "VmHWM" if reset_peak() else "ru_maxrss"


def peak_mib() -> float:
    """This process's peak RSS (MiB) since :func:`reset_peak`."""
    hwm = _vm_hwm() if PEAK_SOURCE == "VmHWM" else None
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_files(codec: str, size: int, where: Path) -> tuple[Path, Path]:
    """A small batch of ``codec`` and the bomb, as two segments of one partition dir under ``where``."""
    d = where / f"bomb-{sorted(CODECS).index(codec)}"
    d.mkdir()
    small, bomb = d / "00000000000000000000.log", d / "00000000000000000001.log"
    small.write_bytes(bomb_batch(codec, 100_000))
    bomb.write_bytes(bomb_batch(codec, size))
    return small, bomb


def measure(pairs: list[tuple[Path, Path]], cap: int) -> list[dict]:
    """Decode every small file (the warm-up), then each bomb with the cap; the RSS before and the peak."""
    rows = [kafkalog_spark.read_log(str(small), "records", findings=[]).num_rows for small, _ in pairs]
    out = []
    for (_, bomb), warm_rows in zip(pairs, rows, strict=True):
        reset_peak()
        baseline = peak_mib()
        findings: list = []
        table = kafkalog_spark.read_log(str(bomb), "records", findings=findings, max_decompressed=cap)
        out.append({"cap_mib": cap / MIB, "bomb_file_bytes": bomb.stat().st_size, "warm_rows": warm_rows,
                    "rows": table.num_rows, "findings": [f.detail for f in findings],
                    "baseline_mib": round(baseline, 1), "peak_mib": round(peak_mib(), 1),
                    "growth_mib": round(peak_mib() - baseline, 1), "peak_source": PEAK_SOURCE})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cap_mib", type=int)
    ap.add_argument("codecs", nargs="+", choices=sorted(CODECS))
    ap.add_argument("--size-mib", type=int)
    ap.add_argument("--python-only", action="store_true", help="the Python path only (no compiled codecs)")
    ap.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the child: the directory of the files
    args = ap.parse_args(argv)
    if args.measure:
        pairs = [(args.measure / f"bomb-{sorted(CODECS).index(c)}" / "00000000000000000000.log",
                  args.measure / f"bomb-{sorted(CODECS).index(c)}" / "00000000000000000001.log") for c in args.codecs]
        if args.python_only:
            from kafkalog_spark.format.native.switch import python_only

            with python_only():
                result = measure(pairs, args.cap_mib * MIB)
        else:
            result = measure(pairs, args.cap_mib * MIB)
        print(json.dumps(result))
        return 0
    # the bombs are built here and decoded in a fresh process: building them must not count in the peak
    size = (args.size_mib or 2 * args.cap_mib) * MIB
    with tempfile.TemporaryDirectory() as tmp:
        for codec in args.codecs:
            write_files(codec, size, Path(tmp))
        child = [sys.executable, "-m", "tests.fuzz.bombs", str(args.cap_mib), *args.codecs, "--measure", tmp]
        done = subprocess.run(child + (["--python-only"] if args.python_only else []), capture_output=True,
                              text=True, timeout=600, cwd=REPO)
    if done.returncode:
        print(done.stderr, file=sys.stderr)
        return done.returncode
    results = json.loads(done.stdout.splitlines()[-1])
    print(json.dumps([{"codec": c, "bomb_mib": size / MIB, **r} for c, r in zip(args.codecs, results, strict=True)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
