"""A segment's batches checked among themselves, where the task that reads the segment has them all: the CRC of
each batch, and offsets increasing from one batch to the next (what LogSegment's recovery checks batch by batch).

One home for these rules: the decoded view's task applies them to the segment it has just read
(:func:`segment_batch_findings`), and :func:`kafkalog_spark.analysis.segment_checks.batch_findings` applies the same
function to a batches view grouped by segment. Rows of :data:`~kafkalog_spark.schemas.INDEX_FINDINGS`.
"""

from __future__ import annotations

import pyarrow as pa

from ..findings import finding_row
from ..findings import joined_text as _text

# the batch columns the checks read (the batches view's; problem rows left out)
BATCH_COLUMNS = ("position", "size", "baseOffset", "lastOffset", "magic", "crc", "isValid")


def _offsets(base: int | None, last: int | None) -> str | None:
    """``offsets <base>..<last>``; a legacy compressed wrapper's base offset (not decoded) reads ``?``."""
    return _text("offsets ", "?" if base is None else base, "..", last)


def segment_batch_findings(key: dict, log_file: str, batches: pa.Table | None) -> list[dict]:
    """The findings of one segment's batches (``batches``: :data:`BATCH_COLUMNS`, in file order) among themselves;
    ``key``: the segment's ``logDir``, ``topic``, ``partition`` and ``baseOffset``; ``log_file``: its `.log`.

    - ``batch_crc_invalid``: error: a batch (or legacy message) whose stored CRC does not match its content;
    - ``batch_offsets_not_increasing``: error: a batch's first offset (its last for a legacy wrapper, whose first is
      not decoded) not above the previous batch's last."""
    if batches is None or not batches.num_rows:
        return []
    columns = {name: batches.column(name).to_pylist() for name in BATCH_COLUMNS}
    rows: list[dict] = []
    where = {"base_offset": key["baseOffset"], "log_dir": key["logDir"]}
    prev_last = prev_position = None
    for position, size, base, last, magic, crc, valid in zip(*columns.values(), strict=True):
        if valid is False:
            rows.append(finding_row(
                key["topic"], key["partition"], "error", "batch_crc_invalid", log_file, position=position, **where,
                expected="stored CRC equal to the computed one",
                found=_text("stored CRC ", crc, " (magic ", magic, ")"),
                detail=_text("batch of ", _offsets(base, last), ", ", size, " bytes: its content is damaged; consumers "
                             "fail with CorruptRecordException and broker recovery truncates the segment here")))
        first = base if base is not None else last
        if first is not None and prev_last is not None and first <= prev_last:
            rows.append(finding_row(
                key["topic"], key["partition"], "error", "batch_offsets_not_increasing", log_file,
                position=position, **where, expected=_text("first offset > ", prev_last), found=_offsets(base, last),
                detail=_text("the previous batch (at position ", prev_position, ") ends at offset ", prev_last,
                             ": offsets must increase through a segment (lookups assume it)")))
        prev_last, prev_position = last, position
    return rows
