"""The record_stats view (the records' aggregates, computed in the tasks that decode them) and the segment
statistics built on it, against the records themselves read in one process (read_log), and the pushed-down
``isControl = true`` read of the records view (control batches alone) against the full view."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tests.helpers.framing import batches

# (corpus, maxSplitBytes, topics): whole, and a few topics of the broker corpus in pieces of 8 KiB (several a
# segment: their aggregates merge)
READS = [("broker", "128m", None), ("broker", "8k", "codec-lz4,codec-zstd,compacted-dirty,txn-mixed"),
         ("legacy", "128m", None), ("live-copy", "128m", None)]


def _dumped(samples: Path, corpus: str, topics: list[str] | None = None) -> dict[tuple, list[str]]:
    """kafka-dump-log's deep dump (golden/) of each live segment of a log dir, by (topic, partition, base offset)."""
    out = {}
    for log in sorted((samples / corpus).glob("*-*/*.log")):
        topic, _, partition = log.parent.name.rpartition("-")
        if topics is None or topic in topics:
            text = (samples / "golden" / f"{log.relative_to(samples)}.deep.txt").read_bytes().decode()
            out[(topic, int(partition), int(log.stem))] = text.split("\n")
    return out


def _pieces(samples: Path, corpus: str, split: int, topics: list[str] | None) -> int:
    """Segments whose batches start in more than one split of ``split`` bytes (a batch belongs to the split it starts
    in), walked by the framing with struct."""
    n = 0
    for topic, partition, base in _dumped(samples, corpus, topics):
        log = samples / corpus / f"{topic}-{partition}" / f"{base:020d}.log"
        n += len({b.position // split for b in batches(log)}) > 1
    return n


def _expected_per_segment(paths: list[str], topics: list[str] | None) -> dict[tuple, dict]:
    """Each segment's record aggregates from its records, one by one."""
    import pyarrow.compute as pc

    from kafkalog_spark import read_log

    table = read_log(paths, findings=[], kraft_snapshots=False)
    if topics:
        table = table.filter(pc.is_in(table["topic"], pa.array(topics)))
    out: dict[tuple, dict] = defaultdict(lambda: {"records": 0, "controlRecords": 0, "tombstones": 0,
                                                  "keylessRecords": 0, "payloads": [], "keys": set(), "ts": []})
    for r in table.to_pylist():
        s = out[(r["topic"], r["partition"], r["segmentBaseOffset"])]
        s["records"] += 1
        if r["timestamp"] is not None:
            s["ts"].append(r["timestamp"])
        if r["isControl"]:
            s["controlRecords"] += 1
            continue
        s["tombstones"] += r["value"] is None
        s["keylessRecords"] += r["key"] is None
        if r["key"] is not None:
            s["keys"].add(r["key"])
        headers = sum(len(h["key"].encode()) + len(h["value"] or b"") for h in r["headers"] or [])
        s["payloads"].append(len(r["key"] or b"") + len(r["value"] or b"") + headers)
    return out


@pytest.mark.parametrize(("corpus", "split", "topics"), READS)
def test_segment_stats_record_columns_equal_the_records_counted_one_by_one(spark, samples: Path, corpus: str,
                                                                          split: str, topics: str | None) -> None:
    import datetime as dt

    from kafkalog_spark.analysis.segment_stats import segment_stats
    from kafkalog_spark.source import read_views

    path = str(samples / corpus)
    v = read_views(spark, [path], ["segments", "batches", "record_stats"], maxSplitBytes=split, topics=topics)
    pieces = v["record_stats"].where("problem is null").groupBy("topic", "partition", "segmentBaseOffset").count()
    wanted = topics.split(",") if topics else None
    in_pieces = _pieces(samples, corpus, {"8k": 8192, "128m": 128 << 20}[split], wanted)
    assert pieces.where("count > 1").count() == in_pieces == (8 if split == "8k" else 0)  # 8 segments in pieces
    got = {(r.topic, r.partition, r.baseOffset): r for r in segment_stats(v["segments"], v["batches"],
                                                                         v["record_stats"]).collect()}
    expected = _expected_per_segment([path], wanted)
    # the segments with records, and those without, as kafka-dump-log dumped them
    dumped = {k: sum(ln.startswith("| offset: ") for ln in lines)
              for k, lines in _dumped(samples, corpus, wanted).items()}
    assert set(expected) == {k for k, n in dumped.items() if n} and set(got) == set(dumped)
    assert {k: e["records"] for k, e in expected.items()} == {k: n for k, n in dumped.items() if n}
    wrong = []
    for key, e in expected.items():
        g = got[key]
        payloads = e["payloads"]
        want = {
            "records": e["records"], "controlRecords": e["controlRecords"], "tombstones": e["tombstones"],
            "keylessRecords": e["keylessRecords"], "approxDistinctKeys": len(e["keys"]),  # exact below 4096 keys
            "payloadBytes": sum(payloads) if payloads else None, "maxRecordSize": max(payloads, default=None),
            "avgRecordSize": sum(payloads) / len(payloads) if payloads else None,
            "minTimestamp": (int(min(e["ts"]).replace(tzinfo=dt.UTC).timestamp() * 1000)
                             if e["ts"] else None),
        }
        wrong += [(key, k, g[k], w) for k, w in want.items() if g[k] != w]
    assert wrong == []
    # segments without records: no record counts, as before
    empty = [g for k, g in got.items() if k not in expected]
    assert [(g.records, g.tombstones, g.approxDistinctKeys) for g in empty] == [(0, None, None)] * sum(
        n == 0 for n in dumped.values())


def test_distinct_keys_beyond_the_sketch_size_are_estimated_the_same_however_a_segment_is_split(spark) -> None:
    from pyspark.sql import functions as F

    from kafkalog_spark.analysis.segment_stats import _distinct_keys
    from kafkalog_spark.log.record_stats import key_hashes, smallest_distinct
    from kafkalog_spark.schemas import KEY_SKETCH_SIZE

    keys = pa.array([f"key-{i % 100_000}".encode() for i in range(150_000)], pa.binary())  # 100,000 distinct
    hashes = key_hashes(keys)
    assert len(np.unique(hashes)) == 100_000  # no collisions among these
    rows = []
    for pieces in (1, 3, 17):
        for part in np.array_split(hashes, pieces):
            rows.append((pieces, smallest_distinct(part).tolist()))
    df = spark.createDataFrame(rows, "pieces int, keyHashes array<long>")
    est = {r.pieces: r.n for r in df.groupBy("pieces").agg(_distinct_keys(F.col("keyHashes")).alias("n")).collect()}
    assert len(set(est.values())) == 1  # the union's k smallest do not depend on the pieces
    assert abs(est[1] - 100_000) / 100_000 < 4 / KEY_SKETCH_SIZE ** 0.5  # within four standard errors
    small = spark.createDataFrame([(smallest_distinct(hashes[:5000]).tolist(),)], "keyHashes array<long>")
    exact = len(np.unique(hashes[:5000]))
    assert exact > KEY_SKETCH_SIZE
    n = small.agg(_distinct_keys(F.col("keyHashes")).alias("n")).first().n
    assert n != exact and abs(n - exact) / exact < 0.1
    few = spark.createDataFrame([(smallest_distinct(hashes[:3000]).tolist(),)], "keyHashes array<long>")
    assert few.agg(_distinct_keys(F.col("keyHashes")).alias("n")).first().n == len(np.unique(hashes[:3000]))


def _batch_of(lines: list[str], i: int) -> str:
    """The batch line a record line of a deep dump belongs to: the nearest one above it."""
    return next(ln for ln in reversed(lines[:i]) if ln.startswith(("baseOffset: ", "offset: ")))


def test_control_only_read_equals_the_control_records_of_a_full_read(spark, samples: Path) -> None:
    from kafkalog_spark.source import control_records, read_views

    paths = [str(samples / "broker"), str(samples / "legacy")]
    records = read_views(spark, paths, ["records"])["records"]
    columns = ["topic", "partition", "offset", "position", "controlType", "coordinatorEpoch", "producerId"]
    pushed = control_records(records)
    full = records.where("problem is null and isControl")
    # The source took the filter (Spark keeps only the null check it adds): its tasks decode control batches alone
    filters = re.findall(r"Filter (.*)", pushed._jdf.queryExecution().executedPlan().toString())
    assert len(filters) == 1 and re.fullmatch(r"isnotnull\(isControl#\d+\)", filters[0])
    got = sorted(tuple(r) for r in pushed.where("problem is null").select(*columns).collect())
    assert got == sorted(tuple(r) for r in full.select(*columns).collect())
    # the control records kafka-dump-log listed (txn-mixed's 8 markers, the metadata log's leader change)
    dumped = [(topic, partition, offset) for corpus in ("broker", "legacy")
              for (topic, partition, _), lines in _dumped(samples, corpus).items()
              for i, ln in enumerate(lines) if ln.startswith("| offset: ")
              for offset in [int(ln.split()[2])] if _batch_of(lines, i).find(" isControl: true ") > 0]
    assert sorted(g[:3] for g in got) == sorted(dumped) and len(dumped) == 9


def test_the_reader_skips_the_data_batches_when_only_control_records_pass(samples: Path) -> None:
    from kafkalog_spark.format.records import BatchBytes
    from kafkalog_spark.log.reader import iter_segment, segment_files

    files = [f for f in segment_files(str(samples / "broker"), findings=[]) if "/txn-mixed-" in f]
    assert files == [str(samples / "broker" / "txn-mixed-0" / f"{b:020d}.log") for b in (0, 18, 36, 54, 71)]
    for f in files:
        full = pa.Table.from_batches(list(iter_segment(f, "records", [])))
        sizes = BatchBytes()
        control = pa.Table.from_batches(list(iter_segment(f, "records", [], control_only=True, sizes=sizes)))
        assert control.num_rows == sum(full["isControl"].to_pylist()) > 0
        assert control["offset"].to_pylist() == [o for o, c in zip(full["offset"].to_pylist(),
                                                                   full["isControl"].to_pylist(), strict=True) if c]
        # only the control batches were read for their records: their records and sizes as kafka-dump-log gave them
        golden = (samples / "golden" / f"{Path(f).relative_to(samples)}.deep.txt").read_bytes().decode()
        markers = re.findall(r"(?m)^baseOffset: (\d+) .* isControl: true .* size: (\d+) ", golden)
        assert control["offset"].to_pylist() == [int(o) for o, _ in markers]
        assert sizes.on_disk == sum(int(size) for _, size in markers) < Path(f).stat().st_size


def test_aggregate_helpers_read_sliced_arrow_arrays_in_place() -> None:
    """The per-batch helpers read Arrow buffers in place (no filter, cast or flatten copies first): slices, null
    keys, null header lists and values, large_binary keys, and repeated hashes give what a plain reading gives."""
    from kafkalog_spark.log.record_stats import _header_data_bytes, key_hashes, smallest_distinct

    header = pa.list_(pa.struct([("key", pa.binary()), ("value", pa.binary())]))
    headers = pa.array([[{"key": b"ab", "value": None}], None, [], [{"key": b"x", "value": b"yyy"},
                                                                    {"key": b"", "value": b"z"}]], header)
    keys = pa.array([b"a", None, b"bc", b"", b"a"])
    for start in range(4):
        part = headers.slice(start)
        plain = [sum(len(h["key"] or b"") + len(h["value"] or b"") for h in hs or []) for hs in part.to_pylist()]
        assert _header_data_bytes(part).tolist() == plain
        piece = keys.slice(start)
        present = pa.array([k for k in piece.to_pylist() if k is not None], pa.binary())
        assert key_hashes(piece).tolist() == key_hashes(present).tolist()
        assert key_hashes(piece.cast(pa.large_binary())).tolist() == key_hashes(present).tolist()
        chosen = np.arange(len(piece)) % 2 == 0
        wanted = [k for k, c in zip(piece.to_pylist(), chosen, strict=True) if c and k is not None]
        assert key_hashes(piece, chosen).tolist() == key_hashes(pa.array(wanted, pa.binary())).tolist()
    rng = np.random.default_rng(7)
    for values in (rng.integers(0, 1000, 50_000), rng.integers(0, 2**62, 50_000), np.array([5, 5], np.int64)):
        assert smallest_distinct(values, 100).tolist() == np.unique(values)[:100].tolist()


def test_codec_mix_keeps_the_type_of_the_existing_tables(spark, samples: Path) -> None:
    """codecMix is counted in the batches' one aggregation now; its type must stay map<string,bigint> of non-null
    values, as the nightly tables written before have it (an append with another nullability would not fit)."""
    from pyspark.sql.types import LongType, MapType, StringType

    from kafkalog_spark.analysis.segment_stats import segment_stats
    from kafkalog_spark.source import read_views

    v = read_views(spark, str(samples / "broker"), ("segments", "batches", "record_stats"))
    stats = segment_stats(v["segments"], v["batches"], v["record_stats"])
    assert stats.schema["codecMix"].dataType == MapType(StringType(), LongType(), valueContainsNull=False)
    mixes = {(r.topic, r.partition, r.baseOffset): r.codecMix for r in stats.where("batches > 0").select(
        "topic", "partition", "baseOffset", "codecMix").collect()}
    assert all(m and all(n > 0 for n in m.values()) for m in mixes.values())
    # each segment's batches per codec, as kafka-dump-log listed them
    dumped = {k: Counter(re.findall(r"^baseOffset: .* compresscodec: (\w+) ", "\n".join(lines), re.M))
              for k, lines in _dumped(samples, "broker").items()}
    assert mixes == {k: dict(c) for k, c in dumped.items() if c} and len(mixes) > 50
