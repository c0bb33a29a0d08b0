"""A tiered topic's retention by time against what a restarted broker did (3.9.2 and 4.4.0, LocalTieredStorage):
data/samples-internal/<version>/tiered-restart (tests/harness/tiered_restart_corpus.py). The plan is made from the
log dir and the remote store as the broker left them at its stop (`before/`), with the topic's configs from its
own metadata log and the broker's check intervals from its server.properties; the broker's log lines say when it
decided each deletion, the harness's watch when the files went.

For each segment the broker deleted, the plan's ``eligibleAtMs`` is at or before the broker's decision and less
than one check interval before it (the broker checks local retention every log.retention.check.interval.ms and
remote retention every remote.log.manager.task.interval.ms, here 1 s each; on a loaded machine a check may start
up to SLACK_MS late), the plan as of the decision deletes it by the rule the log line names and the plan a
millisecond before ``eligibleAtMs`` keeps it, and the files were gone by ``filesGoneByMs``.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from kafkalog_spark.config import TopicConfigs
from kafkalog_spark.source import read_views
from kafkalog_spark.source.cluster_configs import read_cluster_configs
from tests.helpers.corpus import INTERNAL

VERSIONS = ("3.9.2", "4.4.0")
TOPIC = "restart"
SLACK_MS = 1000  # how late a scheduled check may start on a busy machine (the broker's thread pool)


@pytest.fixture(scope="module", params=VERSIONS)
def restart(request, spark):
    """The corpus's views, configs and oracle, and ``plan(as_of_ms)``: the retention plan's rows of `restart` by
    (tier, base offset or remote segment id), planned from inputs collected once (the plan's own per-partition
    planners, as its Spark tasks run them)."""
    from kafkalog_spark.analysis.remote_retention import remote_inputs, remote_planner
    from kafkalog_spark.analysis.retention import partition_planner, plan_records, retention_params, retention_plan

    root = INTERNAL / request.param / "tiered-restart"
    oracle = json.loads((root / "oracle.json").read_text())
    broker = [str(root / "before" / "broker")]
    views = read_views(spark, broker, ["remote_log_segments", "segments", "partition_files", "batches"])
    server_properties = {"log.retention.check.interval.ms": str(oracle["log_retention_check_interval_ms"]),
                         "remote.log.manager.task.interval.ms": str(oracle["remote_log_manager_task_interval_ms"]),
                         "remote.log.storage.system.enable": "true"}
    configs = read_cluster_configs(spark, broker, TopicConfigs(server_properties, kafka_version=request.param[:3]))
    args = (views["segments"], views["batches"], views["partition_files"], configs)
    inputs, local_planner = partition_planner(*args, remote_segments=views["remote_log_segments"])
    local = plan_records([r.asDict(recursive=True) for r in inputs.where(f"topic = '{TOPIC}'").collect()])
    local_plan = retention_plan(*args, oracle["stopped_ms"], remote_segments=views["remote_log_segments"])
    remote = [r.asDict(recursive=True) for r in remote_inputs(
        local_plan.where("tier = 'local'"), views["remote_log_segments"], views["segments"],
        views["partition_files"]).where(f"topic = '{TOPIC}'").collect()]
    remote_plan, params = remote_planner(remote), retention_params(configs, [TOPIC])[TOPIC]

    def plan(as_of_ms: int) -> dict[tuple[str, object], dict]:
        rows = local_planner(local, as_of_ms, False) + remote_plan(params, as_of_ms)
        return {(r["tier"], r["baseOffset"] if r["tier"] == "local" else r["remoteLogSegmentId"]):
                SimpleNamespace(**r) for r in rows}

    return configs, oracle, plan


def _decisions(oracle) -> dict[tuple[str, object], int]:
    """(tier, base offset or remote segment id) -> when the broker's log line says it decided the deletion."""
    tiers = {"local_deleted": "local", "remote_deleted": "remote"}
    return {(tiers[e["event"]], e["segment"]): e["atMs"] for e in oracle["log_events"] if e["event"] in tiers}


def test_the_topics_configs_come_from_its_metadata_log(restart) -> None:
    configs, oracle, _ = restart
    topic = configs[TOPIC]
    assert (topic.local_retention_ms, topic.retention_ms) == (oracle["local_retention_ms"], oracle["retention_ms"])
    assert int(topic["file.delete.delay.ms"]) == oracle["file_delete_delay_ms"] and topic.remote_log_enabled


def test_nothing_is_deletable_when_the_broker_stopped(restart) -> None:
    _, oracle, plan = restart
    plan = plan(oracle["stopped_ms"])
    assert len([k for k in plan if k[0] == "remote"]) == len(oracle["remote_segments"])
    assert not any(r.deletable or r.rollsActiveSegment for r in plan.values())


def test_the_plan_says_when_the_broker_deleted_each_segment(restart) -> None:
    _, oracle, plan = restart
    decided = _decisions(oracle)
    planned = plan(oracle["stopped_ms"])
    closed = {("local", int(name.removesuffix(".log"))) for name in oracle["closed_segments"]}
    remote = {("remote", name.split("-", 1)[1].removesuffix(".log")) for name in oracle["remote_segments"]}
    assert closed | remote <= set(decided)  # every segment of the stop was deleted, each tier by its own rule
    interval = {"local": oracle["log_retention_check_interval_ms"],
                "remote": oracle["remote_log_manager_task_interval_ms"]}
    for key in closed | remote:
        eligible = planned[key].eligibleAtMs
        assert eligible <= decided[key] < eligible + interval[key[0]] + SLACK_MS, key
    # as of each decision the plan deletes that segment by the rule the log line names; a moment before, it keeps it
    rules = {"local": "local_time", "remote": "remote_time"}
    for key in sorted(closed | remote, key=lambda k: decided[k]):
        at = plan(decided[key])[key]
        before = plan(planned[key].eligibleAtMs - 1)[key]
        assert (at.deletable, at.rule) == (True, rules[key[0]]), key
        assert not before.deletable and before.reason in ("within_retention", "prefix_rule"), (key, before.reason)


def test_the_files_were_gone_by_when_the_plan_says(restart) -> None:
    _, oracle, plan = restart
    planned = plan(oracle["stopped_ms"])
    gone = {}
    for e in oracle["events"]:
        if e["event"] == "removed":
            name = e["file"].removesuffix(".log")
            gone[("local", int(name)) if e["tier"] == "local" else ("remote", name.split("-", 1)[1])] = e["atMs"]
    files_deleted = {e["segment"]: e["atMs"] for e in oracle["log_events"] if e["event"] == "local_files_deleted"}
    assert set(gone) == {k for k in planned if k[0] == "remote"} | {
        ("local", int(n.removesuffix(".log"))) for n in oracle["closed_segments"]}
    for key, at in gone.items():
        row = planned[key]
        # the harness saw it gone at its next look (every poll_ms) after the broker deleted it
        assert at <= row.filesGoneByMs + oracle["poll_ms"] + SLACK_MS, key
        if key[0] == "local":  # renamed `.deleted` at the decision, the files deleted file.delete.delay.ms later
            assert files_deleted[key[1]] >= row.eligibleAtMs + oracle["file_delete_delay_ms"], key


def test_the_active_segment_rolls_once_past_local_retention(restart) -> None:
    """UnifiedLog rolls a tiered partition's active segment once it breaches retention, copies it, then deletes
    it: the plan says it rolls, and the broker's decision came within a roll, a copy and a check of eligibleAtMs."""
    _, oracle, plan = restart
    (_, active), planned = next((k, r) for k, r in plan(oracle["stopped_ms"]).items() if r.isActive)
    assert f"{active:020d}.log" not in oracle["closed_segments"] and planned.eligibleAtMs is not None
    at = plan(planned.eligibleAtMs)[("local", active)]
    assert at.rollsActiveSegment and not at.deletable
    decided = _decisions(oracle)[("local", active)]
    interval = oracle["log_retention_check_interval_ms"]
    assert planned.eligibleAtMs <= decided <= planned.filesGoneByMs - oracle["file_delete_delay_ms"] + SLACK_MS
    assert decided >= planned.eligibleAtMs + interval - SLACK_MS  # a check to roll, then a copy: not the first check


def test_the_accounting_is_the_brokers_view_while_it_deleted(spark) -> None:
    """The live copy taken between two deletions (`middle/`): the local and remote segments, and the log start
    offset, are those the broker's directories and list_offsets showed. 3.9.2's copy (4.4.0's: the nightly job's
    test in tests/test_remote_storage.py)."""
    from kafkalog_spark.analysis.tiered_storage import tiered_storage

    for version in VERSIONS[:1]:
        root = INTERNAL / version / "tiered-restart"
        oracle = json.loads((root / "oracle.json").read_text())
        middle = oracle["middle"]
        views = read_views(spark, [str(root / "middle" / "broker")], ["remote_log_segments", "segments",
                                                                       "partition_files"])
        row = tiered_storage(views["segments"], views["remote_log_segments"], views["partition_files"], ["restart"],
                             middle["copied_ms"]).where("topic = 'restart'").collect()
        assert len(row) == 1
        r = row[0]
        remote_ids = sorted(n.split("-", 1)[1].removesuffix(".log") for n in middle["remote_segments"])
        listed = sorted(x.remoteLogSegmentId for x in views["remote_log_segments"].where(
            "topic = 'restart' and problem is null").collect())
        assert listed == remote_ids, version
        assert r.remoteSegments == r.copiedSegments == len(remote_ids)
        # the log end offset from the listing alone: the active segment's base, at most the broker's
        active = int(middle["local_segments"][-1].removesuffix(".log"))
        assert r.logStartOffset == middle["log_start"] and r.logEndOffsetAtLeast == active <= middle["log_end"]
        assert r.localLogStartOffset == int(middle["local_segments"][0].removesuffix(".log"))
        assert r.localSegments == len(middle["local_segments"]) and r.missingOffsets == 0


def test_kafkalog_retention_plan_as_of_a_decision_deletes_what_the_broker_had(spark, tmp_path, capsys) -> None:
    """`kafkalog retention-plan --as-of` the broker's decision to delete a local segment, with nothing but its
    server.properties' keys: the topic's configs from its metadata log, the remote tier from its metadata; the
    segments it plans to delete are those the broker had decided to delete by then, in both tiers. The 4.4.0 broker
    (the plans of both versions are checked against their brokers above)."""
    from kafkalog_spark.cli import main

    version = VERSIONS[-1]
    root = INTERNAL / version / "tiered-restart"
    oracle = json.loads((root / "oracle.json").read_text())
    properties = tmp_path / "server.properties"
    properties.write_text("remote.log.storage.system.enable=true\n")
    decided = _decisions(oracle)
    closed = sorted(int(n.removesuffix(".log")) for n in oracle["closed_segments"])
    at = decided[("local", closed[3])]  # the fourth local deletion: a remote one came before it
    assert main(["retention-plan", str(root / "before" / "broker"), "--kafka-version", version[:3], "--broker-config",
                 str(properties), "--as-of", str(at), "--topics", TOPIC, "--json", "-q"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    planned = {(r["tier"], r["baseOffset"] if r["tier"] == "local" else r["remoteLogSegmentId"])
               for r in rows if r["deletable"]}
    assert planned == {key for key, when in decided.items() if when <= at}
    assert any(key[0] == "remote" for key in planned)
