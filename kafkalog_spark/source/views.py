"""The views that never read `.log` files: segments, index entries, partition-level files.

Each reads a partition directory's listing and its small files; findings become problem rows like in
the `.log` views."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql.types import StringType, StructField, StructType

from .. import schemas
from ..findings import Finding
from .internal_views import SCHEMAS as STATE_SCHEMAS
from .internal_views import state_rows
from .problems import check_failfast, problem_rows

SCHEMAS = {
    "records": schemas.RECORDS,
    "batches": schemas.BATCHES,
    "record_stats": schemas.RECORD_STATS,
    "segments": schemas.SEGMENTS,
    "index": schemas.INDEX,
    "partition_files": schemas.PARTITION_FILES,
    **STATE_SCHEMAS,
}


TIER = StructField("tier", StringType())  # "local", or "remote": a segment read from the remote store
# The decoded view: the `.log` views a job reads of the same segments, from one read of each (a segment is never cut
# into several splits: its task sees all of it): a row holds one of these views' rows (the records view's control
# records only), complete with its logDir and problem, in the struct column named after it, or the segment's batch
# summary (schemas.BATCH_SUMMARY, computed in the task: kafkalog_spark.log.segment_facts), or a finding
# (schemas.INDEX_FINDINGS) of its index entries against its batches (kafkalog_spark.log.index_entry_checks) or of its
# batches among themselves (kafkalog_spark.log.batch_checks); decoded_views splits them.
DECODED_VIEW = "decoded"
BATCH_SUMMARY_PART = "batch_summary"
ENTRY_FINDINGS_PART = "index_entry_findings"
BATCH_FINDINGS_PART = "batch_findings"
DECODED_PARTS = ("batches", "record_stats", "records", BATCH_SUMMARY_PART, ENTRY_FINDINGS_PART, BATCH_FINDINGS_PART)
# the parts with problem rows (the control records have none, as a read of the records view filtered on isControl)
DECODED_PROBLEM_PARTS = ("batches", "record_stats")


def view_schema(view: str, decode_internal: bool = False, remote_tier: bool = False) -> StructType:
    """A view's columns (without logDir and problem); the records view grows the decoded form of the internal
    topics' records with ``decode_internal``, a view read with a remote store the ``tier`` column."""
    if view == DECODED_VIEW:
        computed = {BATCH_SUMMARY_PART: schemas.batch_summary_schema(remote_tier),
                    ENTRY_FINDINGS_PART: schemas.INDEX_FINDINGS,
                    BATCH_FINDINGS_PART: schemas.INDEX_FINDINGS}  # the parts that are no view's rows
        return StructType([StructField(part, computed.get(part) or source_schema(part, decode_internal, remote_tier))
                           for part in DECODED_PARTS])
    fields = list(SCHEMAS[view].fields)
    if view == "records" and decode_internal:
        fields += schemas.DECODED_INTERNAL
    return StructType(fields + [TIER] if remote_tier else fields)


def source_schema(view: str, decode_internal: bool = False, remote_tier: bool = False) -> StructType:
    """A view's schema as the source returns it: :func:`view_schema` with ``logDir`` and ``problem`` (the decoded
    view's parts have theirs)."""
    columns = view_schema(view, decode_internal, remote_tier)
    return columns if view == DECODED_VIEW else schemas.with_problem(columns)


def _segment_rows(log, findings: list[Finding], filesystem=None, checkpoints=None) -> list[dict]:
    from ..log.offset_index import OffsetIndex
    from ..log.time_index import TimeIndex

    rows = []
    segs = log.segments
    for i, seg in enumerate(segs):
        index = OffsetIndex.read(seg.index, filesystem) if seg.index else None
        time_index = TimeIndex.read(seg.time_index, filesystem) if seg.time_index else None
        for parsed in (index, time_index):
            if parsed is not None:
                findings.extend(parsed.findings)
        rows.append({
            "baseOffset": seg.base_offset, "status": "live", "isActive": seg.is_active, "tier": seg.tier,
            "nextBaseOffset": segs[i + 1].base_offset if i + 1 < len(segs) else None,
            "logFile": seg.log, "logSize": seg.sizes.get(".log"), "indexSize": seg.sizes.get(".index"),
            "timeIndexSize": seg.sizes.get(".timeindex"), "txnIndexSize": seg.sizes.get(".txnindex"),
            "hasProducerSnapshot": seg.base_offset in log.snapshots,
            "logModified": None if seg.log_mtime_ms is None else seg.log_mtime_ms * 1000,
            "indexModified": None if seg.index_mtime_ms is None else seg.index_mtime_ms * 1000,
            "timeIndexModified": None if seg.time_index_mtime_ms is None else seg.time_index_mtime_ms * 1000,
            "indexEntries": index.entry_count if index else None,
            "timeIndexEntries": time_index.entry_count if time_index else None,
            "lastIndexedOffset": int(index.offsets[-1]) if index is not None and len(index.offsets) else None,
            "maxIndexedTimestamp": (int(time_index.timestamps[-1])
                                    if time_index is not None and len(time_index.timestamps) else None),
        })
    for t in log.temp_files:
        if t.suffix == ".log":
            rows.append({"baseOffset": t.base_offset, "status": t.temp.lstrip("."), "isActive": False, "tier": "local",
                         "logFile": t.path, "logSize": t.size})
    for k in log.kraft_snapshots:
        rows.append({"status": k.state, "isActive": False, "tier": "local", "logFile": k.path, "logSize": k.size,
                     "logModified": None if k.mtime_ms is None else k.mtime_ms * 1000,
                     "snapshotEndOffset": k.end_offset, "snapshotEpoch": k.epoch})
    return rows


def _index_rows(log, findings: list[Finding], segment_files: frozenset[str] | None = None) -> dict[str, pa.Array]:
    """The entries of the partition's offset and time indexes, as columns: a broker's segment of 1 GiB has some
    260,000 entries in each index, too many to build a row at a time. ``segment_files`` (the source's
    ``segmentFiles``): only the indexes of the segments whose `.log` is listed, or that have none, are read (their
    entries and problem rows); the segments view, which reads every index, has the others' problems too."""
    from ..log.index_entry_checks import read_entries

    parts: list[dict[str, pa.Array]] = []
    for seg in log.segments:
        if segment_files is not None and seg.log is not None and seg.log not in segment_files:
            continue
        files = [(path, None) if path else None for path in (seg.index, seg.time_index)]
        parts += [_entry_columns(seg, entries) for entries in read_entries(*files, findings)]
    names = ("segmentBaseOffset", "file", "indexType", "slot", "offset", "position", "timestamp", "tier")
    return {name: pa.concat_arrays([part[name] for part in parts]) for name in names} if parts else {}


def _entry_columns(seg, entries) -> dict[str, pa.Array]:
    """One index file's entries (:class:`~kafkalog_spark.log.index_entry_checks.IndexEntries`) of the segment ``seg``
    as the index view's columns."""
    n = len(entries.offsets)

    def longs(values: np.ndarray | None) -> pa.Array:
        return pa.nulls(n, pa.int64()) if values is None else pa.array(values, pa.int64())

    return {"segmentBaseOffset": pa.repeat(seg.base_offset, n), "file": pa.repeat(entries.file, n),
            "tier": pa.repeat(seg.tier, n), "indexType": pa.repeat(entries.index_type, n),
            "slot": pa.array(entries.slots.astype(np.int32)), "offset": longs(entries.offsets),
            "position": longs(entries.positions), "timestamp": longs(entries.timestamps)}


def _partition_file_rows(log, findings: list[Finding], filesystem=None, checkpoints=None) -> list[dict]:
    from ..log.checkpoints import (
        LEADER_EPOCH_CHECKPOINT,
        PARTITION_METADATA,
        LeaderEpochCheckpointFile,
        PartitionMetadataFile,
    )
    from ..log.producer_snapshot import ProducerStateSnapshot
    from ..log.quorum_state import QUORUM_STATE, QuorumStateFile
    from ..log.transaction_index import TransactionIndex

    rows: list[dict] = []

    def add(parsed, file_type: str, entries: list[dict]) -> None:
        findings.extend(parsed.findings)
        rows.extend({"file": parsed.path, "fileType": file_type, "entry": i} | e for i, e in enumerate(entries))

    if LEADER_EPOCH_CHECKPOINT in log.other_files:
        f = LeaderEpochCheckpointFile.read(log.other_files[LEADER_EPOCH_CHECKPOINT], filesystem)
        add(f, LEADER_EPOCH_CHECKPOINT, [{"epoch": e.epoch, "startOffset": e.start_offset} for e in f.entries])
    if PARTITION_METADATA in log.other_files:
        f = PartitionMetadataFile.read(log.other_files[PARTITION_METADATA], filesystem)
        add(f, PARTITION_METADATA, [{"topicId": f.topic_id}])
    if QUORUM_STATE in log.other_files:
        f = QuorumStateFile.read(log.other_files[QUORUM_STATE], filesystem)
        add(f, QUORUM_STATE, [] if f.findings else [
            {"epoch": f.leader_epoch, "leaderId": f.leader_id, "votedId": f.voted_id}])
    for offset, path in log.snapshots.items():
        f = ProducerStateSnapshot.read(path, filesystem)
        add(f, "producer-snapshot", [
            {"offset": offset, "producerId": p.producer_id, "producerEpoch": p.producer_epoch,
             "lastSequence": p.last_sequence, "lastOffset": p.last_offset, "offsetDelta": p.offset_delta,
             "timestamp": p.timestamp, "coordinatorEpoch": p.coordinator_epoch,
             "currentTxnFirstOffset": p.current_txn_first_offset} for p in f.producers])
    for seg in log.segments:
        if seg.txn_index:
            f = TransactionIndex.read(seg.txn_index, filesystem)
            add(f, "txnindex", [{"producerId": t.producer_id, "firstOffset": t.first_offset,
                                 "lastOffset": t.last_offset, "lastStableOffset": t.last_stable_offset}
                                for t in f.aborted_txns])
    for name, f in (checkpoints or {}).items():
        # A root checkpoint present without a line for this partition is a row too (no entry, no offset): what a
        # loading broker assumes differs between no line (normal for log-start-offset-checkpoint) and no file.
        offset = f.offsets.get((log.topic, log.partition))
        rows.append({"file": f.path, "fileType": name, "entry": None if offset is None else 0, "offset": offset})
    return rows


_ROWS = {"segments": _segment_rows, "partition_files": _partition_file_rows}  # the index view: _index_rows


def read_partition_views(partition_logs: list, opts, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The rows of a view that reads partition dirs (not `.log` files), from the driver's listing of them."""
    from ..log.checkpoints import read_root_checkpoints
    from ..log.files import resolve
    from ..log.object_stores import prefetch_listing, remember_listing

    roots: dict[str, dict] = {}
    for log in partition_logs:
        remember_listing(log.path, log.file_sizes)
        if not opts.kraft_snapshots:
            log.kraft_snapshots = []
        root = log.log_dir
        if opts.view == "partition_files" and root not in roots:
            prefetch_listing(*resolve(root), recursive=False)  # in a store: one LIST, not a HEAD per checkpoint
            roots[root] = read_root_checkpoints(root)
        findings: list[Finding] = list(log.findings)  # a dir that cannot be listed, a FIFO named like a segment
        if opts.view in STATE_SCHEMAS:
            rows = state_rows(opts.view, log, findings)
        elif opts.view == "index":
            rows = _index_rows(log, findings, opts.segment_files)
        else:
            rows = _ROWS[opts.view](log, findings, None, roots.get(root))
        check_failfast(opts, findings)
        location = {"topic": log.topic, "partition": log.partition, "logDir": root}
        if isinstance(rows, dict):  # columns already (the index view)
            if rows:
                yield _columns_batch(rows, location, schema)
        elif rows:
            columns = {f.name: [(location | r).get(f.name) for r in rows] for f in schema}
            yield pa.RecordBatch.from_pydict(columns, schema=schema)
        if findings:
            yield problem_rows(findings, log.topic, log.partition, None, schema, root)


def _columns_batch(columns: dict[str, pa.Array], location: dict, schema: pa.Schema) -> pa.RecordBatch:
    """A view's rows given as columns, with the partition's ``location`` and null for the columns not given."""
    n = len(next(iter(columns.values())))
    arrays = [columns[f.name].cast(f.type) if f.name in columns
              else pa.repeat(pa.scalar(location.get(f.name), f.type), n) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
