"""Facts about the committed sample corpus (data/samples), read from the files themselves.

The oracle is Kafka's own DumpLogSegments output stored in data/samples/golden (see its README). These
tests pin down what Kafka 3.9.2 actually produced for each scenario, so readers of the corpus can rely on
it; regenerate with `make samples` and re-run them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
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


def test_tutorial_segments_roll_every_12_records() -> None:
    pdir = BROKER / "tutorial-segments-0"
    assert segments(pdir) == list(range(0, 97, 12))
    counts = [len(record_offsets(pdir / f"{b:020d}.log")) for b in segments(pdir)]
    assert counts == [12] * 8 + [4]
    # one record per batch, 81 bytes for {"number": 0..9}, 82 for two digits
    assert all(re.search(r"count: 1 .* size: 8[12] ", b) for b in batch_lines(pdir))
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


@pytest.mark.parametrize("topic,codec", [
    ("codec-none", "none"), ("codec-gzip", "gzip"), ("codec-snappy-java", "snappy"),
    ("codec-snappy-librdkafka", "snappy"), ("codec-lz4", "lz4"), ("codec-zstd", "zstd"),
])
def test_codec_topics(topic: str, codec: str) -> None:
    pdir = BROKER / f"{topic}-0"
    assert len(segments(pdir)) >= 2
    batches = batch_lines(pdir)
    assert {re.search(r"compresscodec: (\w+)", b)[1] for b in batches} == {codec}
    assert max(int(re.search(r"count: (\d+)", b)[1]) for b in batches) > 1  # multi-record batches
    text = "".join(golden(log) for log in pdir.glob("*.log"))
    assert text.count("\n| offset: ") == 300
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
    assert java and all(p == XERIAL_MAGIC for p in java)
    assert rdkafka and not any(p == XERIAL_MAGIC for p in rdkafka)


def test_txn_mixed_has_markers_and_aborted_ranges() -> None:
    pdir = BROKER / "txn-mixed-0"
    text = "".join(golden(log) for log in pdir.glob("*.log"))
    assert "isTransactional: true isControl: true" in text
    assert text.count("endTxnMarker: COMMIT") == 5 and text.count("endTxnMarker: ABORT") == 3
    assert "isTransactional: false isControl: false" in text  # the idempotent producer's batches
    txn = [p for p in pdir.glob("*.txnindex") if p.stat().st_size]
    assert txn and all(p.stat().st_size % 34 == 0 for p in txn)
    assert all("firstOffset: " in golden(p) for p in txn)
    assert len(segments(pdir)) >= 3 and list(pdir.glob("*.snapshot"))


def test_idempotent_only_has_two_producers() -> None:
    text = "".join(golden(p) for p in sorted((BROKER / "idempotent-only-0").glob("*.log")))
    assert len(set(re.findall(r"producerId: (\d+)", text))) == 2
    assert "isTransactional: true" not in text


def test_compacted_cleaned() -> None:
    pdir = BROKER / "compacted-cleaned-0"
    offsets = [o for b in segments(pdir) for o in record_offsets(pdir / f"{b:020d}.log")]
    assert any(b - a > 1 for a, b in zip(offsets, offsets[1:], strict=False))
    assert any("Non-consecutive offsets" in golden(log, stream="stderr") for log in pdir.glob("*.log"))
    assert any("deleteHorizonMs: OptionalLong[" in b for b in batch_lines(pdir))
    cleaner = (BROKER / "cleaner-offset-checkpoint").read_text().split("\n")
    assert any(ln.startswith("compacted-cleaned 0 ") for ln in cleaner)


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
    assert entries > 50
    assert all(not golden(p, "verify", "stderr") for p in pdir.glob("*.index"))


def test_log_append_time() -> None:
    batches = batch_lines(BROKER / "log-append-time-0")
    assert batches and all(" LogAppendTime: " in b for b in batches)


def test_legacy_magic_and_codecs() -> None:
    for name, magic in (("legacy-v0-0", 0), ("legacy-v1-0", 1)):
        batches = batch_lines(LEGACY / name)
        assert batches and all(f" magic: {magic} " in b for b in batches)
        assert {re.search(r"compresscodec: (\w+)", b)[1] for b in batches} == {"none", "gzip", "snappy", "lz4"}
        assert all("isvalid: true" in b for b in batches)
    assert any(" LogAppendTime: " in b for b in batch_lines(LEGACY / "legacy-v1-0"))


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
    assert 0 < len(deep) < 100  # DumpLogSegments stops at the first zero slot
    assert not (LIVE / ".kafka_cleanshutdown").exists()
    # The clean shutdown of the same partition trimmed the index to its entries.
    assert (BROKER / "live-copy-0" / index.name).stat().st_size == 8 * len(deep)


def test_broker_dir_is_as_the_broker_left_it() -> None:
    assert (BROKER / "meta.properties").exists() and (BROKER / ".kafka_cleanshutdown").exists()
    assert not list(SAMPLES.rglob(".lock"))
    assert "samples-group" in golden(BROKER / "__consumer_offsets-0" / f"{0:020d}.log", "decoded")
    assert list((BROKER / "__cluster_metadata-0").glob("*.log"))


def test_every_dumpable_file_has_golden_output() -> None:
    files = [p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix in DUMPABLE and GOLDEN not in p.parents]
    assert len(files) > 100
    for path in files:
        rel = path.relative_to(SAMPLES)
        assert golden(path).startswith(f"Dumping {rel}\n"), rel
        if path.suffix in (".index", ".timeindex"):
            assert golden(path, "verify").startswith(f"Dumping {rel}\n"), rel
            assert golden(path, "sanity").startswith(f"Dumping {rel}\n"), rel


def test_golden_text_names_no_machine_paths() -> None:
    repo = str(Path(__file__).resolve().parents[1])
    for path in GOLDEN.rglob("*.txt"):
        text = path.read_bytes().decode("utf-8")
        assert repo not in text and "/tmp/" not in text, path
