"""index_findings on the real-broker corpus (clean: no errors, only explained warnings and infos) and on
damaged copies (tests/helpers/damaged.py), one damage per partition dir of one temporary log dir (analysed once)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kafkalog_spark.analysis.index_validation import INDEX_FINDINGS, index_findings, log_dirs_of, read_validation_views
from kafkalog_spark.log.index_entry_checks import SegmentBatches, offset_entry_findings, time_entry_findings
from tests.helpers.damaged import damaged_log_dirs, seg


def analyse(spark, *paths: Path) -> list:
    names = [str(p) for p in paths]
    views = {k: v.cache() for k, v in read_validation_views(spark, names).items()}
    try:
        df = index_findings(spark, views, log_dirs_of(names))
        assert [(f.name, f.dataType) for f in df.schema] == [(f.name, f.dataType) for f in INDEX_FINDINGS]
        return df.collect()
    finally:
        for v in views.values():
            v.unpersist()


def pick(rows: list, **where) -> list:
    return [r for r in rows if all(getattr(r, k) == v for k, v in where.items())]


@pytest.fixture(scope="module")
def clean(spark, samples: Path) -> list:
    return analyse(spark, samples / "broker", samples / "legacy")


@pytest.fixture(scope="module")
def live_copy(analysed, samples: Path) -> list:
    return [r for r in analysed[2] if r.file.startswith(str(samples / "live-copy"))]


@pytest.fixture(scope="module")
def damaged(analysed, samples: Path) -> tuple[Path, dict, list]:
    root, facts, rows = analysed
    return root, facts, [r for r in rows if not r.file.startswith(str(samples / "live-copy"))]


def test_clean_corpus_has_no_errors(clean: list, live_copy: list) -> None:
    assert [r for r in clean + live_copy if r.severity == "error"] == []
    assert {r.severity for r in clean + live_copy} == {"warning", "info"}


def test_broker_findings_are_the_compaction_leftovers(clean: list, samples: Path) -> None:
    part = samples / "broker" / "compacted-cleaned-0"
    broker = [r for r in clean if r.file.startswith(str(samples / "broker"))]
    # The cleaner's replaced segments, pending deletion for 60 s at shutdown (see the corpus README).
    stray = pick(broker, check="stray_temp_file")
    assert {(r.file, r.severity, r.position) for r in stray} == {
        (str(p), "warning", -1) for p in part.glob("*.log.deleted")}
    assert len(stray) == 8
    # Compaction: the cleaned segments start above their names and leave offset gaps before the next one.
    above = pick(broker, check="segment_first_offset_above_name")
    assert {(r.baseOffset, r.severity, r.found) for r in above} == {
        (0, "info", "first offset 175"), (343, "info", "first offset 378")}
    gaps = pick(broker, check="segment_offset_gap")
    assert {(r.baseOffset, r.severity, r.file, r.position, r.found) for r in gaps} == {
        (b, "info", seg(part, b), (part / f"{b:020d}.log").stat().st_size, f"next segment at offset {n}")
        for b, n in ((0, 287), (287, 343), (343, 399))}
    assert all("cleaner-offset checkpoint lists this partition" in r.detail for r in gaps)
    assert {r.topic for r in broker} == {"compacted-cleaned"}
    assert len(broker) == len(stray) + len(above) + len(gaps) == 8 + 2 + 3  # nothing else
    # Kafka 3.9.2 indexes every batch: no multi-batch appends, as --verify-index-only found no mismatch.
    assert pick(clean, check="index_multi_batch_append") == []


def test_legacy_log_dir_is_clean(clean: list, samples: Path) -> None:
    assert [r for r in clean if r.file.startswith(str(samples / "legacy"))] == []


def test_live_copy_active_zero_tails_are_info(live_copy: list, samples: Path) -> None:
    part = samples / "live-copy" / "live-copy-0"
    got = {(r.check, r.severity, r.file, r.position, r.baseOffset)
           for r in live_copy if r.check != "checkpoint_missing_partition"}
    assert got == {
        ("index_zero_tail", "info", seg(part, 72, ".index"), 16, 72),
        ("timeindex_zero_tail", "info", seg(part, 72, ".timeindex"), 24, 72),
        # dump-log --index-sanity-check throws on it: the last raw slot's timestamp 0 is below the first.
        ("timeindex_last_timestamp_before_first", "info", seg(part, 72, ".timeindex"), 10485756 - 12, 72),
    }


def test_live_copy_checkpoints_name_the_partitions_not_copied(live_copy: list, samples: Path) -> None:
    root = samples / "live-copy"
    expected = set()
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint", "cleaner-offset-checkpoint",
                 "log-start-offset-checkpoint"):
        data = (root / name).read_bytes()
        pos = 0
        for i, line in enumerate(data.split(b"\n")):
            parts = line.decode().split()
            if i >= 2 and len(parts) == 3 and (parts[0], parts[1]) != ("live-copy", "0"):
                expected.add((parts[0], int(parts[1]), str(root / name), pos))
            pos += len(line) + 1
    got = pick(live_copy, check="checkpoint_missing_partition")
    assert {(r.topic, r.partition, r.file, r.position) for r in got} == expected
    assert len(got) == 39 and {r.severity for r in got} == {"warning"}


# -- damaged copies ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def analysed(spark, samples: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, list]:
    """The damaged log dirs of :func:`damaged_log_dirs`, analysed in one go with the live copy (one Spark
    analysis for all: the live copy's partition is in neither)."""
    root, facts, dirs = damaged_log_dirs(samples, tmp_path_factory.mktemp("damaged"))
    return root, facts, analyse(spark, samples / "live-copy", *dirs)


def test_bit_flip_is_a_crc_error_at_the_batch(damaged) -> None:
    _, facts, rows = damaged
    file, position = facts["crc"]
    got = pick(rows, check="batch_crc_invalid", topic="crc-flip")
    assert [(r.severity, r.file, r.position, r.topic, r.baseOffset) for r in got] == [
        ("error", file, position, "crc-flip", 12)]


def test_truncated_log_is_a_truncated_tail_where_the_cut_batch_starts(damaged) -> None:
    _, facts, rows = damaged
    file, position = facts["truncated"]
    got = pick(rows, check="truncated_tail")
    assert [(r.severity, r.file, r.position, r.baseOffset) for r in got] == [("error", file, position, 11)]
    # The indexes still describe the lost batch (offsets 40..59): each has one entry, for offset 59 (kafka-dump-log's
    # goldens), the offset index's at the cut batch's position, where no whole batch starts any more.
    index, timeindex = (file.removesuffix(".log") + suffix for suffix in (".index", ".timeindex"))
    assert sorted((r.check, r.file, r.position) for r in pick(rows, topic="truncated", severity="error")) == sorted([
        ("truncated_tail", file, position), ("index_position_not_batch_boundary", index, 0),
        ("timeindex_offset_not_in_log", timeindex, 0), ("timeindex_last_not_max_timestamp", timeindex, 0)])


def test_zeroed_index_of_a_closed_segment_is_a_zero_tail_warning(damaged) -> None:
    _, facts, rows = damaged
    got = pick(rows, topic="zeroed-index")
    assert [(r.check, r.severity, r.file, r.position) for r in got] == [
        ("index_zero_tail", "warning", facts["zeroed"], 8)]


def test_index_entry_pointing_mid_batch_is_an_error_at_the_entry(damaged) -> None:
    _, facts, rows = damaged
    file, position = facts["mid_batch"]
    got = pick(rows, topic="mid-batch")
    assert [(r.check, r.severity, r.file, r.position, r.baseOffset) for r in got] == [
        ("index_position_not_batch_boundary", "error", file, position, 44)]
    assert got[0].found == "offset 50 at position 559" and "inside the batch at 552" in got[0].detail


def test_multi_batch_append_entry_is_a_known_false_mismatch(damaged) -> None:
    _, facts, rows = damaged
    file, position = facts["multi_batch"]
    got = pick(rows, topic="multi-batch")
    assert [(r.check, r.severity, r.file, r.position) for r in got] == [
        ("index_multi_batch_append", "info", file, position)]
    assert "last offset of the batch at 888" in got[0].detail


def test_deleted_middle_segment_is_a_gap_between_its_neighbours(damaged) -> None:
    _, facts, rows = damaged
    file, position = facts["missing"]
    got = pick(rows, topic="missing-segment")
    assert [(r.check, r.severity, r.file, r.position, r.baseOffset, r.expected, r.found) for r in got] == [
        ("segment_offset_gap", "info", file, position, 24, "next segment at offset 36", "next segment at offset 48")]
    assert "no cleaner-offset checkpoint entry" in got[0].detail


def test_stray_deleted_file_is_a_warning_naming_it(damaged) -> None:
    _, facts, rows = damaged
    got = pick(rows, topic="stray-deleted")
    assert [(r.check, r.severity, r.file, r.position, r.baseOffset) for r in got] == [
        ("stray_temp_file", "warning", facts["stray"], -1, 3)]


def test_checkpoint_line_naming_a_missing_partition(damaged) -> None:
    root, facts, rows = damaged
    file, position = facts["checkpoint"]
    got = pick(rows, check="checkpoint_missing_partition")
    assert [(r.topic, r.partition, r.severity, r.file, r.position) for r in got] == [
        ("ghost", 3, "warning", file, position)]
    assert pick(rows, check="recovery_point_missing") == []  # every real partition has its line


def test_a_partition_in_two_log_dirs_is_checked_in_each(damaged) -> None:
    """Replicas of one partition in two log dirs, read in one job, stay apart: the damage in the second copy is
    reported there, with its log dir, and the first copy is clean."""
    _, facts, rows = damaged
    clean_dir, damaged_dir = facts["replica"]["dirs"]
    file, position = facts["replica"]["crc"]
    assert [(r.logDir, r.check, r.file, r.position) for r in pick(rows, topic="replica", severity="error")] == [
        (damaged_dir, "batch_crc_invalid", file, position)]
    assert [r for r in pick(rows, topic="replica", logDir=clean_dir) if r.severity != "info"] == []


def test_damage_stays_in_its_partition(damaged) -> None:
    _, _, rows = damaged
    assert {r.topic for r in rows if r.severity == "error"} == {"crc-flip", "truncated", "mid-batch", "replica"}
    assert {r.topic for r in rows} == {"crc-flip", "truncated", "zeroed-index", "mid-batch", "multi-batch",
                                       "missing-segment", "stray-deleted", "ghost", "replica"}


# -- entry classification, without Spark ----------------------------------------------------------------


def _segment(base: int, batches: list[tuple[int, int, int | None, int, int]]) -> SegmentBatches:
    """batches: (position, size, baseOffset or None, lastOffset, magic); maxTimestamp = 1000 + lastOffset."""
    import pyarrow as pa

    cols = list(zip(*batches, strict=True))
    t = pa.table({"position": pa.array(cols[0], pa.int64()), "size": pa.array(cols[1], pa.int32()),
                  "baseOffset": pa.array(cols[2], pa.int64()), "lastOffset": pa.array(cols[3], pa.int64()),
                  "magic": pa.array(cols[4], pa.int8()),
                  "maxTimestamp": pa.array([1000 + x for x in cols[3]], pa.int64())})
    return SegmentBatches.from_arrow(base, t)


def test_offset_entries_are_classified() -> None:
    b = _segment(100, [(0, 50, 100, 104, 2), (50, 50, 105, 109, 2), (100, 50, 110, 114, 2), (150, 50, None, 119, 1),
                       (200, 50, 120, 124, 2)])
    entries = [(100, 0), (104, 0), (109, 0), (112, 100), (117, 150), (107, 100), (130, 200), (124, 225), (1, 999)]
    slots = np.arange(len(entries))
    offsets, positions = (np.array(x, np.int64) for x in zip(*entries, strict=True))
    got = {r["position"] // 8: (r["check"], r["severity"])
           for r in offset_entry_findings({}, b, "x.index", slots, offsets, positions, 250)}
    assert got == {
        # slot 0 (100 at 0) is the empty-slot reading of dump-log: skipped; slot 1 (104 at 0) is exact.
        2: ("index_multi_batch_append", "info"),  # 109 ends the batch after the one at 0
        3: ("index_offset_inside_batch", "warning"),  # 112 inside the v2 batch at 100
        4: ("index_offset_inside_batch", "info"),  # 117 inside a legacy wrapper (base = 115 by position)
        5: ("index_offset_before_batch", "error"),
        6: ("index_offset_not_in_append", "error"),  # 130: beyond every batch
        7: ("index_position_not_batch_boundary", "error"),
        8: ("index_position_beyond_log", "error"),
    }


def test_time_entries_are_classified() -> None:
    b = _segment(0, [(0, 50, 0, 4, 2), (50, 50, 5, 9, 2)])
    entries = [(1004, 4), (1009, 9), (1005, 9), (1009, 7), (1004, 7), (2000, 30)]
    slots = np.arange(len(entries))
    timestamps, offsets = (np.array(x, np.int64) for x in zip(*entries, strict=True))
    got = {r["position"] // 12: (r["check"], r["severity"])
           for r in time_entry_findings({}, b, "x.timeindex", slots, timestamps, offsets)}
    assert got == {
        2: ("timeindex_timestamp_mismatch", "error"),
        3: ("timeindex_offset_inside_batch", "warning"),
        4: ("timeindex_timestamp_mismatch", "error"),
        5: ("timeindex_offset_not_in_log", "error"),
    }
