"""The compaction preview: the cleaner model on hand-built logs (one Kafka cleaner rule per test; where 3.9 and
4.x differ, both), the DataFrame function on the real-broker corpus, and the `kafkalog compaction-preview`
command.

The fidelity against a live broker is tests/test_compaction_broker.py.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path

import pytest

from kafkalog_spark.analysis.cleaner import (
    AbortedTxn,
    Batch,
    CleanerSettings,
    PartitionInput,
    ProducerEntry,
    Record,
    Segment,
    preview_partition,
    varint_size,
)
from kafkalog_spark.analysis.cleaner.grouping import group_segments as _group_segments
from kafkalog_spark.analysis.cleaner.record_filter import rebuilt_size as _rebuilt_size

NOW = 10_000_000
COMPACT = CleanerSettings(cleanup_policy=frozenset({"compact"}))


def h(key: str) -> str:
    return hashlib.md5(key.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------- builders


def data(*records, pid=-1, epoch=0, txn=False, horizon=None, ts=1_000, magic=2):
    """A data batch of (key, value) records; key None = keyless, value None = tombstone."""
    return {"records": records, "pid": pid, "epoch": epoch, "txn": txn, "control": None, "horizon": horizon,
            "ts": ts, "magic": magic}


def marker(kind, pid, epoch=0, horizon=None, ts=1_000, empty=False):
    return {"records": () if empty else ((b"ctl", b"v"),), "pid": pid, "epoch": epoch, "txn": True,
            "control": kind, "horizon": horizon, "ts": ts, "magic": 2}


def _record_bytes(offset_delta: int, key, value) -> int:
    k = -1 if key is None else len(key)
    v = -1 if value is None else len(value)
    return 1 + varint_size(offset_delta) + varint_size(k) + max(k, 0) + varint_size(v) + max(v, 0) + 1


def build(*segments, settings=COMPACT, mtimes=None, **kwargs) -> PartitionInput:
    """Segments of batch specs, offsets assigned in order; an empty active segment follows the last one
    unless the last spec is None-terminated (pass active=False segments explicitly with kwargs)."""
    segs, batches, offset = [], [], 0
    for i, spec in enumerate(segments):
        base, pos, max_ts = offset, 0, -1
        for b in spec:
            recs = []
            for j, (key, value) in enumerate(b["records"]):
                body = _record_bytes(j, key, value) if b["magic"] >= 2 else None
                legacy = None if b["magic"] >= 2 else 34 + len(key or b"") + len(value or b"")
                recs.append(Record(offset + j, None if key is None or b["control"] else h(key.decode()),
                                   value is not None, b["ts"], body, legacy))
            count = max(len(recs), 1)
            size = 61 + sum(varint_size(r.body_without_timestamp + 1) + r.body_without_timestamp + 1
                            for r in recs if r.body_without_timestamp is not None)
            batches.append(Batch(base, pos, size, offset, offset + count - 1, magic=b["magic"],
                                 is_control=b["control"] is not None, is_transactional=b["txn"],
                                 control_type=b["control"] if recs else None, producer_id=b["pid"],
                                 producer_epoch=b["epoch"], delete_horizon_ms=b["horizon"],
                                 base_timestamp=b["horizon"] if b["horizon"] is not None else b["ts"],
                                 max_timestamp=b["ts"], records=recs))
            pos += size
            offset += count
            max_ts = max(max_ts, b["ts"])
        mtime = (mtimes or {}).get(i, NOW - 1_000)
        segs.append(Segment(base, pos, 0, 12, False, mtime, max_ts))
    segs.append(Segment(offset, 0, 0, 0, True, NOW))
    return PartitionInput("t", 0, segs, batches, settings, **kwargs)


def fates(res) -> dict[int, tuple[bool, str]]:
    return {f.offset: (f.retained, f.reason) for f in res.fates}


# ---------------------------------------------------------------------------------------------- the model


def test_varint_sizes_are_kafkas() -> None:
    assert [varint_size(v) for v in (0, -1, 63, -64, 64, 8191, 8192, -8193, 2**20, -(2**40))] == \
        [1, 1, 1, 1, 2, 2, 3, 3, 4, 6]


def test_settings_come_from_the_one_resolver_of_effective_configs() -> None:
    from kafkalog_spark.analysis.compaction import resolve_settings
    from kafkalog_spark.config import TopicConfigs, effective_config

    s = CleanerSettings.of(effective_config("t", what_if=[
        "cleanup.policy=compact,delete", "min.cleanable.dirty.ratio=0.25", "log.cleaner.dedupe.buffer.size=2400",
        "log.cleaner.threads=2"]))
    assert s.compact and s.cleanup_policy == {"compact", "delete"} and s.min_cleanable_dirty_ratio == 0.25
    assert (s.map_slots, s.map_capacity) == (50, 45)  # 2400 / 2 threads / 24 bytes, at 0.9
    default = CleanerSettings.of(effective_config("orders"))
    assert default == CleanerSettings()  # the dataclass defaults are Kafka 3.9's
    assert not default.compact and default.map_slots == 134217728 // 24 and default.map_capacity == 5033164
    topic = effective_config("orders", what_if=["cleanup.policy=compact", "delete.retention.ms=5",
                                                "log.cleaner.io.buffer.load.factor=0.5"])
    settings = CleanerSettings.of(topic)
    assert settings.compact and settings.delete_retention_ms == 5 and settings.dedupe_load_factor == 0.5
    assert CleanerSettings.of(topic, delete_retention_ms=7).delete_retention_ms == 7
    # every accepted form of configs goes through TopicConfigs: per-topic Kafka names, TopicConfig, a callable
    by_names = resolve_settings({"orders": {"cleanup.policy": "compact"}}, ["orders", "other", "__consumer_offsets"])
    assert by_names["orders"].compact and not by_names["other"].compact
    assert by_names["__consumer_offsets"].compact  # internal topics are compacted
    assert resolve_settings({"orders": topic}, ["orders"])["orders"] == settings
    assert resolve_settings(lambda t: topic, ["x"])["x"] == settings
    assert resolve_settings(TopicConfigs(what_if=["cleanup.policy=compact"]), ["y"])["y"].compact


def test_settings_name_the_kafka_version_and_its_segment_size() -> None:
    from dataclasses import replace

    from kafkalog_spark.analysis.compaction import resolve_settings
    from kafkalog_spark.config import TopicConfig, effective_config
    from kafkalog_spark.kafka_versions import LATEST, KafkaVersion

    topic = effective_config("orders", what_if=["cleanup.policy=compact", "segment.bytes=2000000"])
    assert CleanerSettings.of(topic).kafka_version == LATEST == KafkaVersion.V4
    assert CleanerSettings.of(topic, "3.9.2").kafka_version == KafkaVersion.V3_9
    assert resolve_settings({"orders": topic}, ["orders"], "3.9")["orders"].kafka_version == KafkaVersion.V3_9
    # segments are grouped by LogConfig.segmentSize(): internal.segment.bytes when a (4.x) topic has it
    small = replace(topic, values={**topic.values, "internal.segment.bytes": 700})
    assert CleanerSettings.of(small, KafkaVersion.V4).segment_bytes == 700
    assert CleanerSettings.of(topic, KafkaVersion.V4).segment_bytes == 2000000
    assert isinstance(small, TopicConfig)
    with pytest.raises(ValueError, match="unsupported Kafka version"):
        CleanerSettings.of(topic, "2.8")


def test_a_plain_pass_keeps_the_latest_per_key_and_gives_tombstones_a_horizon() -> None:
    inp = build([data((b"a", b"1"), (b"b", b"1"))], [data((b"a", b"2")), data((b"c", None))])
    res = preview_partition(inp, NOW)
    assert (res.first_dirty_offset, res.first_uncleanable_offset, res.uncleanable_reason) == (0, 4, "activeSegment")
    assert res.dirty_ratio == 1.0 and res.would_clean and res.clean_reason == "dirtyRatio"
    assert res.end_offset == 4 and res.offset_map_entries == 3 and not res.offset_map_full
    assert fates(res) == {0: (False, "superseded"), 1: (True, "latest"), 2: (True, "latest"),
                          3: (True, "tombstoneRetained")}
    tomb = [f for f in res.fates if f.offset == 3][0]
    assert tomb.delete_horizon_ms == res.new_delete_horizon_ms == NOW + 86_400_000
    # both source segments fit one cleaned segment; the batch holding the tombstone is rewritten
    assert [(g.base_offset, g.segments) for g in res.groups] == [(0, 2)]
    assert res.total("delete_horizons_set") == 1 and res.total("records_removed") == 1


def test_tombstones_go_once_their_horizon_has_passed() -> None:
    inp = build([data((b"x", None), horizon=NOW - 1), data((b"y", None), horizon=NOW + 1),
                 data((b"z", b"1"), (b"w", None), horizon=NOW - 5)])
    res = preview_partition(inp, NOW)
    assert fates(res) == {0: (False, "tombstoneExpired"), 1: (True, "tombstoneRetained"), 2: (True, "latest"),
                          3: (False, "tombstoneExpired")}
    kept = {f.offset: f.delete_horizon_ms for f in res.fates if f.retained}
    assert kept == {1: NOW + 1, 2: NOW - 5}  # existing horizons are kept, none is set
    assert res.new_delete_horizon_ms is None
    assert (res.total("batches_removed"), res.total("tombstones_removed")) == (1, 2)


def test_legacy_tombstones_follow_the_last_clean_segments_mtime() -> None:
    legacy = dict(magic=1)
    # segment 0 is clean (below the checkpoint); its mtime minus delete.retention.ms is the legacy horizon
    inp = build([data((b"a", b"1"), **legacy)], [data((b"old", None), **legacy)], [data((b"new", None), **legacy)],
                mtimes={0: NOW - 10, 1: NOW - 86_400_000 - 20, 2: NOW}, cleaner_checkpoint=1)
    res = preview_partition(inp, NOW)
    assert res.legacy_delete_horizon_ms == NOW - 10 - 86_400_000
    assert fates(res) == {0: (True, "latest"), 1: (False, "tombstoneExpired"), 2: (True, "tombstoneRetained")}
    assert res.new_delete_horizon_ms is None  # v0/v1 batches have no delete horizon


def test_keyless_records_are_dropped() -> None:
    res = preview_partition(build([data((None, b"1"), (b"k", b"1"))]), NOW)
    assert fates(res) == {0: (False, "keyless"), 1: (True, "latest")} and res.total("keyless_removed") == 1


def test_checkpoint_out_of_range_resets_to_the_log_start() -> None:
    spec = ([data((b"a", b"1"))], [data((b"a", b"2"))])
    assert preview_partition(build(*spec, cleaner_checkpoint=1), NOW).first_dirty_offset == 1
    beyond = preview_partition(build(*spec, cleaner_checkpoint=99), NOW)
    assert (beyond.first_dirty_offset, beyond.first_dirty_reset) == (0, True)
    below = preview_partition(build(*spec, cleaner_checkpoint=0, log_start_checkpoint=1), NOW)
    assert (below.log_start_offset, below.first_dirty_offset, below.first_dirty_reset) == (1, 1, True)


def test_a_checkpoint_inside_a_segment_counts_it_as_clean_and_cleanable() -> None:
    inp = build([data((b"a", b"1")), data((b"b", b"1"))], [data((b"a", b"2"))], cleaner_checkpoint=1)
    res = preview_partition(inp, NOW)
    seg0 = inp.segments[0].log_size
    assert res.clean_bytes == seg0 and res.cleanable_bytes == seg0 + inp.segments[1].log_size
    assert res.first_uncleanable_offset == 3 and res.end_offset == 3
    assert fates(res)[0] == (False, "superseded")  # the clean section is rewritten too


def test_min_compaction_lag_holds_recent_segments_back() -> None:
    lag = CleanerSettings(cleanup_policy=frozenset({"compact"}), min_compaction_lag_ms=1_000)
    inp = build([data((b"a", b"1"), ts=NOW - 5_000)], [data((b"a", b"2"), ts=NOW - 500)],
                [data((b"a", b"3"), ts=NOW - 6_000)], settings=lag)
    res = preview_partition(inp, NOW)
    assert (res.uncleanable_offset, res.uncleanable_reason, res.first_uncleanable_offset) == (1, "minCompactionLag", 1)
    assert res.end_offset == 1 and fates(res) == {0: (True, "latest"), 1: (True, "notInPass"), 2: (True, "notInPass")}


def test_max_compaction_lag_forces_a_clean_below_the_ratio() -> None:
    hold = dict(cleanup_policy=frozenset({"compact"}), min_cleanable_dirty_ratio=1.0)
    spec = ([data((b"a", b"1"), ts=NOW - 5_000)], [data((b"a", b"2"), ts=NOW - 4_000)])
    held = preview_partition(build(*spec, settings=CleanerSettings(**hold)), NOW)
    assert not held.would_clean and held.clean_reason == "belowMinCleanableDirtyRatio" and not held.pass_simulated
    assert fates(held) == {0: (True, "noPass"), 1: (True, "noPass")}
    forced = preview_partition(build(*spec, settings=CleanerSettings(**hold, max_compaction_lag_ms=4_500)), NOW)
    assert forced.would_clean and forced.clean_reason == "maxCompactionLag" and forced.max_compaction_delay_ms == 500
    what_if = preview_partition(build(*spec, settings=CleanerSettings(**hold)), NOW, simulate_all=True)
    assert what_if.pass_simulated and not what_if.would_clean and fates(what_if)[0] == (False, "superseded")


def test_the_cleaner_switch_and_policy() -> None:
    spec = ([data((b"a", b"1"))], [data((b"a", b"2"))])
    off = preview_partition(build(*spec, settings=CleanerSettings(cleanup_policy=frozenset({"compact"}),
                                                                  cleaner_enabled=False)), NOW)
    assert not off.would_clean and off.clean_reason == "cleanerDisabled"
    delete = preview_partition(build(*spec, settings=CleanerSettings()), NOW)
    assert not delete.would_clean and delete.clean_reason == "notCompacted"


def test_last_stable_offset_from_snapshot_replay_and_high_watermark() -> None:
    spec = ([data((b"a", b"1"))], [data((b"a", b"2")), data((b"b", b"1"), pid=7, txn=True)], [data((b"c", b"1"))])
    # an open transaction in the newest producer snapshot: its first offset bounds the clean, rounded down
    snap = {3: [ProducerEntry(7, 0, 2, NOW, current_txn_first_offset=2)]}
    res = preview_partition(build(*spec, snapshots=snap), NOW)
    assert (res.last_stable_offset, res.uncleanable_reason, res.first_uncleanable_offset) == (2, "lastStableOffset", 1)
    assert res.open_transactions == 1
    # no snapshot: the log is replayed from its start and finds the transaction without a marker
    res = preview_partition(build(*spec), NOW)
    assert res.last_stable_offset == 2 and res.first_uncleanable_offset == 1
    # the high watermark checkpoint bounds it too
    res = preview_partition(build([data((b"a", b"1"))], [data((b"a", b"2"))], [data((b"a", b"3"))],
                                  high_watermark_checkpoint=1), NOW)
    assert (res.high_watermark, res.high_watermark_source, res.first_uncleanable_offset) == (1, "checkpoint", 1)


def test_aborted_batches_go_and_markers_wait_for_their_transactions() -> None:
    seg = [data((b"a", b"1"), (b"b", b"1"), pid=5, txn=True), marker("ABORT", 5),
           data((b"a", b"2"), pid=5, txn=True), marker("COMMIT", 5), data((b"a", b"3"))]
    # an empty producer snapshot at the log end: no producer state keeps any batch
    res = preview_partition(build(seg, aborted_txns=[AbortedTxn(5, 0, 2)], snapshots={6: []}), NOW)
    assert fates(res) == {0: (False, "aborted"), 1: (False, "aborted"), 2: (True, "markerRetained"),
                          3: (False, "superseded"), 4: (True, "markerRetained"), 5: (True, "latest")}
    assert res.total("aborted_removed") == 2 and res.total("markers_kept") == 2
    assert res.new_delete_horizon_ms is None  # markers whose batches were seen get no horizon yet

    # next pass: the markers stand alone, so they become removable and get a horizon first...
    alone = [marker("ABORT", 5), marker("COMMIT", 5), data((b"a", b"3"))]
    res = preview_partition(build(alone, aborted_txns=[AbortedTxn(5, -5, 0)], snapshots={3: []}), NOW)
    assert fates(res) == {0: (True, "markerRetained"), 1: (True, "markerRetained"), 2: (True, "latest")}
    assert {f.delete_horizon_ms for f in res.fates if f.is_control} == {NOW + 86_400_000}
    # ...and go once it has passed
    gone = [marker("ABORT", 5, horizon=NOW - 1), marker("COMMIT", 5, horizon=NOW - 1), data((b"a", b"3"))]
    res = preview_partition(build(gone, snapshots={3: []}), NOW)
    assert fates(res) == {0: (False, "markerRemoved"), 1: (False, "markerRemoved"), 2: (True, "latest")}
    assert res.total("batches_removed") == 2


def test_an_active_producers_last_batch_is_kept_empty() -> None:
    seg = [data((b"a", b"1"), pid=3), data((b"a", b"2"))]
    live = {2: [ProducerEntry(3, 0, last_data_offset=0, last_timestamp=NOW - 1_000)]}
    inp = build(seg, snapshots=live)
    res = preview_partition(inp, NOW)
    assert fates(res)[0] == (False, "superseded")
    assert res.total("empty_batches_retained") == 1 and res.total("batches_removed") == 0
    assert res.segments[0].bytes_after == 61 + inp.batches[1].size  # a header-only batch, and the other one
    # expired (producer.id.expiration.ms after its last timestamp): nothing keeps the batch
    expired = {2: [ProducerEntry(3, 0, last_data_offset=0, last_timestamp=NOW - 86_400_000)]}
    res = preview_partition(build(seg, snapshots=expired), NOW)
    assert res.total("empty_batches_retained") == 0 and res.total("batches_removed") == 1


def _with_active(inp: PartitionInput) -> PartitionInput:
    """``build``'s input with its last spec as the active segment (instead of an empty one after it)."""
    inp.segments = inp.segments[:-1]
    inp.segments[-1].is_active = True
    return inp


def test_the_rounds_last_batch_emptied_per_kafka_version() -> None:
    """KAFKA-17076: an emptied batch ending at the round's upper bound is kept header-only; 3.9.2 bounds the
    round at the first uncleanable offset, 4.x at the high watermark (KAFKA-20452)."""
    from dataclasses import replace

    from kafkalog_spark.kafka_versions import KafkaVersion

    def run(version, *segments, **kwargs):
        inp = build(*segments, **kwargs)
        inp.settings = replace(inp.settings, kafka_version=version)
        return inp

    spec = ([data((b"a", b"1"))], [data((None, b"x"))], [data((b"b", b"1"))])
    v39 = preview_partition(_with_active(run(KafkaVersion.V3_9, *spec)), NOW)
    v4 = preview_partition(_with_active(run(KafkaVersion.V4, *spec)), NOW)
    for res in (v39, v4):  # the keyless batch [1] is the last below the first uncleanable offset 2
        assert (res.first_uncleanable_offset, res.high_watermark) == (2, 3)
        assert fates(res)[1] == (False, "keyless")
    assert v39.total("empty_batches_retained") == 1 and v39.total("batches_removed") == 0
    assert v39.segments[1].bytes_after == 61
    assert v4.total("empty_batches_retained") == 0 and v4.total("batches_removed") == 1
    assert v4.segments[1].bytes_after == 0
    assert (v39.kafka_version, v4.kafka_version) == ("3.9", "4.x")
    # the high watermark at the first uncleanable offset (an empty active segment, or a lagging high
    # watermark): both keep it
    for version in KafkaVersion:
        empty_active = preview_partition(run(version, *spec[:2]), NOW)
        assert empty_active.high_watermark == empty_active.first_uncleanable_offset == 2
        assert empty_active.total("empty_batches_retained") == 1
        lagging = preview_partition(_with_active(run(version, *spec, high_watermark_checkpoint=2)), NOW)
        assert lagging.total("empty_batches_retained") == 1
    # a batch not at the bound is dropped by both
    inner = ([data((b"a", b"1"))], [data((None, b"x")), data((b"c", b"1"))], [data((b"b", b"1"))])
    for version in KafkaVersion:
        res = preview_partition(_with_active(run(version, *inner)), NOW)
        assert res.total("empty_batches_retained") == 0 and res.total("batches_removed") == 1


def test_a_full_offset_map_ends_the_pass_early() -> None:
    tiny = CleanerSettings(cleanup_policy=frozenset({"compact"}), dedupe_buffer_size=24 * 4)  # 4 slots, 3 entries
    inp = build([data((b"a", b"1"), (b"b", b"1")), data((b"c", b"1"), (b"a", b"2"))], [data((b"d", b"1"))],
                settings=tiny)
    res = preview_partition(inp, NOW)
    # a, b, c fill it; the next keyed record (a again) does not fit: the pass ends after offset 2
    assert res.offset_map_capacity == 3 and res.offset_map_full and res.offset_map_full_at_offset == 3
    assert res.end_offset == 3 and res.offset_map_entries == 3 and res.dirty_distinct_keys == 4
    assert fates(res) == {0: (True, "latest"), 1: (True, "latest"), 2: (True, "latest"),
                          3: (True, "beyondOffsetMap"), 4: (True, "notInPass")}
    assert [s.in_pass for s in res.segments] == [True, False, False]


def test_group_segments_by_size() -> None:
    segs = [Segment(0, 400, 80, 120), Segment(10, 400, 80, 120), Segment(20, 400, 80, 120), Segment(30, 100, 0, 0)]
    assert [[s.base_offset for s in g] for g in _group_segments(segs, 1000, 10_000, 40)] == [[0, 10], [20, 30]]
    # the time index (12-byte entries) is limited like the offset index
    assert [[s.base_offset for s in g] for g in _group_segments(segs, 10_000, 250, 40)] == [[0, 10], [20, 30]]
    # an index file's size counts whole entries only
    odd = [Segment(0, 10, 7, 0), Segment(10, 10, 7, 0)]
    assert [[s.base_offset for s in g] for g in _group_segments(odd, 10_000, 1, 20)] == [[0, 10]]
    # the offsets of a group must fit an int relative to its first base
    far = [Segment(0, 10), Segment(2**31 - 5, 10), Segment(2**31 + 10, 10)]
    assert [[s.base_offset for s in g] for g in _group_segments(far, 10_000, 10_000, 2**31 + 20)] == \
        [[0], [2**31 - 5, 2**31 + 10]]


def test_rebuilt_batch_sizes() -> None:
    recs = [Record(100 + i, h(str(i)), True, 5_000 + i, body_without_timestamp=10) for i in range(3)]
    batch = Batch(0, 0, 0, 100, 102, records=recs)
    # kept records keep their offset deltas; timestamps are re-based on the first kept record
    assert _rebuilt_size(batch, recs[1:], None) == 61 + 2 * (1 + 11)
    # with a delete horizon the base timestamp is the horizon: -86,399,999 ms needs 4 bytes
    assert _rebuilt_size(batch, recs[:1], 5_000 + 86_400_000 - 1) == 61 + 1 + 14
    legacy = Batch(0, 0, 200, 100, 101, magic=1, compressed=True,
                   records=[Record(100, "x", True, legacy_size=100), Record(101, "y", True, legacy_size=300)])
    assert _rebuilt_size(legacy, legacy.records[1:], None) == 150  # a share of the compressed wrapper


# ---------------------------------------------------------------------------------------------- on the corpus

TOPIC_CONFIGS = {  # the corpus' topic configs (data/samples/README.md), compaction turned on for a few others
    "compacted-dirty": {"cleanup.policy": "compact", "segment.bytes": "2048", "min.cleanable.dirty.ratio": "0.99",
                        "min.compaction.lag.ms": "3600000"},
    "compacted-cleaned": {"cleanup.policy": "compact", "segment.bytes": "2048", "min.cleanable.dirty.ratio": "0.01",
                          "delete.retention.ms": "5000"},
    "txn-mixed": {"cleanup.policy": "compact", "segment.bytes": "1024"},
    "legacy-v1": {"cleanup.policy": "compact"},
    "tutorial-segments": {"segment.bytes": "1000"},
}
LATER = 1795254434212 + 2 * 3_600_000  # two hours after the corpus was written: past the minimum lag


GOLDEN_RECORD = re.compile(rb"^\| offset: (\d+) (?:CreateTime|LogAppendTime|NoTimestampType): (-?\d+) "
                           rb"keySize: (-?\d+) valueSize: (-?\d+) (.*)$")
GOLDEN_BATCH = re.compile(rb"^(?:baseOffset: (\d+) .* size: (\d+) magic: 2 |offset: \d+ position: \d+ .* size: (\d+) )")


def golden_batches(samples: Path, log_dir: str, partition: str) -> dict[int, list[dict]]:
    """Segment base offset -> its batches as kafka-dump-log printed them (--deep-iteration --print-data-log):
    base offset (None for v0/v1), size, and the records: offset, timestamp, key and value sizes, key text (None
    when null), control or not."""
    out = {}
    for g in sorted((samples / "golden" / log_dir / partition).glob("*.log.deep.txt")):
        batches: list[dict] = []
        for line in g.read_bytes().split(b"\n"):  # payloads may hold \r: split on \n only
            if m := GOLDEN_BATCH.match(line):
                batches.append({"base": int(m[1]) if m[1] else None, "size": int(m[2] or m[3]), "records": []})
            elif m := GOLDEN_RECORD.match(line):
                key = re.search(rb"(?:^| )key: (.*?)(?: payload: |$)", m[5])
                batches[-1]["records"].append({
                    "offset": int(m[1]), "ts": int(m[2]), "keySize": int(m[3]), "valueSize": int(m[4]),
                    "key": key[1] if key and int(m[3]) >= 0 else None,
                    "control": b"endTxnMarker: " in m[5] or b"controlType: " in m[5]})
        out[int(g.name[:20])] = batches
    return out


def _varint_bytes(value: int) -> int:
    """The length of Kafka's zig-zag varint (ByteUtils.sizeOfVarlong), computed here from its definition."""
    zigzag, size = (value << 1) ^ (value >> 63), 1
    while zigzag >= 0x80:
        zigzag, size = zigzag >> 7, size + 1
    return size


def _config(topic: str, what_if=()):
    from kafkalog_spark.config import effective_config

    # the corpus was written by 3.9.2: its configs (segment.bytes below 4.x's minimum) and cleaner are 3.9's
    return effective_config(topic, overrides=TOPIC_CONFIGS, what_if=list(what_if), kafka_version="3.9")


@pytest.fixture(scope="module")
def corpus(spark, samples: Path):
    from kafkalog_spark.analysis.compaction import preview_log_dirs, read_compaction_views

    preview = preview_log_dirs(spark, [str(samples / "broker"), str(samples / "legacy")], _config, LATER)
    parts = {r.topic: r for r in preview.partitions.collect()}
    segments = [r.asDict() for r in preview.segments.collect()]
    records = [r.asDict() for r in preview.records.collect()]
    from pyspark.sql import functions as F

    views = read_compaction_views(spark, [str(samples / "broker"), str(samples / "legacy")])
    raw = [r.asDict() for r in views["records"].where("problem is null").select(
        "topic", "offset", F.md5("key").alias("keyHash"), "isControl").collect()]
    yield {"preview": preview, "parts": parts, "segments": segments, "records": records, "raw": raw,
           "samples": samples}
    preview.unpersist()


def test_corpus_compacted_dirty_would_be_cleaned(corpus) -> None:
    p = corpus["parts"]["compacted-dirty"]
    assert (p.firstDirtyOffset, p.firstUncleanableOffset, p.uncleanableReason, p.endOffset) == \
        (0, 287, "activeSegment", 287)
    assert p.dirtyRatio == 1.0 and p.wouldClean and p.cleanReason == "dirtyRatio" and p.minCleanableDirtyRatio == 0.99
    assert p.highWatermarkSource == "checkpoint" and p.highWatermark == p.logEndOffset == 300
    assert (p.recordsInPass, p.recordsRemoved, p.tombstonesKept) == (287, 267, 1)
    # each ~2 KB segment fills segment.bytes=2048 alone: five cleaned segments, one per source segment
    assert p.segmentsInPass == 5 and [g["baseOffset"] for g in p.cleanedGroups] == [0, 63, 119, 175, 231]
    # per key, exactly the last record below the end offset survives (keys as dump-log printed them)
    segments = golden_batches(corpus["samples"], "broker", "compacted-dirty-0")
    assert sorted(segments) == [0, 63, 119, 175, 231, 287]
    in_pass = [b for base, batches in segments.items() if base < 287 for b in batches]
    last = {r["key"]: r["offset"] for b in in_pass for r in b["records"]}
    assert len(last) == 20  # data/samples/README.md: 20 keys
    fates = [r for r in corpus["records"] if r["topic"] == "compacted-dirty"]
    assert {r["offset"] for r in fates if r["retained"] and r["offset"] < 287} == set(last.values())
    # the bytes, by Kafka's MemoryRecords.filterTo: a batch keeping all its records (and no tombstone needing a
    # delete horizon) is copied; an emptied one goes (none is a producer's last or the round's last batch); any
    # other is rebuilt: a 61-byte header, then each kept record with its offset delta, its timestamp delta from
    # the first kept record (from the new delete horizon, now + delete.retention.ms, when it keeps a tombstone)
    horizon = LATER + 86_400_000
    after = 0
    for b in in_pass:
        kept = [r for r in b["records"] if last[r["key"]] == r["offset"]]
        tombstones = any(r["valueSize"] < 0 for r in kept)
        if len(kept) == len(b["records"]) and not tombstones:
            after += b["size"]
        elif kept:
            base_ts = horizon if tombstones else kept[0]["ts"]
            after += 61
            for r in kept:
                body = (1 + _varint_bytes(r["ts"] - base_ts) + _varint_bytes(r["offset"] - b["base"])
                        + _varint_bytes(r["keySize"]) + r["keySize"] + _varint_bytes(r["valueSize"])
                        + max(r["valueSize"], 0) + _varint_bytes(0))
                after += _varint_bytes(body) + body
    on_disk = sum((corpus["samples"] / "broker" / "compacted-dirty-0" / f"{base:020d}.log").stat().st_size
                  for base in (0, 63, 119, 175, 231))
    assert (p.bytesInPass, p.bytesAfterPass, p.bytesRemoved) == (on_disk, after, on_disk - after)


def test_corpus_cleaned_and_idle_logs(corpus) -> None:
    parts = corpus["parts"]
    cleaned = parts["compacted-cleaned"]  # its checkpoint is the active segment's base: nothing dirty
    assert (cleaned.checkpointDirtyOffset, cleaned.firstDirtyOffset, cleaned.cleanableBytes) == (455, 455, 0)
    assert cleaned.cleanBytes == 517 + 197 + 86 + 581 and cleaned.dirtyRatio == 0.0
    assert not cleaned.wouldClean and cleaned.cleanReason == "nothingCleanable" and cleaned.cleanOrder is None
    # the internal topics are compacted by Kafka's own configs; only an active segment: nothing to clean
    assert parts["__consumer_offsets"].cleanReason == "nothingCleanable"
    assert "tutorial-segments" not in parts  # cleanup.policy=delete
    # the compacted topics: TOPIC_CONFIGS' and Kafka's compacted internal topics (not the KRaft metadata log)
    assert set(parts) == {"compacted-dirty", "compacted-cleaned", "txn-mixed", "legacy-v1", "__consumer_offsets",
                          "__transaction_state"}


def test_corpus_transactions_and_legacy(corpus) -> None:
    txn = corpus["parts"]["txn-mixed"]  # 8 transactions of 5 records, 3 aborted
    assert txn.abortedRemoved == 15 and txn.markersKept == 7 and txn.markersRemoved == 0
    assert txn.lastStableOffset == 78 and txn.openTransactions == 0 and txn.activeProducers == 2
    legacy = corpus["parts"]["legacy-v1"]
    assert legacy.keylessRemoved == 7 and legacy.highWatermarkSource == "logEndOffset"
    assert legacy.tombstonesKept == 1 and legacy.newDeleteHorizonMs is None  # v1: no delete horizon to set


def test_corpus_outputs_are_consistent_and_carry_no_payload(corpus) -> None:
    preview = corpus["preview"]
    for df in (preview.partitions, preview.segments, preview.records):
        assert "key" not in df.columns and "value" not in df.columns
        assert not any(f.dataType.typeName() == "binary" for f in df.schema.fields)
    # one fate per record dump-log printed; the key hash is the MD5 of the key (none for keyless and control ones)
    golden = {}
    for log_dir in ("broker", "legacy"):
        for topic in corpus["parts"]:
            for batches in golden_batches(corpus["samples"], log_dir, f"{topic}-0").values():
                golden.update({(topic, r["offset"]): r for b in batches for r in b["records"]})
    hashes = {(r["topic"], r["offset"]): r["keyHash"] for r in corpus["records"]}
    assert len(golden) == 300 + 64 + 78 + 29 + 15 + 25  # data/samples/README.md, the six compacted partitions
    assert hashes.keys() == golden.keys()
    for k, r in golden.items():
        if r["key"] is None or r["control"]:
            assert hashes[k] is None, k
        elif k[0].startswith("__"):  # binary keys, which dump-log prints as UTF-8 text
            assert re.fullmatch("[0-9a-f]{32}", hashes[k]), k
        else:
            assert hashes[k] == hashlib.md5(r["key"]).hexdigest(), k
    # one fate per record read, with the key hash the records view gives
    raw = {(r["topic"], r["offset"]): r for r in corpus["raw"] if r["topic"] in corpus["parts"]}
    got = {(r["topic"], r["offset"]): r for r in corpus["records"]}
    assert got.keys() == raw.keys()
    assert all(got[k]["keyHash"] == (None if raw[k]["isControl"] else raw[k]["keyHash"]) for k in got)
    # partition totals are the sums over their segments in the pass
    for topic, p in corpus["parts"].items():
        segs = [s for s in corpus["segments"] if s["topic"] == topic]
        in_pass = [s for s in segs if s["inPass"]]
        assert p.recordsRemoved == sum(s["recordsRemoved"] for s in in_pass)
        assert p.bytesRemoved == sum(s["bytesRemoved"] for s in in_pass)
        assert p.segmentsAfterPass == len(p.cleanedGroups) + len(segs) - len(in_pass)
        removed = sum(1 for r in corpus["records"] if r["topic"] == topic and not r["retained"])
        assert removed == p.recordsRemoved
    # the cleaner's order: highest dirty ratio first, among the logs it would clean in each log dir: those with
    # dirty segments below their active one and no cleaner checkpoint past them (compacted-cleaned has one)
    would_clean = {(Path(p.logDir).name, t) for t, p in corpus["parts"].items() if p.wouldClean}
    assert would_clean == {("broker", "compacted-dirty"), ("broker", "txn-mixed"), ("legacy", "legacy-v1")}
    for log_dir in {p.logDir for p in corpus["parts"].values()}:
        ordered = sorted((p for p in corpus["parts"].values() if p.wouldClean and p.logDir == log_dir),
                         key=lambda p: p.cleanOrder)
        assert [p.cleanOrder for p in ordered] == list(range(1, len(ordered) + 1))
        assert all(a.dirtyRatio >= b.dirtyRatio for a, b in zip(ordered, ordered[1:], strict=False))
    partitions, segments, records = preview  # unpacks
    assert records is preview.records


def test_corpus_min_lag_and_what_if(spark, samples: Path) -> None:
    from kafkalog_spark.analysis.compaction import preview_log_dirs

    at_write = 1795254434212 + 60_000  # a minute after the writes: the 1 h lag holds every segment back
    p = preview_log_dirs(spark, [str(samples / "broker")], _config, at_write, topics=["compacted-dirty"],
                         include_records=False).partitions.collect()[0]
    assert (p.uncleanableReason, p.firstUncleanableOffset, p.wouldClean, p.cleanReason) == \
        ("minCompactionLag", 0, False, "nothingCleanable")
    # a what-if threshold of 1 keeps the cleaner away; simulate_all still shows what a pass would do
    preview = preview_log_dirs(spark, [str(samples / "broker")],
                               lambda t: _config(t, ["min.cleanable.dirty.ratio=1"]), LATER,
                               topics=["compacted-dirty"], simulate_all=True)
    p = preview.partitions.collect()[0]
    assert not p.wouldClean and p.cleanReason == "belowMinCleanableDirtyRatio" and p.passSimulated
    assert p.recordsRemoved == 267 and p.cleanOrder is None
    assert preview.records.where("reason = 'noPass'").count() == 0


def test_the_same_partition_in_two_log_dirs_is_previewed_in_each(spark, samples: Path) -> None:
    """live-copy-0 is in both log dirs (a copy taken from the running broker, and the broker's own after its
    shutdown): read together, each copy is previewed as when its log dir is read alone."""
    from kafkalog_spark.analysis.compaction import preview_log_dirs

    dirs = [str(samples / "broker"), str(samples / "live-copy")]
    config = lambda t: _config(t, ["cleanup.policy=compact"])  # noqa: E731
    both = preview_log_dirs(spark, dirs, config, LATER, topics=["live-copy"])
    rows = {r.logDir: r.asDict(recursive=True) for r in both.partitions.collect()}
    assert sorted(rows) == dirs
    for log_dir in dirs:
        alone = preview_log_dirs(spark, [log_dir], config, LATER, topics=["live-copy"]).partitions.collect()
        assert [r.asDict(recursive=True) for r in alone] == [rows[log_dir]]
    # the copies differ: the one taken from the running broker has problem rows, its active segment's preallocated
    # indexes (data/samples/README.md, and dump-log's goldens): the zeros after the .index's and the .timeindex's
    # entries, and the .timeindex's last slot (timestamp 0) below its first, which Kafka's sanity check rejects
    assert (rows[dirs[0]]["problems"], rows[dirs[1]]["problems"]) == (0, 3)


def test_no_compacted_topic_gives_empty_outputs(spark, samples: Path) -> None:
    from kafkalog_spark.analysis.compaction import PARTITIONS, preview_log_dirs

    preview = preview_log_dirs(spark, [str(samples / "broker")], None, LATER, topics=["tutorial-segments"])
    assert preview.partitions.count() == 0 and preview.partitions.schema == PARTITIONS


# ---------------------------------------------------------------------------------------------- the command


def _parser() -> argparse.ArgumentParser:
    from kafkalog_spark.commands import compaction_preview

    parser = argparse.ArgumentParser(prog="kafkalog")
    compaction_preview.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser


def test_parse_now() -> None:
    from kafkalog_spark.commands.output import parse_time

    def parse_now(text: str) -> int:
        return parse_time(text, "--now")

    assert parse_now("1795254434212") == 1795254434212
    assert parse_now("2026-11-21T00:00:00Z") == parse_now("2026-11-21T00:00:00") == parse_now(
        "2026-11-21T01:00:00+01:00") == 1795219200000
    with pytest.raises(ValueError, match="--now"):
        parse_now("yesterday")


def test_command_prints_one_json_object_per_partition(samples: Path, tmp_path: Path, capsys) -> None:
    topics = tmp_path / "topics.ini"
    topics.write_text("[compacted-dirty]\ncleanup.policy = compact\nmin.compaction.lag.ms = 3600000\n"
                      "[txn-mixed]\ncleanup.policy = compact\n")
    broker = tmp_path / "server.properties"
    broker.write_text("log.cleaner.min.cleanable.ratio=0.3\nproducer.id.expiration.ms=1000\n")
    argv = ["compaction-preview", str(samples / "broker"), "--broker-config", str(broker), "--topic-config",
            str(topics), "--now", "2026-11-21T11:47:14Z", "--set", "delete.retention.ms=1000", "--topic",
            "compacted-dirty", "--topic", "txn-mixed", "--segments", "--json"]
    # by default the topic's own configs in the metadata log apply over server.properties: compacted-dirty was
    # created with min.cleanable.dirty.ratio=0.99 (data/samples/README.md)
    args = _parser().parse_args(argv)
    assert args.func(args) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["topic"]: r["minCleanableDirtyRatio"] for r in rows if "kind" not in r}["compacted-dirty"] == 0.99
    # without them, server.properties' ratio reaches it
    args = _parser().parse_args([*argv, "--no-metadata-configs"])
    assert args.func(args) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    parts = {r["topic"]: r for r in rows if "kind" not in r}
    assert set(parts) == {"compacted-dirty", "txn-mixed"}
    for r in parts.values():
        assert {"topic", "partition", "firstDirtyOffset", "firstUncleanableOffset", "dirtyRatio", "wouldClean",
                "recordsRemoved", "bytesRemoved"} <= r.keys()
    dirty = parts["compacted-dirty"]
    assert dirty["wouldClean"] and dirty["minCleanableDirtyRatio"] == 0.3 and dirty["deleteRetentionMs"] == 1000
    assert dirty["recordsRemoved"] == 267 and dirty["firstUncleanableOffset"] == 287
    # producer.id.expiration.ms from server.properties: every producer has expired by then
    assert parts["txn-mixed"]["activeProducers"] == 0
    assert sum(1 for r in rows if r.get("kind") == "segment") == 6 + 5


def test_command_table_and_usage_errors(samples: Path, capsys) -> None:
    parser = _parser()
    args = parser.parse_args(["compaction-preview", str(samples / "broker"), "--topic", "compacted-dirty",
                              "--set", "cleanup.policy=compact", "--now", "1795261634212"])
    assert args.func(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["topic", "partition", "cleanOrder", "wouldClean"]
    assert out[1].split()[:4] == ["compacted-dirty", "0", "1", "true"]  # booleans print as Kafka prints them
    args = parser.parse_args(["compaction-preview", str(samples / "broker"), "--set", "min.cleanable.dirty.ratio=x"])
    assert args.func(args) == 2
    assert "min.cleanable.dirty.ratio=x" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["compaction-preview"])
    assert exit_.value.code == 2  # argparse's usage error
