"""The nightly job on the real-broker corpus into real Delta tables: golden facts, and a re-run killed
half-way (readers still see the snapshot whole; the next run completes it)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from kafkalog_spark import nightly
from kafkalog_spark.delta import TableLocation, committed, read_table
from kafkalog_spark.kafka_versions import KafkaVersion
from tests.helpers.corpus import CONF, SAMPLES

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


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
    return read_table(spark, config.location, name, snapshot)


def snapshot_times(spark, config) -> set:
    return {r.snapshotTime for r in table(spark, config, "segment_stats").select("snapshotTime").distinct().collect()}


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


def test_time_rolls_roll_by_time(spark, samples: Path, first_run) -> None:
    rows = table(spark, first_run, "segment_stats").where("topic = 'time-rolls'").orderBy("baseOffset").collect()
    # the segments on disk: 0, 8, 16, 24, 32 (data/samples/README.md), the last one active
    bases = sorted(int(p.name.removesuffix(".log")) for p in (samples / "broker" / "time-rolls-0").glob("*.log"))
    assert [r.baseOffset for r in rows] == bases == [0, 8, 16, 24, 32]
    assert [r.rollReason for r in rows] == ["time"] * 4 + [None]


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
    # every partition dir of the log dir has its line in the checkpoint (__cluster_metadata, the KRaft log, none)
    assert {(r.topic, r.partition) for r in rows} == set(hw) | {("__cluster_metadata", 0)}
    assert {(r.topic, r.partition): r.highWatermark for r in rows} == {**hw, ("__cluster_metadata", 0): None}
    tutorial = next(r for r in rows if r.topic == "tutorial-segments")
    assert (tutorial.segments, tutorial.logEndOffset, tutorial.logStartOffset) == (9, 100, 0)


@pytest.mark.kill
def test_a_rerun_killed_between_two_tables_leaves_the_snapshot_whole_and_a_rerun_completes_it(spark,
                                                                                             first_run) -> None:
    """Issue 13's half-written snapshot: the whole job (driver, JVM, workers) SIGKILLed right after its first
    table's commit, while re-writing the committed snapshot s1. Readers still see s1 whole, as the first run
    wrote it; the next run replaces it, leaving one run's rows in every table. (Every other boundary: make
    kill-matrix.)"""
    from tests.helpers.snapshots import raw_rows, run_killed

    before = {t: table(spark, first_run, t).count() for t in nightly.TABLES}
    assert before["segment_stats"] == len(list((SAMPLES / "broker").glob("*/*.log")))  # one row per live segment
    run_killed(first_run, kill_after="segment_stats")
    warehouse = first_run.location.warehouse
    assert raw_rows(spark, warehouse, "segment_stats", "s1").count() == 2 * before["segment_stats"]  # both runs'
    assert {t: table(spark, first_run, t).count() for t in nightly.TABLES} == before
    first_times = snapshot_times(spark, first_run)
    assert len(first_times) == 1

    nightly.run(spark, first_run, now=lambda: T0 + dt.timedelta(hours=1))
    assert {t: table(spark, first_run, t).count() for t in nightly.TABLES} == before
    assert [t for t in nightly.TABLES if raw_rows(spark, warehouse, t, "s1").count() != before[t]] == []
    times = snapshot_times(spark, first_run)
    assert len(times) == 1 and times != first_times  # the re-run's rows only


# The incremental run's own checks (make test-incremental): CI's long suite compares an incremental run with a full
# run of a broker's changed dirs (tests/test_nightly_incremental.py), and these two tests, four nightly runs, took
# four minutes of make test
@pytest.mark.incremental
def test_a_second_run_reads_back_every_unchanged_segment_and_equals_the_first(spark, first_run) -> None:
    """The corpus did not change since the first run: the next snapshot decodes nothing, reads every segment's rows
    back from the first (tests/test_nightly_incremental.py: corpora that change), and its tables equal the first's."""
    from tests.helpers.engine_tables import _rows

    second = dataclasses.replace(first_run, snapshot_id="s2")
    spark.catalog.clearCache()
    nightly.run(spark, second, now=lambda: T0)
    # nothing it cached stays cached (a notebook runs it again and again in one session)
    assert spark._jsparkSession.sharedState().cacheManager().isEmpty()
    manifest = spark.read.format("delta").load(f"{first_run.location.warehouse}/snapshots")
    counts = {r.snapshotId: (r.segmentsDecoded, r.segmentsReused, r.bytesDecoded, r.bytesReused)
              for r in manifest.where(F.col("snapshotId").isin("s1", "s2")).collect()}
    logs = [p for p in Path(first_run.log_dirs[0]).glob("*/*.log")
            if re.fullmatch(r".+-\d+", p.parent.name) and p.is_file()]
    size = sum(p.stat().st_size for p in logs)
    assert counts == {"s1": (len(logs), 0, size, 0), "s2": (0, len(logs), 0, size)}
    for name in nightly.TABLES:
        first = _rows(table(spark, first_run, name).drop("snapshotId"))
        assert _rows(table(spark, second, name, "s2").drop("snapshotId")) == first, name


@pytest.mark.incremental
@pytest.mark.parametrize("kept", ["decoded_rows", "decoded_segments"])
def test_a_warehouse_without_a_kept_table_is_decoded_in_full_once(spark, samples: Path, tmp_path: Path,
                                                                  kept: str) -> None:
    """A warehouse an earlier version wrote lacks a table of what is kept per segment (``kept``): the next run decodes
    every segment (and checks every index entry and batch), the run after it reads every segment back, the findings
    of a damaged index and of a damaged batch among them, and both give the same tables. The runs have one time: the
    run after reads from the one snapshot that wrote every table kept ("b"), not from "a", whose rows lack the table."""
    import shutil

    from delta.tables import DeltaTable

    from tests.helpers.engine_tables import _rows

    log_dir = tmp_path / "data"
    shutil.copytree(samples / "broker" / "codec-none-0", log_dir / "codec-none-0")
    index = min((log_dir / "codec-none-0").glob("*.index"), key=lambda p: int(p.stem))
    data = bytearray(index.read_bytes())
    data[4:8] = (int.from_bytes(data[4:8], "big") + 1).to_bytes(4, "big")  # the first entry's position, off by one
    index.write_bytes(bytes(data))
    log = index.with_suffix(".log")
    data = bytearray(log.read_bytes())
    assert int.from_bytes(data[8:12], "big") > 20  # the first batch's length: a record byte flipped under its CRC
    data[12 + 61 + 5] ^= 0xFF
    log.write_bytes(bytes(data))
    config = nightly.NightlyConfig(log_dirs=(str(log_dir),), location=TableLocation(warehouse=str(tmp_path / "wh")),
                                   snapshot_id="a")
    nightly.run(spark, config, now=lambda: T0)
    # as the version before kept its cache: the table is not there, and the manifest's row does not name it
    shutil.rmtree(tmp_path / "wh" / kept)
    DeltaTable.forPath(spark, str(tmp_path / "wh" / "snapshots")).update(set={"tables": F.array_remove("tables", kept)})
    for snapshot_id in ("b", "c"):  # at the same time as "a": "c" reads from "b" only
        nightly.run(spark, dataclasses.replace(config, snapshot_id=snapshot_id), now=lambda: T0)
    manifest = spark.read.format("delta").load(str(tmp_path / "wh" / "snapshots"))
    counts = {r.snapshotId: (r.segmentsDecoded, r.segmentsReused) for r in manifest.collect()}
    segments = len(list((log_dir / "codec-none-0").glob("*.log")))
    assert counts == {"a": (segments, 0), "b": (segments, 0), "c": (0, segments)}
    for name in nightly.TABLES:
        tables = {s: _rows(table(spark, config, name, s).drop("snapshotId", "snapshotTime")) for s in ("b", "c")}
        assert tables["b"] == tables["c"], name
    findings = {(r.file, r.check) for r in table(spark, config, "index_findings", "c").collect()}
    assert (str(log), "batch_crc_invalid") in findings, findings
    assert [c for f, c in findings if f == str(index)], findings


@pytest.mark.incremental
def test_segments_whose_snapshot_was_written_again_without_them_are_decoded_again(spark, samples: Path,
                                                                                   tmp_path: Path) -> None:
    """Run "s1" reads log dirs a and b; "s2" reads b alone and reads its segments back from "s1". Then "s1" is run
    again over a alone: it replaces "s1", and b's rows with it. "s3" over b finds its latest snapshot "s2" naming "s1"
    as where b's segments' rows are, which no longer holds them: it decodes them again, and its tables equal "s2"'s."""
    import shutil

    from tests.helpers.engine_tables import _rows

    dirs = {name: tmp_path / name for name in ("a", "b")}
    for name, topic in (("a", "codec-none-0"), ("b", "codec-lz4-0")):
        shutil.copytree(samples / "broker" / topic, dirs[name] / topic)
    config = nightly.NightlyConfig(log_dirs=(str(dirs["a"]), str(dirs["b"])),
                                   location=TableLocation(warehouse=str(tmp_path / "wh")), snapshot_id="s1")
    only_b = dataclasses.replace(config, log_dirs=(str(dirs["b"]),))
    for run in (config, dataclasses.replace(only_b, snapshot_id="s2"),
                dataclasses.replace(config, log_dirs=(str(dirs["a"]),)), dataclasses.replace(only_b, snapshot_id="s3")):
        nightly.run(spark, run, now=lambda: T0)
    runs = {r.snapshotId: r.runId for r in committed(spark, config.location).collect()}
    manifest = spark.read.format("delta").load(str(tmp_path / "wh" / "snapshots"))
    counts = {r.snapshotId: (r.segmentsDecoded, r.segmentsReused) for r in manifest.collect()
              if runs[r.snapshotId] == r.runId}
    segments = {name: len(list(d.glob("*/*.log"))) for name, d in dirs.items()}
    assert counts == {"s1": (segments["a"], 0), "s2": (0, segments["b"]), "s3": (segments["b"], 0)}
    for name in nightly.TABLES:
        tables = {s: _rows(table(spark, config, name, s).drop("snapshotId", "snapshotTime")) for s in ("s2", "s3")}
        assert tables["s2"] == tables["s3"], name


def _snapshot_with(spark, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, begin) -> tuple[object, list[str]]:
    """A run's snapshot writer whose start record is ``begin`` and whose appends are only noted (no Delta write)."""
    from kafkalog_spark.nightly import job

    events: list[str] = []
    monkeypatch.setattr(job, "begin", begin)
    monkeypatch.setattr(job, "append_rows", lambda df, where, table, *a: events.append(f"append {table}"))
    config = nightly.NightlyConfig(log_dirs=(str(tmp_path),), location=TableLocation(warehouse=str(tmp_path / "wh")))
    snapshot = job._Snapshot(spark, config, "s1", dt.datetime(2026, 1, 1, tzinfo=dt.UTC), events.append)
    return snapshot, events


def test_the_run_is_recorded_while_it_reads_and_before_any_table(spark, monkeypatch, tmp_path: Path) -> None:
    """The start record's commit runs beside the reading, and no table is written before it is in."""
    import threading
    import time

    started = threading.Event()

    def slow_begin(*args) -> None:
        started.set()
        time.sleep(1)

    snapshot, events = _snapshot_with(spark, monkeypatch, tmp_path, slow_begin)
    with snapshot.beginning(["t1", "t2"]):
        assert started.wait(10)  # begun while the block runs: the block is the run's reading
        events.append("read")
        snapshot.append({"t1": spark.range(1), "t2": spark.range(1)}, ["t1"])
    assert events[:3] == ["read", "runs", "append t1"], events
    with pytest.raises(RuntimeError, match="inside beginning"):
        snapshot.append({"t2": spark.range(1)}, ["t2"])


def test_a_failed_start_record_stops_the_run_before_any_table(spark, monkeypatch, tmp_path: Path) -> None:
    def failing_begin(*args) -> None:
        raise OSError("the warehouse refused the write")

    snapshot, events = _snapshot_with(spark, monkeypatch, tmp_path, failing_begin)
    with pytest.raises(OSError, match="refused"), snapshot.beginning(["t1"]):
        snapshot.append({"t1": spark.range(1)}, ["t1"])
    assert events == []
    with pytest.raises(OSError, match="refused"), snapshot.beginning(["t1"]):
        pass  # a block that writes nothing still hears of it
    with pytest.raises(ValueError, match="the block's"), snapshot.beginning(["t1"]):
        raise ValueError("the block's own failure comes first")


def test_a_polite_run_caches_each_view_split_by_split(spark, samples: Path) -> None:
    """A polite run's Python workers end with their task: were its cached views coalesced to a partition a core, each
    such task would read split after split of the source, each in a worker of its own alive until the task ends
    (48 at once, 14 GiB, on the 4 GB incremental benchmark set). So a polite run caches them as the source splits them;
    other runs, as one partition a core."""
    from kafkalog_spark.source import read_views

    log_dir, split = [str(samples / "broker")], "4k"
    splits = read_views(spark, log_dir, ["decoded"], maxSplitBytes=split)["decoded"].rdd.getNumPartitions()
    assert splits > spark.sparkContext.defaultParallelism
    for polite, partitions in ((True, splits), (False, spark.sparkContext.defaultParallelism)):
        views = nightly.read_cached_views(spark, log_dir, max_split_bytes=split, polite=polite)
        try:
            assert views["decoded"].rdd.getNumPartitions() == partitions, polite
        finally:
            for df in reversed(list(views.values())):
                df.unpersist()


def test_a_segments_aborted_key_is_the_hash_spark_gave_it_in_runs_before(spark) -> None:
    """The aborted transactions' key of a segment's identity, now computed on the driver (``aborted_key``), is the
    SHA-256 of Spark's JSON of their sorted set, as the runs before computed it in Spark and kept it in
    decoded_segments: their segments are read back, not decoded again. Spark's own functions are the oracle here,
    over the shapes a partition's `.txnindex` entries take: none, one, repeated, several producers, null fields."""
    from kafkalog_spark.nightly.incremental import aborted_key

    cases = [[], [(5, 9, 1000)], [(5, 9, 1000), (0, 3, 7), (5, 9, 1000)], [(12, 40, 3), (12, 15, 3), (2, 90, 8)],
             [(None, 9, 2), (1, None, 3), (1, 2, 3), (0, 2**62, 2**40)]]
    rows = [(i, *t) for i, case in enumerate(cases) for t in case] + [(i, None, None, None) for i in range(len(cases))]
    df = spark.createDataFrame(rows, "case int, firstOffset long, abortOffset long, producerId long")
    txns = F.sort_array(F.collect_set(F.when(F.col("producerId").isNotNull(),
                                             F.struct("firstOffset", "abortOffset", "producerId"))))
    by_spark = {r.case: r.key for r in df.groupBy("case").agg(F.sha2(F.to_json(txns), 256).alias("key")).collect()}
    assert len(set(by_spark.values())) == len(cases)
    assert {i: aborted_key(case) for i, case in enumerate(cases)} == by_spark
