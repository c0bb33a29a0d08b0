"""Paths as users give them: file: URIs, globs and Databricks Volumes paths, in the Python API, the Spark
source and the nightly configuration; the logDir column every view carries; a user schema refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkalog_spark import read_log
from kafkalog_spark.log.files import expand_paths, normalize_path


def test_uris_become_the_local_paths_they_name() -> None:
    assert normalize_path("file:///var/lib/kafka") == "/var/lib/kafka"
    assert normalize_path("file:/var/lib/kafka") == "/var/lib/kafka"  # Spark's spelling
    assert normalize_path("dbfs:/Volumes/main/kafka/logs") == "/Volumes/main/kafka/logs"
    assert normalize_path("/Volumes/main/kafka/logs") == "/Volumes/main/kafka/logs"
    assert normalize_path("s3://bucket/kafka") == "s3://bucket/kafka"
    assert normalize_path("relative/dir") == "relative/dir"


def test_globs_expand_in_order_and_a_pattern_matching_nothing_is_an_error(samples: Path) -> None:
    codecs = expand_paths([str(samples / "broker" / "codec-*-0")])
    assert [Path(p).name for p in codecs] == sorted(p.name for p in (samples / "broker").glob("codec-*-0"))
    assert len(codecs) == 6
    assert expand_paths([f"file://{samples}/b?oker/tutorial-segments-[0]"]) == [
        str(samples / "broker" / "tutorial-segments-0")]
    with pytest.raises(FileNotFoundError, match="no-such-"):
        expand_paths([str(samples / "no-such-*")])


def test_the_python_api_takes_globs_and_uris(samples: Path) -> None:
    plain = read_log([str(samples / "broker" / "codec-lz4-0"), str(samples / "broker" / "codec-zstd-0")])
    globbed = read_log(f"file://{samples}/broker/codec-[lz]*-0")
    assert globbed.num_rows == plain.num_rows == 300 + 300  # README: 300 records in each
    assert globbed.equals(plain)


def test_the_source_takes_globs_and_uris_and_names_the_log_dir(spark, samples: Path) -> None:
    def rows(*paths: str):
        df = spark.read.format("kafkalog").option("view", "batches").load(list(paths))
        return sorted((r.topic, r.partition, r.position, r.logDir) for r in df.collect())

    plain = rows(str(samples / "broker" / "codec-gzip-0"), str(samples / "broker" / "codec-none-0"))
    assert {r[3] for r in plain} == {str(samples / "broker")}
    # the batches kafka-dump-log listed in the two partitions
    dumped = sorted((topic, 0, int(pos)) for topic in ("codec-gzip", "codec-none")
                    for log in (samples / "broker" / f"{topic}-0").glob("*.log")
                    for pos in re.findall(r"(?m)^baseOffset: .* position: (\d+) ", (
                        samples / "golden" / "broker" / f"{topic}-0" / f"{log.name}.deep.txt").read_bytes().decode()))
    assert [r[:3] for r in plain] == dumped and len(dumped) == 19 + 19  # README: 19 batches in each
    assert rows(f"file://{samples}/broker/codec-[gn]*-0") == plain
    assert rows(f"file:{samples}/broker/codec-gzip-0", f"file:{samples}/broker/codec-none-0") == plain


def test_every_view_carries_the_log_dir(spark, samples: Path) -> None:
    both = {str(samples / "broker"), str(samples / "legacy")}
    for view in ("records", "batches", "segments", "index", "partition_files"):
        df = spark.read.format("kafkalog").option("view", view).load(sorted(both))
        seen = {r.logDir for r in df.select("logDir").distinct().collect()}
        # the legacy dir (written by kafka-clients' LogSegment, not a broker) has no partition-level files
        assert seen == (both if view != "partition_files" else {str(samples / "broker")}), view


def test_a_user_schema_is_refused_with_a_clear_message(spark, samples: Path) -> None:
    with pytest.raises(Exception, match="fixed schema; remove .schema"):
        spark.read.format("kafkalog").schema("topic string").load(str(samples / "legacy")).collect()


def test_the_nightly_config_keeps_uris_and_volumes_paths(tmp_path: Path) -> None:
    from kafkalog_spark.nightly import NightlyConfig

    conf = tmp_path / "nightly.toml"
    conf.write_text('[input]\nlog_dirs = ["dbfs:/Volumes/main/kafka/b1", "file:///data/b2", "s3://x/b3", "rel"]\n'
                    '[output]\nwarehouse = "/Volumes/main/kafka/tables"\n')
    config = NightlyConfig.load(str(conf))
    assert config.log_dirs == ("dbfs:/Volumes/main/kafka/b1", "file:///data/b2", "s3://x/b3", str(tmp_path / "rel"))
    assert config.location.warehouse == "/Volumes/main/kafka/tables"
