"""The retention plan: the broker's rules (UnifiedLog.deleteOldSegments) on synthetic partitions, the Spark
function on the committed corpus and on copies with crafted or missing checkpoints, and the CLI command.
tests/test_retention_broker.py checks the same plan against what a live broker deletes."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import time
from pathlib import Path

import pytest

from kafkalog_spark.analysis.retention import (
    ASSUME_COMPACT,
    ASSUME_HW,
    ASSUME_HW_FILE,
    ASSUME_LSO_FILE,
    ASSUME_MTIME,
    ASSUME_REMOTE,
    PLAN_SCHEMA,
    WHAT_IF_SCHEMA,
    RetentionParams,
    SegmentInput,
    partition_summary,
    plan_partition,
    retention_plan,
    retention_what_if,
)
from kafkalog_spark.commands import retention_plan as command
from kafkalog_spark.config import effective_config

# ------------------------------------------------------------------------------- the rules, in plain Python


def params(**config) -> RetentionParams:
    return RetentionParams.of(effective_config("t", what_if={k.replace("_", "."): str(v) for k, v in config.items()}))


def segments(spec: list[tuple[int, int, int | None]], leo: int) -> list[SegmentInput]:
    """(base offset, size, max timestamp) per segment; batches cover [base, next base) (the last: up to leo)."""
    out = []
    for i, (base, size, ts) in enumerate(spec):
        end = spec[i + 1][0] if i + 1 < len(spec) else leo
        out.append(SegmentInput(base, size, ts, None, 1_000_000, end - 1 if size else None))
    return out


def plan(spec, leo, p, as_of, hw=None, lso=None, **kw):
    rows = plan_partition("t", 0, segments(spec, leo), p, as_of, hw if hw is not None else leo, lso,
                          hw_file=True, lso_file=True, **kw)
    return rows


def outcome(rows) -> list[tuple[int, str | None, str | None]]:
    return [(r["baseOffset"], r["rule"], r["reason"]) for r in rows]


def test_time_rule_is_strict_and_eligible_at_is_the_first_ms() -> None:
    spec = [(0, 100, 0), (10, 100, 500), (20, 100, 2000)]
    p = params(retention_ms=1000)
    rows = plan(spec, 30, p, as_of=1500)
    assert outcome(rows) == [(0, "time", None), (10, None, "within_retention"), (20, None, "within_retention")]
    assert [r["eligibleAtMs"] for r in rows] == [1001, 1501, 3001]
    assert [r["timeExpired"] for r in rows] == [True, False, False]
    assert outcome(plan(spec, 30, p, as_of=1501))[1] == (10, "time", None)  # 1501 - 500 > 1000
    assert rows[0]["bytesReclaimed"] == 100 and rows[1]["bytesReclaimed"] == 0
    assert rows[0]["newLogStartOffset"] == 10


def test_prefix_rule_stops_at_the_first_kept_segment() -> None:
    rows = plan([(0, 100, 0), (10, 100, 5000), (20, 100, 0), (30, 100, 0)], 40, params(retention_ms=1000), 3000)
    assert outcome(rows) == [(0, "time", None), (10, None, "within_retention"), (20, None, "prefix_rule"),
                             (30, None, "prefix_rule")]
    assert rows[2]["timeExpired"] is True


def test_size_rule_never_goes_below_retention_bytes() -> None:
    spec = [(0, 100, 0), (10, 100, 0), (20, 100, 0)]
    far = -10**12  # nothing expires by time
    assert outcome(plan(spec, 30, params(retention_bytes=150, retention_ms=-1), far)) == [
        (0, "size", None), (10, None, "within_size"), (20, None, "within_size")]
    assert [r["rule"] for r in plan(spec, 30, params(retention_bytes=100, retention_ms=-1), far)] == [
        "size", "size", None]  # diff 200: 100 and 100 go, the rest is exactly the limit
    # size == retention.bytes: diff 0, only a zero-size segment could go; size < retention.bytes: skipped
    assert outcome(plan(spec, 30, params(retention_bytes=300, retention_ms=-1), far)) == [
        (0, None, "within_size"), (10, None, "within_size"), (20, None, "within_size")]
    zero_first = [(0, 0, 0), (10, 100, 0), (20, 100, 0)]
    assert [r["rule"] for r in plan(zero_first, 30, params(retention_bytes=200, retention_ms=-1), far)] == [
        "size", None, None]
    assert [r["deletable"] for r in plan(zero_first, 30, params(retention_bytes=201, retention_ms=-1), far)] == [
        False, False, False]


def test_rules_run_in_order_each_on_what_the_previous_left() -> None:
    spec = [(0, 100, 0), (10, 100, 0), (20, 100, 0), (30, 100, 0), (40, 100, 9000)]
    # log start offset 15: only segment 0 (next base 10 <= 15); then size 500 - 250 = 250 left... on 400:
    # diff 150 removes one segment; then time removes the rest of the old ones
    rows = plan(spec, 50, params(retention_bytes=250, retention_ms=1000), as_of=5000, lso=15)
    assert outcome(rows) == [(0, "log_start_offset", None), (10, "size", None), (20, "time", None),
                             (30, "time", None), (40, None, "within_retention")]
    assert rows[0]["logStartOffset"] == 15 and rows[0]["newLogStartOffset"] == 40


def test_log_start_offset_inside_a_segment_is_kept_as_the_new_start() -> None:
    rows = plan([(0, 100, 0), (10, 100, 0), (20, 100, 0)], 30, params(retention_ms=-1), 0, lso=13)
    assert outcome(rows) == [(0, "log_start_offset", None), (10, None, "no_retention_limit"),
                             (20, None, "no_retention_limit")]
    assert rows[0]["newLogStartOffset"] == 13  # max(log start offset, first kept base)


def test_high_watermark_bounds_deletion() -> None:
    spec = [(0, 100, 0), (10, 100, 0), (20, 100, 0)]
    rows = plan(spec, 30, params(retention_ms=1), as_of=10**6, hw=15)
    assert outcome(rows) == [(0, "time", None), (10, None, "above_high_watermark"),
                             (20, None, "above_high_watermark")]
    assert rows[0]["highWatermark"] == 15
    # clamped to [log start offset, log end offset] as updateHighWatermark does
    assert plan(spec, 30, params(retention_ms=1), 10**6, hw=99)[0]["highWatermark"] == 30
    assert plan(spec, 30, params(retention_ms=1), 10**6, hw=3, lso=5)[0]["highWatermark"] == 5


def test_all_expired_rolls_a_new_segment_and_the_last_empty_one_stays() -> None:
    rows = plan([(0, 100, 0), (10, 100, 0)], 20, params(retention_ms=1), as_of=10**6)
    assert [r["deletable"] for r in rows] == [True, True]
    assert rows[0]["rollsActiveSegment"] is True and rows[0]["newLogStartOffset"] == 20 == rows[0]["logEndOffset"]
    empty_last = plan([(0, 100, 0), (10, 0, None)], 10, params(retention_ms=1), as_of=10**6)
    assert outcome(empty_last) == [(0, "time", None), (10, None, "last_empty_segment")]
    assert empty_last[0]["rollsActiveSegment"] is False and empty_last[0]["logEndOffset"] == 10


def test_compact_only_topics_get_only_the_log_start_offset_rule() -> None:
    spec = [(0, 100, 0), (10, 100, 0), (20, 100, 0)]
    p = params(cleanup_policy="compact", retention_ms=1, retention_bytes=1)
    rows = plan(spec, 30, p, as_of=10**6, lso=12)
    assert outcome(rows) == [(0, "log_start_offset", None), (10, None, "policy_compact"),
                             (20, None, "active_segment")]
    assert rows[0]["eligibleAtMs"] is None and rows[0]["timeExpired"] is None and rows[0]["cleanupPolicy"] == "compact"
    both = plan(spec, 30, params(cleanup_policy="compact,delete", retention_ms=1), as_of=10**6)
    assert [r["rule"] for r in both] == ["time"] * 3 and ASSUME_COMPACT in both[0]["assumptions"]


def test_tiered_storage_uses_local_limits_and_needs_a_remote_copy() -> None:
    spec = [(0, 100, 0), (10, 100, 0), (20, 100, 0), (30, 100, 0)]
    p = params(remote_storage_enable="true", retention_ms=10**9, local_retention_ms=1000)
    rows = plan(spec, 40, p, as_of=10**6, lso=10)
    assert outcome(rows) == [(0, "log_start_offset", None), (10, "local_time", None), (20, "local_time", None),
                             (30, None, "active_segment")]
    assert [r["requiresRemoteCopy"] for r in rows] == [False, True, True, False]
    assert (rows[0]["rollsActiveSegment"], rows[0]["remoteStorage"], rows[0]["retentionMs"]) == (True, True, 1000)
    assert ASSUME_REMOTE in rows[0]["assumptions"] and rows[0]["newLogStartOffset"] == 30
    # local.retention.bytes -2 = retention.bytes
    size = plan(spec, 40, params(remote_storage_enable="true", retention_ms=-1, retention_bytes=250), 0)
    assert [r["rule"] for r in size] == ["local_size", None, None, None]  # 400 - 250: one 100-byte segment
    # remote.log.copy.disable=true: the non-local limits, no copy needed
    off = plan(spec, 40, params(remote_storage_enable="true", remote_log_copy_disable="true", retention_ms=1000),
               10**6)
    assert [r["rule"] for r in off] == ["time"] * 4 and [r["requiresRemoteCopy"] for r in off] == [False] * 4


def test_a_tiered_segment_not_yet_copied_stops_the_local_rules() -> None:
    # UnifiedLog.isSegmentEligibleForDeletion: upperBoundOffset - 1 <= highestOffsetInRemoteStorage
    spec = [(0, 100, 0), (10, 100, 0), (20, 100, 0), (30, 100, 0)]
    p = params(remote_storage_enable="true", retention_ms=10**9, local_retention_ms=1000)
    rows = plan(spec, 40, p, as_of=10**6, highest_copied=19)  # 0-9 and 10-19 copied, 20-29 not yet
    assert outcome(rows) == [(0, "local_time", None), (10, "local_time", None), (20, None, "not_copied_to_remote"),
                             (30, None, "prefix_rule")]  # the rule stopped before it: no roll either
    assert ASSUME_REMOTE not in rows[0]["assumptions"] and rows[0]["newLogStartOffset"] == 20
    assert rows[0]["rollsActiveSegment"] is False
    assert outcome(plan(spec, 40, p, as_of=10**6, highest_copied=-1))[0] == (0, None, "not_copied_to_remote")
    # below the log start offset a segment goes without a copy; the next one waits for its copy
    rows = plan(spec, 40, p, as_of=10**6, lso=10, highest_copied=-1)
    assert outcome(rows)[:2] == [(0, "log_start_offset", None), (10, None, "not_copied_to_remote")]


def test_largest_timestamp_sources_and_mtime_fallback() -> None:
    segs = [SegmentInput(0, 100, 50, 70, 9_000, 9), SegmentInput(10, 100, -1, None, 5_000, 19),
            SegmentInput(20, 100, 90, 80, 9_000, 29), SegmentInput(30, 100, None, None, None, 39)]
    rows = plan_partition("t", 0, segs, params(retention_ms=100), 5_101, 40, None, hw_file=True, lso_file=True)
    assert [(r["largestTimestamp"], r["largestTimestampSource"]) for r in rows] == [
        (70, "time_index"), (5_000, "mtime"), (90, "batches"), (None, "unknown")]
    assert ASSUME_MTIME in rows[1]["assumptions"] and ASSUME_MTIME not in rows[0]["assumptions"]
    assert [r["rule"] for r in rows] == ["time", "time", "time", None]  # 5101 - 5000 > 100
    assert rows[3]["eligibleAtMs"] is None and rows[3]["reason"] == "within_retention"


def test_missing_checkpoints_are_stated() -> None:
    segs = segments([(0, 100, 0), (10, 100, 0)], 20)
    rows = plan_partition("t", 0, segs, params(), 0)
    assert rows[0]["highWatermark"] == 20 and rows[0]["highWatermarkSource"] == "assumed_log_end_offset"
    assert rows[0]["logStartOffsetSource"] == "assumed_first_segment"
    assert ASSUME_HW_FILE in rows[0]["assumptions"] and ASSUME_LSO_FILE in rows[0]["assumptions"]
    rows = plan_partition("t", 0, segs, params(), 0, hw_file=True, lso_file=True)
    assert rows[0]["assumptions"] == [ASSUME_HW] and rows[0]["logStartOffsetSource"] == "first_segment"


def test_the_kraft_metadata_log_is_never_deletable() -> None:
    rows = plan_partition("__cluster_metadata", 0, segments([(0, 100, 0), (10, 100, 0)], 20), params(retention_ms=1),
                          10**6)
    assert outcome(rows) == [(0, None, "kraft_metadata_log"), (10, None, "kraft_metadata_log")]


# --------------------------------------------------------------------------------------- Spark on the corpus


def views(spark, *paths, topics=None):
    def load(view):
        r = spark.read.format("kafkalog").option("view", view).option("includeInternal", "true")
        if topics:
            r = r.option("topics", topics)
        return r.load([str(p) for p in paths])

    return load("segments"), load("batches"), load("partition_files")


def rows_of(df) -> list[dict]:
    return [r.asDict() for r in df.orderBy("topic", "partition", "baseOffset").collect()]


def test_size_rule_on_the_corpus(spark, samples: Path) -> None:
    df = retention_plan(*views(spark, samples / "broker", topics="tutorial-segments"),
                        {"tutorial-segments": effective_config("tutorial-segments",
                                                               what_if={"retention.bytes": "3000"})}, 0)
    assert df.schema == PLAN_SCHEMA
    rows = rows_of(df)
    sizes = {int(p.name[:20]): p.stat().st_size for p in (samples / "broker" / "tutorial-segments-0").glob("*.log")}
    assert [r["size"] for r in rows] == [sizes[b] for b in sorted(sizes)]
    # 8190 bytes, 5190 over: 974 + 4 * 984 go (280 left), the next 984 would go below the limit
    assert [r["baseOffset"] for r in rows if r["deletable"]] == [0, 12, 24, 36, 48]
    assert {r["rule"] for r in rows if r["deletable"]} == {"size"}
    assert rows[0]["newLogStartOffset"] == 60 and rows[0]["logEndOffset"] == 100 and rows[0]["highWatermark"] == 100
    assert rows[0]["highWatermarkSource"] == "checkpoint" and rows[0]["logStartOffsetSource"] == "first_segment"
    assert rows[0]["assumptions"] == []
    summary = partition_summary(df).collect()[0]
    assert (summary.segments, summary.deletableSegments, summary.bytesReclaimed) == (9, 5, 974 + 4 * 984)


def golden_max_timestamps(samples: Path, partition: str) -> dict[int, int]:
    """Segment base offset -> its largest batch timestamp, as kafka-dump-log printed the batches."""
    out = {}
    for g in sorted((samples / "golden" / "broker" / partition).glob("*.log.deep.txt")):
        stamps = re.findall(rb"(?m)^baseOffset: .* (?:CreateTime|LogAppendTime): (-?\d+) size: ", g.read_bytes())
        out[int(g.name[:20])] = max(map(int, stamps))
    return out


def test_time_rule_on_the_corpus_is_strict(spark, samples: Path) -> None:
    segs, batches, pf = views(spark, samples / "broker", topics="time-rolls")
    ts = golden_max_timestamps(samples, "time-rolls-0")
    assert sorted(ts) == [0, 8, 16, 24, 32]  # data/samples/README.md
    # At segment 8's largest timestamp + 60001 ms: 60001 ms have passed, more than 60000 but not more than 60001.
    at = ts[8] + 60001
    df = retention_what_if(segs, batches, pf, lambda t: effective_config(t, what_if={"retention.ms": "60000"}),
                           lambda t: effective_config(t, what_if={"retention.ms": "60001"}), at)
    rows = rows_of(df)
    assert [(r["baseOffset"], r["largestTimestamp"], r["largestTimestampSource"]) for r in rows] == [
        (base, ts[base], "batches") for base in sorted(ts)]
    assert rows[1]["eligibleAtMs"] == at and rows[1]["whatIfEligibleAtMs"] == at + 1
    assert [r["baseOffset"] for r in rows if r["deletable"]] == [0, 8]
    assert [r["baseOffset"] for r in rows if r["whatIfDeletable"]] == [0]
    assert rows[1]["whatIfReason"] == "within_retention" and rows[2]["reason"] == "within_retention"
    assert (rows[0]["newLogStartOffset"], rows[0]["whatIfNewLogStartOffset"]) == (16, 8)


def test_mtime_fallback_for_segments_without_timestamps(spark, samples: Path) -> None:
    rows = rows_of(retention_plan(*views(spark, samples / "legacy", topics="legacy-v0"), None, 0))
    mtimes = {int(p.name[:20]): p.stat().st_mtime_ns // 1_000_000
              for p in (samples / "legacy" / "legacy-v0-0").glob("*.log")}
    assert sorted(mtimes) == [0, 19]  # data/samples/README.md: two segments
    assert [(r["baseOffset"], r["largestTimestamp"], r["largestTimestampSource"]) for r in rows] == [
        (base, mtimes[base], "mtime") for base in sorted(mtimes)]
    assert [ASSUME_MTIME in r["assumptions"] for r in rows] == [True, True]


def test_internal_and_compacted_topics(spark, samples: Path) -> None:
    overrides = {"compacted-cleaned": {"cleanup.policy": "compact"}}
    rows = rows_of(retention_plan(
        *views(spark, samples / "broker", topics="compacted-cleaned,__cluster_metadata,__consumer_offsets"),
        lambda t: effective_config(t, overrides=overrides, what_if={"retention.ms": "1"}), 4_000_000_000_000))
    by_topic = {t: [r for r in rows if r["topic"] == t] for t in ("compacted-cleaned", "__cluster_metadata",
                                                                  "__consumer_offsets")}
    assert [r["deletable"] for r in rows] == [False] * 7  # the 5 + 1 + 1 segments below
    assert [r["reason"] for r in by_topic["compacted-cleaned"]] == ["policy_compact"] * 4 + ["active_segment"]
    assert [r["reason"] for r in by_topic["__cluster_metadata"]] == ["kraft_metadata_log"]
    assert [(r["cleanupPolicy"], r["reason"]) for r in by_topic["__consumer_offsets"]] == [
        ("compact", "active_segment")]


def copy_partition(samples: Path, dest: Path, name: str = "tutorial-segments-0") -> Path:
    log_dir = dest / "logs"
    shutil.copytree(samples / "broker" / name, log_dir / name)
    return log_dir


def test_a_log_dir_without_checkpoints_still_gets_a_plan(spark, samples: Path, tmp_path: Path) -> None:
    log_dir = copy_partition(samples, tmp_path)
    rows = rows_of(retention_plan(*views(spark, log_dir), None, 4_000_000_000_000))
    assert len(rows) == 9 and all(r["deletable"] for r in rows)  # 7 days are long gone by then
    assert rows[0]["rollsActiveSegment"] is True and rows[0]["newLogStartOffset"] == 100
    assert {r["highWatermarkSource"] for r in rows} == {"assumed_log_end_offset"}
    assert {r["logStartOffsetSource"] for r in rows} == {"assumed_first_segment"}
    assert all(ASSUME_HW_FILE in r["assumptions"] and ASSUME_LSO_FILE in r["assumptions"] for r in rows)


def test_checkpoints_bound_the_plan(spark, samples: Path, tmp_path: Path) -> None:
    log_dir = copy_partition(samples, tmp_path)
    (log_dir / "replication-offset-checkpoint").write_text("0\n1\ntutorial-segments 0 30\n")
    (log_dir / "log-start-offset-checkpoint").write_text("0\n1\ntutorial-segments 0 15\n")
    rows = rows_of(retention_plan(*views(spark, log_dir), None, 4_000_000_000_000))
    assert [(r["baseOffset"], r["rule"], r["reason"]) for r in rows[:4]] == [
        (0, "log_start_offset", None), (12, "time", None), (24, None, "above_high_watermark"),
        (36, None, "above_high_watermark")]
    assert (rows[0]["logStartOffset"], rows[0]["highWatermark"], rows[0]["newLogStartOffset"]) == (15, 30, 24)
    assert rows[0]["assumptions"] == []


def test_what_if_side_by_side(spark, samples: Path) -> None:
    as_of = 1_795_254_500_000  # shortly after the corpus was written: nothing is 7 days old
    df = retention_what_if(*views(spark, samples / "broker", topics="tutorial-segments,time-rolls"), None,
                           lambda t: effective_config(t, what_if={"retention.bytes": "3000"}), as_of)
    assert df.schema == WHAT_IF_SCHEMA
    rows = rows_of(df)
    assert [r["deletable"] for r in rows] == [False] * (5 + 9)  # time-rolls' and tutorial-segments' segments
    tutorial = [r for r in rows if r["topic"] == "tutorial-segments"]
    assert [r["whatIfRule"] for r in tutorial] == ["size"] * 5 + [None] * 4
    assert tutorial[0]["whatIfNewLogStartOffset"] == 60 and tutorial[0]["newLogStartOffset"] == 0
    assert tutorial[5]["whatIfReason"] == "within_retention" and tutorial[0]["whatIfRetentionBytes"] == 3000
    summary = {r.topic: r for r in partition_summary(df).collect()}
    assert summary["tutorial-segments"].whatIfDeletableSegments == 5
    assert summary["time-rolls"].whatIfDeletableSegments == 0  # 1652 bytes in all


# ----------------------------------------------------------------------------------------------------- CLI


def cli(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="kafkalog")
    command.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["retention-plan", *argv])


def test_cli_table_with_what_if(spark, samples: Path, tmp_path: Path, capsys) -> None:
    topics = tmp_path / "topics.ini"
    topics.write_text("[tutorial-segments]\nretention.bytes=3000\n")
    args = cli(str(samples / "broker"), "--topics", "tutorial-segments", "--topic-config", str(topics),
               "--as-of", "2026-11-21T00:00:00Z", "--set", "retention.bytes=5000")
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("retention plan as of 2026-11-21T00:00:00.000Z; what-if: retention.bytes=5000\n")
    header = out.splitlines()[1].split()
    assert header[:8] == ["topic", "partition", "baseOffset", "size", "largestTimestamp", "deletable", "rule",
                          "reason"] and header[-3:] == ["whatIfDeletable", "whatIfRule", "whatIfReason"]
    assert ("tutorial-segments-0: 5 of 9 segment(s) deletable, 4910 of 8190 bytes; log start offset 0 -> 60; "
            "what-if: 3 segment(s), 2942 bytes, log start offset -> 36") in out


def test_cli_json(spark, samples: Path, capsys) -> None:
    args = cli(str(samples / "broker" / "tutorial-segments-0"), "--as-of", "4000000000000", "--json",
               "--set", "retention.ms=-1", "--set", "retention.bytes=9000")
    assert args.func(args) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 9
    first = lines[0]
    assert {"topic", "partition", "baseOffset", "size", "deletable", "rule", "whatIfDeletable", "whatIfRule",
            "assumptions", "newLogStartOffset"} <= set(first)
    assert (first["topic"], first["partition"], first["baseOffset"], first["deletable"], first["rule"]) == (
        "tutorial-segments", 0, 0, True, "time")
    assert first["whatIfDeletable"] is False and first["whatIfReason"] == "within_size"


@pytest.mark.parametrize(("extra", "message"), [
    (["--set", "retention.ms=abc"], "retention.ms=abc: not a long"),
    (["--set", "retention"], "retention: expected key=value"),
    (["--broker-config", "{dir}/server.properties"], "log.retention.hours=x: not an int"),
    (["--topic-config", "{dir}/t.ini"], "segment.bytes=1: must be at least 1048576"),  # 4.x, the default
    (["--topic-config", "{dir}/t.ini", "--kafka-version", "3.9"], "segment.bytes=1: must be at least 14"),
    (["--as-of", "yesterday"], "--as-of 'yesterday'"),
])
def test_cli_bad_config_exits_2_naming_the_key(samples: Path, tmp_path: Path, capsys, extra, message) -> None:
    (tmp_path / "server.properties").write_text("log.retention.hours=x\n")
    (tmp_path / "t.ini").write_text("[a]\nsegment.bytes=1\n")
    args = cli(str(samples / "broker"), *[e.format(dir=tmp_path) for e in extra])
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("kafkalog retention-plan: error: ") and message in err


def test_cli_one_partition_in_two_log_dirs_is_planned_in_each(spark, samples: Path, capsys) -> None:
    """live-copy-0 as the broker left it and as copied while it ran: two logs, each with its own plan and summary
    line, named by its log dir; each the same as its dir's alone."""
    copies = [samples / "broker" / "live-copy-0", samples / "live-copy" / "live-copy-0"]

    def summaries(*paths: Path) -> list[str]:
        args = cli(*map(str, paths), "--as-of", "2030-01-01T00:00:00Z")
        assert args.func(args) == 0
        out = capsys.readouterr().out
        return [line for line in out.splitlines() if "segment(s) deletable" in line]

    both = summaries(*copies)
    alone = [summaries(c)[0] for c in copies]
    assert both == [f"{c.parent}/{line}" for c, line in zip(copies, alone, strict=True)]


def test_cli_missing_dir(tmp_path: Path, capsys) -> None:
    args = cli(str(tmp_path / "nope"))
    assert args.func(args) == 2 and "not a directory" in capsys.readouterr().err


def test_parse_as_of() -> None:
    assert command.parse_as_of("1700000000000") == 1_700_000_000_000
    assert command.parse_as_of("2023-11-14T22:13:20Z") == 1_700_000_000_000
    assert command.parse_as_of("2023-11-14T22:13:20") == 1_700_000_000_000  # no zone: UTC
    assert command.parse_as_of("2023-11-15T00:13:20+02:00") == 1_700_000_000_000
    # None: now, between two readings of the clock (less 1 ms: the float seconds are truncated to ms)
    before = time.time_ns() // 1_000_000
    now = command.parse_as_of(None)
    assert before - 1 <= now <= time.time_ns() // 1_000_000


def test_forecast_is_the_plan_run_at_each_day(spark, samples: Path) -> None:
    from kafkalog_spark.analysis.retention_forecast import DAY_MS, FORECAST_SCHEMA, retention_forecast

    segs, batches, pf = views(spark, samples / "broker", topics="time-rolls,tutorial-segments")
    current = lambda t: effective_config(t, what_if={"retention.ms": str(DAY_MS + 1)})  # noqa: E731
    shorter = lambda t: effective_config(t, what_if={"retention.ms": "60000"})  # noqa: E731
    newest = max(max(golden_max_timestamps(samples, p).values()) for p in ("time-rolls-0", "tutorial-segments-0"))
    # Both topics were written within a minute (data/samples/README.md), so with retention.ms one day + 1 ms
    # nothing goes on days 0 and 1 and everything (the active segments rolled) on days 2 and 3; the 60 s what-if
    # frees nothing on day 0 (the writes are still half a day ahead) and everything from day 1.
    at = newest - DAY_MS // 2
    df = retention_forecast(segs, batches, pf, current, at, days=3, what_if_configs=shorter)
    assert df.schema == FORECAST_SCHEMA
    got = {(r.topic, r.partition, r.day): r for r in df.collect()}
    assert {k[2] for k in got} == {0, 1, 2, 3}
    for day in range(4):
        plan = rows_of(retention_what_if(segs, batches, pf, current, shorter, at + day * DAY_MS))
        for topic in ("time-rolls", "tutorial-segments"):
            mine = [r for r in plan if r["topic"] == topic]
            row = got[(topic, 0, day)]
            assert row.asOfMs == at + day * DAY_MS and row.segments == len(mine)
            assert row.bytes == sum(r["size"] for r in mine)
            assert (row.deletableSegments, row.bytesReclaimed, row.newLogStartOffset) == (
                sum(r["deletable"] for r in mine), sum(r["bytesReclaimed"] for r in mine), mine[0]["newLogStartOffset"])
            assert (row.whatIfDeletableSegments, row.whatIfBytesReclaimed) == (
                sum(r["whatIfDeletable"] for r in mine), sum(r["whatIfBytesReclaimed"] for r in mine))
    # the forecast moves: nothing at day 0, everything later; the shorter what-if frees it a day earlier
    everything = sum(p.stat().st_size for t in ("time-rolls-0", "tutorial-segments-0")
                     for p in (samples / "broker" / t).glob("*.log"))
    assert everything == 1652 + 8190
    total = [sum(r.bytesReclaimed for k, r in got.items() if k[2] == d) for d in range(4)]
    what_if = [sum(r.whatIfBytesReclaimed for k, r in got.items() if k[2] == d) for d in range(4)]
    assert total == [0, 0, everything, everything] and what_if == [0, everything, everything, everything]
    assert len(got) == 2 * 4 and all(r.whatIfBytesReclaimed >= r.bytesReclaimed for r in got.values())
    with pytest.raises(ValueError, match="forecast days"):
        retention_forecast(segs, batches, pf, current, at, days=-1)
