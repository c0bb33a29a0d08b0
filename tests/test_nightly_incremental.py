"""The incremental nightly run against full runs, on a real broker's log dirs as the broker changed them.

data/samples-incremental/<version>/stage-<n> are copies of one Kafka broker's two log dirs at four moments
(tests/harness/incremental_corpus.py): appends and rolls, a transaction aborted after a roll, the broker's own
retention deleting segments, a cleaner pass, a partition moved to the other log dir, a topic deleted. A working copy
goes from stage to stage as the broker changed it (tests/helpers/broker_sync.py); at each stage an incremental run
reads back what the previous one decoded, and must give, table by table, the rows a full run of the same dirs at the
same time gives; its manifest row says what it decoded and reused, which must be the segments whose files the
broker wrote since (and those a later abort changed), no more.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from kafkalog_spark import nightly
from kafkalog_spark.delta import TableLocation, read_table
from kafkalog_spark.kafka_versions import parse_kafka_version
from kafkalog_spark.nightly.incremental import SEGMENTS
from tests.helpers.broker_sync import sync_like_a_broker
from tests.helpers.corpus import DATA
from tests.helpers.engine_tables import _rows

CORPUS = DATA / "samples-incremental"
LOG_DIRS = ("logdir-a", "logdir-b")
T0 = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)


def _stages(version: str) -> list[Path]:
    return sorted((CORPUS / version).glob("stage-*"), key=lambda p: int(p.name.split("-")[1]))


def _config(work: Path, warehouse: Path, snapshot_id: str, version: str, **kw) -> nightly.NightlyConfig:
    return nightly.NightlyConfig(log_dirs=tuple(str(work / d) for d in LOG_DIRS),
                                 location=TableLocation(warehouse=str(warehouse)), snapshot_id=snapshot_id,
                                 kafka_version=parse_kafka_version(version), **kw)


def _manifest(spark, config: nightly.NightlyConfig):
    return (spark.read.format("delta").load(str(Path(config.location.warehouse) / "snapshots"))
            .where(F.col("snapshotId") == config.snapshot_id).orderBy(F.col("committedTime").desc()).first())


def _decoded_here(spark, config: nightly.NightlyConfig) -> dict[str, int]:
    """The `.log` files (relative to the working copy) whose rows this snapshot decoded, with their sizes."""
    rows = read_table(spark, config.location, SEGMENTS, config.snapshot_id).collect()
    work = Path(config.log_dirs[0]).parent
    return {str(Path(r.logFile).relative_to(work)): r.logSize for r in rows if r.decodedIn == config.snapshot_id}


def _live_logs(work: Path, log_dirs: tuple[str, ...] = LOG_DIRS) -> dict[str, int]:
    """The live segments' `.log` files of the working copy: regular files in partition dirs (not `-delete` or
    `-future` ones), by path relative to ``work``, with their sizes."""
    return {str(p.relative_to(work)): p.stat().st_size for d in log_dirs for p in (work / d).glob("*/*.log")
            if re.fullmatch(r".+-\d+", p.parent.name) and p.is_file()}


# CI's long suite takes one step, stage 0 -> 3 (every change at once: appends, rolls, an abort after a roll,
# retention, a cleaner pass, a partition moved, a topic deleted); make test-incremental takes every stage of both
# versions, one at a time, and a re-run.
@pytest.mark.parametrize(("version", "steps", "rerun"), [
    pytest.param("3.9.2", (0, 3), False, marks=pytest.mark.long),
    pytest.param("3.9.2", (0, 1, 2, 3), True, marks=pytest.mark.incremental),
    pytest.param("4.4.0", (0, 1, 2, 3), True, marks=pytest.mark.incremental)])
def test_each_incremental_run_equals_a_full_run_and_decodes_only_what_the_broker_wrote(
        spark, tmp_path: Path, version: str, steps: tuple[int, ...], rerun: bool) -> None:
    stages = _stages(version)
    assert len(stages) == 4, f"the corpus of {version} has its four stages"
    work, incremental, full = tmp_path / "work", tmp_path / "incremental", tmp_path / "full"
    work.mkdir()
    sync_like_a_broker(stages[steps[0]], work)
    first = _config(work, incremental, "stage-0", version)
    nightly.run(spark, first, now=lambda: T0)
    counts = _manifest(spark, first)
    live = _live_logs(work)
    assert (counts.segmentsDecoded, counts.segmentsReused) == (len(live), 0)
    assert counts.bytesDecoded == sum(live.values())
    for n in steps[1:]:
        written = sync_like_a_broker(stages[n], work)
        at = T0 + dt.timedelta(hours=n)
        config = _config(work, incremental, f"stage-{n}", version)
        nightly.run(spark, config, now=lambda at=at: at)
        whole = _config(work, full / f"stage-{n}", f"stage-{n}", version, full=True)
        nightly.run(spark, whole, now=lambda at=at: at)
        for name in nightly.TABLES:
            got = _rows(read_table(spark, config.location, name, config.snapshot_id).drop("snapshotTime"))
            expected = _rows(read_table(spark, whole.location, name, whole.snapshot_id).drop("snapshotTime"))
            assert got == expected, f"stage {n}: {name} differs from the full run's"
        # what it decoded: every `.log` the broker wrote since the last stage, and otherwise only segments of the
        # transactional partition whose aborted transactions changed (an abort indexed in a later segment)
        live = _live_logs(work)
        new_files = {f for f in written if f in live}
        decoded = _decoded_here(spark, config)
        assert new_files <= decoded.keys(), f"stage {n}: files written by the broker but not decoded"
        assert all(Path(f).parent.name == "txn-0" for f in decoded.keys() - new_files), decoded.keys() - new_files
        counts = _manifest(spark, config)
        assert counts.segmentsDecoded == len(decoded) and counts.bytesDecoded == sum(decoded.values())
        assert counts.segmentsReused == len(live) - len(decoded) > 0
        assert counts.bytesReused == sum(live.values()) - sum(decoded.values())
    if not rerun:
        return
    # the same snapshot id again: its own rows are not read back (it replaces them), and the tables stay equal
    again = _config(work, incremental, f"stage-{len(stages) - 1}", version)
    before = {name: _rows(read_table(spark, again.location, name, again.snapshot_id).drop("snapshotTime"))
              for name in nightly.TABLES}
    nightly.run(spark, again, now=lambda: T0 + dt.timedelta(hours=len(stages) - 1))
    assert _manifest(spark, again).segmentsReused < counts.segmentsReused + counts.segmentsDecoded
    for name in nightly.TABLES:
        assert _rows(read_table(spark, again.location, name, again.snapshot_id).drop("snapshotTime")) == before[name]


@pytest.mark.incremental
def test_what_a_run_keeps_is_handed_over_last_with_the_rows_it_read_back_uncached(spark, tmp_path: Path) -> None:
    """After a Delta write Spark plans again every cached query that reads the table written, a Spark job each (11 on
    the 1 MB bench set when decoded_rows was written with the other tables, and more where a table being written
    then read a cache so dropped). analysed() hands the tables a run keeps to ``keep`` once the block ends, with the
    rows read back from them no longer cached, and leaves them out of the tables it yields."""
    from kafkalog_spark.config import TopicConfigs
    from kafkalog_spark.nightly.incremental import Reuse
    from kafkalog_spark.nightly.pipeline import analysed
    from kafkalog_spark.source.options import parse_size
    from tests.helpers.corpus import SAMPLES

    config = nightly.NightlyConfig(log_dirs=(str(SAMPLES / "legacy"),), location=TableLocation(warehouse=str(tmp_path)),
                                   snapshot_id="first")
    nightly.run(spark, config, now=lambda: T0)
    reuse = Reuse(spark, config.location, "second", parse_size(config.max_split_bytes, "max_split_bytes"))
    seen: dict = {}

    def keep(tables: dict) -> None:
        level = reuse._back.storageLevel
        seen.update(kept=sorted(tables), cached=level.useMemory or level.useDisk)

    with analysed(spark, config.log_dirs, T0, TopicConfigs.of(None), reuse=reuse, keep=keep) as tables:
        assert not set(tables) & set(nightly.CACHE_TABLES)
        assert reuse.counts["segmentsReused"] > 0 and reuse.counts["segmentsDecoded"] == 0
        assert reuse._back.storageLevel.useMemory
        assert not seen  # not before the block ends
    assert seen == {"kept": sorted(nightly.CACHE_TABLES), "cached": False}


@pytest.mark.incremental
def test_a_run_that_reads_nothing_back_yields_what_it_keeps_with_the_other_tables(spark, tmp_path: Path) -> None:
    """A first run (nothing in the warehouse) has no cache built on rows read back, so nothing to drop before its
    kept tables are written: analysed() yields them with the others (the job writes them in the same parallel batch)
    and never calls ``keep``."""
    from kafkalog_spark.config import TopicConfigs
    from kafkalog_spark.nightly.incremental import Reuse
    from kafkalog_spark.nightly.pipeline import analysed
    from kafkalog_spark.source.options import parse_size
    from tests.helpers.corpus import SAMPLES

    config = nightly.NightlyConfig(log_dirs=(str(SAMPLES / "legacy"),), location=TableLocation(warehouse=str(tmp_path)),
                                   snapshot_id="first")
    reuse = Reuse(spark, config.location, "first", parse_size(config.max_split_bytes, "max_split_bytes"))
    kept: list = []
    with analysed(spark, config.log_dirs, T0, TopicConfigs.of(None), reuse=reuse, keep=kept.append) as tables:
        assert not reuse.reads_back and reuse.counts["segmentsReused"] == 0 and reuse.counts["segmentsDecoded"] > 0
        assert set(nightly.CACHE_TABLES) <= set(tables)
        # what it keeps holds the rows of the segments it decoded
        assert tables[SEGMENTS].count() == reuse.counts["segmentsDecoded"]
    assert kept == []
