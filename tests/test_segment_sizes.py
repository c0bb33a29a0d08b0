"""Sizes checked two independent ways on broker-written batches. Kafka's record size arithmetic
(analysis/record_sizes.py, which the compaction preview sizes rewritten batches with) must give every uncompressed
batch's size on disk to the byte; a segment's bytesBeforeCompression (the reader's: each batch's header plus its
records region as decompressed) must equal that arithmetic over the records of its compressed batches, and its size
on disk when nothing is compressed."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

BATCH = ["topic", "partition", "segmentBaseOffset", "position"]


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
    assert len(joined) == batches.count() > 100
    assert {r.magic for r in joined} >= {0, 1, 2}
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
    assert len(compressed) >= 23 and {r.topic for r in compressed} >= {
        "codec-gzip", "codec-lz4", "codec-snappy-java", "codec-snappy-librdkafka", "codec-zstd", "legacy-v1"}
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
    for codec in ("gzip", "lz4", "zstd", "snappy-java"):
        disk, raw = by_topic[f"codec-{codec}"]
        assert raw > disk, codec  # the corpus's JSON values compress


def test_no_segment_of_the_corpus_shrinks_when_decompressed(spark, samples: Path) -> None:
    # the defect this replaces: bytesBeforeCompression counted keys, values and headers only
    from kafkalog_spark.analysis.segment_stats import segment_stats
    from kafkalog_spark.source import read_views

    v = read_views(spark, [str(samples / "broker")], ["segments", "batches", "record_stats"])
    stats = segment_stats(v["segments"], v["batches"], v["record_stats"]).where("batches > 0")
    assert stats.count() > 50
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
    assert len(got) == len(expected) > 1000
    assert any(h for h, _, _ in got.values() if h > 1) and any(v == -1 for _, _, v in got.values())
    assert {k: v for k, v in got.items() if expected[k] != v} == {}
    cached = nightly.read_cached_views(spark, [paths[0]])
    try:
        assert "value" not in cached["records"].columns and "headerBytes" in cached["records"].columns
    finally:
        for df in cached.values():
            df.unpersist()
