"""Our decoder against kafka-python's on the benchmark files.

Whole file: record and batch counts (ours, kafka-python's batch headers, the generator's own count) and
contiguous offsets. Three windows of whole batches (the head, across the reader's first chunk boundary,
the tail): every record's offset, timestamp, key, value and headers, and every batch header field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafka.record import MemoryRecords

from kafkalog_spark import Finding, read_log
from kafkalog_spark.log.file_records import DEFAULT_CHUNK_BYTES
from kafkalog_spark.log.reader import iter_segment

from .data import MIB, Dataset

WINDOW = 2 * MIB
MAX_REPORTED = 5  # mismatches listed per field


def batch_positions(path: Path) -> list[int]:
    """Start of every entry, walking the 12-byte offset/size framing."""
    out = []
    size = path.stat().st_size
    with open(path, "rb") as f:
        pos = 0
        while pos + 12 <= size:
            f.seek(pos + 8)
            out.append(pos)
            pos += 12 + int.from_bytes(f.read(4), "big")
    return out


def windows(positions: list[int], size: int) -> list[tuple[int, int]]:
    """Batch-aligned [start, end) windows of about WINDOW bytes."""
    def at_or_after(p: int) -> int:
        return next((q for q in positions if q >= p), size)

    mid = DEFAULT_CHUNK_BYTES
    spans = [(0, WINDOW), (mid - WINDOW // 2, mid + WINDOW // 2), (size - WINDOW, size)]
    return [(at_or_after(s), at_or_after(e)) for s, e in spans]


def _ours(path: Path, start: int, end: int) -> dict[str, list[Any]]:
    findings: list[Finding] = []
    batches = list(iter_segment(str(path), "records", findings, start=start, end=end))
    if findings:
        raise AssertionError(f"findings in window [{start}, {end}): {findings[:3]}")
    rows: dict[str, list[Any]] = {k: [] for k in ("offset", "timestamp", "key", "value", "headers")}
    for b in batches:
        rows["offset"] += b.column("offset").to_pylist()
        rows["timestamp"] += b.column("timestamp").cast("int64").to_pylist()
        rows["key"] += b.column("key").to_pylist()
        rows["value"] += b.column("value").to_pylist()
        rows["headers"] += [[(h["key"], h["value"]) for h in hs] for hs in b.column("headers").to_pylist()]
    rows["timestamp"] = [None if t is None else t // 1000 for t in rows["timestamp"]]
    return rows


def _kafka_python(data: bytes) -> dict[str, list[Any]]:
    rows: dict[str, list[Any]] = {k: [] for k in ("offset", "timestamp", "key", "value", "headers")}
    recs = MemoryRecords(data)
    while recs.has_next():
        for r in recs.next_batch():
            rows["offset"].append(r.offset)
            rows["timestamp"].append(r.timestamp)
            rows["key"].append(r.key)
            rows["value"].append(r.value)
            rows["headers"].append(list(r.headers))
    return rows


def _batch_headers_kp(data: bytes) -> list[dict[str, Any]]:
    out = []
    recs = MemoryRecords(data)
    while recs.has_next():
        b = recs.next_batch()
        out.append({"baseOffset": b.base_offset, "lastOffset": b.last_offset, "count": b.records_count,
                    "crc": b.crc, "isValid": b.validate_crc(), "attributes": b.attributes,
                    "partitionLeaderEpoch": b.leader_epoch, "baseTimestamp": b.first_timestamp,
                    "maxTimestamp": b.max_timestamp, "producerId": b.producer_id,
                    "producerEpoch": b.producer_epoch, "baseSequence": b.base_sequence,
                    "lastSequence": b.last_sequence})
    return out


def _compare(what: str, ours: list[Any], theirs: list[Any], problems: list[str]) -> None:
    if len(ours) != len(theirs):
        problems.append(f"{what}: {len(ours)} values (ours) vs {len(theirs)} (kafka-python)")
    bad = [i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b]
    for i in bad[:MAX_REPORTED]:
        problems.append(f"{what}[{i}]: ours {ours[i]!r} != kafka-python {theirs[i]!r}")
    if len(bad) > MAX_REPORTED:
        problems.append(f"{what}: {len(bad)} mismatches in all")


def check(ds: Dataset, our_records: int) -> dict[str, Any]:
    """Compare on ``ds``; ``our_records`` is the records-view count from the timed runs."""
    problems: list[str] = []
    data = ds.segment.read_bytes()
    kp_batches = _batch_headers_kp(data)
    kp_records = sum(b["count"] for b in kp_batches)
    for who, n in (("kafka-python batch headers", kp_records), ("generator", ds.records)):
        if our_records != n:
            problems.append(f"record count: ours {our_records} vs {who} {n}")
    findings: list[Finding] = []
    ours_b = read_log(str(ds.segment), "batches", findings=findings).to_pylist()
    if findings:
        problems.append(f"batches view findings: {findings[:3]}")
    if ours_b and (ours_b[0]["baseOffset"] != 0 or ours_b[-1]["lastOffset"] != ds.records - 1):
        problems.append("offsets do not run from 0 to records - 1")
    gaps = [i for i in range(1, len(ours_b)) if ours_b[i]["baseOffset"] != ours_b[i - 1]["lastOffset"] + 1]
    if gaps:
        problems.append(f"{len(gaps)} offset gaps between batches, first after batch {gaps[0] - 1}")
    for field in kp_batches[0] if kp_batches else ():
        _compare(f"batch {field}", [b[field] for b in ours_b], [b[field] for b in kp_batches], problems)
    compared = 0
    for start, end in windows(batch_positions(ds.segment), len(data)):
        ours_r, theirs_r = _ours(ds.segment, start, end), _kafka_python(data[start:end])
        compared += len(theirs_r["offset"])
        for field in ours_r:
            _compare(f"window [{start}, {end}) {field}", ours_r[field], theirs_r[field], problems)
    return {"codec": ds.codec, "records": our_records, "kafka_python_records": kp_records,
            "batches": len(ours_b), "kafka_python_batches": len(kp_batches),
            "records_compared_field_by_field": compared, "problems": problems, "agree": not problems}
