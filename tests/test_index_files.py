"""The .index, .timeindex, .txnindex and .snapshot readers against files real Kafka 3.9.2 brokers wrote.

Oracle: kafka-dump-log's own output in data/samples/golden (`<path>.<mode>.txt` = stdout, starting with
`Dumping <path>`; `<path>.<mode>.stderr.txt` only when stderr was not empty). Paths in that output are
relative to data/samples, so the readers are given the same relative paths on a filesystem rooted there.
Damaged files are COPIES made in tmp_path; the corpus is only ever read.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pyarrow.fs as pafs
import pytest

from kafkalog_spark.findings import Severity
from kafkalog_spark.log.offset_index import OffsetIndex, OffsetPosition
from kafkalog_spark.log.producer_snapshot import ProducerStateSnapshot, decrement_sequence
from kafkalog_spark.log.time_index import NO_TIMESTAMP, TimeIndex, TimestampOffset
from kafkalog_spark.log.transaction_index import AbortedTxn, TransactionIndex
from tests.helpers.corpus import PACKAGE, SAMPLES

GOLDEN = SAMPLES / "golden"
READERS = {".index": OffsetIndex, ".timeindex": TimeIndex, ".txnindex": TransactionIndex,
           ".snapshot": ProducerStateSnapshot}
# Kafka's sanityCheck failures, by our finding kinds (the ordering checks are ours, not Kafka's)
KAFKA_SANITY_KINDS = {"index_length_not_multiple", "index_last_offset_below_base",
                      "timeindex_length_not_multiple", "timeindex_last_timestamp_before_first",
                      "timeindex_last_offset_below_base"}


def corpus_files(*suffixes: str) -> list[str]:
    """Relative paths (as dump-log printed them) of every corpus file with one of the suffixes."""
    return sorted(p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*")
                  if p.is_file() and p.suffix in suffixes and p.relative_to(SAMPLES).parts[0] != "golden")


INDEX_FILES = corpus_files(".index")
TIME_INDEX_FILES = corpus_files(".timeindex")
TXN_INDEX_FILES = corpus_files(".txnindex")
SNAPSHOT_FILES = corpus_files(".snapshot")
ALL_FILES = INDEX_FILES + TIME_INDEX_FILES + TXN_INDEX_FILES + SNAPSHOT_FILES
LIVE_ACTIVE = "live-copy/live-copy-0/00000000000000000072"


@pytest.fixture(scope="module")
def fs() -> pafs.FileSystem:
    return pafs.SubTreeFileSystem(str(SAMPLES), pafs.LocalFileSystem())


def golden(rel: str, mode: str = "deep") -> list[str]:
    """dump-log's stdout for `rel` in `mode`, the `Dumping` header checked and removed."""
    text = (GOLDEN / f"{rel}.{mode}.txt").read_text(encoding="utf-8")
    lines = text.removesuffix("\n").split("\n")
    assert lines[0] == f"Dumping {rel}"
    return lines[1:]


def golden_stderr(rel: str, mode: str) -> str:
    p = GOLDEN / f"{rel}.{mode}.stderr.txt"
    return p.read_text(encoding="utf-8") if p.exists() else ""


def read(rel: str, fs: pafs.FileSystem):
    return READERS[Path(rel).suffix].read(rel, fs)


def test_corpus_has_every_kind() -> None:
    # data/samples/README.md: 95 segments (95 `.index` files verified, 95 `.timeindex`), one `.txnindex` per
    # segment of txn-mixed-0 holding an aborted transaction (3), and the producer snapshots the partitions list (90)
    assert (len(INDEX_FILES), len(TIME_INDEX_FILES), len(TXN_INDEX_FILES), len(SNAPSHOT_FILES)) == (95, 95, 3, 90)
    # and exactly the files dump-log was run on (one deep golden each)
    dumped = sorted(p.relative_to(GOLDEN).as_posix().removesuffix(".deep.txt") for p in GOLDEN.rglob("*.deep.txt"))
    assert ALL_FILES == [rel for suffix in READERS for rel in dumped if rel.endswith(suffix)]
    assert (SAMPLES / f"{LIVE_ACTIVE}.index").stat().st_size == 10485760


# --- every corpus file: our dump equals dump-log's, and Kafka's files raise no error -----------------------

@pytest.mark.parametrize("rel", ALL_FILES)
def test_dump_lines_equal_kafka_dump_log(rel: str, fs: pafs.FileSystem) -> None:
    assert read(rel, fs).dump_lines() == golden(rel)


@pytest.mark.parametrize("rel", ALL_FILES)
def test_kafka_written_files_have_no_errors(rel: str, fs: pafs.FileSystem) -> None:
    obj = read(rel, fs)
    assert [f for f in obj.findings if f.severity == Severity.ERROR] == []
    # the only warnings: the untrimmed indexes of the live copy's active segment
    warnings = [f.kind for f in obj.findings if f.severity == Severity.WARNING]
    if rel.startswith(LIVE_ACTIVE) and rel.endswith(".index"):
        assert warnings == ["index_zero_tail"]
    elif rel.startswith(LIVE_ACTIVE) and rel.endswith(".timeindex"):
        assert sorted(warnings) == ["timeindex_last_timestamp_before_first", "timeindex_zero_tail"]
    else:
        assert warnings == []


@pytest.mark.parametrize("rel", INDEX_FILES)
def test_offset_index_against_golden(rel: str, fs: pafs.FileSystem) -> None:
    idx = OffsetIndex.read(rel, fs)
    assert idx.base_offset == int(Path(rel).name.split(".")[0])
    assert idx.slot_count == (SAMPLES / rel).stat().st_size // 8
    lines = golden(rel)
    if lines == [f"{rel} is empty."]:
        assert idx.slot_count == 0 and idx.entry_count == 0
        return
    pairs = [tuple(map(int, re.fullmatch(r"offset: (-?\d+) position: (-?\d+)", line).groups()))
             for line in lines]
    assert [idx.entry(i) for i in range(idx.entry_count)] == pairs
    # Kafka's lookup: the entry with the largest offset <= target, else (base offset, 0)
    for i, (off, pos) in enumerate(pairs):
        assert idx.lookup(off) == (off, pos)
        nxt = pairs[i + 1][0] if i + 1 < len(pairs) else off + 2
        assert idx.lookup(nxt - 1) == (off, pos)
    assert idx.lookup(pairs[0][0] - 1) == OffsetPosition(idx.base_offset, 0)


@pytest.mark.parametrize("rel", TIME_INDEX_FILES)
def test_time_index_against_golden(rel: str, fs: pafs.FileSystem) -> None:
    idx = TimeIndex.read(rel, fs)
    pairs = [tuple(map(int, re.fullmatch(r"timestamp: (-?\d+) offset: (-?\d+)", line).groups()))
             for line in golden(rel)]
    assert [idx.entry(i) for i in range(idx.entry_count)] == pairs
    if not pairs:
        assert idx.lookup(2**62) == TimestampOffset(NO_TIMESTAMP, idx.base_offset)
    for i, (ts, off) in enumerate(pairs):
        assert idx.lookup(ts) == (ts, off)
        prev = pairs[i - 1] if i else (NO_TIMESTAMP, idx.base_offset)
        assert idx.lookup(ts - 1) == prev


@pytest.mark.parametrize("rel", INDEX_FILES + TIME_INDEX_FILES)
def test_sanity_check_agrees_with_kafka(rel: str, fs: pafs.FileSystem) -> None:
    """--index-sanity-check: `passed sanity check.` means none of Kafka's checks fail for us either; a
    CorruptIndexException on stderr names the same values our finding names."""
    idx = read(rel, fs)
    ours = {f.kind for f in idx.sanity_check()} & KAFKA_SANITY_KINDS
    out, err = golden(rel, "sanity"), golden_stderr(rel, "sanity")
    if out == [f"{rel} is empty."]:
        assert idx.slot_count == 0
    elif out == [f"{rel} passed sanity check."]:
        assert ours == set()
    else:
        m = re.search(r"CorruptIndexException: Corrupt time index found, time index file \((.+?)\) has "
                      r"non-zero size but the last timestamp is (-?\d+) which is less than the first "
                      r"timestamp (-?\d+)", err)
        assert out == [] and m and m[1] == rel
        assert ours == {"timeindex_last_timestamp_before_first"}
        assert (idx.last_slot.timestamp, idx.first_slot.timestamp) == (int(m[2]), int(m[3]))


def test_live_copy_active_segment_zero_tails(fs: pafs.FileSystem) -> None:
    idx = OffsetIndex.read(f"{LIVE_ACTIVE}.index", fs)
    entries = len(golden(f"{LIVE_ACTIVE}.index"))  # dump-log lists the entries up to the first zero slot
    assert idx.slot_count == 10485760 // 8
    assert idx.has_zero_tail is True and idx.entry_count == entries and idx.zero_tail_start == entries * 8
    assert idx.dump_lines() == golden(f"{LIVE_ACTIVE}.index")
    tail = [f for f in idx.findings if f.kind == "index_zero_tail"]
    assert [(f.position, f.severity) for f in tail] == [(idx.entry_count * 8, Severity.WARNING)]
    assert idx.sanity_check() == []  # Kafka's sanity check passes (the last slot's offset is the base)
    assert golden(f"{LIVE_ACTIVE}.index", "sanity") == [f"{LIVE_ACTIVE}.index passed sanity check."]

    tidx = TimeIndex.read(f"{LIVE_ACTIVE}.timeindex", fs)
    time_entries = len(golden(f"{LIVE_ACTIVE}.timeindex"))
    assert tidx.slot_count == 10485756 // 12
    assert tidx.has_zero_tail is True and tidx.entry_count == time_entries
    assert tidx.zero_tail_start == time_entries * 12
    assert tidx.dump_lines() == golden(f"{LIVE_ACTIVE}.timeindex")
    assert tidx.last_slot == (0, tidx.base_offset)
    # The same partition after a clean shutdown: the broker trimmed both files and kept these entries.
    clean_rel = f"broker/live-copy-0/{LIVE_ACTIVE.rsplit('/', 1)[1]}.index"
    clean = OffsetIndex.read(clean_rel, fs)
    assert clean.has_zero_tail is False and clean.tail_start is None
    assert clean.slot_count == clean.entry_count == (SAMPLES / clean_rel).stat().st_size // 8 == len(golden(clean_rel))


@pytest.mark.parametrize("rel", TXN_INDEX_FILES)
def test_txn_index_against_golden(rel: str, fs: pafs.FileSystem) -> None:
    idx = TransactionIndex.read(rel, fs)
    expected = [AbortedTxn(*map(int, re.fullmatch(
        r"version: (-?\d+) producerId: (-?\d+) firstOffset: (-?\d+) lastOffset: (-?\d+) "
        r"lastStableOffset: (-?\d+)", line).groups()), position=34 * i) for i, line in enumerate(golden(rel))]
    assert idx.aborted_txns == expected
    assert len(idx) == (SAMPLES / rel).stat().st_size // 34


@pytest.mark.parametrize("rel", SNAPSHOT_FILES)
def test_snapshot_against_golden(rel: str, fs: pafs.FileSystem) -> None:
    snap = ProducerStateSnapshot.read(rel, fs)
    assert snap.offset == int(Path(rel).name.split(".")[0])
    assert (snap.valid, snap.crc_ok, snap.version) == (True, True, 1) and golden_stderr(rel, "deep") == ""
    lines = golden(rel)
    assert [p.producer_id for p in snap.producers] == [int(re.match(r"producerId: (\d+)", x)[1])
                                                       for x in lines]


DELETED_FILES = sorted(p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*.deleted")
                       if p.relative_to(SAMPLES).parts[0] != "golden" and Path(p.stem).suffix in READERS)


@pytest.mark.parametrize("rel", DELETED_FILES)
def test_files_pending_deletion_read_cleanly(rel: str, fs: pafs.FileSystem) -> None:
    """`.deleted` files (dump-log ignores them) are still whole files Kafka wrote: same format, no errors."""
    obj = READERS[Path(Path(rel).stem).suffix].read(rel, fs)
    assert [f for f in obj.findings if f.severity != Severity.INFO] == []


def test_readers_never_write(fs: pafs.FileSystem) -> None:
    before = {rel: ((SAMPLES / rel).stat().st_mtime_ns, hashlib.sha256((SAMPLES / rel).read_bytes()).digest())
              for rel in ALL_FILES[:: max(1, len(ALL_FILES) // 40)] + [f"{LIVE_ACTIVE}.index"]}
    for rel in before:
        read(rel, fs).dump_lines()
    after = {rel: ((SAMPLES / rel).stat().st_mtime_ns, hashlib.sha256((SAMPLES / rel).read_bytes()).digest())
             for rel in before}
    assert before == after


def _python_calls(read) -> int:
    """How many function calls the package's own code makes in ``read()``, Python and builtin (a count, not a time:
    the same on a busy machine; calls from elsewhere, such as a garbage-collection callback, are not counted)."""
    calls = 0
    package = str(PACKAGE)

    def count(frame, event, arg) -> None:
        nonlocal calls
        calls += event in ("call", "c_call") and frame.f_code.co_filename.startswith(package)

    sys.setprofile(count)
    try:
        read()
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize(("reader", "suffix", "entry"), [(OffsetIndex, ".index", 8), (TimeIndex, ".timeindex", 12)])
def test_a_preallocated_ten_mib_index_costs_what_its_entries_cost(reader, suffix: str, entry: int,
                                                                  tmp_path: Path) -> None:
    """The active segment's index of a live copy is preallocated to segment.index.bytes (10 MiB) and zero past its
    entries. Reading it makes exactly the calls that reading the same entries with a one-slot zero tail makes: the
    tail is checked in bulk, never entry by entry (so it reads in milliseconds, as fast as a trimmed index)."""
    full = (SAMPLES / f"{LIVE_ACTIVE}{suffix}").read_bytes()
    # Kafka's default segment.index.bytes (10 MiB), preallocated, rounded down to whole entries
    assert len(full) == 10 * 1024 * 1024 // entry * entry
    # the entries end at the first all-zero slot after the first (kafka-dump-log's rule), found here by hand
    slots = [full[i:i + entry] for i in range(0, len(full), entry)]
    used = next(i for i in range(1, len(slots)) if slots[i] == bytes(entry))
    short = tmp_path / f"{LIVE_ACTIVE.rsplit('/', 1)[-1]}{suffix}"
    short.write_bytes(full[:(used + 1) * entry])
    local = pafs.LocalFileSystem()
    big = reader.read(str(SAMPLES / f"{LIVE_ACTIVE}{suffix}"), local)
    small = reader.read(str(short), local)
    assert big.has_zero_tail and small.has_zero_tail
    assert big.dump_lines() == small.dump_lines()
    assert (_python_calls(lambda: reader.read(str(SAMPLES / f"{LIVE_ACTIVE}{suffix}"), local))
            == _python_calls(lambda: reader.read(str(short), local)))


# --- damaged copies ---------------------------------------------------------------------------------------

def largest(files: list[str], min_entries: int, entry_size: int) -> str:
    """A corpus file with at least `min_entries` whole entries (the biggest, for the most entries)."""
    rel = max(files, key=lambda r: (SAMPLES / r).stat().st_size if "live-copy/" not in r else -1)
    assert (SAMPLES / rel).stat().st_size >= min_entries * entry_size
    return rel


def copy(rel: str, tmp_path: Path) -> Path:
    dst = tmp_path / Path(rel).name
    shutil.copyfile(SAMPLES / rel, dst)
    return dst


def kinds_at(findings) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for f in findings:
        out.setdefault(f.kind, []).append(f.position)
    return out


def test_index_truncated_to_non_multiple(tmp_path: Path) -> None:
    rel = largest(INDEX_FILES, 3, 8)
    path = copy(rel, tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:-3])
    idx = OffsetIndex.read(str(path))
    whole = (len(data) - 3) // 8
    assert kinds_at(idx.findings) == {"index_length_not_multiple": [whole * 8]}
    assert idx.slot_count == whole and idx.entry_count == whole
    # dump-log reads whole slots only: the same lines, minus the cut entry
    assert idx.dump_lines() == golden(rel)[:whole]


def test_index_shuffled(tmp_path: Path) -> None:
    rel = largest(INDEX_FILES, 5, 8)
    path = copy(rel, tmp_path)
    entries = np.frombuffer(path.read_bytes(), ">i4").reshape(-1, 2).copy()
    order = np.random.default_rng(7).permutation(len(entries))
    while (np.diff(order) > 0).all():
        order = np.random.default_rng(order[0]).permutation(len(entries))
    shuffled = entries[order]
    path.write_bytes(shuffled.astype(">i4").tobytes())
    idx = OffsetIndex.read(str(path))
    first_bad = int(np.flatnonzero(np.diff(shuffled[:, 0]) <= 0)[0]) + 1
    found = kinds_at(idx.findings)
    assert found["index_offsets_not_increasing"][0] == first_bad * 8
    assert found["index_positions_not_increasing"][0] == first_bad * 8
    assert idx.entry_count == len(entries)  # no zero relative offset: dump-log prints them all


def test_index_zero_tail_appended_and_last_offset_below_base(tmp_path: Path) -> None:
    rel = largest(INDEX_FILES, 1, 8)
    path = copy(rel, tmp_path)
    data = path.read_bytes()
    path.write_bytes(data + bytes(8 * 100))
    idx = OffsetIndex.read(str(path))
    assert kinds_at(idx.findings) == {"index_zero_tail": [len(data)]}
    assert idx.dump_lines() == golden(rel) and idx.zero_tail_start == len(data)
    # a negative relative offset in the last slot: Kafka's sanity check fails
    path.write_bytes(data[:-8] + (-5).to_bytes(4, "big", signed=True) + data[-4:])
    idx = OffsetIndex.read(str(path))
    found = kinds_at(idx.sanity_check())
    assert found["index_last_offset_below_base"] == [len(data) - 8]
    assert found["index_offset_below_base"] == [len(data) - 8]
    # a non-zero tail after the entries end (a slot with relative offset 0 but a position)
    path.write_bytes(data + bytes(4) + (77).to_bytes(4, "big") + bytes(16))
    idx = OffsetIndex.read(str(path))
    assert kinds_at(idx.findings) == {"index_nonzero_tail": [len(data) + 7]}


def test_empty_index_and_log_size_crash_mirroring(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000042.index"
    path.write_bytes(b"")
    idx = OffsetIndex.read(str(path))
    assert idx.dump_lines() == [f"{path} is empty."] and idx.findings == []
    assert idx.lookup(100) == (42, 0)
    path.write_bytes(bytes(8 * 10))  # preallocated, nothing indexed: dump-log prints slot 0 only
    idx = OffsetIndex.read(str(path))
    assert idx.dump_lines() == ["offset: 42 position: 0"]
    assert idx.dump_lines(log_size=0) == []  # ... and dies reading the (empty) .log there


def test_time_index_damaged(tmp_path: Path) -> None:
    rel = largest(TIME_INDEX_FILES, 4, 12)
    path = copy(rel, tmp_path)
    data = path.read_bytes()
    n = len(data) // 12
    path.write_bytes(data[:-5])
    idx = TimeIndex.read(str(path))
    assert kinds_at(idx.findings) == {"timeindex_length_not_multiple": [(n - 1) * 12]}
    assert idx.dump_lines() == golden(rel)[: n - 1]

    raw = np.frombuffer(data, np.dtype([("t", ">i8"), ("o", ">i4")])).copy()
    swapped = raw.copy()
    swapped[[1, 2]] = raw[[2, 1]]  # entry 2 now has a lower timestamp than entry 1
    path.write_bytes(swapped.tobytes())
    idx = TimeIndex.read(str(path))
    found = kinds_at(idx.findings)
    assert found["timeindex_timestamp_decreasing"] == [2 * 12]
    assert idx.entry_count == 2 and idx.dump_count == n  # dump-log only reports it (stderr) and goes on
    assert len(idx.dump_lines()) == n

    path.write_bytes(data + bytes(12 * 7))
    idx = TimeIndex.read(str(path))
    found = kinds_at(idx.findings)
    assert found == {"timeindex_zero_tail": [len(data)],
                     "timeindex_last_timestamp_before_first": [len(data) + 72]}
    assert idx.dump_lines() == golden(rel)


def test_txn_index_damaged(tmp_path: Path) -> None:
    first, second = TXN_INDEX_FILES[0], TXN_INDEX_FILES[-1]
    a, b = (SAMPLES / first).read_bytes(), (SAMPLES / second).read_bytes()
    path = tmp_path / Path(first).name
    path.write_bytes(a + b + b"\x00" * 10)  # partial tail: an interrupted append
    idx = TransactionIndex.read(str(path))
    assert kinds_at(idx.findings) == {"txnindex_partial_tail": [len(a) + len(b)]}
    assert idx.dump_lines() == golden(first) + golden(second)

    path.write_bytes(b + a)  # lastOffset going down
    idx = TransactionIndex.read(str(path))
    assert kinds_at(idx.findings)["txnindex_last_offsets_not_increasing"] == [len(b)]

    path.write_bytes(a + b"\x01" + b[1:])  # version byte 1: Kafka's iterator throws, the dump stops
    idx = TransactionIndex.read(str(path))
    assert kinds_at(idx.findings) == {"txnindex_unknown_version": [len(a)]}
    assert idx.dump_lines() == golden(first)

    path.write_bytes(a[:1] + b"\x01" + a[2:])  # int16 version 1: Kafka reads only the first byte (0)
    idx = TransactionIndex.read(str(path))
    assert kinds_at(idx.findings) == {"txnindex_unknown_version": [0]}
    assert idx.dump_lines() == golden(first)
    assert idx.aborted_txns[0].version == 1


def test_snapshot_damaged(tmp_path: Path) -> None:
    rel = max(SNAPSHOT_FILES, key=lambda r: (SAMPLES / r).stat().st_size)
    path = copy(rel, tmp_path)
    data = path.read_bytes()
    assert ProducerStateSnapshot.read(str(path)).dump_lines() == golden(rel)

    flipped = bytearray(data)
    flipped[20] ^= 0x40  # inside the first entry: the CRC no longer matches
    path.write_bytes(bytes(flipped))
    snap = ProducerStateSnapshot.read(str(path))
    assert kinds_at(snap.findings) == {"snapshot_crc_mismatch": [2]}
    assert snap.findings[0].severity == Severity.ERROR
    assert snap.valid is False and snap.dump_lines() == []  # dump-log prints the error on stderr only
    # entries still readable: one per producer dump-log listed, 46 bytes each after the 10-byte header
    assert len(snap) == len(golden(rel)) == (len(data) - 10) // 46

    path.write_bytes(b"\x00\x02" + data[2:])
    assert kinds_at(ProducerStateSnapshot.read(str(path)).findings) == {"snapshot_unknown_version": [0]}

    path.write_bytes(data[:-7])
    found = kinds_at(ProducerStateSnapshot.read(str(path)).findings)
    whole = (len(data) - 7 - 10) // 46
    assert found == {"snapshot_truncated": [10 + whole * 46], "snapshot_crc_mismatch": [2]}

    path.write_bytes(data[:4])
    assert kinds_at(ProducerStateSnapshot.read(str(path)).findings) == {"snapshot_truncated": [4]}


def test_missing_and_unreadable(tmp_path: Path) -> None:
    for cls in (OffsetIndex, TimeIndex, TransactionIndex, ProducerStateSnapshot):
        obj = cls.read(str(tmp_path / "00000000000000000000.nothing"))
        assert [f.kind for f in obj.findings] == ["missing_file"]
        assert obj.dump_lines() == []
        d = tmp_path / f"00000000000000000000.{cls.__name__}"
        d.mkdir()
        obj = cls.read(str(d))
        assert [(f.kind, f.severity) for f in obj.findings] == [("unreadable_file", Severity.ERROR)]
        assert obj.dump_lines() == []


def test_bad_file_name(tmp_path: Path) -> None:
    path = tmp_path / "segment.index"
    path.write_bytes(bytes(8))
    assert [f.kind for f in OffsetIndex.read(str(path)).findings] == ["index_bad_file_name"]
    assert OffsetIndex.read(str(path), base_offset=5).findings == []


def test_decrement_sequence_wraps() -> None:
    assert decrement_sequence(10, 4) == 6
    assert decrement_sequence(2, 5) == 2**31 - 3  # sequences wrap from Int.MAX to 0
    assert decrement_sequence(-1, 0) == 2**31 - 1  # as Java computes it (-1 < 0 takes the wrap branch)
