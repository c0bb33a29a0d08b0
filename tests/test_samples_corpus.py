"""Facts about the committed sample corpus (data/samples), read from the files themselves.

The oracle is Kafka's own DumpLogSegments output stored in data/samples/golden (see its README). These
tests pin down what Kafka 3.9.2 actually produced for each scenario, so readers of the corpus can rely on
it; regenerate with `make samples` and re-run them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.corpus import ROOT, SAMPLES

BROKER, LIVE, LEGACY, GOLDEN = (SAMPLES / d for d in ("broker", "live-copy", "legacy", "golden"))
XERIAL_MAGIC = bytes.fromhex("82534E4150505900")
DUMPABLE = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")

pytestmark = pytest.mark.skipif(not BROKER.is_dir(), reason="sample corpus missing: run `make samples`")


def segments(pdir: Path) -> list[int]:
    return sorted(int(p.stem) for p in pdir.glob("*.log"))


def golden(path: Path, mode: str = "deep", stream: str = "") -> str:
    suffix = ".stderr.txt" if stream == "stderr" else ".txt"
    file = GOLDEN / f"{path.relative_to(SAMPLES)}.{mode}{suffix}"
    # bytes, not read_text(): its newline translation would turn a \r inside a payload into \n
    return file.read_bytes().decode("utf-8") if file.exists() else ""


def lines(text: str) -> list[str]:
    return text.split("\n")  # payload text may contain other line-break characters


def batch_lines(pdir: Path) -> list[str]:
    return [ln for log in sorted(pdir.glob("*.log")) for ln in lines(golden(log))
            if ln.startswith(("baseOffset: ", "offset: "))]


def record_offsets(log: Path) -> list[int]:
    return [int(m[1]) for ln in lines(golden(log)) if (m := re.match(r"\| offset: (\d+) ", ln))]


def observed(rel: str) -> dict:
    """What data/samples/README.md (written by the generator) observed of a partition dir: segment base offsets,
    records per segment, batches, offset-index entries, producer snapshots, and the range of records per batch."""
    text = (SAMPLES / "README.md").read_text()
    line = re.search(rf"(?m)^- (?:observed )?`{re.escape(rel)}`: (.*)$", text)[1]
    facts = {"segments": [int(b) for b in re.search(r"at base offsets ([\d, ]+);", line)[1].split(", ")],
             "records": [int(n) for n in re.search(r"records per segment \[([\d, ]+)\]", line)[1].split(", ")],
             "batches": int(re.search(r"; (\d+) batches;", line)[1]),
             "index_entries": int(re.search(r"(\d+) offset-index entries", line)[1]),
             "snapshots": int(re.search(r"(\d+) producer snapshot", line)[1])}
    per_batch = re.search(r"records per batch (\d+)\.\.(\d+)", line)
    facts["per_batch"] = (int(per_batch[1]), int(per_batch[2])) if per_batch else (1, 1)
    return facts


def batch_counts(lines_: list[str]) -> list[int]:
    """Records per batch line of a deep dump (a legacy entry line holds one record, or a wrapper's)."""
    return [int(m[1]) if (m := re.search(r" count: (\d+) ", b)) else 1 for b in lines_]


def test_tutorial_segments_roll_every_12_records() -> None:
    pdir = BROKER / "tutorial-segments-0"
    assert segments(pdir) == list(range(0, 97, 12))
    counts = [len(record_offsets(pdir / f"{b:020d}.log")) for b in segments(pdir)]
    assert counts == [12] * 8 + [4]
    # one record per batch, 81 bytes for {"number": 0..9}, 82 for two digits
    assert [(int(m[1]), int(m[2])) for b in batch_lines(pdir) for m in [re.search(r"count: (\d+) .* size: (\d+) ", b)]
            ] == [(1, 81)] * 10 + [(1, 82)] * 90
    assert '| offset: 99 ' in golden(pdir / f"{96:020d}.log")
    assert 'payload: {"number": 99}' in golden(pdir / f"{96:020d}.log")


@pytest.mark.parametrize("partition", [0, 1, 2])
def test_hello_round_robin_three_messages_per_segment(partition: int) -> None:
    pdir = BROKER / f"hello-round-robin-{partition}"
    assert [p.name for p in sorted(pdir.glob("*.log"))] == [f"{b:020d}.log" for b in (0, 3, 6)]
    for base in (0, 3, 6):
        assert record_offsets(pdir / f"{base:020d}.log") == [base, base + 1, base + 2]
    text = "".join(golden(log) for log in sorted(pdir.glob("*.log")))
    hello, empty = text.count("keySize: -1 valueSize: 11 "), text.count("keySize: -1 valueSize: 0 ")
    assert hello + empty == 9 and hello and empty
    # the plan (tests/harness/scenarios.py): message i, "hello world" when i is even, goes to partition i % 3
    sizes = [int(m) for m in re.findall(r"(?m)^\| offset: \d+ .*? keySize: -1 valueSize: (\d+) ", text)]
    assert sizes == [11 if i % 2 == 0 else 0 for i in range(27) if i % 3 == partition]


@pytest.mark.parametrize("topic,codec", [
    ("codec-none", "none"), ("codec-gzip", "gzip"), ("codec-snappy-java", "snappy"),
    ("codec-snappy-librdkafka", "snappy"), ("codec-lz4", "lz4"), ("codec-zstd", "zstd"),
])
def test_codec_topics(topic: str, codec: str) -> None:
    from tests.harness.scenarios import codec_records

    pdir = BROKER / f"{topic}-0"
    facts = observed(f"broker/{topic}-0")
    assert segments(pdir) == facts["segments"] and len(facts["segments"]) >= 2
    batches = batch_lines(pdir)
    assert len(batches) == facts["batches"]
    assert {re.search(r"compresscodec: (\w+)", b)[1] for b in batches} == {codec}
    counts = batch_counts(batches)
    assert (min(counts), max(counts)) == facts["per_batch"] and max(counts) > 1  # multi-record batches
    assert [len(record_offsets(pdir / f"{b:020d}.log")) for b in segments(pdir)] == facts["records"]
    text = "".join(golden(log) for log in sorted(pdir.glob("*.log")))
    assert text.count("\n| offset: ") == 300
    # every record as the plan sent it, in order (tests/harness/scenarios.py: codec_records())
    dumped = re.findall(r"(?m)^\| offset: (\d+) .*? keySize: (-?\d+) valueSize: (-?\d+) .*? headerKeys: \[([^]]*)\]",
                        text)
    assert [(int(o), int(k), int(v), h) for o, k, v, h in dumped] == [
        (i, -1 if key is None else len(key), -1 if value is None else len(value), ",".join(n for n, _ in headers))
        for i, (key, value, headers) in enumerate(codec_records())]
    assert "keySize: -1" in text and "valueSize: -1" in text and "valueSize: 0 " in text
    assert "valueSize: 1 " in text and "valueSize: 20480 " in text
    assert "headerKeys: [trace-id,nullable]" in text and "headerKeys: [dup,dup]" in text


def _payload_starts(pdir: Path) -> list[bytes]:
    out = []
    for log in sorted(pdir.glob("*.log")):
        data, pos = log.read_bytes(), 0
        while pos + 61 <= len(data):
            out.append(data[pos + 61:pos + 69])
            pos += 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
    return out


def test_snappy_framing_differs_between_java_and_librdkafka() -> None:
    java = _payload_starts(BROKER / "codec-snappy-java-0")
    rdkafka = _payload_starts(BROKER / "codec-snappy-librdkafka-0")
    # README: 19 of 19 batches with xerial framing from the Java client, 0 of 19 from librdkafka
    assert java == [XERIAL_MAGIC] * 19
    assert len(rdkafka) == 19 and XERIAL_MAGIC not in rdkafka


def test_txn_mixed_has_markers_and_aborted_ranges() -> None:
    pdir = BROKER / "txn-mixed-0"
    text = "".join(golden(log) for log in pdir.glob("*.log"))
    assert text.count("isTransactional: true isControl: true") == 8  # one marker batch per transaction
    assert text.count("endTxnMarker: COMMIT") == 5 and text.count("endTxnMarker: ABORT") == 3
    # 8 transactions of 5 records; the idempotent producer's 3 records during each, and 6 at the end
    records = {kind: 0 for kind in ("true", "false")}
    for b in batch_lines(pdir):
        if " isControl: false " in b:
            records[re.search(r" isTransactional: (\w+) ", b)[1]] += int(re.search(r" count: (\d+) ", b)[1])
    assert records == {"true": 8 * 5, "false": 8 * 3 + 6}
    # README: 3 aborted-txn entries in 3 .txnindex files, one 34-byte entry each
    txn = [p for p in pdir.glob("*.txnindex") if p.stat().st_size]
    assert len(txn) == 3 and all(p.stat().st_size == 34 for p in txn)
    assert all(golden(p).count("firstOffset: ") == 1 for p in txn)
    facts = observed("broker/txn-mixed-0")
    assert segments(pdir) == facts["segments"] and len(list(pdir.glob("*.snapshot"))) == facts["snapshots"] == 5


def test_idempotent_only_has_two_producers() -> None:
    text = "".join(golden(p) for p in sorted((BROKER / "idempotent-only-0").glob("*.log")))
    assert len(set(re.findall(r"producerId: (\d+)", text))) == 2
    assert "isTransactional: true" not in text
    # one after the other: 40 records in batches of 5 each, the first producer's before the second's
    batches = re.findall(r"(?m)^baseOffset: \d+ lastOffset: \d+ count: (\d+) .*? producerId: (\d+) ", text)
    assert [int(count) for count, _ in batches] == [5] * 16
    pids = [pid for _, pid in batches]
    assert pids == [pids[0]] * 8 + [pids[-1]] * 8 and pids[0] != pids[-1]


def test_compacted_cleaned() -> None:
    pdir = BROKER / "compacted-cleaned-0"
    offsets = [o for b in segments(pdir) for o in record_offsets(pdir / f"{b:020d}.log")]
    # README: 64 records, 17 gaps between consecutive record offsets, 2 batches with deleteHorizonMs set
    assert len(offsets) == sum(observed("broker/compacted-cleaned-0")["records"]) == 64
    assert sum(b - a > 1 for a, b in zip(offsets, offsets[1:], strict=False)) == 17
    # the tool's stderr for the segments with gaps inside (README: Non-empty stderr in the golden output)
    assert sorted(log.name for log in pdir.glob("*.log") if "Non-consecutive offsets" in golden(log, stream="stderr")
                  ) == [f"{b:020d}.log" for b in (0, 287, 399)]
    assert sum("deleteHorizonMs: OptionalLong[" in b for b in batch_lines(pdir)) == 2
    cleaner = (BROKER / "cleaner-offset-checkpoint").read_text().split("\n")
    assert [ln for ln in cleaner if ln.startswith("compacted-cleaned 0 ")] == ["compacted-cleaned 0 455"]


def test_compacted_dirty_is_untouched() -> None:
    pdir = BROKER / "compacted-dirty-0"
    offsets = [o for b in segments(pdir) for o in record_offsets(pdir / f"{b:020d}.log")]
    assert offsets == list(range(300))
    assert "compacted-dirty" not in (BROKER / "cleaner-offset-checkpoint").read_text()


def test_time_rolls_one_segment_per_burst() -> None:
    pdir = BROKER / "time-rolls-0"
    assert segments(pdir) == [0, 8, 16, 24, 32]


def test_tiny_index_interval_has_many_entries() -> None:
    pdir = BROKER / "tiny-index-interval-0"
    entries = sum(p.stat().st_size // 8 for p in pdir.glob("*.index"))
    assert entries == observed("broker/tiny-index-interval-0")["index_entries"] == 98
    indexes = sorted(pdir.glob("*.index"))
    assert len(indexes) == 3 and [p for p in indexes if golden(p, "verify", "stderr")] == []


def test_log_append_time() -> None:
    batches = batch_lines(BROKER / "log-append-time-0")
    assert len(batches) == observed("broker/log-append-time-0")["batches"] == 4
    assert all(" LogAppendTime: " in b for b in batches)


def test_legacy_magic_and_codecs() -> None:
    for name, magic in (("legacy-v0-0", 0), ("legacy-v1-0", 1)):
        batches = batch_lines(LEGACY / name)
        assert len(batches) == observed(f"legacy/{name}")["batches"]
        assert all(f" magic: {magic} " in b for b in batches)
        assert {re.search(r"compresscodec: (\w+)", b)[1] for b in batches} == {"none", "gzip", "snappy", "lz4"}
        assert all("isvalid: true" in b for b in batches)
    # README: the gzip wrapper of 19..22 and the uncompressed entries 23..25 are LogAppendTime
    appended = [int(re.match(r"offset: (\d+) ", b)[1]) for b in batch_lines(LEGACY / "legacy-v1-0")
                if " LogAppendTime: " in b]
    assert appended == [22, 23, 24, 25]


def test_live_copy_active_index_is_preallocated_with_zero_tail() -> None:
    pdir = LIVE / "live-copy-0"
    active = segments(pdir)[-1]
    index = pdir / f"{active:020d}.index"
    data = index.read_bytes()
    assert len(data) == 10485760
    assert data[:8] != bytes(8) and data[-4096:] == bytes(4096)
    assert (pdir / f"{active:020d}.timeindex").stat().st_size == 10485756
    assert "passed sanity check" in golden(index, "sanity")
    assert "CorruptIndexException" in golden(pdir / f"{active:020d}.timeindex", "sanity", "stderr")
    deep = [ln for ln in lines(golden(index)) if ln.startswith("offset: ")]
    # DumpLogSegments stops at the first zero slot: the entries before it, read here
    slots = [data[i:i + 8] for i in range(0, len(data), 8)]
    written = slots[:slots.index(bytes(8))]
    assert deep == [f"offset: {active + int.from_bytes(s[:4], 'big')} position: {int.from_bytes(s[4:], 'big')}"
                    for s in written] and len(deep) > 0
    assert not (LIVE / ".kafka_cleanshutdown").exists()
    # The clean shutdown of the same partition trimmed the index to its entries.
    assert (BROKER / "live-copy-0" / index.name).stat().st_size == 8 * len(deep)


def test_broker_dir_is_as_the_broker_left_it() -> None:
    assert (BROKER / "meta.properties").exists() and (BROKER / ".kafka_cleanshutdown").exists()
    assert not list(SAMPLES.rglob(".lock"))
    assert "samples-group" in golden(BROKER / "__consumer_offsets-0" / f"{0:020d}.log", "decoded")
    assert [p.name for p in (BROKER / "__cluster_metadata-0").glob("*.log")] == [
        f"{b:020d}.log" for b in observed("broker/__cluster_metadata-0")["segments"]]


def test_every_dumpable_file_has_golden_output() -> None:
    files = [p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix in DUMPABLE and GOLDEN not in p.parents]
    # README: one run per file and mode, 858 in all: deep for every file, verify and sanity for the indexes, head for
    # the .log and KRaft .checkpoint files, decoded for the internal topics' .log files
    checkpoints = [p for p in SAMPLES.rglob("*.checkpoint") if GOLDEN not in p.parents]
    internal = [p for p in files if p.suffix == ".log" and p.parent.name.startswith("__")]
    runs = (len(files) + 2 * sum(p.suffix in (".index", ".timeindex") for p in files)
            + sum(p.suffix == ".log" for p in files) + 2 * len(checkpoints) + len(internal))
    readme_runs = int(re.search(r"; (\d+) runs;", (SAMPLES / "README.md").read_text())[1])
    assert runs == readme_runs == len([p for p in GOLDEN.rglob("*.txt") if not p.name.endswith(".stderr.txt")])
    for path in files:
        rel = path.relative_to(SAMPLES)
        assert golden(path).startswith(f"Dumping {rel}\n"), rel
        if path.suffix in (".index", ".timeindex"):
            assert golden(path, "verify").startswith(f"Dumping {rel}\n"), rel
            assert golden(path, "sanity").startswith(f"Dumping {rel}\n"), rel


def test_golden_text_names_no_machine_paths() -> None:
    repo = str(ROOT)
    for path in GOLDEN.rglob("*.txt"):
        text = path.read_bytes().decode("utf-8")
        assert repo not in text and "/tmp/" not in text, path
