"""Snapshots all-or-nothing, and snapshot ids that cannot reach a predicate.

The nightly job runs in a subprocess that SIGKILLs its whole process group (the Python driver, the JVM, the
workers) right after one of its Delta commits; readers must then see the snapshot whole or not at all, earlier
snapshots untouched, and a re-run of the same snapshot id must complete it, leaving one run's rows. ``make
kill-matrix`` (KAFKALOG_KILL_MATRIX=all) kills at every boundary here, and a re-run of a committed snapshot between
two tables (tests/test_nightly.py); =kinds at one commit of each kind; =manifest after the manifest's commit. CI
kills one run, after a table's commit, with the tables in S3 (tests/test_object_store_spark.py)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import pytest

from kafkalog_spark import nightly
from kafkalog_spark.config import ConfigError
from kafkalog_spark.delta import (
    MANIFEST,
    RUNS,
    TableLocation,
    append_rows,
    begin,
    clean_up,
    commit,
    committed_runs,
    new_run_id,
    read_table,
    replaced_runs,
    rows_of_runs,
)
from kafkalog_spark.delta.snapshots import RUN_COLUMN
from kafkalog_spark.kafka_versions import KafkaVersion
from tests.helpers.snapshots import PARTITIONS, counts, raw_rows, run_killed, runs_stored

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
INJECTION = "a\\' OR 1=1 --"  # Spark SQL reads \' as an escaped quote: pasted into replaceWhere, it matched all
# Every commit the job makes, in order: the run's row in runs, one per table (in any order among them; those of the
# incremental runs after the others when the run read rows back), the manifest, then the clean-up of each table.
WRITTEN = (*nightly.TABLES, *nightly.CACHE_TABLES)
COMMITS = (RUNS, *WRITTEN, MANIFEST, *(f"clean-up {t}" for t in WRITTEN))
# make kill-matrix: KAFKALOG_KILL_MATRIX=all kills after every commit (36 kills, each a fresh job and a re-run);
# =kinds after one commit of each kind: the manifest's (committed, nothing cleaned up) and the last clean-up's (the
# job's last commit); =manifest after the manifest's alone. The third kind, a table's (one table written, no
# manifest: readers see none of it), CI kills with the tables in S3 (tests/test_object_store_spark.py); =all kills
# there locally too.
MATRIX = os.environ.get("KAFKALOG_KILL_MATRIX", "")
KINDS_OF_COMMIT = (MANIFEST, f"clean-up {WRITTEN[-1]}")
KILLS = {"all": COMMITS, "kinds": KINDS_OF_COMMIT, "manifest": (MANIFEST,)}.get(MATRIX, ())


@pytest.fixture(scope="module")
def log_dir(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("snapshots") / "logs"
    for part in PARTITIONS:
        shutil.copytree(samples / "broker" / part, root / part)
    return str(root)


def config_for(log_dir: str, warehouse: str, snapshot_id: str) -> nightly.NightlyConfig:
    return nightly.NightlyConfig(log_dirs=(log_dir,), location=TableLocation(warehouse=warehouse),
                                 snapshot_id=snapshot_id, kafka_version=KafkaVersion.V3_9)


@pytest.fixture(scope="module")
def warehouse(spark, log_dir: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A warehouse holding the committed snapshot ``s1``."""
    path = str(tmp_path_factory.mktemp("warehouse"))
    nightly.run(spark, config_for(log_dir, path, "s1"), now=lambda: T0)
    return path


@pytest.fixture(scope="module")
def s1_counts(spark, log_dir: str, warehouse: str) -> dict[str, int]:
    found = counts(spark, warehouse, "s1")
    # one row per segment (the .log files on disk), per partition, per segment again, per topic (README's tables)
    segments = sum(len(list(Path(log_dir, part).glob("*.log"))) for part in PARTITIONS)
    assert segments == 9 + 5  # data/samples/README.md: tutorial-segments 9 segments, txn-mixed 5
    assert {t: found[t] for t in ("segment_stats", "partition_stats", "retention_plan", "topic_configs")} == {
        "segment_stats": segments, "partition_stats": len(PARTITIONS), "retention_plan": segments,
        "topic_configs": len(PARTITIONS)}
    return found


def test_an_injected_snapshot_id_is_refused_everywhere_before_any_write(tmp_path: Path, capsys) -> None:
    from kafkalog_spark.cli import main
    from kafkalog_spark.delta import append_rows, commit

    warehouse = tmp_path / "warehouse"
    (warehouse / "segment_stats").mkdir(parents=True)
    (warehouse / "segment_stats" / "earlier-snapshot").write_text("kept")
    before = sorted((p, p.stat().st_mtime_ns) for p in warehouse.rglob("*"))
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    # the command line: one line, exit 2, before Spark starts
    assert main(["nightly", "--log-dir", str(log_dir), "--warehouse", str(warehouse), "--snapshot-id", INJECTION]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"kafkalog nightly: error: --snapshot-id: snapshot id {INJECTION!r}: "), err
    # the TOML file; the Python API and the notebook's widgets (both build a NightlyConfig); the Delta layer
    toml = tmp_path / "nightly.toml"
    escaped = INJECTION.replace("\\", "\\\\")  # TOML's basic string: \\ is one backslash
    toml.write_text(f"[output]\nwarehouse = '{warehouse}'\n[snapshot]\nid = \"{escaped}\"\n")
    with pytest.raises(ConfigError, match="snapshot"):
        nightly.NightlyConfig.load(str(toml))
    with pytest.raises(ValueError, match="snapshot id"):
        config_for(str(log_dir), str(warehouse), INJECTION)
    where = TableLocation(warehouse=str(warehouse))
    for call in (lambda: read_table(None, where, "segment_stats", INJECTION),
                 lambda: append_rows(None, where, "segment_stats", INJECTION, T0, "0" * 32),
                 lambda: commit(None, where, INJECTION, T0, "0" * 32, ["segment_stats"])):
        with pytest.raises(ValueError, match="snapshot id"):
            call()
    assert sorted((p, p.stat().st_mtime_ns) for p in warehouse.rglob("*")) == before


def test_table_and_schema_names_are_checked() -> None:
    with pytest.raises(ValueError, match="schema"):
        TableLocation(catalog="main", schema="x; DROP TABLE y")
    with pytest.raises(ValueError, match="table name"):
        TableLocation(warehouse="w").name("../elsewhere")
    for reserved in (MANIFEST, RUNS):
        with pytest.raises(ValueError, match=f"{reserved!r} .* the job's own tables"):
            nightly.NightlyConfig(log_dirs=("d",), location=TableLocation(warehouse="w"),
                                  table_names={t: t for t in nightly.TABLES} | {"segment_stats": reserved})


def test_runs_names_every_run_with_rows_from_its_creation_on(spark, tmp_path: Path) -> None:
    """A warehouse written before the runs table existed: a committed run and a killed one of snapshot s, no row in
    runs. The run that creates runs records them too, so a re-run of s removes both; a later first run of a new
    snapshot finds no other run (runs is not filled from the tables again)."""
    where = TableLocation(warehouse=str(tmp_path))
    rows = spark.createDataFrame([(1,), (2,)], "x int")
    committed_run, killed_run, rerun, new_run = (new_run_id() for _ in range(4))
    append_rows(rows, where, "a", "s", T0, committed_run)
    commit(spark, where, "s", T0, committed_run, ["a"])
    append_rows(rows, where, "a", "s", T0, killed_run)

    begin(spark, where, "s", T0, rerun, ["a", "b"])  # b: not written yet
    assert replaced_runs(spark, where, "s", rerun) == sorted([committed_run, killed_run])
    append_rows(rows, where, "a", "s", T0, rerun)
    commit(spark, where, "s", T0, rerun, ["a"])
    assert clean_up(spark, where, "a", "s", rerun) == sorted([committed_run, killed_run])
    assert raw_rows(spark, str(tmp_path), "a", "s").select(RUN_COLUMN).distinct().collect() == [(rerun,)]

    begin(spark, where, "t", T0, new_run, ["a", "b"])  # runs exists: recorded alone, nothing found again
    assert replaced_runs(spark, where, "t", new_run) == []
    stored = spark.read.format("delta").load(str(tmp_path / RUNS))
    assert sorted((r.snapshotId, r.runId, r.startedTime is None) for r in stored.collect()) == sorted(
        [("s", committed_run, True), ("s", killed_run, True), ("s", rerun, False), ("t", new_run, False)])


def test_rows_of_runs_reads_the_committed_runs_named_and_nothing_else(spark, tmp_path: Path) -> None:
    """What an incremental run reads back: the rows of each snapshot's committed run, the manifest asked once
    (committed_runs), then each table pruned to the runs named (rows_of_runs): the same rows read_table gives, not a
    replaced run's, a killed run's or another snapshot's."""
    where = TableLocation(warehouse=str(tmp_path))

    def rows(x: int):
        return spark.createDataFrame([(x,)], "x int")

    replaced, rerun, other, killed = (new_run_id() for _ in range(4))
    for x, snapshot_id, run in ((1, "s", replaced), (2, "s", rerun), (3, "t", other)):
        append_rows(rows(x), where, "a", snapshot_id, T0, run)
        commit(spark, where, snapshot_id, T0, run, ["a"])
    append_rows(rows(4), where, "a", "u", T0, killed)  # never committed
    runs = committed_runs(spark, where)
    assert runs == {"s": rerun, "t": other}
    both = sorted((r.snapshotId, r.x) for r in rows_of_runs(spark, where, "a", runs).collect())
    assert both == [("s", 2), ("t", 3)] == sorted((r.snapshotId, r.x) for r in read_table(spark, where, "a").collect())
    assert [r.x for r in rows_of_runs(spark, where, "a", {"t": other}).collect()] == [3]
    assert rows_of_runs(spark, where, "a", {}).count() == 0


def _spark_jobs(spark, group: str, action) -> int:
    """How many Spark jobs ``action`` ran (under the job group ``group``, this thread's)."""
    context = spark.sparkContext
    context.setJobGroup(group, group)
    try:
        action()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    return len(context.statusTracker().getJobIdsForGroup(group))


def test_an_append_is_one_spark_job_where_the_jvm_is_not_on_utc(spark, tmp_path: Path) -> None:
    """Our sessions leave out the file list of Delta's commit checksums (delta.packages.DELTA_SQL_CONFS): with it,
    a JVM whose time zone is not UTC (a broker host's, often) checks the list against the table's state after every
    commit, Spark jobs more per append than the one that writes. Both ways in the same session, the JVM's zone set
    for the test and restored."""
    key = "spark.databricks.delta.allFilesInCrc.enabled"
    assert spark.conf.get(key) == "false"
    where = TableLocation(warehouse=str(tmp_path))
    rows = spark.createDataFrame([(i, f"v{i}") for i in range(10)], "id long, value string")
    jvm = spark.sparkContext._jvm
    zones, system = jvm.java.util.TimeZone, jvm.java.lang.System
    zone, property = zones.getDefault(), system.getProperty("user.timezone")

    def appends(table: str, file_list: str) -> list[int]:
        spark.conf.set(key, file_list)
        run = new_run_id()
        return [_spark_jobs(spark, f"{table}-{n}", lambda: append_rows(rows, where, table, "s", T0, run))
                for n in range(3)]

    try:
        zones.setDefault(zones.getTimeZone("America/Los_Angeles"))
        system.setProperty("user.timezone", "America/Los_Angeles")
        ours, with_list = appends("ours", "false"), appends("with_list", "true")
    finally:
        zones.setDefault(zone)
        system.setProperty("user.timezone", property)
        spark.conf.set(key, "false")
    assert ours == [1, 1, 1]
    assert all(jobs > 1 for jobs in with_list), with_list
    assert read_table(spark, where, "ours").count() == 0  # nothing committed: the rows wait for the manifest
    assert spark.read.format("delta").load(str(tmp_path / "ours")).count() == 30


@pytest.mark.kill
@pytest.mark.skipif(not KILLS, reason="the kill matrix: make kill-matrix (KAFKALOG_KILL_MATRIX=all or kinds)")
@pytest.mark.parametrize("kill_after", KILLS or COMMITS)
def test_a_killed_run_leaves_nothing_or_everything_and_a_rerun_completes_it(spark, log_dir, warehouse, s1_counts,
                                                                             kill_after: str) -> None:
    snapshot_id = f"k-{COMMITS.index(kill_after)}"
    run_killed(config_for(log_dir, warehouse, snapshot_id), kill_after)
    seen = counts(spark, warehouse, snapshot_id)
    committed = COMMITS.index(kill_after) >= COMMITS.index(MANIFEST)
    assert seen == (s1_counts if committed else dict.fromkeys(nightly.TABLES, 0))
    assert counts(spark, warehouse, "s1") == s1_counts  # other snapshots untouched

    nightly.run(spark, config_for(log_dir, warehouse, snapshot_id), now=lambda: T0)  # the re-run
    assert counts(spark, warehouse, snapshot_id) == s1_counts
    # the killed run's rows are gone, not just hidden: one run's rows remain
    assert runs_stored(spark, warehouse, snapshot_id) == {t: min(1, n) for t, n in s1_counts.items()}
