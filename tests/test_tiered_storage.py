"""Tiered storage accounting from the local log dirs alone: `__remote_log_metadata` replayed as the broker's
metadata manager loads it (the `remote_log_segments` view) against what the real 3.9.2 and 4.4.0 brokers' remote
store held and what they reported (data/samples-internal/<version>/tiered, oracle.json); and the accounting's rule
(which local segments are uploaded, the copy lag, offsets in neither tier) on partitions shaped by hand."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from pyspark.sql.types import StringType, StructField, StructType

from kafkalog_spark.analysis.tiered_storage import TIERED_STORAGE_COLUMNS, tiered_storage
from kafkalog_spark.kafka_versions import parse_kafka_version
from kafkalog_spark.schemas import PARTITION_FILES, REMOTE_LOG_SEGMENTS, SEGMENTS
from kafkalog_spark.source import read_views
from tests.helpers.corpus import INTERNAL

VERSIONS = ("3.9.2", "4.4.0")


@pytest.fixture(scope="module", params=VERSIONS)
def tiered(request, spark):
    broker = INTERNAL / request.param / "tiered"
    views = read_views(spark, [str(broker / "broker")], ["remote_log_segments", "segments", "partition_files",
                                                         "batches"])
    oracle = json.loads((broker / "oracle.json").read_text())
    return views, oracle


def test_the_remote_segments_are_the_remote_stores(tiered) -> None:
    views, oracle = tiered
    rows = views["remote_log_segments"].collect()
    assert all(r.problem is None for r in rows)
    # LocalTieredStorage names a segment's files <start offset>-<segment id>; the deleted topic's are gone
    listed = {topic: sorted(f"{r.startOffset:020d}-{r.remoteLogSegmentId}.log" for r in rows if r.topic == topic)
              for topic in oracle["remote_segments_at_stop"]}
    assert listed == {t: sorted(files) for t, files in oracle["remote_segments_at_stop"].items()}
    assert {r.topicId for r in rows} == {oracle["topics"]["tiered"]["topic_id"]}
    assert all(r.state == "COPY_SEGMENT_FINISHED" and r.isCopied for r in rows)


def test_the_accounting_is_the_brokers_view(tiered) -> None:
    views, oracle = tiered
    now = oracle["topics"]["tiered"]["log_end"]  # any time: nothing lags
    rows = {r.topic: r for r in tiered_storage(views["segments"], views["remote_log_segments"],
                                               views["partition_files"], ["tiered"], now).collect()}
    assert set(rows) == {"tiered"}
    r, topic = rows["tiered"], oracle["topics"]["tiered"]
    assert (r.logStartOffset, r.remoteLogStartOffset) == (topic["log_start"], topic["log_start"])
    assert r.highestCopiedOffset + 1 == r.localLogStartOffset == r.logEndOffsetAtLeast == topic["log_end"]
    assert r.remoteSegments == r.copiedSegments == len(oracle["remote_segments_at_stop"]["tiered"])
    assert (r.copyingSegments, r.deletingSegments, r.copyLagSegments, r.copyLagBytes, r.missingOffsets) == (0,) * 5
    assert r.topicId == topic["topic_id"] and r.remoteBytes > 0


def _frame(spark, schema, rows):
    """A view as the source gives it: its columns, then logDir and problem."""
    schema = StructType([*schema.fields, StructField("logDir", StringType()), StructField("problem", StringType())])
    names = [f.name for f in schema.fields]
    return spark.createDataFrame([tuple(r.get(n) for n in names) for r in rows], schema)


def _views(spark, local, remote, log_start=None, topic_id="T1"):
    t = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    segs = [{"logDir": "/d", "topic": "t", "partition": 0, "baseOffset": base, "nextBaseOffset": nxt,
             "status": "live", "isActive": nxt is None, "logFile": f"/d/t-0/{base:020d}.log", "logSize": size,
             "logModified": t + dt.timedelta(minutes=base)} for base, nxt, size in local]
    rem = [{"topicId": topic_id, "topic": "t", "partition": 0, "remoteLogSegmentId": f"s{start}",
            "startOffset": start, "endOffset": end, "segmentSizeInBytes": 100, "state": state,
            "isCopied": state == "COPY_SEGMENT_FINISHED", "metadataOffset": n, "sourcePartition": 0, "logDir": log_dir}
           for n, (start, end, state) in enumerate(remote) for log_dir in ("/d", "/replica")]  # two replicas of it
    files = [{"logDir": "/d", "topic": "t", "partition": 0, "fileType": "partition.metadata", "topicId": "T1"}]
    if log_start is not None:
        files.append({"logDir": "/d", "topic": "t", "partition": 0, "fileType": "log-start-offset-checkpoint",
                      "offset": log_start})
    return (_frame(spark, SEGMENTS, segs), _frame(spark, REMOTE_LOG_SEGMENTS, rem),
            _frame(spark, PARTITION_FILES, files), int((t + dt.timedelta(minutes=60)).timestamp() * 1000))


def _account(spark, *args, **kw) -> dict:
    segments, remote, files, now = _views(spark, *args, **kw)
    rows = tiered_storage(segments, remote, files, ["t"], now).collect()
    assert len(rows) == 1 and list(rows[0].asDict()) == list(TIERED_STORAGE_COLUMNS)
    return rows[0].asDict()


def test_a_segment_is_uploaded_once_a_copy_reaches_the_next_base_offset(spark) -> None:
    # local: 10-19, 20-29, 30-39 rolled, 40 active; remote copies 0-9, 10-19 finished, 20-29 still copying
    r = _account(spark, [(10, 20, 1000), (20, 30, 1000), (30, 40, 500), (40, None, 7)],
                 [(0, 9, "COPY_SEGMENT_FINISHED"), (10, 19, "COPY_SEGMENT_FINISHED"), (20, 29, "COPY_SEGMENT_STARTED")],
                 log_start=0)
    assert (r["highestCopiedOffset"], r["uploadedLocalSegments"], r["uploadedLocalBytes"]) == (19, 1, 1000)
    # the copy lag: the rolled segments above it (the one being copied counts until it is finished), not the active
    assert (r["copyLagSegments"], r["copyLagBytes"]) == (2, 1500)
    assert r["copyLagMs"] == 40 * 60_000  # written last at minute 20 (its mtime), now is minute 60
    assert (r["copyingSegments"], r["copiedSegments"], r["remoteLogStartOffset"]) == (1, 2, 0)
    assert (r["logStartOffset"], r["localLogStartOffset"], r["missingOffsets"]) == (0, 10, 0)


def test_offsets_in_neither_tier_and_an_earlier_topics_segments(spark) -> None:
    # the remote log ends at 9, the local one starts at 15: 10-14 are in neither tier
    r = _account(spark, [(15, None, 10)], [(0, 9, "COPY_SEGMENT_FINISHED")], log_start=0)
    assert r["missingOffsets"] == 5
    # remote segments of another topic id under the same name (deleted, then created again) are not this log's
    r = _account(spark, [(15, 20, 10), (20, None, 0)], [(0, 19, "COPY_SEGMENT_FINISHED")], topic_id="OLD")
    assert (r["remoteSegments"], r["highestCopiedOffset"], r["copyLagSegments"], r["topicId"]) == (0, None, 1, "T1")


def test_stuck_copies_and_deletes_gaps_and_waiting_segments_are_findings(spark) -> None:
    from kafkalog_spark.analysis.retention import PLAN_SCHEMA
    from kafkalog_spark.analysis.tiered_storage import STUCK_TASK_INTERVALS, tiered_findings

    now, interval = 10_000_000, 30_000
    old, recent = now - STUCK_TASK_INTERVALS * interval - 1, now - interval
    # local 15 (rolled), 20 (active); remote: 0-9 copied, 10-14 being deleted long ago, 15-19 copying since long
    # ago, a retry of it copying since a moment ago
    segments, _, files, _ = _views(spark, [(15, 20, 10), (20, None, 0)], [], log_start=0)
    remote = _frame(spark, REMOTE_LOG_SEGMENTS, [
        {"topicId": "T1", "topic": "t", "partition": 0, "remoteLogSegmentId": sid, "startOffset": start,
         "endOffset": end, "segmentSizeInBytes": 10, "state": state, "isCopied": state == "COPY_SEGMENT_FINISHED",
         "stateTime": at, "metadataOffset": n, "sourcePartition": 0, "logDir": "/m"}
        for n, (sid, start, end, state, at) in enumerate([
            ("a", 0, 9, "COPY_SEGMENT_FINISHED", old), ("b", 10, 14, "DELETE_SEGMENT_STARTED", old),
            ("c", 15, 19, "COPY_SEGMENT_STARTED", old), ("d", 15, 19, "COPY_SEGMENT_STARTED", recent)])])
    tiered = tiered_storage(segments, remote, files, ["t"], now)
    plan = spark.createDataFrame([{"logDir": "/d", "topic": "t", "partition": 0, "baseOffset": 15, "size": 10,
                                   "reason": "not_copied_to_remote"}], PLAN_SCHEMA)
    found = sorted((r.check, r.baseOffset, r.logDir) for r in tiered_findings(tiered, remote, plan, interval,
                                                                              now).collect())
    assert found == [("local_retention_waits_for_copy", 15, "/d"), ("remote_copy_not_finished", 15, "/d"),
                     ("remote_delete_not_finished", 10, "/d"), ("remote_log_gap", None, "/d")]


@pytest.mark.parametrize("version", VERSIONS)
def test_remote_retention_by_size_deletes_what_the_broker_deleted(version: str) -> None:
    """The broker's own remote retention as the oracle: `tiered`'s remote segments as they were before
    retention.bytes shrank (its __remote_log_metadata replayed up to its first DELETE_SEGMENT_STARTED), planned with
    the new retention.bytes, must lose exactly the segments the broker then deleted (DELETE_SEGMENT_FINISHED)."""
    from kafkalog_spark.analysis.remote_retention import RemoteSegmentInput, plan_remote_partition
    from kafkalog_spark.log.log_dir import list_partition
    from kafkalog_spark.state.internal_records import read_internal
    from kafkalog_spark.state.remote_log_metadata import replay

    broker = INTERNAL / version / "tiered"
    oracle = json.loads((broker / "oracle.json").read_text())
    records = [r for p in sorted((broker / "broker").glob("__remote_log_metadata-*"))
               for r in read_internal(list_partition(str(p)), [])]
    mine = [r for r in records if r.decoded.value and "RemoteLogSegmentId" in r.decoded.value
            and r.decoded.value["RemoteLogSegmentId"]["TopicIdPartition"]["Name"] == "tiered"]
    first_delete = min(r.offset for r in mine if r.decoded.value.get("RemoteLogSegmentState") == 2)
    deleted = {r.decoded.value["RemoteLogSegmentId"]["Id"] for r in mine
               if r.decoded.value.get("RemoteLogSegmentState") == 3}
    from kafkalog_spark.format.message_json import kafka_uuid

    deleted = {kafka_uuid(i) for i in deleted}
    caches, ignored = replay([r for r in mine if r.offset < first_delete])
    assert ignored == [] and len(caches) == 1
    segments = [RemoteSegmentInput(s.segment_id, s.start_offset, s.end_offset, s.size, s.max_timestamp_ms,
                                   "COPY_SEGMENT_FINISHED" if s.state == 1 else str(s.state), s.leader_epochs)
                for s in next(iter(caches.values())).segments.values()]
    assert len(segments) == len(deleted) + len(oracle["remote_segments_at_stop"]["tiered"])
    # one leader epoch (0) since offset 0, the log's start before the deletions; nothing local but the empty active
    # segment at the log end
    end = oracle["topics"]["tiered"]["log_end"]
    rows = plan_remote_partition(segments, -1, oracle["retention_bytes_after"], 0, 0, {0: 0}, end, 10**13,
                                 parse_kafka_version(version))
    assert {r["remoteLogSegmentId"] for r in rows if r["deletable"]} == deleted
    assert {r["rule"] for r in rows if r["deletable"]} == {"remote_size"}
    assert rows[0]["newLogStartOffset"] == oracle["topics"]["tiered"]["log_start"]  # the broker's, after


def _remote(start: int, end: int, ts: int, state: str = "COPY_SEGMENT_FINISHED", epochs=None):
    from kafkalog_spark.analysis.remote_retention import RemoteSegmentInput

    return RemoteSegmentInput(f"s{start}", start, end, 100, ts, state, epochs or {0: start})


def test_remote_time_log_start_and_epoch_rules_per_version() -> None:
    from kafkalog_spark.analysis.remote_retention import plan_remote_partition

    segs = [_remote(0, 9, 1000), _remote(10, 19, 2000), _remote(20, 29, 3000)]

    def plan(version: str, **kw):
        args = {"retention_ms": 1000, "retention_bytes": -1, "log_start_offset": 0, "only_local_size": 0,
                "lineage": {0: 0}, "log_end_offset": 40, "as_of_ms": 3000} | kw
        rows = plan_remote_partition(segs, kafka_version=parse_kafka_version(version), **args)
        return [(r["startOffset"], r["rule"] or r["reason"]) for r in rows], rows[0]["newLogStartOffset"]

    # cleanupUntil = 2000: 3.9 deletes at or before it, 4.x only before; the first kept one stops the walk
    assert plan("3.9") == ([(0, "remote_time"), (10, "remote_time"), (20, "within_retention")], 20)
    assert plan("4.x") == ([(0, "remote_time"), (10, "within_retention"), (20, "prefix_rule")], 10)
    # below the log start offset: deleted without moving it (it is already there)
    assert plan("4.x", retention_ms=-1, log_start_offset=15)[0] == [
        (0, "remote_log_start_offset"), (10, "within_retention"), (20, "prefix_rule")]
    # written in an epoch before the lineage's earliest (after an unclean election): deleted after the walk
    assert plan("4.x", retention_ms=-1, lineage={1: 0})[0] == [
        (0, "remote_earlier_epochs"), (10, "remote_earlier_epochs"), (20, "remote_earlier_epochs")]


def test_a_half_deleted_remote_segment_is_deleted_again_in_4x_and_counted_in_39() -> None:
    from kafkalog_spark.analysis.remote_retention import plan_remote_partition

    segs = [_remote(0, 9, 10**12, "DELETE_SEGMENT_STARTED"), _remote(10, 19, 10**12), _remote(20, 29, 10**12)]
    args = (-1, 150, 0, 0, {0: 0}, 40, 10**12)
    v4 = plan_remote_partition(segs, *args, kafka_version=parse_kafka_version("4.x"))
    v39 = plan_remote_partition(segs, *args, kafka_version=parse_kafka_version("3.9"))
    # 4.x: retried, and not counted in the size (200 of copied segments: 50 over, none fits)
    assert [r["rule"] or r["reason"] for r in v4] == ["remote_delete_retry", "within_retention", "prefix_rule"]
    # 3.9: counted (300: 150 over), and its own size fits: the size rule deletes it
    assert [r["rule"] or r["reason"] for r in v39] == ["remote_size", "within_retention", "prefix_rule"]


def test_the_retention_plan_has_a_row_per_remote_segment(spark) -> None:
    from kafkalog_spark.analysis.retention import retention_plan, retention_what_if
    from kafkalog_spark.config import TopicConfigs

    # one version's corpus: the rules of each version are those of plan_remote_partition, tested above
    broker = INTERNAL / "3.9.2" / "tiered"
    views = read_views(spark, [str(broker / "broker")], ["remote_log_segments", "segments", "partition_files",
                                                         "batches"])
    oracle = json.loads((broker / "oracle.json").read_text())
    configs = TopicConfigs(overrides={"tiered": {"remote.storage.enable": "true", "retention.ms": "-1",
                                                 "local.retention.ms": "1000",
                                                 "retention.bytes": str(oracle["retention_bytes_after"])}},
                           kafka_version="3.9")
    args = (views["segments"], views["batches"], views["partition_files"], configs)
    plan = retention_plan(*args, 10**13, remote_segments=views["remote_log_segments"]).where("topic = 'tiered'")
    remote = plan.where("tier = 'remote'").orderBy("baseOffset").collect()
    # the segments the broker kept at that retention.bytes: none more goes (the excess is below a segment's size)
    assert [r.remoteLogSegmentId for r in remote] == [
        f.split("-", 1)[1].removesuffix(".log") for f in sorted(oracle["remote_segments_at_stop"]["tiered"])]
    assert not any(r.deletable for r in remote) and remote[0].reason == "within_retention"
    assert [r.tier for r in plan.where("tier = 'local'").collect()] == ["local"]  # the empty active segment
    # what-if 10000 bytes: 16856 remote bytes, 6856 over: three 1892-byte segments fit in it
    alt = retention_what_if(*args, configs.with_what_if(["retention.bytes=10000"]), 10**13,
                            remote_segments=views["remote_log_segments"])
    gone = alt.where("topic = 'tiered' and tier = 'remote' and whatIfDeletable").orderBy("baseOffset").collect()
    assert [r.baseOffset for r in gone] == [22, 33, 44] and {r.whatIfRule for r in gone} == {"remote_size"}
    assert sum(r.size for r in remote) == 16856


def test_kafkalog_retention_plan_shows_the_remote_tier(spark, tmp_path, capsys) -> None:
    from kafkalog_spark.cli import main

    topics = tmp_path / "topics.ini"
    topics.write_text("[tiered]\nremote.storage.enable=true\nretention.bytes=10000\nretention.ms=-1\n")
    broker = INTERNAL / "3.9.2" / "tiered" / "broker"
    assert main(["retention-plan", str(broker), "--kafka-version", "3.9", "--topic-config", str(topics),
                 "--topics", "tiered", "-q"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].split()[-1] == "tier"
    assert "    remote tier: 3 of 9 segment(s) deletable, 5676 of 16856 bytes; log start offset -> 55" in out
    # the local line: the local log start offset (the empty active segment's base), not the log's
    assert "tiered-0: 0 of 1 segment(s) deletable, 0 of 0 bytes; local log start offset 120 -> 120" in out


def test_the_forecast_has_the_remote_tier(spark) -> None:
    from kafkalog_spark.analysis.retention_forecast import retention_forecast
    from kafkalog_spark.config import TopicConfigs

    broker = INTERNAL / "3.9.2" / "tiered" / "broker"
    views = read_views(spark, [str(broker)], ["remote_log_segments", "segments", "partition_files", "batches"])
    newest = max(r.maxTimestamp for r in views["remote_log_segments"].collect())
    configs = TopicConfigs(overrides={"tiered": {"remote.storage.enable": "true", "retention.bytes": "10000",
                                                 "retention.ms": str(86_400_000)}}, kafka_version="3.9")
    rows = retention_forecast(views["segments"], views["batches"], views["partition_files"], configs, newest, days=2,
                              remote_segments=views["remote_log_segments"]).where("topic = 'tiered'")
    days = {r.day: r for r in rows.collect()}
    # day 0: the size rule (6856 bytes over: three 1892-byte segments); day 2: every segment is older than a day
    assert (days[0].remoteSegments, days[0].remoteBytes, days[0].remoteDeletableSegments) == (9, 16856, 3)
    assert (days[2].remoteDeletableSegments, days[2].remoteBytesReclaimed) == (9, 16856)
    assert days[2].remoteNewLogStartOffset == 120  # the remote log's end + 1: the local log's start
