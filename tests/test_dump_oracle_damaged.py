"""Damaged copies dumped by Kafka's own DumpLogSegments and by `kafkalog dump`: the truncated-tail and
zero-tail behaviour, index mismatches and one run over many files (the order of the tool's per-file
stderr blocks) must match Kafka's, for both tool versions (the committed goldens only cover one file per
run, as Kafka left it)."""

from __future__ import annotations

import shutil
import struct
from itertools import combinations
from pathlib import Path

import pytest

from kafkalog_spark.dump import DumpOptions, dump_log_file, run_dump
from kafkalog_spark.kafka_versions import KafkaVersion
from kafkalog_spark.log.offset_index import OffsetIndex
from tests.helpers.corpus import BROKER, SAMPLES
from tests.helpers.framing import batches

SRC = BROKER / "codec-gzip-0"

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="java is needed to run kafka-dump-log")


@pytest.fixture(scope="module")
def kafka():
    from tests.harness.broker import KafkaDistribution

    return KafkaDistribution("3.9.2").ensure()


TOOLS = {"3.9.2": KafkaVersion.V3_9, "4.4.0": KafkaVersion.V4}


@pytest.fixture(scope="module", params=sorted(TOOLS))
def tool(request):
    from tests.harness.broker import KafkaDistribution

    return KafkaDistribution(request.param).ensure(), TOOLS[request.param]


def _ours(path: Path) -> list[str]:
    return "\n".join(dump_log_file(str(path), DumpOptions(deep_iteration=True, print_data_log=True))).split("\n")


def _theirs(kafka, path: Path, *flags: str) -> list[str]:
    from tests.harness.broker import dump_log

    out, _ = dump_log([path], *flags, dist=kafka)
    return out.removesuffix("\n").split("\n")[1:]  # without "Dumping <path>"


@pytest.mark.parametrize("cut", [1, 16, 61, 300])
def test_truncated_tail_matches_kafka(kafka, tmp_path: Path, cut: int) -> None:
    part = tmp_path / SRC.name
    shutil.copytree(SRC, part)
    log = part / "00000000000000000000.log"
    whole = log.read_bytes()
    log.write_bytes(whole[:-cut])
    # every byte after the last batch the cut left whole
    ends = [0, *(b.position + b.size for b in batches(whole))]
    invalid = len(whole) - cut - max(end for end in ends if end <= len(whole) - cut)
    theirs = _theirs(kafka, log, "--deep-iteration", "--print-data-log")
    assert theirs[-1] == f"Found {invalid} invalid bytes at the end of {log.name}"
    assert _ours(log) == theirs


def test_zero_tailed_index_matches_kafka(kafka, tmp_path: Path) -> None:
    part = tmp_path / SRC.name
    shutil.copytree(SRC, part)
    index = part / "00000000000000000000.index"
    index.write_bytes(index.read_bytes() + bytes(8 * 64))  # preallocated slots after an unclean shutdown
    theirs = _theirs(kafka, index, "--deep-iteration")
    ours = OffsetIndex.read(str(index)).dump_lines()
    # the tool stops at the first zero slot: the entries as it dumped them before the zeros were added (golden/)
    golden = SAMPLES / "golden" / "broker" / SRC.name / f"{index.name}.deep.txt"
    before = golden.read_bytes().decode().removesuffix("\n").split("\n")[1:]
    assert len(before) == (SRC / index.name).stat().st_size // 8 > 1
    assert ours == theirs == before


def _run_both(tool, files: list[Path], *flags: str, cwd: Path, own: list[tuple[str, str, int]]) -> None:
    """One run of the real tool and of ours over `files`: stdout and stderr equal (the exception line only
    where the tool died); after the tool's stderr, ours has a line for each finding in `own` (kind, file, byte)."""
    from tests.harness.broker import dump_log

    dist, version = tool
    theirs_out, theirs_err = dump_log(files, *flags, dist=dist, cwd=cwd)
    out: list[str] = []
    err: list[str] = []
    opts = DumpOptions(deep_iteration="--deep-iteration" in flags, print_data_log="--print-data-log" in flags,
                       kafka_version=version, verify_index_only="--verify-index-only" in flags)
    code = run_dump([str(f) for f in files], opts, out.append, err.append)
    assert "".join(f"{line}\n" for line in out) == theirs_out
    if theirs_err.startswith("Exception"):
        theirs_err = theirs_err.split("\n", 1)[0] + "\n"
    assert code == (1 if theirs_err.startswith("Exception") else 0)
    # the tool's stderr, then our own findings (errors only), one line each
    tool_lines = len(theirs_err.splitlines())
    assert "".join(f"{line}\n" for line in err[:tool_lines]) == theirs_err
    assert len(err) - tool_lines == len(own)
    for line, (kind, file, byte) in zip(err[tool_lines:], own, strict=True):
        assert line.startswith(f"error: {kind} in {file} at byte {byte}: "), line


def test_many_files_in_one_run_match_kafka(tool, tmp_path: Path, monkeypatch) -> None:
    """Gaps in many `.log` files and several time indexes: the tool prints each file's block from a hash
    map keyed by absolute path (java.util.HashMap in 4.x, Scala's mutable.HashMap in 3.9)."""
    samples = SRC.parent.parent
    logs = sorted(samples.glob("broker/*-0/*.log"))[:40]
    assert len(logs) == 40
    monkeypatch.chdir(samples)
    # the segments are sound: the tool's reports of compaction's gaps, nothing of ours
    _run_both(tool, [p.relative_to(samples) for p in logs], "--deep-iteration", cwd=samples, own=[])


def test_many_files_match_kafka_where_a_bucket_holds_hashes_of_both_signs(tool, tmp_path: Path, monkeypatch) -> None:
    """The same run from a root chosen so that the files with gaps share a bucket with hashes of both signs, whose
    order is the sign's in Scala's map (a signed Int; the checkout's path decided it before, failing in some)."""
    from kafkalog_spark.dump.tool_errors import _spread, java_string_hash

    samples = SRC.parent.parent
    logs = [p.relative_to(samples) for p in sorted(samples.glob("broker/*-0/*.log"))[:40]]
    err: list[str] = []
    run_dump([str(samples / p) for p in logs], DumpOptions(deep_iteration=True, kafka_version=tool[1]),
             lambda _line: None, err.append)
    gaps = [line.removeprefix("Non-consecutive offsets in ").removeprefix(f"{samples}/") for line in err
            if line.startswith("Non-consecutive offsets in ")]
    assert len(gaps) > 2

    def splits_by_sign(root: Path) -> bool:  # two of them in one bucket at any capacity up to 256, signs apart
        hashes = [_spread(java_string_hash(str(root / g))) for g in gaps]
        return any(a & 255 == b & 255 and a >> 31 != b >> 31 for a, b in combinations(hashes, 2))

    root = next(tmp_path / f"r{i}" for i in range(10_000) if splits_by_sign(tmp_path / f"r{i}"))
    for p in logs:
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(samples / p, root / p)
    monkeypatch.chdir(root)
    _run_both(tool, logs, "--deep-iteration", cwd=root, own=[])


def test_index_mismatches_match_kafka(tool, tmp_path: Path, monkeypatch) -> None:
    """Index entries that point at the wrong batch, a time index entry with a wrong timestamp and one with
    an offset no batch ends at: the tool's Mismatches / timestamp mismatch / not-found reports."""
    part = tmp_path / SRC.name
    shutil.copytree(SRC, part)
    index = part / "00000000000000000000.index"
    data = bytearray(index.read_bytes())
    data[0:4], data[8:12] = data[8:12], data[0:4]  # swap two entries' relative offsets
    index.write_bytes(bytes(data))
    tindex = part / "00000000000000000000.timeindex"
    tdata = bytearray(tindex.read_bytes())
    tdata[0:8] = (int.from_bytes(tdata[0:8], "big") + 1).to_bytes(8, "big")  # a timestamp off by one
    tdata[20:24] = (int.from_bytes(tdata[20:24], "big") - 1).to_bytes(4, "big")  # an offset inside a batch
    tindex.write_bytes(bytes(tdata))
    # the time index stays well-formed (timestamps rising, offsets not falling): only its content is wrong
    (ts0, off0), (ts1, off1) = struct.unpack_from(">qi", tdata, 0), struct.unpack_from(">qi", tdata, 12)
    assert ts0 < ts1 and off0 <= off1
    monkeypatch.chdir(tmp_path)
    files = [Path(SRC.name) / n for n in ("00000000000000000000.index", "00000000000000000000.timeindex",
                                          "00000000000000000080.index")]
    # the swap leaves entry 1 (byte 8) with an offset below entry 0's
    own = [("index_offsets_not_increasing", str(files[0]), 8)]
    _run_both(tool, files, cwd=tmp_path, own=own)
    _run_both(tool, files, "--verify-index-only", cwd=tmp_path, own=own)


@pytest.mark.parametrize("flags", [("--deep-iteration",), ("--verify-index-only",), ("--index-sanity-check",)])
def test_time_index_without_offset_index_matches_kafka(tool, tmp_path: Path, monkeypatch, flags) -> None:
    """A `.timeindex` whose `.index` is gone (seen in a log dir committed to a public repository): the tool
    creates the missing index and dies on it (`Invalid max index size: -1`); we print the same and write
    nothing. Ours runs first: the empty `.index` the tool leaves behind would change the next run."""
    from tests.harness.broker import dump_log

    dist, version = tool
    part = tmp_path / SRC.name
    shutil.copytree(SRC, part)
    index = part / "00000000000000000000.index"
    index.unlink()
    monkeypatch.chdir(tmp_path)
    tindex = str(Path(SRC.name) / "00000000000000000000.timeindex")
    out: list[str] = []
    err: list[str] = []
    opts = DumpOptions(kafka_version=version, deep_iteration="--deep-iteration" in flags,
                       verify_index_only="--verify-index-only" in flags,
                       index_sanity_check="--index-sanity-check" in flags)
    code = run_dump([tindex], opts, out.append, err.append)
    assert not index.exists()
    theirs_out, theirs_err = dump_log([tindex], *flags, dist=dist, cwd=tmp_path)
    assert index.stat().st_size == 0  # the tool's side effect
    assert "".join(f"{line}\n" for line in out) == theirs_out
    assert err == [theirs_err.split("\n", 1)[0]]
    assert theirs_err.startswith('Exception in thread "main" ') and code == 1
