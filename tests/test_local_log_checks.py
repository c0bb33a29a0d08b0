"""The per-partition checks of kafkalog_spark.log.local_log_checks on hand-made rows: the cases the damaged corpora
(tests/test_index_validation.py) do not reach, each expectation from the Kafka rule the check states."""

from __future__ import annotations

from kafkalog_spark.log.local_log_checks import base_offset_from_file, partition_findings

KEY = {"logDir": "/d", "topic": "t", "partition": 0}
LOG = "/d/t-0/{:020d}.log"


def segment(base: int, *, active: bool = False, nxt: int | None = None, status: str = "live", **more) -> dict:
    row = {"baseOffset": base, "status": status, "isActive": active, "nextBaseOffset": nxt,
           "logFile": LOG.format(base), "logSize": 1000, "indexSize": 8, "timeIndexSize": 12, "timeIndexEntries": 1,
           "maxIndexedTimestamp": 50, "snapshotEndOffset": None}
    return row | more


def summary(base: int, first: int, last: int, max_ts: int = 50) -> dict:
    return {"segmentBaseOffset": base, "firstBatchBaseOffset": first, "firstBatchLastOffset": first,
            "firstPosition": 0, "lastOffset": last, "maxTimestamp": max_ts, "maxTimestampPosition": 0}


def checks(rows: list[dict]) -> list[tuple]:
    return sorted((r["check"], r["severity"], r["baseOffset"], r["file"], r["position"]) for r in rows)


def test_a_healthy_log_has_no_findings() -> None:
    rows = partition_findings(KEY, [segment(0, nxt=10), segment(10, active=True)],
                              [summary(0, 0, 9), summary(10, 10, 14)], [], [], {})
    assert rows == []


def test_offsets_missing_between_segments_are_a_gap_at_the_end_of_the_first() -> None:
    # offsets 0..4 in the first segment, the next starts at 10: 5..9 are in no segment
    rows = partition_findings(KEY, [segment(0, nxt=10), segment(10, active=True)],
                              [summary(0, 0, 4), summary(10, 10, 14)], [], [], {})
    assert checks(rows) == [("segment_offset_gap", "info", 0, LOG.format(0), 1000)]
    assert rows[0]["expected"] == "next segment at offset 5" and rows[0]["found"] == "next segment at offset 10"
    assert "no cleaner-offset checkpoint entry" in rows[0]["detail"]


def test_a_cleaner_checkpoint_entry_explains_the_gap() -> None:
    cleaner = {"file": "/d/cleaner-offset-checkpoint", "fileType": "cleaner-offset-checkpoint", "entry": 0,
               "offset": 12, "lastOffset": None, "producerId": None}
    rows = partition_findings(KEY, [segment(0, nxt=10), segment(10, active=True)],
                              [summary(0, 0, 4), summary(10, 10, 14)], [cleaner], [], {})
    assert checks(rows) == [("segment_offset_gap", "info", 0, LOG.format(0), 1000)]
    assert "cleaned up to 12" in rows[0]["detail"]


def test_first_batch_against_the_file_name() -> None:
    rows = partition_findings(KEY, [segment(5, nxt=20), segment(20, active=True)],
                              [summary(5, 3, 19), summary(20, 22, 30)], [], [], {})
    assert checks(rows) == [("segment_first_offset_above_name", "info", 20, LOG.format(20), 0),
                            ("segment_first_offset_below_name", "error", 5, LOG.format(5), 0)]


def test_a_closed_segments_last_time_entry_must_be_its_largest_timestamp() -> None:
    # closed segment: the last entry says 40, a batch says 50; the active segment is not checked
    rows = partition_findings(KEY, [segment(0, nxt=10, maxIndexedTimestamp=40, timeIndexEntries=3),
                                    segment(10, active=True, maxIndexedTimestamp=1)],
                              [summary(0, 0, 9), summary(10, 10, 14)], [], [], {})
    assert checks(rows) == [("timeindex_last_not_max_timestamp", "error", 0, "/d/t-0/00000000000000000000.timeindex",
                             24)]


def test_missing_indexes_and_stray_files() -> None:
    rows = partition_findings(KEY, [segment(0, active=True, indexSize=None),
                                    segment(7, status="deleted", logFile="/d/t-0/00000000000000000007.log.deleted")],
                              [summary(0, 0, 9)], [], [], {})
    assert checks(rows) == [("index_file_missing", "warning", 0, "/d/t-0/00000000000000000000.index", -1),
                            ("stray_temp_file", "warning", 7, "/d/t-0/00000000000000000007.log.deleted", -1)]


def problem(kind: str, file: str, severity: str = "warning", rank: int = 0, detail: str = "d") -> dict:
    return {"severity": severity, "kind": kind, "file": file, "position": 100, "detail": detail, "viewRank": rank}


def test_a_truncated_tail_is_an_error_only_on_a_closed_segment() -> None:
    segments = [segment(0, nxt=10), segment(10, active=True)]
    rows = partition_findings(KEY, segments, [summary(0, 0, 9), summary(10, 10, 14)], [],
                              [problem("truncated_tail", LOG.format(0)), problem("truncated_tail", LOG.format(10))],
                              {})
    assert checks(rows) == [("truncated_tail", "error", 0, LOG.format(0), 100),
                            ("truncated_tail", "warning", 10, LOG.format(10), 100)]


def test_a_finding_several_views_repeat_is_reported_once_worded_by_the_first_view() -> None:
    index = "/d/t-0/00000000000000000010.index"
    rows = partition_findings(KEY, [segment(10, active=True)], [summary(10, 10, 14)], [],
                              [problem("index_zero_tail", index, rank=3, detail="from segments"),
                               problem("index_zero_tail", index, rank=0, detail="from index"),
                               problem("batch_crc_invalid", LOG.format(10), "error")], {})
    assert checks(rows) == [("index_zero_tail", "info", 10, index, 100)]  # zero tail of the active segment: info
    assert rows[0]["detail"] == "active segment: from index"


def test_checkpoint_and_snapshot_offsets_against_the_log() -> None:
    # log start 10, log end 15 (last offset 14)
    checkpoint = {"file": "/d/replication-offset-checkpoint", "fileType": "replication-offset-checkpoint",
                  "entry": 0, "offset": 99, "lastOffset": None, "producerId": None}
    cleaner = {"file": "/d/cleaner-offset-checkpoint", "fileType": "cleaner-offset-checkpoint", "entry": 0,
               "offset": 3, "lastOffset": None, "producerId": None}
    snapshot = {"file": "/d/t-0/00000000000000000040.snapshot", "fileType": "producer-snapshot", "entry": 0,
                "offset": 40, "lastOffset": 41, "producerId": 7}
    positions = {("/d/replication-offset-checkpoint", "t", 0): [12], ("/d/cleaner-offset-checkpoint", "t", 0): [30]}
    rows = partition_findings(KEY, [segment(10, active=True)], [summary(10, 10, 14)],
                              [checkpoint, cleaner, snapshot], [], positions)
    assert checks(rows) == [
        ("checkpoint_offset_outside_log", "warning", None, "/d/cleaner-offset-checkpoint", 30),
        ("checkpoint_offset_outside_log", "warning", None, "/d/replication-offset-checkpoint", 12),
        ("snapshot_entry_beyond_offset", "warning", None, "/d/t-0/00000000000000000040.snapshot", 10),
        ("snapshot_offset_outside_log", "info", None, "/d/t-0/00000000000000000040.snapshot", -1)]
    by_file = {r["file"]: r for r in rows}
    assert by_file["/d/cleaner-offset-checkpoint"]["expected"] == "offset >= 10 (the log start)"
    assert by_file["/d/replication-offset-checkpoint"]["expected"] == "offset <= 15 (the log end offset)"


def test_base_offsets_from_file_names() -> None:
    assert base_offset_from_file("/d/t-0/00000000000000000042.timeindex") == 42
    assert base_offset_from_file("/d/t-0/00000000000000000042.log.deleted") == 42
    assert base_offset_from_file("/d/t-0/99999999999999999999.log") is None  # beyond a long
    assert base_offset_from_file("/d/t-0/leader-epoch-checkpoint") is None
    assert base_offset_from_file(None) is None


def test_index_files_without_their_log_are_named_once() -> None:
    # segment 20 has index entries and no .log (the broker deletes such orphans when it loads the log); segment 0's
    # entries are its task's to check (it has a .log)
    entry = {"indexType": "offset", "timestamp": None}
    entries = [{"segmentBaseOffset": 20, "file": "/d/t-0/00000000000000000020.index", "slot": slot,
                "offset": 20 + slot, "position": 100 * slot} | entry for slot in (1, 0)]
    entries.append({"segmentBaseOffset": 0, "file": "/d/t-0/00000000000000000000.index", "slot": 0, "offset": 3,
                    "position": 0} | entry)
    rows = partition_findings(KEY, [segment(0, active=True), segment(20, logFile=None, logSize=None)],
                              [summary(0, 0, 9)], [], [], {}, entries)
    assert checks(rows) == [("segment_log_missing", "warning", 20, "/d/t-0/00000000000000000020.index", -1)]
