"""Differential fuzzing of the two decoders: the compiled ("native") path and the pure-Python path.

Each case is a small `.log` file: entries built from scratch (tests/fuzz/builder.py: every codec, both snappy
framings, v0/v1/v2, control and transactional batches) or taken from the real corpus (data/samples/broker,
data/samples/legacy), then mutated (bit flips, damage behind a recomputed CRC, truncated payloads, changed
header fields, foreign codecs, spliced garbage, decompression bombs) or truncated. Both paths read it
(``kafkalog_spark.format.native.switch.python_only`` selects the Python one) in the records and batches views, with
a random decompression cap and chunk size; the case fails when either raises, or when the rows or the
findings differ. A failing input is kept under tests/fuzz/regressions/ (the bytes and a JSON of how it was
read), and tests/test_fuzz_decoders.py replays every one of them.

    python -m tests.fuzz.driver --cases 1000000 --seed 1 --workers 2     # make fuzz
    python -m tests.fuzz.driver --replay tests/fuzz/regressions          # the kept inputs only

Prints one JSON summary line (cases, truncations, failures, seconds, peak RSS) and exits 1 on a failure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import random
import resource
import signal
import struct
import sys
import tempfile
import time
import traceback
from pathlib import Path

import pyarrow as pa

from kafkalog_spark.findings import Finding
from kafkalog_spark.format.native.switch import python_only
from kafkalog_spark.log.reader import iter_segment
from tests.fuzz import builder

REPO = Path(__file__).resolve().parents[2]
CORPUS_DIRS = (REPO / "data" / "samples" / "broker", REPO / "data" / "samples" / "legacy")
REGRESSIONS = Path(__file__).resolve().parent / "regressions"
CAPS = (256 * 1024 * 1024, 1 << 20, 65536, 1000, 1)  # max_decompressed per case
CHUNKS = (8 * 1024 * 1024, 8 * 1024 * 1024, 4096, 200, 61, 17, 1)  # chunk_bytes per case
CASE_SECONDS = 60  # a case taking longer is a hang: reported as a failure
SEGMENT_NAME = "00000000000000000000.log"


def _entries(data: bytes) -> list[tuple[int, int]]:
    """(position, size) of the whole entries of a segment's bytes, by their framing."""
    out, p = [], 0
    while p + 12 <= len(data):
        size = 12 + struct.unpack_from(">i", data, p + 8)[0]
        if size < 26 or p + size > len(data):
            break
        out.append((p, size))
        p += size
    return out


def corpus_entries() -> list[bytes]:
    """Every entry (batch or legacy message) of the real corpus's segments, up to 64 KiB each."""
    out = []
    for root in CORPUS_DIRS:
        for log in sorted(root.glob("*/*.log")):
            data = log.read_bytes()
            out += [data[p:p + s] for p, s in _entries(data) if s <= 65536]
    return out


def labels(entry: bytes) -> set[str]:
    """What a well-formed entry exercises: format, codec (and its framing), control, transactional."""
    if len(entry) < 22:
        return set()
    magic = entry[16]
    if magic in (0, 1):
        codec = entry[17] & 7
        payload = entry[26 + 8 * magic:]  # a wrapper's value: after the timestamp (v1), null key, value length
    elif magic == 2 and len(entry) >= 61:
        codec = entry[22] & 7
        payload = entry[61:]
    else:
        return set()
    name = builder_codec_name(codec, payload)
    out = {f"v{magic}", f"v{magic}-{name}"}
    if magic == 2 and entry[22] & 0x20:
        out.add("control")
    if magic == 2 and entry[22] & 0x10:
        out.add("transactional")
    return out


def builder_codec_name(codec: int, payload: bytes) -> str:
    names = ("none", "gzip", "snappy", "lz4", "zstd")
    if codec == builder.SNAPPY:
        return "snappy-xerial" if payload.startswith(builder.XERIAL_HEADER[:8]) else "snappy-raw"
    if codec == builder.LZ4:
        return "lz4-java" if payload[4:5] == b"\x60" else "lz4-frame"
    return names[codec] if codec < len(names) else f"codec{codec}"


# -- mutations ------------------------------------------------------------------------------------------


def _flip(rng: random.Random, b: bytearray, lo: int = 0) -> None:
    for _ in range(rng.randint(1, 8)):
        if len(b) > lo:
            i = rng.randrange(lo, len(b))
            b[i] = b[i] ^ (1 << rng.randrange(8)) if rng.random() < 0.7 else rng.randrange(256)


def _set_length(entry: bytearray, total: int) -> None:
    entry[8:12] = struct.pack(">i", total - 12)


def mutate_entry(rng: random.Random, entry: bytes, foreign: bytes) -> bytes:
    """One entry changed in one of the ways a disk, a bug or an attacker would; v2 changes behind the CRC
    usually get a recomputed CRC, so they reach the decompressor and the record decoder."""
    e = bytearray(entry)
    v2 = len(e) >= 61 and e[16] == 2
    how = rng.randrange(9)
    if how == 0 or not v2:
        _flip(rng, e)  # anywhere, CRC left stale
        return bytes(e)
    if how == 1:  # damage in the payload, CRC fixed: a corrupt stream that passes the CRC
        _flip(rng, e, 61)
    elif how == 2:  # payload cut short (length and CRC fixed): a truncated compressed stream
        cut = rng.randrange(61, len(e) + 1)
        e = e[:cut]
        _set_length(e, len(e))
    elif how == 3:  # payload padded with garbage or zeros behind the stream
        e += rng.randbytes(rng.randint(1, 40)) if rng.random() < 0.5 else bytes(rng.randint(1, 40))
        _set_length(e, len(e))
    elif how == 4:  # another codec id for the same payload
        e[22] = (e[22] & 0xF8) | rng.randrange(8)
    elif how == 5:  # header fields: attributes, lastOffsetDelta, timestamps, producer fields, record count
        field = rng.choice(((21, 2), (23, 4), (27, 8), (35, 8), (43, 8), (51, 2), (53, 4), (57, 4)))
        p, n = field
        e[p:p + n] = rng.randbytes(n) if rng.random() < 0.5 else rng.choice((b"\x00", b"\xff", b"\x7f")) * n
    elif how == 6:  # the payload of another entry (another codec, another format) under this header
        f = bytearray(foreign)
        e = e[:61] + f[61:] if len(f) > 61 else e[:61] + f
        _set_length(e, len(e))
    elif how == 7:  # a few bytes of the records deleted or inserted (lengths inside no longer add up)
        p = rng.randrange(61, len(e) + 1)
        if rng.random() < 0.5:
            e = e[:p] + rng.randbytes(rng.randint(1, 5)) + e[p:]
        else:
            e = e[:p] + e[p + rng.randint(1, 5):]
        _set_length(e, len(e))
    else:  # the record count or a record's length varint
        e[57:61] = struct.pack(">i", rng.choice((0, 1, -1, 2**31 - 1, struct.unpack_from(">i", e, 57)[0] + 1)))
    if rng.random() < 0.9:
        return builder.fix_crc(e)
    return bytes(e)


def bomb(rng: random.Random, cap: int) -> bytes:
    """A CRC-valid batch whose payload inflates past ``cap`` (or just below it): zeros compress ~1000:1."""
    # past 4 MiB: the compiled LZ4 path's buffer growth (which once looped forever there)
    size = max(cap + rng.choice((-1, 0, 1, 4096)), 1) if cap < (1 << 20) else rng.choice((1 << 20, 3 << 20, 5 << 20))
    spec = builder.BatchSpec(rng.randrange(100), [builder.Record(None, bytes(size))],
                             codec=rng.choice((builder.GZIP, builder.SNAPPY, builder.LZ4, builder.ZSTD)))
    return builder.v2_batch(spec, rng)


def make_case(rng: random.Random, corpus: list[bytes]) -> tuple[bytes, int, int, str, set[str]]:
    """(file bytes, max_decompressed, chunk_bytes, what was done, what the entries were before damage)."""
    cap = rng.choice(CAPS)
    chunk = rng.choice(CHUNKS)
    source = rng.random()
    if source < 0.45:
        seg = builder.random_segment(rng)
        entries = [seg[p:p + s] for p, s in _entries(seg)]
        what = "built"
    elif source < 0.93:
        entries = [rng.choice(corpus) for _ in range(rng.randint(1, 3))]
        what = "corpus"
    else:
        entries = [bomb(rng, cap)]
        what = "bomb"
    covered = set().union(*(labels(e) for e in entries))
    style = rng.random()
    if style < 0.12:
        what += "+valid"
    elif style < 0.8:
        k = rng.randrange(len(entries))
        entries[k] = mutate_entry(rng, entries[k], rng.choice(corpus))
        what += "+mutated"
    data = b"".join(entries)
    if 0.8 <= style < 0.92:
        data = data[:rng.randrange(len(data) + 1)]
        what += "+truncated"
    elif style >= 0.92:
        data = bytearray(data)
        p = rng.randrange(len(data) + 1)
        junk = bytes(rng.randint(1, 300)) if rng.random() < 0.5 else rng.randbytes(rng.randint(1, 300))
        data = bytes(data[:p] + junk + data[p:])
        what += "+spliced"
    return data, cap, chunk, what, covered


# -- the comparison -------------------------------------------------------------------------------------


def decode(path: str, view: str, cap: int, chunk: int) -> tuple[pa.Table, list[tuple]]:
    findings: list[Finding] = []
    from kafkalog_spark.format.batches import view_schema

    batches = list(iter_segment(path, view, findings, max_decompressed=cap, chunk_bytes=chunk))
    table = pa.Table.from_batches(batches, schema=view_schema(view))
    return table, sorted((f.file, f.position, f.kind, str(f.severity), f.detail) for f in findings)


def compare(path: str, cap: int, chunk: int) -> str | None:
    """None when both paths read the file alike; otherwise what differs (or the exception)."""
    for view in ("records", "batches"):
        try:
            native = decode(path, view, cap, chunk)
        except Hang:
            raise
        except Exception:
            return f"native path raised in {view}:\n{traceback.format_exc()}"
        try:
            with python_only():
                python = decode(path, view, cap, chunk)
        except Hang:
            raise
        except Exception:
            return f"python path raised in {view}:\n{traceback.format_exc()}"
        if native[1] != python[1]:
            only_n = [f for f in native[1] if f not in python[1]]
            only_p = [f for f in python[1] if f not in native[1]]
            return f"{view} findings differ: native only {only_n}, python only {only_p}"
        if not native[0].equals(python[0]):
            n, p = native[0].to_pylist(), python[0].to_pylist()
            diff = next((i for i, (a, b) in enumerate(zip(n, p, strict=False)) if a != b), min(len(n), len(p)))
            return (f"{view} rows differ: {len(n)} native, {len(p)} python; first at row {diff}: "
                    f"{n[diff] if diff < len(n) else None!r:.300} vs {p[diff] if diff < len(p) else None!r:.300}")
    return None


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"no answer after {CASE_SECONDS} s")


def run_file(data: bytes, cap: int, chunk: int, workdir: Path) -> str | None:
    d = workdir / "fuzz-0"
    d.mkdir(exist_ok=True)
    path = d / SEGMENT_NAME
    path.write_bytes(data)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    try:
        return compare(str(path), cap, chunk)
    except Hang as e:
        return f"hang: {e}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def keep(data: bytes, cap: int, chunk: int, what: str, problem: str, where: Path = REGRESSIONS) -> Path:
    """The failing input as a regression file: <sha>.bin (the bytes) and <sha>.json (how it was read)."""
    where.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha1(data + struct.pack(">qq", cap, chunk)).hexdigest()[:16]
    (where / f"{name}.bin").write_bytes(data)
    (where / f"{name}.json").write_text(json.dumps({"max_decompressed": cap, "chunk_bytes": chunk, "case": what,
                                                     "found": problem.splitlines()[0][:300]}, indent=1) + "\n")
    return where / f"{name}.bin"


def regression_cases(where: Path = REGRESSIONS) -> list[tuple[Path, int, int]]:
    out = []
    for meta in sorted(where.glob("*.json")):
        m = json.loads(meta.read_text())
        out.append((meta.with_suffix(".bin"), m["max_decompressed"], m["chunk_bytes"]))
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _worker(args: tuple[int, int, int, str | None, float]) -> dict:
    seed, cases, first, save, stop_at = args
    rng = random.Random(seed)
    corpus = corpus_entries()
    stats = {"cases": 0, "truncations": 0, "bombs": 0, "failures": 0, "kinds": {}, "kept": [], "coverage": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(cases):
            if time.monotonic() > stop_at:
                break
            data, cap, chunk, what, covered = make_case(rng, corpus)
            if i == 1:  # libraries loaded, one case decoded: memory from here on is the cases'
                stats["baseline_rss_mb"] = peak_rss_mb()
            for label in covered:
                stats["coverage"][label] = stats["coverage"].get(label, 0) + 1
            stats["cases"] += 1
            stats["truncations"] += "truncated" in what or "+mutated" in what and len(data) < 61
            stats["bombs"] += what.startswith("bomb")
            problem = run_file(data, cap, chunk, Path(tmp))
            if problem is not None:
                stats["failures"] += 1
                key = problem.split(":")[0]
                stats["kinds"][key] = stats["kinds"].get(key, 0) + 1
                print(f"case {first + i} ({what}, cap {cap}, chunk {chunk}): {problem}", file=sys.stderr, flush=True)
                if save:
                    stats["kept"].append(str(keep(data, cap, chunk, what, problem, Path(save))))
    stats["peak_rss_mb"] = peak_rss_mb()
    return stats


def fuzz(cases: int, seed: int, workers: int = 1, save: str | None = None, max_seconds: float = 1e9) -> dict:
    start = time.monotonic()
    per = [cases // workers + (w < cases % workers) for w in range(workers)]
    jobs = [(seed * 1000 + w, n, sum(per[:w]), save, start + max_seconds) for w, n in enumerate(per)]
    if workers == 1:
        results = [_worker(jobs[0])]
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            results = pool.map(_worker, jobs)
    total = {"cases": 0, "truncations": 0, "bombs": 0, "failures": 0, "kinds": {}, "kept": [], "coverage": {}}
    for r in results:
        for k in ("cases", "truncations", "bombs", "failures"):
            total[k] += r[k]
        for key in ("kinds", "coverage"):
            for k, v in r[key].items():
                total[key][k] = total[key].get(k, 0) + v
        total["kept"] += r["kept"]
    total["peak_rss_mb"] = max(r["peak_rss_mb"] for r in results)
    total["baseline_rss_mb"] = max(r.get("baseline_rss_mb", 0) for r in results)
    total["seconds"] = round(time.monotonic() - start, 1)
    total["seed"], total["workers"] = seed, workers
    total["kept"] = len(total["kept"])
    return total


def replay(where: Path) -> dict:
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = regression_cases(where)
        for path, cap, chunk in cases:
            problem = run_file(path.read_bytes(), cap, chunk, Path(tmp))
            if problem is not None:
                failures.append(f"{path.name}: {problem}")
                print(failures[-1], file=sys.stderr)
    return {"cases": len(cases), "failures": len(failures), "peak_rss_mb": peak_rss_mb()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--save", help="directory to keep failing inputs in (make fuzz: tests/fuzz/regressions)")
    ap.add_argument("--max-seconds", type=float, default=1e9)
    ap.add_argument("--replay", type=Path, help="only replay the regression files in this directory")
    args = ap.parse_args(argv)
    if args.cases < 0 or args.workers < 1:
        ap.error("--cases must be >= 0 and --workers >= 1")
    os.environ.setdefault("PYTHONHASHSEED", "0")
    summary = replay(args.replay) if args.replay else fuzz(args.cases, args.seed, args.workers, args.save,
                                                           args.max_seconds)
    print(json.dumps(summary))
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
