"""Sizes checked two independent ways on broker-written batches. Kafka's record size arithmetic
(analysis/record_sizes.py, which the compaction preview sizes rewritten batches with) must give every uncompressed
batch's size on disk to the byte; a segment's bytesBeforeCompression (the reader's: each batch's header plus its
records region as decompressed) must equal that arithmetic over the records of its compressed batches, and its size
on disk when nothing is compressed."""

from __future__ import annotations

import re
import struct
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from tests.helpers.framing import RECORDS_OFFSET, frames

BATCH = ["topic", "partition", "segmentBaseOffset", "position"]
XERIAL = bytes.fromhex("82534E4150505900")


def _golden_batch_lines(samples: Path, log_dir: str) -> dict[Path, list[str]]:
    """kafka-dump-log's batch lines (golden/) of each live `.log` of a log dir's partitions (read_views reads the
    internal topics too)."""
    logs = sorted((samples / log_dir).glob("*-*/*.log"))
    texts = {p: (samples / "golden" / f"{p.relative_to(samples)}.deep.txt").read_bytes().decode() for p in logs}
    return {p: [ln for ln in t.split("\n") if ln.startswith(("baseOffset: ", "offset: "))] for p, t in texts.items()}


def _inflated(payload: bytes, codec: int) -> bytes:
    """A v2 batch's records region decompressed by the codec libraries (gzip, snappy raw or xerial, LZ4 frame,
    zstd), not by the reader under test."""
    import gzip

    import lz4.frame
    import snappy
    import zstandard

    if codec == 1:
        return gzip.decompress(payload)
    if codec == 2 and payload.startswith(XERIAL):  # the Java client's framing: a 16-byte header, then chunks
        out, i = b"", 16
        while i < len(payload):
            n = struct.unpack_from(">i", payload, i)[0]
            out, i = out + snappy.uncompress(payload[i + 4:i + 4 + n]), i + 4 + n
        return out
    if codec == 2:
        return snappy.uncompress(payload)
    if codec == 3:
        return lz4.frame.decompress(payload)
    assert codec == 4
    return zstandard.ZstdDecompressor().decompressobj().decompress(payload)


def _bytes_on_disk_and_before_compression(partition: Path) -> tuple[int, int]:
    """A partition's segment bytes, and its batches' bytes with their records decompressed (header + records), walked
    by the v2 framing with struct."""
    disk = raw = 0
    for log in sorted(partition.glob("*.log")):
        disk += log.stat().st_size
        raw += sum(f.size if f.codec == 0 else RECORDS_OFFSET + len(_inflated(f.payload, f.codec)) for f in frames(log))
    return disk, raw


def uncompressed_batch_bytes(records: DataFrame, batches: DataFrame) -> DataFrame:
    """Per batch, the bytes it takes with its records uncompressed, by Kafka's arithmetic over its records (header
    and records for v2, the entries for v0/v1); timestamp deltas from the batch's base timestamp, as written (under
    LogAppendTime the records show the append time, so their written deltas are unknown and taken as 0)."""
    from kafkalog_spark.analysis.record_sizes import (
        V2_BATCH_OVERHEAD,
        legacy_entry_bytes,
        v2_record_bytes,
        without_payloads,
    )

    base = batches.where("problem is null").select(*BATCH, F.col("baseTimestamp").alias("_base"),
                                                   (F.col("timestampType") == "LogAppendTime").alias("_appendTime"))
    delta = F.when(F.col("_appendTime"), F.lit(0)).otherwise(F.unix_millis("timestamp") - F.col("_base"))
    record = F.when(F.col("magic") >= 2, v2_record_bytes(delta)).otherwise(legacy_entry_bytes())
    overhead = F.when(F.first("magic") >= 2, F.lit(V2_BATCH_OVERHEAD)).otherwise(F.lit(0))
    return (without_payloads(records).where("problem is null").join(base, BATCH).withColumn("_bytes", record)
            .groupBy(*BATCH).agg((F.sum("_bytes") + overhead).alias("uncompressedBytes")))


def test_record_sizes_add_up_to_uncompressed_batches(spark, samples: Path) -> None:
    from kafkalog_spark.source import read_views

    views = read_views(spark, [str(samples / "broker"), str(samples / "legacy")], ["batches", "records"])
    computed = uncompressed_batch_bytes(views["records"].where("compresscodec = 'none'"), views["batches"])
    batches = views["batches"].where("problem is null and compresscodec = 'none' and (count is null or count > 0)")
    joined = batches.join(computed, BATCH).select("size", "uncompressedBytes", "magic").collect()
    # every uncompressed batch (not emptied by the cleaner) kafka-dump-log listed for the two log dirs
    lines = [ln for d in ("broker", "legacy") for ls in _golden_batch_lines(samples, d).values() for ln in ls]
    dumped = [ln for ln in lines if " compresscodec: none " in ln and " count: 0 " not in ln]
    assert len(joined) == batches.count() == len(dumped) > 100
    assert {r.magic for r in joined} == {0, 1, 2}
    assert [r for r in joined if r.size != r.uncompressedBytes] == []


def test_bytes_before_compression_is_the_record_arithmetic_over_compressed_batches(spark, samples: Path) -> None:
    # Every compressed batch of both corpora (v2: gzip, snappy, lz4, zstd, from the Java client and librdkafka;
    # legacy wrappers), CreateTime: the arithmetic over the decoded records must give what the reader measured.
    from kafkalog_spark.analysis.segment_stats import KEYS, segment_stats
    from kafkalog_spark.source import read_views

    v = read_views(spark, [str(samples / "broker"), str(samples / "legacy")],
                   ["segments", "batches", "records", "record_stats"])
    ok = v["batches"].where("problem is null")
    sized = uncompressed_batch_bytes(v["records"].where("compresscodec != 'none'"), v["batches"])
    expected = (ok.join(sized, BATCH, "left").groupBy(*KEYS)
                .agg(F.sum(F.coalesce("uncompressedBytes", "size")).alias("expected"),
                     F.sum((F.col("timestampType") == "LogAppendTime").cast("int")).alias("appendTime"),
                     F.sum((F.col("compresscodec") != "none").cast("int")).alias("compressed")))
    stats = segment_stats(v["segments"], v["batches"], v["record_stats"]).withColumnRenamed("baseOffset",
                                                                                             "segmentBaseOffset")
    rows = stats.join(expected, KEYS).where("appendTime = 0").collect()
    compressed = [r for r in rows if r.compressed]
    # the segments holding a compressed batch and no LogAppendTime one, as kafka-dump-log listed them
    dumped = {(p.parent.name.rpartition("-")[0], int(p.stem)) for d in ("broker", "legacy")
              for p, ls in _golden_batch_lines(samples, d).items()
              if any(" compresscodec: none " not in ln for ln in ls) and not any(" LogAppendTime: " in ln for ln in ls)}
    assert {(r.topic, r.segmentBaseOffset) for r in compressed} == dumped
    assert {r.topic for r in compressed} == {"codec-gzip", "codec-lz4", "codec-snappy-java", "codec-snappy-librdkafka",
                                             "codec-zstd", "legacy-v0", "legacy-v1"}
    assert [(r.topic, r.segmentBaseOffset, r.bytesBeforeCompression, r.expected) for r in rows
            if r.bytesBeforeCompression != r.expected] == []


def test_bytes_before_compression(spark, samples: Path) -> None:
    from kafkalog_spark.analysis.segment_stats import segment_stats
    from kafkalog_spark.source import read_views

    v = read_views(spark, [str(samples / "broker")], ["segments", "batches", "record_stats"],
                   topics="codec-none,codec-gzip,codec-lz4,codec-zstd,codec-snappy-java")
    stats = segment_stats(v["segments"], v["batches"], v["record_stats"]).where("batches > 0")
    rows = stats.groupBy("topic").agg(F.sum("bytesOnDisk").alias("disk"),
                                      F.sum("bytesBeforeCompression").alias("raw")).collect()
    by_topic = {r.topic: (r.disk, r.raw) for r in rows}
    assert by_topic["codec-none"][0] == by_topic["codec-none"][1]
    # each topic's bytes on disk and decompressed, computed here with the codec libraries
    assert by_topic == {t: _bytes_on_disk_and_before_compression(samples / "broker" / f"{t}-0") for t in (
        "codec-none", "codec-gzip", "codec-lz4", "codec-zstd", "codec-snappy-java")}
    for codec in ("gzip", "lz4", "zstd", "snappy-java"):
        disk, raw = by_topic[f"codec-{codec}"]
        assert raw > disk, codec  # the corpus's JSON values compress


def test_no_segment_of_the_corpus_shrinks_when_decompressed(spark, samples: Path) -> None:
    # the defect this replaces: bytesBeforeCompression counted keys, values and headers only
    from kafkalog_spark.analysis.segment_stats import segment_stats
    from kafkalog_spark.source import read_views

    v = read_views(spark, [str(samples / "broker")], ["segments", "batches", "record_stats"])
    stats = segment_stats(v["segments"], v["batches"], v["record_stats"]).where("batches > 0")
    # every segment of the topics with a batch in kafka-dump-log's dump
    dumped = {(p.parent.name, int(p.stem)) for p, ls in _golden_batch_lines(samples, "broker").items() if ls}
    assert {(f"{r.topic}-{r.partition}", r.baseOffset) for r in stats.select("topic", "partition", "baseOffset")
            .collect()} == dumped and len(dumped) > 50
    assert stats.where("bytesBeforeCompression < bytesOnDisk").select("topic", "baseOffset").collect() == []


def test_varint_sizes_as_columns_are_kafkas_and_plans_stay_small(spark) -> None:
    from kafkalog_spark.analysis.cleaner import varint_size as python_varint_size
    from kafkalog_spark.analysis.record_sizes import v2_record_bytes, varint_size

    edges = {s * (2**k + d) for k in range(63) for d in (-1, 0, 1) for s in (1, -1)} | {2**63 - 1, -(2**63)}
    values = sorted(v for v in edges if -(2**63) <= v < 2**63)
    df = spark.createDataFrame([(v,) for v in values], "v long")
    got = dict(df.select("v", varint_size(F.col("v"))).collect())
    assert len(got) == len(values) > 370
    assert {v: got[v] for v in values if got[v] != python_varint_size(v)} == {}
    # A record's length nests varints three deep; a branch per byte count made this expression 385,180 characters
    # of text (4,328 now), and segment_stats' plan 462 KB.
    assert len(str(v2_record_bytes(F.col("timestamp") - F.col("baseTimestamp")))) < 10_000


def test_records_without_payloads_keep_what_the_analyses_need(spark, samples: Path) -> None:
    # The nightly job caches the records without values and headers (a 1 GiB heap ran out of memory caching
    # them on 1 GB of log): the headers' sizes and a null value must survive the reduction exactly.
    from kafkalog_spark import nightly, read_log
    from kafkalog_spark.analysis.cleaner import varint_size
    from kafkalog_spark.analysis.record_sizes import without_payloads
    from kafkalog_spark.source import read_views

    paths = [str(samples / "broker"), str(samples / "legacy")]
    narrow = without_payloads(read_views(spark, paths, ["records"])["records"])
    assert {"value", "headers"} & set(narrow.columns) == set()
    got = {(r.topic, r.partition, r.offset): (r.headerBytes, r.headerDataBytes, r.valueSize)
           for r in narrow.where("problem is null").select("topic", "partition", "offset", "headerBytes",
                                                           "headerDataBytes", "valueSize").collect()}

    def sizes(headers: list[dict], value: bytes | None) -> tuple[int, int, int]:
        pairs = [(len(h["key"].encode()), -1 if h["value"] is None else len(h["value"])) for h in headers or []]
        encoded = varint_size(len(pairs)) + sum(varint_size(k) + k + varint_size(v) + max(v, 0) for k, v in pairs)
        return encoded, sum(k + max(v, 0) for k, v in pairs), -1 if value is None else len(value)

    local = read_log(paths, findings=[]).select(["topic", "partition", "offset", "headers", "value"]).to_pylist()
    expected = {(r["topic"], r["partition"], r["offset"]): sizes(r["headers"], r["value"]) for r in local}
    # the records kafka-dump-log listed in the two log dirs: all of them, those with headers, those with a null value
    dumped = [ln for d in ("broker", "legacy") for p in sorted((samples / d).glob("*-*/*.log"))
              for ln in (samples / "golden" / f"{p.relative_to(samples)}.deep.txt").read_bytes().decode().split("\n")
              if ln.startswith("| offset: ")]
    assert len(got) == len(expected) == len(dumped) > 1000
    assert sum(h > 1 for h, _, _ in got.values()) == sum(
        re.search(r" headerKeys: \[[^]]", ln) is not None for ln in dumped) > 0
    assert sum(v == -1 for _, _, v in got.values()) == sum(" valueSize: -1 " in ln for ln in dumped) > 0
    assert {k: v for k, v in got.items() if expected[k] != v} == {}
    cached = nightly.read_cached_views(spark, [paths[0]])
    try:
        assert "value" not in cached["records"].columns and "headerBytes" in cached["records"].columns
    finally:
        for df in cached.values():
            df.unpersist()
