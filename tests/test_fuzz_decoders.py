"""The compiled and the pure-Python decoders agree on hostile input, never hang, and the decompression cap
bounds memory (issue 13).

- A fixed-seed differential run (tests/fuzz/driver.py, ~1000 cases: built and real-corpus batches of every
  codec and format, mutated, truncated, spliced, bombs) and a replay of every kept regression input.
- D1: an LZ4 batch inflating past 4 MiB looped forever in the compiled path.
- Bombs of every codec: peak RSS while reading one stays within the cap (plus zstd's window for frames that
  do not declare their size), measured in a fresh process (tests/fuzz/bombs.py).
- FileRecords with chunks smaller than a batch header: a negative read or an endless resync loop.

Everything that could hang runs in a subprocess with a timeout.
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from kafkalog_spark import read_log
from kafkalog_spark.findings import Finding
from tests.fuzz import builder
from tests.fuzz.driver import REGRESSIONS, regression_cases
from tests.helpers.corpus import ROOT

MIB = 1 << 20


def run_module(*args: str, timeout: float) -> dict:
    """``python -m args`` from the repository; its last stdout line as JSON."""
    done = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]) | {"stderr": done.stderr[-3000:],
                                                                "returncode": done.returncode}


def _drawn(cases: int, seed: int) -> dict:
    """The cases the driver's generator draws for one worker seeded as the driver seeds it (seed * 1000), counted
    here without decoding anything: truncations and bombs as the driver counts them, and each label's cases."""
    from tests.fuzz.driver import corpus_entries, make_case

    rng, corpus = random.Random(seed * 1000), corpus_entries()
    drawn: dict = {"truncations": 0, "bombs": 0, "coverage": {}}
    for _ in range(cases):
        data, _cap, _chunk, what, covered = make_case(rng, corpus)
        drawn["truncations"] += "truncated" in what or "+mutated" in what and len(data) < 61
        drawn["bombs"] += what.startswith("bomb")
        for label in covered:
            drawn["coverage"][label] = drawn["coverage"].get(label, 0) + 1
    return drawn


def test_fixed_seed_differential_run_agrees_on_every_case() -> None:
    r = run_module("tests.fuzz.driver", "--cases", "800", "--seed", "13", timeout=600)
    assert r["failures"] == 0 and r["returncode"] == 0, r["stderr"]
    assert r["cases"] == 800
    # the run went through exactly the cases the seed draws
    drawn = _drawn(800, 13)
    assert (r["truncations"], r["bombs"], r["coverage"]) == (drawn["truncations"], drawn["bombs"], drawn["coverage"])
    # every codec (snappy's two framings, the Java client's LZ4 frames and the library's) and every format
    wanted = {"v0", "v1", "v2", "control", "transactional", "v2-none", "v2-gzip", "v2-snappy-xerial",
              "v2-snappy-raw", "v2-lz4-java", "v2-lz4-frame", "v2-zstd", "v0-gzip", "v1-gzip", "v0-lz4-java",
              "v1-lz4-java", "v1-snappy-xerial"}
    assert wanted <= set(r["coverage"]), sorted(wanted - set(r["coverage"]))
    assert r["truncations"] > 50 and r["bombs"] > 20
    # the largest case inflates 5 MiB; the decoders' pooled buffers hold at most 2 x 64 MiB
    assert r["peak_rss_mb"] - r["baseline_rss_mb"] < 200, r


def test_every_kept_regression_input_agrees() -> None:
    cases = regression_cases()
    # one case per kept input: its bytes (.bin) beside how it was read (.json)
    assert sorted(p for p, _, _ in cases) == sorted(REGRESSIONS.glob("*.bin")), f"no regression inputs in {REGRESSIONS}"
    assert len(cases) > 0
    r = run_module("tests.fuzz.driver", "--replay", str(REGRESSIONS), timeout=600)
    assert r["cases"] == len(cases)
    assert r["failures"] == 0, r["stderr"]


def _lz4_segment(tmp_path: Path) -> tuple[Path, list[bytes]]:
    """One batch as the Java client writes it with max.request.size raised: 6 records of 1 MiB (random bytes
    and zeros), LZ4 frames of 64 KiB blocks: 6 MiB decompressed."""
    rng = random.Random(1)
    values = [rng.randbytes(MIB // 2) + bytes(MIB // 2) for _ in range(6)]
    spec = builder.BatchSpec(0, [builder.Record(b"k", v) for v in values], codec=builder.LZ4)
    batch = bytearray(builder.v2_batch(spec, rng))
    raw = b"".join(builder.encode_record(r, i) for i, r in enumerate(spec.records))
    batch = batch[:61] + builder.java_lz4(raw, 0x40)  # the Java client's frame, whatever v2_batch drew
    batch[8:12] = (len(batch) - 12).to_bytes(4, "big")
    d = tmp_path / "big-0"
    d.mkdir()
    log = d / "00000000000000000000.log"
    log.write_bytes(builder.fix_crc(batch))
    return log, values


def _python(code: str, log: Path, timeout: int) -> str:
    """What ``code`` prints, run on ``log`` in a fresh interpreter: a hang is a timeout, not a stuck suite."""
    done = subprocess.run([sys.executable, "-c", code, str(log)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_lz4_batch_inflating_past_4_mib_is_read(tmp_path: Path) -> None:
    """D1: the compiled LZ4 path asked for 4 MiB of room after each stop, so a batch needing more stopped
    again at the same place forever."""
    log, values = _lz4_segment(tmp_path)
    code = ("import hashlib, json, sys; from kafkalog_spark import read_log; f = []; "
            "t = read_log(sys.argv[1], 'records', findings=f); "
            "print(json.dumps([t.num_rows, hashlib.sha256(b''.join(t.column('value').to_pylist())).hexdigest(), "
            "[x.kind for x in f]]))")
    rows, digest, kinds = json.loads(_python(code, log, timeout=120))
    assert (rows, digest, kinds) == (6, hashlib.sha256(b"".join(values)).hexdigest(), [])


# codec -> the peak RSS growth allowed over the cap (MiB). zstd-stream: a frame that does not declare its size,
# with a 2^27 window: libzstd streams it through that window (up to the output so far), as Kafka's zstd-jni.
BOMB_CAP_MIB = 32
BOMBS = {"gzip": 16, "snappy-xerial": 16, "snappy-raw": 16, "lz4": 16, "lz4-frame": 16, "zstd": 16,
         "zstd-stream": 16 + BOMB_CAP_MIB}


def test_decompression_bombs_stay_within_the_cap() -> None:
    """A bomb (one record of 2 x the cap of zeros) is a decompression_failed finding, and the peak RSS while
    reading it grows by about the cap, not a multiple of it (a 256 MiB cap once peaked at 707 MB for gzip)."""
    done = subprocess.run([sys.executable, "-m", "tests.fuzz.bombs", str(BOMB_CAP_MIB), *BOMBS], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.splitlines()[-1])
    if results[0]["peak_source"] != "VmHWM":
        pytest.skip("no per-bomb peak RSS here (Linux's VmHWM and clear_refs)")
    for r in results:
        assert r["rows"] == 0
        assert r["findings"] == [f"batch at offset 0: decompressed size exceeds the cap of {BOMB_CAP_MIB * MIB} bytes"]
        assert r["growth_mib"] <= BOMB_CAP_MIB + BOMBS[r["codec"]], r


def test_chunks_smaller_than_a_header_still_find_the_next_batch(tmp_path: Path) -> None:
    """A corrupt size field read through chunks smaller than 61 bytes: the resync loop stepped back (a negative
    read position) or not at all (forever); a size field below 14 past a chunk's end was read as a batch."""
    rng = random.Random(2)
    batches = [builder.v2_batch(builder.BatchSpec(o, builder.random_records(rng, 2)), rng) for o in (0, 2, 4)]
    data = bytearray(b"".join(batches))
    bad = len(batches[0])
    data[bad + 8:bad + 12] = (3).to_bytes(4, "big")  # the second batch's size field: below the minimum of 14
    d = tmp_path / "small-0"
    d.mkdir()
    log = d / "00000000000000000000.log"
    log.write_bytes(bytes(data))
    whole: list[Finding] = []
    offsets = read_log(str(log), "batches", findings=whole).column("baseOffset").to_pylist()
    found = [[f.kind, f.position] for f in whole]
    assert offsets == [0, 4]
    assert found == [["corrupt_size", bad], ["skipped_region", bad]]
    assert f"to {bad + len(batches[1])}" in whole[1].detail
    code = ("import json, sys; from kafkalog_spark import read_log\n"
            "for chunk in (1, 16, 17, 60, 61):\n"
            "    f = []; t = read_log(sys.argv[1], 'batches', findings=f, chunk_bytes=chunk)\n"
            "    print(json.dumps([chunk, t.column('baseOffset').to_pylist(), [(x.kind, x.position) for x in f]]))")
    results = [json.loads(line) for line in _python(code, log, timeout=60).splitlines()]
    assert [r[0] for r in results] == [1, 16, 17, 60, 61]
    for _, got_offsets, got_found in results:
        assert (got_offsets, got_found) == (offsets, found)
