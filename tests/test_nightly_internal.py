"""The nightly job's internal-topic tables (log_offsets, consumer_positions, open_transactions, catalog_checks)
against the brokers' own truth, with two clusters in one run and one broker's partitions split over two log dirs.

data/samples-internal/<version>/oracle.json is what the admin API said right before each broker's clean stop
(tests/harness/internal_corpus.py). The 4.4.0 broker's data partitions `payments-*` and `ledger-*` are moved to
a second log dir of the same broker (its own meta.properties and checkpoints, as a broker with two log.dirs
keeps them), away from the `__consumer_offsets` and `__transaction_state` partitions that speak of them; the
3.9.2 broker is a second cluster whose group names, transactional id and producer id are the same as the
4.4.0 one's. Each cluster's tables must be its own brokers' truth.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from kafkalog_spark import nightly
from kafkalog_spark.delta import TableLocation, read_table
from kafkalog_spark.kafka_versions import KafkaVersion
from tests.helpers.corpus import INTERNAL
from tests.helpers.report_page import Page

# Minutes (a nightly run over three log dirs): make test-internal, not make test, which it would take past 20
# minutes; the analyses themselves are in make test (tests/test_internal_state.py).
pytestmark = pytest.mark.clusters_nightly

MOVED = ("payments-0", "payments-1", "payments-2", "ledger-0", "ledger-1")
CHECKPOINTS = ("log-start-offset-checkpoint", "replication-offset-checkpoint", "recovery-point-offset-checkpoint",
               "cleaner-offset-checkpoint")


def _oracle(version: str) -> dict:
    return json.loads((INTERNAL / version / "oracle.json").read_text())


def _split_checkpoint(source: Path, keep: Path, moved: Path, names: set[str]) -> None:
    """An offset checkpoint (version, count, "topic partition offset" lines) split between two log dirs."""
    version, _, *entries = source.read_text().splitlines()
    for dest, mine in ((keep, [e for e in entries if "-".join(e.split()[:2]) not in names]),
                       (moved, [e for e in entries if "-".join(e.split()[:2]) in names])):
        dest.write_text("\n".join([version, str(len(mine)), *mine]) + "\n")


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    root = tmp_path_factory.mktemp("clusters")
    first = Path(shutil.copytree(INTERNAL / "4.4.0" / "broker", root / "kafka4-data-1"))
    second = root / "kafka4-data-2"
    second.mkdir()
    for name in MOVED:
        shutil.move(first / name, second / name)
    meta = (first / "meta.properties").read_text()
    (second / "meta.properties").write_text(meta.replace("directory.id=YZ6IpgJE2Z_XjCNcCR9Fpg",
                                                         "directory.id=bb2JtRGzQ0a7tFuM3J5Dxw"))
    for name in CHECKPOINTS:
        _split_checkpoint(first / name, first / name, second / name, set(MOVED))
    kafka3 = shutil.copytree(INTERNAL / "3.9.2" / "broker", root / "kafka3-data")
    return {"4.4.0": [str(first), str(second)], "3.9.2": [str(kafka3)]}


@pytest.fixture(scope="module")
def tables(spark, dirs, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    # The three dirs are analysed in one job; the cluster tables are built from the run's own log_offsets rows.
    # both t-open transactions past their 15-minute timeout
    as_of = max(_oracle(v)["transactions"]["t-open"]["start_ms"] for v in dirs) + 900_001
    work = tmp_path_factory.mktemp("wh")
    config = nightly.NightlyConfig(log_dirs=tuple(d for v in dirs.values() for d in v),
                                   location=TableLocation(warehouse=str(work / "tables")),
                                   snapshot_id="internal", kafka_version=KafkaVersion.V4,
                                   report=str(work / "report.html"))
    run = nightly.run(spark, config, now=lambda: dt.datetime.fromtimestamp(as_of / 1000, dt.UTC))
    out = {"as_of": as_of, "page": Page(Path(config.report).read_text())}
    for name in ("log_offsets", *nightly.CLUSTER_TABLES):
        out[name] = [r.asDict(recursive=True) for r in run[name].collect()]
        assert out[name] == [r.asDict(recursive=True) for r in
                             read_table(spark, config.location, name, "internal").collect()]
    return out


def _of(rows: list[dict], version: str) -> list[dict]:
    return [r for r in rows if r["clusterId"] == _oracle(version)["cluster_id"]]


def test_each_clusters_tables_are_its_own(tables) -> None:
    for name in nightly.CLUSTER_TABLES:
        assert {r["clusterId"] for r in tables[name]} == {_oracle(v)["cluster_id"] for v in ("3.9.2", "4.4.0")}, name


def test_log_offsets_are_the_admin_apis_in_every_log_dir(tables, dirs) -> None:
    for version, log_dirs in dirs.items():
        rows = [r for r in tables["log_offsets"] if r["logDir"] in log_dirs]
        ours = {f"{r['topic']}-{r['partition']}": (r["logStartOffset"], r["logEndOffset"]) for r in rows}
        expected = {tp: (o["log_start"], o["log_end"]) for tp, o in _oracle(version)["log_offsets"].items()}
        assert {tp: ours.get(tp) for tp in expected} == expected, version
    moved = {(r["topic"], r["partition"]) for r in tables["log_offsets"] if r["logDir"] == dirs["4.4.0"][1]}
    assert moved == {(m.rsplit("-", 1)[0], int(m.rsplit("-", 1)[1])) for m in MOVED}


def test_consumer_positions_join_offsets_and_partitions_across_log_dirs(tables) -> None:
    for version in ("3.9.2", "4.4.0"):
        oracle = _oracle(version)
        rows = {(r["group"], f"{r['topic']}-{r['partition']}"): r for r in _of(tables["consumer_positions"], version)}
        expected_keys = {(g, tp) for g, o in oracle["groups"].items()
                         if not o.get("absent") and o["type"] in ("classic", "consumer") for tp in o["offsets"]}
        assert set(rows) == expected_keys, version
        for (group, tp), r in rows.items():
            start, end = oracle["log_offsets"][tp]["log_start"], oracle["log_offsets"][tp]["log_end"]
            committed = oracle["groups"][group]["offsets"][tp]["offset"]
            assert r["committedOffset"] == committed, (version, group, tp)
            expected = "below_log_start" if committed < start else "beyond_log_end" if committed > end else "ok"
            assert (r["position"], r["lag"]) == (expected, end - committed if expected == "ok" else None), \
                (version, group, tp)
        # payments-* live in the second log dir, the commits in the first: still found
        assert rows[("g-reset", "payments-1")]["position"] == "below_log_start"
        assert rows[("g-beyond", "payments-0")]["position"] == "beyond_log_end"


def test_the_killed_producers_transactions_hang_in_each_cluster(tables) -> None:
    for version in ("3.9.2", "4.4.0"):
        oracle = _oracle(version)
        expected = {(tp, p["producer_id"], p["current_txn_start_offset"]) for tp, ps in oracle["producers"].items()
                    for p in ps if p["current_txn_start_offset"] is not None}
        rows = _of(tables["open_transactions"], version)
        assert {(f"{r['topic']}-{r['partition']}", r["producerId"], r["firstOffset"])
                for r in rows} == expected, version
        # the partition leaders' open producers are the coordinator's t-open, in each of its partitions
        t_open = oracle["transactions"]["t-open"]
        assert {(tp, pid) for tp, pid, _ in expected} == {(f"{t}-{p}", t_open["producer_id"])
                                                          for t, p in t_open["partitions"]}, version
        assert len(rows) == len(t_open["partitions"]) == 2, version
        assert {(r["transactionalId"], r["status"], r["reason"], r["timeoutMs"]) for r in rows} == {
            ("t-open", "hanging", "timeout", t_open["timeout_ms"])}, version
        # the coordinator's own start time of this cluster's transaction, not the other cluster's
        assert {r["openMs"] for r in rows} == {tables["as_of"] - t_open["start_ms"]}, version


def test_catalog_checks_cover_both_log_dirs_and_the_deleted_topic(tables, dirs) -> None:
    for version in ("3.9.2", "4.4.0"):
        rows = _of(tables["catalog_checks"], version)
        live = [r for r in rows if r["dirKind"] == "live" and r["topic"] != "__cluster_metadata"]
        assert {r["status"] for r in live} == {"ok"}
        assert {r["logDir"] for r in live} == set(dirs[version])
        # every data partition the broker had (the oracle's), in whichever log dir it is
        assert {f"{r['topic']}-{r['partition']}" for r in live if not r["topic"].startswith("__")} == set(
            _oracle(version)["log_offsets"]), version
        doomed = [(r["dirKind"], r["topicId"], r["topicDeleted"]) for r in rows if r["topic"] == "doomed"]
        assert doomed == [("delete", _oracle(version)["deleted_topics"]["doomed"], True)], version


def test_the_report_shows_the_groups_that_reset_and_the_hanging_transactions(tables) -> None:
    page, positions, txns = tables["page"], tables["consumer_positions"], tables["open_transactions"]
    resetting = {(r["clusterId"], r["group"]) for r in positions if r["position"] in ("below_log_start",
                                                                                      "beyond_log_end")}
    assert len(resetting) == 4  # g-reset and g-beyond in each cluster
    assert int(page.cards["groupsResetting"]) == len(resetting)
    assert int(page.cards["hangingTransactions"]) == sum(r["status"] == "hanging" for r in txns) == len(txns) == 4
    shown = page.tables["table-groups"].records()
    keys = ("clusterId", "group", "topic", "partition", "committedOffset", "position")
    assert sorted(tuple(str(r[k]) for k in keys) for r in shown) == sorted(
        tuple(str(r[k]) for k in keys) for r in positions)
    # these first: the rows of the groups that reset (one partition each: g-reset's payments-1 and g-beyond's
    # payments-0 in each cluster, from the oracles' commits against their log offsets)
    resets = sorted(tuple(str(r[k]) for k in keys) for r in positions
                    if r["position"] in ("below_log_start", "beyond_log_end"))
    assert len(resets) == 4 and sorted(tuple(str(r[k]) for k in keys) for r in shown[:len(resets)]) == resets
    assert {r["position"] for r in shown[len(resets):]} == {"ok"}
    keys = ("clusterId", "topic", "partition", "transactionalId", "firstOffset", "status", "reason", "openMs")
    assert sorted(tuple(str(r[k]) for k in keys) for r in page.tables["table-transactions"].records()) == sorted(
        tuple(str(r[k]) for k in keys) for r in txns)


def test_a_broker_run_for_the_fleet_builds_its_cluster_tables_from_what_it_stored(spark, dirs, tables,
                                                                                   tmp_path: Path) -> None:
    """A broker's run for the fleet stores its internal topics' views (the fleet step's inputs) and builds its own
    cluster tables from those rows, without decoding the internal topics again: the same rows as above."""
    config = nightly.NightlyConfig(log_dirs=tuple(d for v in dirs.values() for d in v),
                                   location=TableLocation(warehouse=str(tmp_path / "fleet")),
                                   snapshot_id="internal", kafka_version=KafkaVersion.V4, fleet=True)
    run = nightly.run(spark, config, now=lambda: dt.datetime.fromtimestamp(tables["as_of"] / 1000, dt.UTC))
    for name in nightly.CLUSTER_TABLES:
        ours = sorted(json.dumps(r.asDict(recursive=True), sort_keys=True, default=str) for r in run[name].collect())
        assert ours == sorted(json.dumps(r, sort_keys=True, default=str) for r in tables[name]) and ours, name
