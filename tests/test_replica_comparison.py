"""`kafkalog compare-replicas` (and the nightly job's replica_comparison) against what three real brokers did.

data/samples-replicas/<version>/ holds the log dirs of a KRaft cluster's three brokers, copied with every broker
down, and oracle.json what the brokers then did when restarted (tests/harness/replica_corpus.py): the offset each
replica truncated to (the broker's own log line), the records it dropped (read back with a consumer), which of those
its producer had been acknowledged, and the leader each partition got. Scenarios: `healthy` (RF=3, in sync),
`behind` (a follower stopped while writes went on), `unclean` (an unclean leader election: the old leader's
acknowledged tail is lost), `compacted` (each broker's cleaner at a different point).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.corpus import REPLICAS, ROOT

VERSIONS = ("3.9.2", "4.4.0")


def oracle(version: str) -> dict:
    return json.loads((REPLICAS / version / "oracle.json").read_text())


def broker_dirs(root: Path) -> list[str]:
    return [str(root / f"broker-{b}") for b in (1, 2, 3)]


def compare_replicas(dirs: list[str], *args: str) -> tuple[int, list[dict], list[dict], str]:
    done = subprocess.run([sys.executable, "-m", "kafkalog_spark.cli", "compare-replicas", "--json", *args, *dirs],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return (done.returncode, [r for r in lines if r.get("kind") != "finding"],
            [r for r in lines if r.get("kind") == "finding"], done.stderr)


def final_leaders(o: dict) -> dict[str, int]:
    """Each partition's leader once every replica was back in the ISR, as the admin API said."""
    return {tp: p["leader"] for tp, p in o["timeline"][-1]["partitions"].items()}


def batch_at(path: str, position: int) -> tuple[int, int]:
    """(base offset, last offset) of the v2 batch at ``position`` of a `.log` file: its first 8 bytes, and the
    last offset delta at byte 23 (Kafka's DefaultRecordBatch layout)."""
    with open(path, "rb") as f:
        f.seek(position)
        head = f.read(27)
    base = int.from_bytes(head[:8], "big")
    return base, base + int.from_bytes(head[23:27], "big")


@pytest.fixture(scope="module", params=VERSIONS)
def run(request: pytest.FixtureRequest) -> dict:
    """The command over the three brokers' dirs: Spark for 3.9.2, the local engine for 4.4.0."""
    version = request.param
    engine = "spark" if version == "3.9.2" else "local"
    code, rows, findings, stderr = compare_replicas(broker_dirs(REPLICAS / version), "--engine", engine)
    return {"version": version, "code": code, "rows": rows, "findings": findings, "stderr": stderr,
            "oracle": oracle(version)}


def test_every_replica_is_what_the_brokers_did_on_rejoining(run: dict) -> None:
    assert run["code"] == 1, run["stderr"]  # the unclean election lost acknowledged records
    check_against_oracle(run["rows"], run["oracle"], run["version"])


def check_against_oracle(found: list[dict], o: dict, version: str) -> None:
    """Each replica's row (of the command or the nightly table) against what its broker did on rejoining."""
    rows = {(r["topic"], r["partition"], r["brokerId"]): r for r in found if r["replicasRead"] > 1}
    leaders = final_leaders(o)
    expected = {(p["topic"], p["partition"], int(b)) for p in o["partitions"] for b in p["replicas"]}
    assert expected <= set(rows)
    for p in o["partitions"]:
        tp = f"{p['topic']}-{p['partition']}"
        for broker, truth in p["replicas"].items():
            r = rows[(p["topic"], p["partition"], int(broker))]
            where = (version, tp, broker)
            assert r["clusterId"] == o["clusterId"] and r["replicasRead"] == 3, where
            assert (r["logEndOffset"], r["highWatermark"]) == (truth["logEndOffsetAtCopy"],
                                                                truth["highWatermarkAtCopy"]), where
            # compared with the leader the cluster elected when the brokers came back: the metadata, copied with
            # every broker down, has none, and names the ISR (3.9) or eligible leader replicas (4.x) it comes from
            leader = (r["leaderBrokerId"], r["leaderSource"], r["metadataLeader"])
            assert leader == (leaders[tp], "metadata-isr", -1), where
            dropped = set(truth["droppedOffsets"])
            if r["status"] == "leader":
                assert int(broker) == leaders[tp] and not dropped, where
                continue
            if truth["truncatedTo"] is not None and dropped:
                assert r["status"] == "divergent" and r["truncationOffset"] == truth["truncatedTo"], where
            else:
                assert r["status"] in ("consistent", "behind") and r["truncationOffset"] == r["logEndOffset"], where
            assert r["droppedRecords"] == len(dropped), where
            assert r["acknowledgedRecordsLost"] == len(truth["acknowledgedDropped"]), where
            covered = {o for rng in r["droppedRanges"] or [] for o in range(rng["firstOffset"], rng["lastOffset"] + 1)}
            assert covered == dropped, where
            assert r["mismatches"] == 0 and r["epochMismatches"] == 0, where
            leader_end = rows[(p["topic"], p["partition"], leaders[tp])]["logEndOffset"]
            assert (r["status"] == "behind") == (not dropped and r["logEndOffset"] < leader_end), where
            assert r["comparedBy"] == ("records" if p["scenario"] == "compacted" else "batches"), where


def test_only_the_lost_records_are_findings_naming_their_first_batch(run: dict) -> None:
    o = run["oracle"]
    lost = [(p["topic"], p["partition"], int(b), r) for p in o["partitions"] for b, r in p["replicas"].items()
            if r["droppedOffsets"]]
    assert lost, "the corpus has an unclean election that lost records"
    expected = set()
    for topic, partition, broker, truth in lost:
        expected |= {(topic, partition, broker, "replica_divergent")}
        if truth["acknowledgedDropped"]:
            expected |= {(topic, partition, broker, "replica_acknowledged_records_lost")}
    found = {(f["topic"], f["partition"], int(Path(f["logDir"]).name.removeprefix("broker-")), f["check"])
             for f in run["findings"]}
    assert found == expected  # the healthy, behind and compacted partitions: none
    for f in run["findings"]:
        truth = next(t for topic, partition, _, t in lost if (topic, partition) == (f["topic"], f["partition"]))
        base, last = batch_at(f["file"], f["position"])
        assert base <= truth["truncatedTo"] <= last or base == truth["truncatedTo"], f
        assert f["baseOffset"] == int(Path(f["file"]).stem) and f["severity"] == "error"


def test_without_the_metadata_the_highest_epoch_leads_and_other_topic_ids_are_apart(tmp_path: Path) -> None:
    """No metadata read (--no-internal): each partition's leader is its replica with the highest leader epoch,
    which is the one the cluster elected here too. A partition dir whose topic id differs (a topic deleted and
    created again) is no replica of the others, and a `-delete` dir is none at all."""
    version = "4.4.0"
    root = tmp_path / "brokers"
    for b in (1, 2, 3):  # the metadata log is not read here (and its preallocated indexes are 20 MiB a broker)
        shutil.copytree(REPLICAS / version / f"broker-{b}", root / f"broker-{b}",
                        ignore=shutil.ignore_patterns("__cluster_metadata-0"))
    third = root / "broker-3"
    (third / "behind-0" / "partition.metadata").write_text("version: 0\ntopic_id: u4dy-oJWQ1ylvR8V1sH9xg\n")
    shutil.copytree(third / "healthy-0", third / "healthy-0.0123456789abcdef0123456789abcdef-delete")
    code, rows, findings, stderr = compare_replicas(broker_dirs(root), "--no-internal", "--engine", "local")
    assert code == 1, stderr
    rows = {(r["topic"], r["partition"], r["brokerId"]): r for r in rows}
    leaders = final_leaders(oracle(version))
    unclean = rows[("unclean", 0, 1)]
    assert unclean["leaderSource"] == "highest-epoch" and unclean["leaderBrokerId"] == leaders["unclean-0"]
    truth = next(p for p in oracle(version)["partitions"] if p["topic"] == "unclean")["replicas"]["1"]
    assert unclean["truncationOffset"] == truth["truncatedTo"]
    assert ("behind", 0, 3) not in rows  # alone in its replica set: not printed without --all
    assert rows[("behind", 0, 1)]["replicasRead"] == 2 and rows[("healthy", 0, 3)]["replicasRead"] == 3
    assert {f["check"] for f in findings} == {"replica_divergent", "replica_acknowledged_records_lost"}


@pytest.mark.clusters_nightly
def test_the_nightly_table_and_report_of_both_clusters_at_once(spark, tmp_path: Path) -> None:
    """Both versions' brokers in one nightly run: two clusters whose topics have the same names, each partition's
    replicas compared within its own cluster; the report lists the divergent replica first."""
    import datetime as dt

    from kafkalog_spark import nightly
    from kafkalog_spark.delta import TableLocation
    from kafkalog_spark.kafka_versions import KafkaVersion
    from tests.helpers.report_page import Page

    dirs = [d for v in VERSIONS for d in broker_dirs(REPLICAS / v)]
    config = nightly.NightlyConfig(log_dirs=tuple(dirs), location=TableLocation(warehouse=str(tmp_path / "tables")),
                                   snapshot_id="replicas", kafka_version=KafkaVersion.V4,
                                   report=str(tmp_path / "report.html"))
    tables = nightly.run(spark, config, now=lambda: dt.datetime(2026, 11, 28, tzinfo=dt.UTC))
    rows = [r.asDict(recursive=True) for r in tables["replica_comparison"].collect()]
    for version in VERSIONS:
        o = oracle(version)
        check_against_oracle([r for r in rows if r["clusterId"] == o["clusterId"]], o, version)
    findings = [r.asDict() for r in tables["index_findings"].where("check like 'replica_%'").collect()]
    assert sorted((f["check"], Path(f["logDir"]).parent.name) for f in findings) == sorted(
        (check, v) for v in VERSIONS for check in ("replica_acknowledged_records_lost", "replica_divergent"))
    page = Page((tmp_path / "report.html").read_text())
    assert page.cards["divergentReplicas"] == "2"
    first = page.tables["table-replicas"].records()[:2]
    assert {(r["topic"], r["brokerId"], r["status"], r["acknowledgedRecordsLost"]) for r in first} == {
        ("unclean", "1", "divergent", "50")}
