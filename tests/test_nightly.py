"""The nightly job on the real-broker corpus into real Delta tables: golden facts, idempotence, and a
failed run leaving the previous table version intact."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from kafkalog_spark import nightly
from kafkalog_spark.delta import TableLocation, read_snapshot
from kafkalog_spark.kafka_versions import KafkaVersion

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
CONF = Path(__file__).resolve().parent.parent / "conf"


@pytest.fixture(scope="module")
def corpus_config(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> nightly.NightlyConfig:
    return nightly.NightlyConfig(log_dirs=(str(samples / "broker"),),
                                 location=TableLocation(warehouse=str(tmp_path_factory.mktemp("wh"))),
                                 snapshot_id="s1", topic_config=str(CONF / "samples-topics.ini"),
                                 kafka_version=KafkaVersion.V3_9)  # the corpus was written by Kafka 3.9.2


@pytest.fixture(scope="module")
def first_run(spark, corpus_config):
    nightly.run(spark, corpus_config, now=lambda: T0)
    return corpus_config


def table(spark, config, name, snapshot="s1"):
    return read_snapshot(spark, config.location, name, snapshot)


def golden_batches(samples: Path, rel_dir: str) -> dict[int, list[str]]:
    out = {}
    for g in sorted((samples / "golden" / "broker" / rel_dir).glob("*.log.deep.txt")):
        out[int(g.name.split(".")[0])] = re.findall(r"(?m)^baseOffset: .* compresscodec: (\w+) ", g.read_text())
    return out


def test_tutorial_experiment_segments(spark, first_run) -> None:
    rows = (table(spark, first_run, "segment_stats").where("topic = 'tutorial-segments'")
            .orderBy("baseOffset").collect())
    assert [r.baseOffset for r in rows] == list(range(0, 100, 12))
    assert [r.records for r in rows] == [12] * 8 + [4]
    assert [r.isActive for r in rows] == [False] * 8 + [True]
    # segment.bytes=1000 and 81-82 byte batches: each closed segment rolled by size
    assert [r.rollReason for r in rows] == ["size"] * 8 + [None]


def test_time_rolls_roll_by_time(spark, first_run) -> None:
    rows = table(spark, first_run, "segment_stats").where("topic = 'time-rolls'").orderBy("baseOffset").collect()
    assert len(rows) > 2 and [r.rollReason for r in rows] == ["time"] * (len(rows) - 1) + [None]


@pytest.mark.parametrize("codec", ["gzip", "snappy-java", "lz4", "zstd", "none"])
def test_codec_mix_matches_kafka_dump_log(spark, samples: Path, first_run, codec: str) -> None:
    expected = {base: {c: batches.count(c) for c in set(batches)}
                for base, batches in golden_batches(samples, f"codec-{codec}-0").items() if batches}
    rows = table(spark, first_run, "segment_stats").where(F.col("topic") == f"codec-{codec}").collect()
    assert {r.baseOffset: r.codecMix for r in rows if r.batches} == expected


def test_partition_stats_carry_checkpoints(spark, samples: Path, first_run) -> None:
    hw = {}
    for line in (samples / "broker" / "replication-offset-checkpoint").read_text().splitlines()[2:]:
        topic, partition, offset = line.split()
        hw[(topic, int(partition))] = int(offset)
    rows = table(spark, first_run, "partition_stats").collect()
    got = {(r.topic, r.partition): r.highWatermark for r in rows if r.highWatermark is not None}
    assert got == {k: v for k, v in hw.items() if k in got} and len(got) >= len(hw) - 1
    tutorial = next(r for r in rows if r.topic == "tutorial-segments")
    assert (tutorial.segments, tutorial.logEndOffset, tutorial.logStartOffset) == (9, 100, 0)


def test_rerun_of_a_snapshot_replaces_its_rows(spark, first_run) -> None:
    before = {t: table(spark, first_run, t).count() for t in nightly.TABLES}
    nightly.run(spark, first_run, now=lambda: T0 + dt.timedelta(hours=1))
    after = {t: table(spark, first_run, t).count() for t in nightly.TABLES}
    assert after == before and before["segment_stats"] > 0
    times = {r.snapshotTime for r in table(spark, first_run, "segment_stats").select("snapshotTime").collect()}
    assert len(times) == 1  # the re-run's rows only


def test_a_failed_run_leaves_the_previous_version(spark, first_run, monkeypatch) -> None:
    from delta.tables import DeltaTable

    path = first_run.location.name("partition_stats")
    version = DeltaTable.forPath(spark, path).history(1).collect()[0].version
    rows = table(spark, first_run, "partition_stats").count()
    real_compute = nightly.compute

    def failing(*args):
        tables = real_compute(*args)
        boom = F.udf(lambda x: x // 0, "long")  # same type: the run fails while writing, not on the schema
        tables["partition_stats"] = tables["partition_stats"].withColumn("segments", boom("segments"))
        return tables

    monkeypatch.setattr(nightly, "compute", failing)
    with pytest.raises(Exception, match="ZeroDivisionError|division"):
        nightly.run(spark, first_run, now=lambda: T0 + dt.timedelta(hours=2))
    assert DeltaTable.forPath(spark, path).history(1).collect()[0].version == version
    assert table(spark, first_run, "partition_stats").count() == rows
