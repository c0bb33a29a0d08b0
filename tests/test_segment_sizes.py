"""Kafka's record size arithmetic (analysis/record_sizes.py) checked on broker-written batches: for every
uncompressed batch of the corpus it must give the batch's size on disk to the byte; and a segment's
bytesBeforeCompression is its size on disk when nothing is compressed, and more when it is."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import functions as F


def test_record_sizes_add_up_to_uncompressed_batches(spark, samples: Path) -> None:
    from kafkalog_spark.analysis.segment_stats import BATCH, uncompressed_batch_bytes
    from kafkalog_spark.source import read_views

    views = read_views(spark, [str(samples / "broker"), str(samples / "legacy")], ["batches", "records"])
    computed = uncompressed_batch_bytes(views["records"].where("compresscodec = 'none'"), views["batches"])
    batches = views["batches"].where("problem is null and compresscodec = 'none' and (count is null or count > 0)")
    joined = batches.join(computed, BATCH).select("size", "uncompressedBytes", "magic").collect()
    assert len(joined) == batches.count() > 100
    assert {r.magic for r in joined} >= {0, 1, 2}
    assert [r for r in joined if r.size != r.uncompressedBytes] == []


def test_bytes_before_compression(spark, samples: Path) -> None:
    from kafkalog_spark.analysis.segment_stats import segment_stats
    from kafkalog_spark.source import read_views

    v = read_views(spark, [str(samples / "broker")], ["segments", "batches", "records", "partition_files"],
                   topics="codec-none,codec-gzip,codec-lz4,codec-zstd,codec-snappy-java")
    stats = segment_stats(v["segments"], v["batches"], v["records"], v["partition_files"]).where("batches > 0")
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

    v = read_views(spark, [str(samples / "broker")], ["segments", "batches", "records", "partition_files"])
    stats = segment_stats(v["segments"], v["batches"], v["records"], v["partition_files"]).where("batches > 0")
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
    cached = nightly.read_views(spark, [paths[0]])
    try:
        assert "value" not in cached["records"].columns and "headerBytes" in cached["records"].columns
    finally:
        for df in cached.values():
            df.unpersist()
