"""A run on every broker into one warehouse, and the fleet snapshot that joins them, against one run over all.

Each broker's run (``fleet=True``) reads only its own log dir; the fleet step (:func:`kafkalog_spark.nightly.run_fleet`)
reads only the warehouse. Its snapshot must hold, table by table, the rows a single run over every broker's log dir
at the same time holds: the tables of one log dir each copied from the brokers' snapshots, and the tables that need
several brokers (the replica comparison, the internal topics' tables) computed from what the brokers stored.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from kafkalog_spark import nightly
from kafkalog_spark.delta import TableLocation, read_table
from kafkalog_spark.kafka_versions import parse_kafka_version
from kafkalog_spark.nightly.fleet import MEMBERS
from tests.helpers.corpus import DATA
from tests.helpers.engine_tables import _rows
from tests.helpers.snapshots import counts, ended, runs_stored, start_job

T0 = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
CORPUS = DATA / "samples-fleet"


def _config(log_dirs: list[Path], warehouse: Path, version: str, **kw) -> nightly.NightlyConfig:
    return nightly.NightlyConfig(log_dirs=tuple(str(d) for d in log_dirs),
                                 location=TableLocation(warehouse=str(warehouse)),
                                 kafka_version=parse_kafka_version(version), **kw)


def _tables(spark, config: nightly.NightlyConfig, snapshot_id: str) -> dict[str, list[str]]:
    return {name: _rows(read_table(spark, config.location, name, snapshot_id).drop("snapshotId", "snapshotTime"))
            for name in nightly.TABLES}


def _snapshot_ids(spark, warehouse: Path) -> list[str]:
    """The committed snapshots in ``warehouse`` (none before its first commit)."""
    if not (warehouse / "snapshots").exists():
        return []
    manifest = spark.read.format("delta").load(str(warehouse / "snapshots"))
    return sorted(r.snapshotId for r in manifest.select("snapshotId").distinct().collect())


# The killed broker's run dies after its first table: mid-run, its rows written to some tables only.
KILL_AFTER = "segment_stats"


def _cluster_id(log_dir: Path) -> str:
    return next(line.split("=", 1)[1] for line in (log_dir / "meta.properties").read_text().splitlines()
                if line.startswith("cluster.id="))


@pytest.mark.fleet
@pytest.mark.parametrize("version", ["3.9.2", "4.4.0"])
def test_three_brokers_runs_side_by_side_one_killed_and_rerun_make_the_fleet_of_one_run_over_all(
        spark, tmp_path: Path, version: str) -> None:
    brokers = sorted((CORPUS / version).glob("broker-*"))
    assert [b.name for b in brokers] == ["broker-1", "broker-2", "broker-3"]
    fleet, single = tmp_path / "fleet", tmp_path / "single"
    broker_configs = [_config([b], fleet, version, fleet=True) for b in brokers]
    whole = _config(brokers, single, version, snapshot_id="single")
    # three runs into one empty warehouse at once, broker 2's killed; beside them, one run over all three dirs
    jobs = [start_job(c, KILL_AFTER if c is broker_configs[1] else "", now=T0, master="local[1]")
            for c in [*broker_configs, whole]]
    returncode, err = ended(jobs[1])
    assert returncode == -9, err
    # each broker's own warehouse in the fleet's, its snapshot named by its node
    own = [fleet / "brokers" / f"{_cluster_id(b)}-node-{n}" for b, n in zip(brokers, (1, 2, 3), strict=True)]
    ids = [f"2026-03-01T00:00:00Z-node-{n}" for n in (1, 2, 3)]
    assert _snapshot_ids(spark, own[1]) == [], "the killed run committed nothing"
    # broker 2 again, at the same time, while the others still run: the same snapshot id, which it completes
    jobs[1] = start_job(broker_configs[1], now=T0, master="local[1]")
    results = [ended(job) for job in jobs]
    assert [returncode for returncode, _ in results] == [0] * 4, results
    assert [_snapshot_ids(spark, w) for w in own] == [[i] for i in ids]
    # the killed run's rows are gone: one run's rows in each table that has any
    readable = counts(spark, str(own[1]), ids[1])
    assert runs_stored(spark, str(own[1]), ids[1]) == {t: min(n, 1) for t, n in readable.items()}
    config = _config([], fleet, version)
    nightly.run_fleet(spark, config, now=lambda: T0)
    fleet_id = "fleet-2026-03-01T00:00:00Z"
    assert _snapshot_ids(spark, fleet) == [fleet_id]
    members = read_table(spark, config.location, MEMBERS, fleet_id).collect()
    assert sorted((m.logDir, m.nodeId, m.brokerWarehouse, m.memberSnapshotId) for m in members) == [
        (str(b), n, str(w), i) for b, n, w, i in zip(brokers, (1, 2, 3), own, ids, strict=True)]
    expected = _tables(spark, whole, "single")
    assert all(expected[t] for t in ("replica_comparison", "consumer_positions", "open_transactions", "catalog_checks"))
    found = _tables(spark, config, fleet_id)
    for name in nightly.TABLES:
        assert found[name] == expected[name], f"{name}: the fleet snapshot differs from one run over all dirs"


def test_brokers_log_dirs_of_one_path_are_told_apart_by_node_and_the_latest_snapshot_of_each_is_taken(
        spark, tmp_path: Path) -> None:
    from kafkalog_spark.delta import append_rows, commit
    from kafkalog_spark.delta.snapshots import new_run_id
    from kafkalog_spark.nightly.fleet import (
        INPUTS,
        LOG_DIRS_SCHEMA,
        broker_location,
        fleet_by_age,
        member_rows,
        members,
        stale_brokers,
    )

    fleet = TableLocation(warehouse=str(tmp_path))
    snapshots = {  # each broker's snapshots: their time, and the (log dir, cluster, node) its run stored
        "c-node-1": {"a": (T0, [("/var/lib/kafka/data", "c", 1)]),
                     "b": (T0 + dt.timedelta(days=1), [("/var/lib/kafka/data", "c", 1)])},
        "c-node-2": {"a": (T0, [("/var/lib/kafka/data", "c", 2), ("/disk2/kafka", "c", 2)]),
                     "killed": (T0 + dt.timedelta(days=2), [("/var/lib/kafka/data", "c", 2)])},  # never committed
    }
    for label, runs in snapshots.items():
        where = broker_location(fleet, label)
        for snapshot_id, (at, dirs) in runs.items():
            run = new_run_id()
            append_rows(spark.createDataFrame(dirs, LOG_DIRS_SCHEMA), where, INPUTS["log_dirs"], snapshot_id, at, run)
            append_rows(spark.createDataFrame([(d, f"{label} {snapshot_id}") for d, _, _ in dirs],
                                              "logDir string, note string"), where, "t", snapshot_id, at, run)
            if snapshot_id != "killed":
                commit(spark, where, snapshot_id, at, run, [INPUTS["log_dirs"], "t"])
    found = members(spark, fleet)
    assert [(m.name, m.node_id, m.snapshot_id) for m in found] == [
        ("/disk2/kafka", 2, "a"), ("node-1:/var/lib/kafka/data", 1, "b"), ("node-2:/var/lib/kafka/data", 2, "a")]
    assert sorted(tuple(r) for r in member_rows(spark, "t", found).select("logDir", "note").collect()) == [
        ("/disk2/kafka", "c-node-2 a"), ("node-1:/var/lib/kafka/data", "c-node-1 b"),
        ("node-2:/var/lib/kafka/data", "c-node-2 a")]
    # a broker that stopped reporting: its latest committed snapshot older than the fleet step's limit
    since = T0 + dt.timedelta(hours=12)
    recent = members(spark, fleet, since)
    assert [(m.name, m.node_id, m.snapshot_id) for m in recent] == [("/var/lib/kafka/data", 1, "b")]
    assert stale_brokers(spark, fleet, since) == [("c-node-2", T0)]
    assert fleet_by_age(spark, fleet, since) == (recent, [("c-node-2", T0)])  # what the fleet step reads
    assert members(spark, fleet, T0) == found and stale_brokers(spark, fleet, T0) == []
