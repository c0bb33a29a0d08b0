"""The checks of one partition's local log (Kafka's LocalLog: its segments, their files, the partition's files and
the root checkpoints' entries for it), run over the few rows the source gives of that partition: its segments' rows,
their batches' aggregates (:data:`~kafkalog_spark.schemas.BATCH_SUMMARY`), its producer snapshots' and checkpoints'
entries, and the readers' problem rows.

One home for these rules: :func:`kafkalog_spark.analysis.local_log_findings.local_log_findings` groups the views'
rows by partition and calls :func:`partition_findings` once per partition, so a partition's rows are reduced in one
pass instead of a Spark query per check. Rows of :data:`~kafkalog_spark.schemas.INDEX_FINDINGS`. The checks
(name: severity: what it compares):

- the readers' findings, carried over with the reader's kind as the check name, file and byte position, each once
  per (kind, file, position), worded by the first view of :data:`READER_VIEWS` that has it: from the index view
  (``index_length_not_multiple``, ``index_last_offset_below_base``, ``timeindex_last_offset_below_base``,
  ``index_offsets_not_increasing``, ``index_positions_not_increasing``, ``timeindex_timestamps_not_increasing``
  (dump-log: "Found out of order timestamp"), ``timeindex_timestamp_decreasing``, ``index_nonzero_tail``, ...), the
  batches view (``truncated_tail``, ``corrupt_size``, ``skipped_region``, ``batch_too_small``, ...), the
  partition_files view (``txnindex_*``, ``snapshot_crc_mismatch``, ``snapshot_unknown_version``, ``checkpoint_*``,
  ...) and the records view (``decompression_failed``, ``record_decode_failed``: damage under a right CRC that only a
  full decode finds), with the reader's severity except: zero tails (``index_zero_tail``,
  ``timeindex_zero_tail`` and the ``timeindex_last_timestamp_before_first`` they cause) are info on the active
  segment (normal in a copy of a running broker's dir) and warnings elsewhere; ``truncated_tail`` is a warning on
  the active segment (an append caught mid-copy) and an error on a closed one (rolled segments are complete). The
  reader's ``batch_crc_invalid`` is reported once, by :mod:`.batch_checks` (with the CRCs).
- ``segment_first_offset_below_name``: error: the first batch starts below the file name's offset.
- ``segment_first_offset_above_name``: info: it starts above (normal after compaction).
- ``segment_offset_gap``: info: offsets from a segment's last offset + 1 to the next base offset are in no segment
  (the detail says whether the cleaner-offset checkpoint lists the partition).
- ``timeindex_last_not_max_timestamp``: error (warning when the time index is empty): a closed segment's last time
  index entry differs from its largest batch maxTimestamp (the broker loads it as the segment's largestTimestamp).
- ``index_file_missing``: warning: a live ``.log`` without its ``.index`` or ``.timeindex`` (rebuilt on load).
- ``stray_temp_file``: warning: a ``.deleted``/``.cleaned``/``.swap`` segment file, or a KRaft snapshot's
  ``.checkpoint.part`` / ``.checkpoint.deleted``.
- ``snapshot_offset_outside_log``: info: a producer snapshot whose offset is no segment base offset and lies
  outside [log start, log end] (the broker deletes such snapshots when it loads the log).
- ``snapshot_entry_beyond_offset``: warning: a producer's lastOffset >= the snapshot's offset.
- ``checkpoint_offset_outside_log``: warning: a root checkpoint's offset beyond the log end offset, or
  (cleaner-offset checkpoint) below the log start (the broker resets it).
- ``segment_log_missing``: warning: index files with entries but no `.log` (given their entries: the task that reads
  a segment's `.log` checks the entries of the others, :mod:`.index_entry_checks`, whose rule this applies).

The wording and the null handling are those of the Spark expressions these rules were first written in (a part that
is null makes the whole text null), so the rows are the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from ..findings import joined_text as _text
from . import producer_snapshot, time_index
from .checkpoints import CLEANER_OFFSET_CHECKPOINT, OFFSET_CHECKPOINT_FILES

# The views whose problem rows count, in the order that words a finding several views repeat (segments repeats
# index, records repeats batches); the records view alone finds what only a full decode can (a payload that does
# not decompress, a record that does not decode).
READER_VIEWS = ("index", "batches", "partition_files", "segments", "records", "record_stats")
ZERO_TAIL_KINDS = ("index_zero_tail", "timeindex_zero_tail")
# the partition files these checks read
CHECKED_FILE_TYPES = ("producer-snapshot", *OFFSET_CHECKPOINT_FILES)
# what each row kind holds (the columns of the views these checks read)
SEGMENT_COLUMNS = ("baseOffset", "status", "isActive", "nextBaseOffset", "logFile", "logSize", "indexSize",
                   "timeIndexSize", "timeIndexEntries", "maxIndexedTimestamp", "snapshotEndOffset")
SUMMARY_COLUMNS = ("segmentBaseOffset", "firstBatchBaseOffset", "firstBatchLastOffset", "firstPosition", "lastOffset",
                   "maxTimestamp", "maxTimestampPosition")
FILE_COLUMNS = ("file", "fileType", "entry", "offset", "lastOffset", "producerId")
PROBLEM_COLUMNS = ("severity", "kind", "file", "position", "detail", "viewRank")
ENTRY_COLUMNS = ("segmentBaseOffset", "file", "indexType", "slot", "offset", "position", "timestamp")

SEGMENT_FILE = re.compile(  # a segment file's name, its base offset in group 1
    r"(\d{20})\.(log|index|timeindex|txnindex)(\.(deleted|cleaned|swap))?$")
_LONG_MAX = 2**63 - 1

_TEMP_DETAIL = {
    "deleted": "pending asynchronous delete (file.delete.delay.ms after retention or cleaning): the broker removes it",
    "cleaned": "cleaner output never swapped in: the broker deletes it at startup",
    "swap": "a segment swap was interrupted: the broker completes it at startup (renames it live)",
}
# KRaft snapshots (KafkaMetadataLog deletes both kinds when it loads the metadata log)
_SNAPSHOT_DETAIL = {
    "deleted": "a KRaft snapshot marked for deletion (.checkpoint.deleted): the controller removes it",
    "partial": "a KRaft snapshot never finished (.checkpoint.part): the controller deletes it at startup",
}


def _lt(a: int | None, b: int | None) -> bool:
    return a is not None and b is not None and a < b


def _name(offset: int) -> str:
    return f"{offset:020d}.log"


def _sibling(log_file: str | None, suffix: str) -> str | None:
    return None if log_file is None else re.sub(r"\.log$", suffix, log_file)


def base_offset_from_file(file: str | None) -> int | None:
    """The base offset in a segment file's name (``.log``/``.index``/``.timeindex``/``.txnindex``), else None."""
    found = SEGMENT_FILE.search(file) if file is not None else None
    if not found or int(found.group(1)) > _LONG_MAX:
        return None
    return int(found.group(1))


class _Partition:
    """One partition's rows, and the finding rows built for it."""

    def __init__(self, key: Mapping, segments: list[dict], summaries: list[dict], files: list[dict]):
        self.key = key
        self.segments = segments
        self.live = [s for s in segments if s["status"] == "live"]
        by_base: dict[int, list[dict]] = {}
        for s in summaries:
            by_base.setdefault(s["segmentBaseOffset"], []).append(s)
        # live segments with a .log, each with its batches' aggregates (a left join on the base offset)
        self.summary = [(s, b) for s in self.live if s["logFile"] is not None
                        for b in by_base.get(s["baseOffset"], [None])]
        self.files = files
        self.rows: list[dict] = []

    def add(self, severity: str | None, check: str | None, file: str | None, position: int | None = -1,
            base_offset: int | None = None, expected: str | None = None, found: str | None = None,
            detail: str | None = None) -> None:
        self.rows.append({**self.key, "baseOffset": base_offset, "severity": severity, "check": check, "file": file,
                          "position": -1 if position is None else position, "expected": expected, "found": found,
                          "detail": detail})


def partition_findings(key: Mapping, segments: list[dict], summaries: list[dict], files: list[dict],
                       problems: list[dict], line_positions: Mapping[tuple, Sequence[int]],
                       entries: Sequence[dict] = ()) -> list[dict]:
    """The findings of one partition (``key``: its ``logDir``, ``topic`` and ``partition``) from its rows:
    ``segments`` (:data:`SEGMENT_COLUMNS` of the segments view, problem rows left out), ``summaries`` (its segments'
    batch aggregates, :data:`SUMMARY_COLUMNS`), ``files`` (:data:`FILE_COLUMNS` of its partition_files rows of
    :data:`CHECKED_FILE_TYPES`), ``problems`` (the problem rows of the views, :data:`PROBLEM_COLUMNS`, ``viewRank``
    the view's place in :data:`READER_VIEWS`); ``line_positions``: each root checkpoint entry's byte position by
    (file, topic, partition); ``entries``: index entries (:data:`ENTRY_COLUMNS` of the index view), of which those
    of segments without a `.log` are checked."""
    p = _Partition(key, segments, summaries, files)
    _reader_findings(p, problems)
    _segment_findings(p)
    _stray_findings(p)
    _file_findings(p, line_positions)
    _log_missing_findings(p, entries)
    return p.rows


def _reader_findings(p: _Partition, problems: Iterable[dict]) -> None:
    first: dict[tuple, dict] = {}
    for row in problems:
        at = (row["kind"], row["file"], row["position"])
        if at not in first or row["viewRank"] < first[at]["viewRank"]:
            first[at] = row
    for (kind, file, position), row in first.items():
        if kind is None or kind == "batch_crc_invalid":
            continue
        base = base_offset_from_file(file)
        matches = [s["isActive"] for s in p.live if base is not None and s["baseOffset"] == base] or [None]
        for is_active in matches:
            active = bool(is_active)
            severity, detail = row["severity"], row["detail"]
            zero = kind in ZERO_TAIL_KINDS or (kind == "timeindex_last_timestamp_before_first"
                                               and severity == "warning")
            if zero and active:
                severity, detail = "info", _text("active segment: ", detail)
            elif zero:
                severity, detail = "warning", _text("closed segment (its indexes are trimmed on roll): ", detail)
            elif kind == "truncated_tail" and not active:
                severity, detail = "error", _text(detail, " (a closed segment: the broker wrote it whole, so bytes "
                                                          "are missing; recovery would truncate here)")
            p.add(severity, kind, file, position, base, detail=detail)


def _cleaner_offset(p: _Partition) -> int | None:
    offsets = [f["offset"] for f in p.files
               if f["fileType"] == CLEANER_OFFSET_CHECKPOINT and f["offset"] is not None]
    return max(offsets) if offsets else None


def _segment_findings(p: _Partition) -> None:
    cleaned = _cleaner_offset(p)
    if cleaned is not None:
        why = (f"the cleaner-offset checkpoint lists this partition (cleaned up to {cleaned}): compaction explains "
               "gaps")
    else:
        why = ("no cleaner-offset checkpoint entry for this partition: unless it is compacted, offsets are missing "
               "(a deleted or lost segment?)")
    for s, b in p.summary:
        b = b or {}
        base, log_file, nxt = s["baseOffset"], s["logFile"], s["nextBaseOffset"]
        first_base, first_last, max_last = b.get("firstBatchBaseOffset"), b.get("firstBatchLastOffset"), \
            b.get("lastOffset")
        first = first_base if first_base is not None else first_last
        end = max_last + 1 if max_last is not None else base
        if _lt(first, base):
            p.add("error", "segment_first_offset_below_name", log_file, b.get("firstPosition"), base,
                  _text("first offset >= ", base),
                  _text("first batch offsets ", "?" if first_base is None else first_base, "..", first_last),
                  _text("the first batch of ", _name(base), " starts below the offset in its name: index entries "
                        "are relative to the name, and offset lookups would pick the wrong segment"))
        if _lt(base, first_base):
            p.add("info", "segment_first_offset_above_name", log_file, b.get("firstPosition"), base,
                  _text("first offset ", base), _text("first offset ", first_base),
                  _text("the first batch of ", _name(base), " starts ", first_base - base, " offset(s) above its "
                        "name: normal after compaction (the cleaner keeps the name of the first segment it merges); "
                        "for a non-compacted log the first batch starts at the name's offset"))
        if nxt is not None and _lt(end, nxt):
            p.add("info", "segment_offset_gap", log_file, s["logSize"], base, _text("next segment at offset ", end),
                  _text("next segment at offset ", nxt),
                  _text("offsets ", end, "..", nxt - 1, " (", nxt - end, ") are in no segment between ", _name(base),
                        " and ", _name(nxt), "; ", why))
        _time_index_findings(p, s, b)
        for suffix, size in ((".index", "indexSize"), (".timeindex", "timeIndexSize")):
            if s[size] is None:
                p.add("warning", "index_file_missing", _sibling(log_file, suffix), -1, base,
                      f"a {suffix} file next to the .log", "none",
                      f"the broker rebuilds a missing {suffix} from the .log when it loads the segment")


def _time_index_findings(p: _Partition, s: dict, b: dict) -> None:
    max_batch, max_indexed = b.get("maxTimestamp"), s["maxIndexedTimestamp"]
    empty = max_indexed is None
    if not (s["isActive"] is False and s["timeIndexSize"] is not None and max_batch is not None and max_batch >= 0
            and (empty or max_indexed != max_batch)):
        return
    entries = s["timeIndexEntries"]
    p.add("warning" if empty else "error", "timeindex_last_not_max_timestamp", _sibling(s["logFile"], ".timeindex"),
          None if empty or entries is None else (entries - 1) * time_index.ENTRY_SIZE, s["baseOffset"],
          _text("timestamp ", max_batch, " (largest batch maxTimestamp, batch at position ",
                b.get("maxTimestampPosition"), ")"),
          "no entries" if empty else _text("timestamp ", max_indexed),
          "a closed segment's last time index entry is its largest timestamp (forced on roll); the broker loads it "
          "as the segment's largestTimestamp, so retention by time and offsetsForTimes go wrong (with no entries it "
          "falls back to the file's mtime)")


def _stray_findings(p: _Partition) -> None:
    for s in p.segments:
        status = s["status"]
        if status is None or status in ("live", "snapshot"):
            continue
        detail = _SNAPSHOT_DETAIL.get(status) if s["snapshotEndOffset"] is not None else None
        p.add("warning", "stray_temp_file", s["logFile"], -1, s["baseOffset"],
              found=_text(s["logSize"], " bytes"), detail=detail or _TEMP_DETAIL.get(status))


def _file_findings(p: _Partition, line_positions: Mapping[tuple, Sequence[int]]) -> None:
    if not p.summary:  # no live segment with a .log: no log offsets to compare with
        return
    start = min(s["baseOffset"] for s, _ in p.summary)
    lasts = [b["lastOffset"] for _, b in p.summary if b is not None and b["lastOffset"] is not None]
    end = max([max(s["baseOffset"] for s, _ in p.summary), *([max(lasts) + 1] if lasts else [])])
    bases = {s["baseOffset"] for s, _ in p.summary}
    topic, partition = p.key["topic"], p.key["partition"]
    for f in p.files:
        kind, offset, entry = f["fileType"], f["offset"], f["entry"]
        if kind not in CHECKED_FILE_TYPES:
            continue
        for line in line_positions.get((f["file"], topic, partition), [None]):
            if kind == "producer-snapshot":
                if entry == 0 and offset is not None and offset not in bases and (offset < start or offset > end):
                    p.add("info", "snapshot_offset_outside_log", f["file"], -1, None,
                          f"a segment base offset or an offset in [{start}, {end}]", f"offset {offset}",
                          "producer snapshots are taken at segment rolls and at shutdown (the log end offset); the "
                          "broker deletes those outside the log's offsets when it loads the log")
                if f["lastOffset"] is not None and offset is not None and f["lastOffset"] >= offset:
                    p.add("warning", "snapshot_entry_beyond_offset", f["file"],
                          None if entry is None else entry * producer_snapshot.ENTRY_SIZE
                          + producer_snapshot.HEADER_SIZE, None,
                          f"lastOffset < {offset} (the snapshot's offset)", f"lastOffset {f['lastOffset']}",
                          _text("producer ", f["producerId"], ": a snapshot at offset N holds the state of offsets "
                                "below N; this one is misnamed or mixed up"))
                continue
            cleaner_low = kind == CLEANER_OFFSET_CHECKPOINT and _lt(offset, start)
            if cleaner_low or _lt(end, offset):
                p.add("warning", "checkpoint_offset_outside_log", f["file"], line, None,
                      f"offset >= {start} (the log start)" if cleaner_low else f"offset <= {end} (the log end offset)",
                      _text(topic, " ", partition, " ", offset),
                      _text(kind, f" names an offset outside the log [{start}, {end}]: the broker clamps or resets it "
                            "(a copy taken at another time than the segments?)"))


def _log_missing_findings(p: _Partition, entries: Sequence[dict]) -> None:
    import numpy as np

    from .index_entry_checks import IndexEntries, segment_entry_findings

    with_log = {s["baseOffset"] for s in p.live if s["logSize"] is not None}
    files: dict[int, dict[tuple, list[dict]]] = {}
    for e in entries:
        if e["segmentBaseOffset"] not in with_log:
            files.setdefault(e["segmentBaseOffset"], {}).setdefault((e["file"], e["indexType"]), []).append(e)
    for base, of_segment in files.items():
        indexes = []
        for (file, kind), rows in of_segment.items():
            rows = sorted(rows, key=lambda r: r["slot"])
            slots, offsets = (np.array([r[c] for r in rows], np.int64) for c in ("slot", "offset"))
            column = "position" if kind == "offset" else "timestamp"
            values = {f"{column}s": np.array([r[column] for r in rows], np.int64)}
            indexes.append(IndexEntries(file, kind, slots, offsets, **values))
        p.rows += segment_entry_findings({**p.key, "baseOffset": base}, None, indexes, None)
