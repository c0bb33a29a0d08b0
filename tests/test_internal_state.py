"""The internal topics' state views and analyses against the broker's own truth.

data/samples-internal/<version> (tests/harness/internal_corpus.py, `make samples-internal`) was written by real
3.9.2 and 4.4.0 brokers; its oracle.json is what the admin API and the Java Admin said right before the clean
stop: committed offsets, group states and members, transactions, topics with ids, partitions and configs, log
start and end offsets, producers' open transactions. Every assertion compares our rows with those figures.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from kafkalog_spark.analysis.catalog_checks import (
    catalog_checks,
    catalog_findings,
    live_partition_dirs,
    special_partition_dirs,
)
from kafkalog_spark.analysis.consumer_positions import consumer_positions, position_findings
from kafkalog_spark.analysis.log_offsets import log_offsets
from kafkalog_spark.analysis.open_transactions import open_transaction_starts, open_transactions, transaction_findings
from kafkalog_spark.config import TopicConfigs
from kafkalog_spark.source import read_views
from kafkalog_spark.state.internal_records import decode
from tests.helpers.corpus import DATA, INTERNAL, ROOT
from tests.helpers.framing import frames

VERSIONS = ("3.9.2", "4.4.0")
STATE_VIEWS = ["consumer_offsets", "group_metadata", "transactions", "topic_catalog"]
SPARK_VIEWS = ["records", "batches", "segments", "partition_files", *STATE_VIEWS]


def _oracle(version: str) -> dict:
    return json.loads((INTERNAL / version / "oracle.json").read_text())


@pytest.fixture(scope="module", params=VERSIONS)
def corpus(request, spark):
    version = request.param
    broker = str(INTERNAL / version / "broker")
    views = read_views(spark, [broker], SPARK_VIEWS)
    oracle = _oracle(version)
    offsets = log_offsets(views["records"], views["batches"], views["segments"], views["partition_files"],
                          TopicConfigs(), oracle["stopped_at_ms"]).persist()
    state = {v: [r.asDict(recursive=True) for r in views[v].collect()] for v in STATE_VIEWS}
    yield {"version": version, "broker": broker, "views": views, "oracle": oracle, "offsets": offsets, **state}
    offsets.unpersist()


def _groups(oracle: dict, *types: str) -> dict:
    return {g: o for g, o in oracle["groups"].items() if not o.get("absent") and o["type"] in types}


def test_the_latest_committed_offsets_are_the_admin_apis(corpus) -> None:
    oracle = corpus["oracle"]
    latest = {(r["group"], f"{r['topic']}-{r['partition']}"): r for r in corpus["consumer_offsets"]
              if r["isLatest"] and not r["isTombstone"] and r["problem"] is None}
    expected = {(g, tp): o for g, group in _groups(oracle, "classic", "consumer").items()
                for tp, o in group["offsets"].items()}
    assert expected and set(latest) == set(expected)
    for key, o in expected.items():
        row = latest[key]
        assert (row["committedOffset"], row["leaderEpoch"], row["metadata"]) == (
            o["offset"], o["leader_epoch"], o["metadata"]), key
    # several versions of a key were written (README: g-classic committed orders-0=5, then orders-0=12): only the
    # newest is latest
    versions = sorted((r for r in corpus["consumer_offsets"]
                       if (r["group"], r["topic"], r["partition"]) == ("g-classic", "orders", 0)),
                      key=lambda r: r["recordOffset"])
    assert [(r["committedOffset"], r["metadata"], r["isLatest"]) for r in versions] == [(5, "m-5", False),
                                                                                         (12, "m-12", True)]


def test_deleted_offsets_and_groups_end_in_tombstones(corpus) -> None:
    rows = corpus["consumer_offsets"]
    assert corpus["oracle"]["groups"]["g-deleted"] == {"absent": True}
    deleted = [r for r in rows if r["group"] == "g-deleted" and r["isLatest"]]
    # README: g-deleted committed orders-2=1 only, then the group was deleted
    assert [(r["topic"], r["partition"], r["isTombstone"]) for r in deleted] == [("orders", 2, True)]
    gone = [r for r in rows if (r["group"], r["topic"], r["partition"]) == ("g-offsets-deleted", "orders", 0)
            and r["isLatest"]]
    assert [r["isTombstone"] for r in gone] == [True]
    # a group that only committed offsets has no GroupMetadata record; deleted, it is no live group either
    assert "g-deleted" not in {g["group"] for g in corpus["group_metadata"] if not g["isDeleted"]}


def test_group_states_members_and_assignments_are_the_admin_apis(corpus) -> None:
    groups = {g["group"]: g for g in corpus["group_metadata"] if not g["isDeleted"]}
    expected = _groups(corpus["oracle"], "classic", "consumer", "share")
    # README: the groups of the scenario, g-deleted gone; g-consumer and g-share on 4.4.0 only
    scenario = {"g-classic", "g-beyond", "g-reset", "g-offsets-deleted", "g-live"}
    assert set(expected) == scenario | ({"g-consumer", "g-share"} if corpus["version"] == "4.4.0" else set())
    assert set(expected) <= set(groups)
    for name, o in expected.items():
        g = groups[name]
        assert (g["groupType"], g["state"]) == (o["type"], o["state"]), name
        if o["type"] == "classic" and o["members"]:
            assert g["protocolType"] == o["protocol_type"] and g["protocol"] == o["protocol"]
            ours = [(m["memberId"], m["clientId"], m["clientHost"],
                     sorted((a["topic"], a["partition"]) for a in m["assignment"])) for m in g["members"]]
            theirs = [(m["member_id"], m["client_id"], m["host"], sorted(tuple(a) for a in m["assignment"]))
                      for m in o["members"]]
            assert ours == theirs
    assert groups["g-live"]["state"] == "Stable"  # the scenario really has a live member at the stop


def test_transactions_are_the_coordinators(corpus) -> None:
    latest = {r["transactionalId"]: r for r in corpus["transactions"] if r["isLatest"]}
    expected = corpus["oracle"]["transactions"]
    assert set(expected) == set(latest) == {"t-committed", "t-aborted", "t-open", "t-expired"}  # README: scenario
    for tid, o in expected.items():
        r = latest[tid]
        assert (r["producerId"], r["producerEpoch"], r["state"], r["timeoutMs"]) == (
            o["producer_id"], o["producer_epoch"], o["state"], o["timeout_ms"]), tid
        assert sorted((p["topic"], p["partition"]) for p in r["partitions"]) == sorted(tuple(p) for p in
                                                                                      o["partitions"])
    assert latest["t-open"]["state"] == "Ongoing"


def test_topic_catalog_is_the_admin_apis(corpus) -> None:
    oracle = corpus["oracle"]
    live = {r["topic"]: r for r in corpus["topic_catalog"] if not r["isDeleted"]}
    # every non-internal topic the admin API listed, and no other
    assert {t for t in live if not t.startswith("__")} == set(oracle["topics"])
    for name, o in oracle["topics"].items():
        r = live[name]
        assert r["topicId"] == o["topic_id"]
        assert r["partitionCount"] == len(o["partitions"])
        assert {str(p["partition"]): p["replicas"] for p in r["partitions"]} == {
            p: v["replicas"] for p, v in o["partitions"].items()}
        assert dict(r["configs"] or {}) == o["configs"], name
    deleted = {r["topic"]: r["topicId"] for r in corpus["topic_catalog"] if r["isDeleted"]}
    assert deleted == oracle["deleted_topics"]


def test_log_offsets_are_the_admin_apis(corpus) -> None:
    ours = {f"{r.topic}-{r.partition}": (r.logStartOffset, r.logEndOffset) for r in corpus["offsets"].collect()}
    oracle = corpus["oracle"]["log_offsets"]
    assert {tp: ours[tp] for tp in oracle} == {tp: (o["log_start"], o["log_end"]) for tp, o in oracle.items()}
    # README: orders 3, payments 3 (grown from 2), ledger 2, audit 1, late 1 partitions
    assert len(oracle) == 10


# the internal corpus (one segment a partition, an open transaction, a snapshot at each clean shutdown) and the
# incremental corpus's dirs (brokers that rolled ten segments a partition, a snapshot at each roll)
REPLAY_DIRS = {"internal": INTERNAL / "3.9.2" / "broker",
               "rolled": DATA / "samples-incremental" / "3.9.2" / "stage-2" / "logdir-a"}


@pytest.mark.parametrize("corpus_name", REPLAY_DIRS)
def test_log_offsets_read_only_the_batches_a_load_replays(spark, monkeypatch, corpus_name: str) -> None:
    """A broker replays a partition from its newest usable producer snapshot: the batches before it are not read,
    and every column is what the whole log gives (whose rows test_log_offsets_are_the_admin_apis checks against
    the brokers)."""
    from kafkalog_spark.analysis import log_offsets as module
    from kafkalog_spark.analysis.batch_summary import batch_summary
    from kafkalog_spark.analysis.partition_input import collect_partition_context

    views = read_views(spark, [str(REPLAY_DIRS[corpus_name])], ["records", "batches", "segments", "partition_files"])
    now_ms = _oracle("3.9.2")["stopped_at_ms"]
    live = views["batches"].where(F.col("snapshotEndOffset").isNull())
    context = collect_partition_context(views["segments"], views["partition_files"])
    read = module.replayed_batches(live, context)
    # the log end read from the per-segment summary (as the nightly job gives it) bounds the replay alike
    summary = batch_summary(views["batches"])
    assert sorted(module.replayed_batches(live, context, summary).collect()) == sorted(read.collect())
    rows = sorted(log_offsets(views["records"], views["batches"], views["segments"], views["partition_files"],
                              TopicConfigs(), now_ms).collect())
    assert sorted(log_offsets(views["records"], views["batches"], views["segments"], views["partition_files"],
                              TopicConfigs(), now_ms, summary=summary).collect()) == rows
    monkeypatch.setattr(module, "replayed_batches", lambda batches, _context, _summary=None: batches)
    whole = sorted(log_offsets(views["records"], views["batches"], views["segments"], views["partition_files"],
                               TopicConfigs(), now_ms).collect())
    assert rows == whole and any(r.activeProducers for r in rows)
    if corpus_name == "internal":
        assert read.count() < live.count() and any(r.openTransactions for r in rows)
    else:
        assert read.count() < live.count() / 2


def test_consumer_positions_say_which_groups_reset(corpus) -> None:
    positions = consumer_positions(corpus["views"]["consumer_offsets"], corpus["offsets"])
    rows = {(r.group, f"{r.topic}-{r.partition}"): r for r in positions.collect()}
    oracle = corpus["oracle"]
    # a row per offset a classic or consumer group holds
    assert set(rows) == {(g, tp) for g, group in _groups(oracle, "classic", "consumer").items()
                         for tp in group["offsets"]}
    for (group, tp), r in rows.items():
        start, end = oracle["log_offsets"][tp]["log_start"], oracle["log_offsets"][tp]["log_end"]
        committed = oracle["groups"][group]["offsets"][tp]["offset"]
        expected = "below_log_start" if committed < start else "beyond_log_end" if committed > end else "ok"
        assert r.position == expected, (group, tp)
        assert r.lag == (end - committed if expected == "ok" else None)
    assert rows[("g-reset", "payments-1")].position == "below_log_start"
    assert rows[("g-beyond", "payments-0")].position == "beyond_log_end"
    findings = {(r.check, r.topic, r.partition) for r in position_findings(positions).collect()}
    assert findings == {("group_offset_below_log_start", "payments", 1),
                        ("group_offset_beyond_log_end", "payments", 0)}


def _open(corpus, as_of_ms: int) -> list:
    starts = open_transaction_starts(corpus["offsets"])
    return open_transactions(starts, corpus["views"]["transactions"], as_of_ms).collect()


def test_the_killed_producers_transaction_is_open_then_hanging(corpus) -> None:
    oracle = corpus["oracle"]
    expected = {(tp, p["producer_id"], p["current_txn_start_offset"]) for tp, ps in oracle["producers"].items()
                for p in ps if p["current_txn_start_offset"] is not None}
    # README: t-open's producer, in ledger-0 and ledger-1
    assert {tp for tp, _, _ in expected} == {"ledger-0", "ledger-1"}
    assert {pid for _, pid, _ in expected} == {oracle["transactions"]["t-open"]["producer_id"]}
    at_stop = _open(corpus, oracle["stopped_at_ms"])
    assert {(f"{r.topic}-{r.partition}", r.producerId, r.firstOffset) for r in at_stop} == expected
    assert {(r.transactionalId, r.status, r.coordinatorState, r.timeoutMs) for r in at_stop} == {
        ("t-open", "open", "Ongoing", oracle["transactions"]["t-open"]["timeout_ms"])}
    assert all(r.pinsLastStableOffset and r.lastStableOffset == r.firstOffset for r in at_stop)
    later = _open(corpus, oracle["transactions"]["t-open"]["start_ms"] + 900_001)
    assert {(r.status, r.reason) for r in later} == {("hanging", "timeout")}
    spark = corpus["offsets"].sparkSession
    findings = transaction_findings(spark.createDataFrame(later)).collect()
    assert {(f.check, f.severity) for f in findings} == {("transaction_hanging", "error")}


def _checks(spark, broker: str, views: dict) -> list:
    dirs = live_partition_dirs(views["partition_files"]).unionByName(special_partition_dirs(spark, [broker]))
    return catalog_checks(dirs, views["topic_catalog"]).collect()


def test_catalog_checks_know_every_dir_and_the_deleted_topic(corpus) -> None:
    rows = _checks(corpus["offsets"].sparkSession, corpus["broker"], corpus["views"])
    live = [r for r in rows if r.dirKind == "live" and r.topic != "__cluster_metadata"]
    # every partition dir on disk, but the metadata log and the deleted topic's
    dirs = {p.name for p in Path(corpus["broker"]).iterdir() if p.is_dir()
            and re.fullmatch(r"[^.]+-\d+", p.name) and p.name != "__cluster_metadata-0"}
    assert sorted(f"{r.topic}-{r.partition}" for r in live) == sorted(dirs)
    assert {r.status for r in live} == {"ok"}
    doomed = [r for r in rows if r.topic == "doomed"]
    assert [(r.dirKind, r.topicId, r.topicDeleted) for r in doomed] == [
        ("delete", corpus["oracle"]["deleted_topics"]["doomed"], True)]


def test_dirs_the_metadata_disowns_are_errors(spark, tmp_path: Path) -> None:
    """A copy of audit-0 under a name the metadata never had (ghost-0) and audit-0 itself given another id (as
    if the topic were deleted and created again): unknown topic id and id mismatch, both errors."""
    broker = Path(shutil.copytree(INTERNAL / "4.4.0" / "broker", tmp_path / "broker"))
    audit_id = _oracle("4.4.0")["topics"]["audit"]["topic_id"]
    shutil.copytree(broker / "audit-0", broker / "ghost-0")
    for name, new_id in (("audit-0", "AAAAAAAAAAAAAAAAAAAAEg"), ("ghost-0", "AAAAAAAAAAAAAAAAAAAAEw")):
        meta = broker / name / "partition.metadata"
        meta.write_text(meta.read_text().replace(audit_id, new_id))
    views = read_views(spark, [str(broker)], ["partition_files", "topic_catalog"])
    rows = _checks(spark, str(broker), views)
    assert sorted((r.topic, r.status) for r in rows if r.status not in ("ok", "metadata_log", "delete")) == [
        ("audit", "topic_id_mismatch"), ("ghost", "unknown_topic_id")]
    findings = {(f.check, f.topic, f.severity) for f in catalog_findings(spark.createDataFrame(rows)).collect()}
    # and, as on the corpus itself, the deleted topic's dir still on disk
    assert findings == {("partition_topic_id_unknown", "ghost", "error"),
                        ("partition_topic_id_mismatch", "audit", "error"), ("deleted_topic_on_disk", "doomed", "info")}


def test_decode_internal_adds_the_decoded_form(spark) -> None:
    df = (spark.read.format("kafkalog").option("decodeInternal", "true").option("topics", "__consumer_offsets")
          .load(str(INTERNAL / "4.4.0" / "broker")))
    rows = df.where(F.col("problem").isNull() & ~F.col("isControl")).collect()
    assert all(r.keyType is not None and r.decodeError is None for r in rows)
    # every data record of the partitions, counted by the batches' framing (records count at P+57, control bit 5)
    records = 0
    for log in (INTERNAL / "4.4.0" / "broker").glob("__consumer_offsets-*/*.log"):
        records += sum(f.count for f in frames(log) if not f.is_control)
    assert len(rows) == records > 0
    commits = {json.dumps(json.loads(r.decodedKey), sort_keys=True) for r in rows if r.keyType == "OffsetCommit"}
    # README: every group's commits (g-share's are share-group state, elsewhere)
    committed = [("g-classic", "orders", p) for p in (0, 1, 2)] + [("g-live", "orders", p) for p in (0, 1, 2)] + [
        ("g-beyond", "payments", 0), ("g-reset", "payments", 1), ("g-offsets-deleted", "orders", 0),
        ("g-offsets-deleted", "orders", 1), ("g-deleted", "orders", 2), ("g-consumer", "payments", 0),
        ("g-consumer", "payments", 1)]
    assert commits == {json.dumps({"group": g, "topic": t, "partition": p}, sort_keys=True) for g, t, p in committed}


def test_an_unknown_record_type_is_said_not_raised() -> None:
    d = decode("__consumer_offsets", b"\x00\x63\x00\x01x", b"\x00\x00")
    assert d.unknown and d.key_type is None and "99" in d.error
    cut = decode("__transaction_state", b"\x00\x00\x00\x05ab", None)
    # kafka-dump-log's words for a key cut short (the transaction id's 5 bytes, 2 there)
    assert not cut.unknown and cut.error == ("Could not read record with version 0 from key's buffer due to: Error "
                                             "reading byte array of 5 byte(s): only 2 byte(s) available.")


def _cli(capsys, *args: str) -> tuple[int, list[dict], list[dict]]:
    from kafkalog_spark.cli import main

    code = main([*args, "--json", "-q"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return code, [x for x in lines if x.get("kind") != "finding"], [x for x in lines if x.get("kind") == "finding"]


def test_the_commands_gate_on_what_the_brokers_say(spark, capsys) -> None:
    broker = str(INTERNAL / "4.4.0" / "broker")
    oracle = _oracle("4.4.0")
    code, rows, findings = _cli(capsys, "consumer-positions", broker, "--fail-on", "warning")
    assert code == 1 and {(r["group"], r["position"]) for r in rows if r["position"] != "ok"} == {
        ("g-reset", "below_log_start"), ("g-beyond", "beyond_log_end")}
    later = str(oracle["transactions"]["t-open"]["start_ms"] + 900_001)
    code, rows, findings = _cli(capsys, "open-transactions", broker, "--now", later)
    assert code == 1 and {f["check"] for f in findings} == {"transaction_hanging"}
    code, rows, findings = _cli(capsys, "catalog-checks", broker)
    assert code == 0 and [(f["check"], f["topic"], f["severity"]) for f in findings] == [
        ("deleted_topic_on_disk", "doomed", "info")]


def test_undecodable_records_are_findings_and_the_rest_is_read(spark, tmp_path: Path) -> None:
    """The crafted segment of unknown types and versions, cut keys and values (tests/harness/message_schemas.py)
    as a `__consumer_offsets` partition: each bad record a finding at its batch, the good ones rows."""
    from tests.harness.message_schemas import CRAFTED_LOG, write_crafted

    write_crafted(tmp_path / "crafted")
    log_dir = tmp_path / "broker"
    (log_dir / "__consumer_offsets-0").mkdir(parents=True)
    shutil.copy(tmp_path / "crafted" / "offsets-decoder-bad-0" / CRAFTED_LOG, log_dir / "__consumer_offsets-0")
    rows = spark.read.format("kafkalog").option("view", "consumer_offsets").load(str(log_dir)).collect()
    problems = [r.problem for r in rows if r.problem is not None]
    kinds = [p.kind for p in problems]
    assert kinds.count("internal_record_unknown") >= 2 and "internal_record_undecodable" in kinds
    # what kafka-dump-log --offsets-decoder made of each record: an unknown type or version, or an error
    golden = (ROOT / "data" / "samples" / "decoder-goldens" / "offsets-decoder-bad-0" /
              f"{CRAFTED_LOG}.offsets-decoder.4.4.0.txt").read_text()
    verdicts = {int(o): "internal_record_unknown" if re.search(r"Unknown record type|unknown record version", why)
                else "internal_record_undecodable"
                for o, why in re.findall(r"(?m)^\| offset: (\d+) .* key: (.*skipping.*)$", golden)}
    # a problem row names its record's offset in the detail ("offset N: ...")
    assert sorted((int(re.match(r"offset (\d+): ", p.detail)[1]), p.kind) for p in problems) == sorted(
        verdicts.items())
    # all in the segment's one batch, at position 0
    assert {(p.file, p.position) for p in problems} == {(str(log_dir / "__consumer_offsets-0" / CRAFTED_LOG), 0)}
    data = [(r.topic, r.partition, r.isTombstone) for r in rows if r.problem is None]
    assert ("t", 4, True) in data  # the tombstone after the bad records is read


def test_the_metadata_logs_topic_configs_are_the_admin_apis(corpus, spark) -> None:
    from kafkalog_spark.source.cluster_configs import read_cluster_configs

    configs = read_cluster_configs(spark, [corpus["broker"]], TopicConfigs(kafka_version=corpus["version"]))
    for name, topic in corpus["oracle"]["topics"].items():
        expected = topic["configs"]
        layer = configs.cluster.topics.get(name, {})
        assert {k: v for k, (v, _) in layer.items()} == expected, name  # describeConfigs' DYNAMIC_TOPIC_CONFIG
        assert all(configs[name].sources[k].startswith("dynamic-topic@") for k in expected), name


@pytest.mark.parametrize("version", VERSIONS)
def test_retention_plan_applies_the_retention_the_metadata_log_records(spark, capsys, version: str) -> None:
    oracle = _oracle(version)
    hours = {t: int(c["configs"]["retention.ms"]) / 3_600_000 for t, c in oracle["topics"].items()
             if "retention.ms" in c["configs"]}
    assert hours == {"orders": 1, "payments": 24}  # set on the topics only: no --topic-config says so
    args = ("retention-plan", str(INTERNAL / version / "broker"), "--kafka-version", version, "--topics",
            "orders,payments", "--as-of", str(oracle["stopped_at_ms"] + 2 * 3_600_000))
    _, rows, _ = _cli(capsys, *args)
    deletable = {(r["topic"], r["deletable"]) for r in rows if r["size"]}
    assert deletable == {("orders", True), ("payments", False)}  # 2 hours on: past 1 hour, within 24
    _, rows, _ = _cli(capsys, *args, "--no-metadata-configs")
    assert {r["topic"] for r in rows if r["deletable"]} == set()  # Kafka's default: 7 days
