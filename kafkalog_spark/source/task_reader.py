"""What a Spark task does (in the executor's Python worker): decode its splits into Arrow batches with
the view's exact schema, apply isolation and the accepted filters, and turn findings into problem rows
(PERMISSIVE) or a failure naming the file and byte position (FAILFAST)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from ..findings import Finding
from ..log.aborted_transactions import AbortedTransactions
from ..log.batch_checks import BATCH_COLUMNS as BATCH_CHECK_COLUMNS
from ..log.batch_checks import segment_batch_findings
from ..log.files import normalize_path
from ..log.index_entry_checks import BATCH_COLUMNS as ENTRY_CHECK_COLUMNS
from ..log.index_entry_checks import read_entries, segment_entry_findings
from ..log.page_cache import left_as_found
from ..log.reader import iter_segment
from ..log.segment_facts import BATCH_COLUMNS as SUMMARY_COLUMNS
from ..log.segment_facts import batch_summary_row
from ..schemas import arrow_schema
from .filters import Pushdown
from .internal_views import decoded_columns
from .options import SourceOptions
from .problems import check_failfast, log_dir_of, problem_rows
from .views import (
    BATCH_FINDINGS_PART,
    BATCH_SUMMARY_PART,
    DECODED_PARTS,
    DECODED_PROBLEM_PARTS,
    DECODED_VIEW,
    ENTRY_FINDINGS_PART,
    read_partition_views,
)


def _with_source_columns(batch: pa.RecordBatch, schema: pa.Schema, log_dir: str, opts: SourceOptions,
                         split, view: str | None = None) -> pa.RecordBatch:
    """A view's decoded rows (of ``view``, by default the one read) with the columns the source adds."""
    n = batch.num_rows
    internal = (view or opts.view) == "records" and opts.decode_internal
    decoded = decoded_columns(batch, split.topic) if internal else []
    tier = [pa.repeat(split.tier, n)] if opts.remote_tier else []
    return pa.RecordBatch.from_arrays([*batch.columns, *decoded, *tier, pa.array([log_dir] * n, pa.string()),
                                       pa.nulls(n, schema.field("problem").type)], schema=schema)


def committed_mask(batch: pa.RecordBatch, aborted: AbortedTransactions) -> np.ndarray:
    """read_committed: drop control records and the records of aborted transactions."""
    control = batch.column("isControl").to_numpy(zero_copy_only=False).astype(bool)
    if not aborted:
        return ~control
    transactional = batch.column("isTransactional").to_numpy(zero_copy_only=False).astype(bool) & ~control
    return ~control & ~aborted.mask(batch.column("producerId").to_numpy(zero_copy_only=False),
                                    batch.column("offset").to_numpy(zero_copy_only=False), transactional)


def read_splits(splits, opts: SourceOptions, pushdown: Pushdown, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    for split in splits:
        local = normalize_path(split.path)
        if opts.drop_cache and "://" not in local:
            with left_as_found(local, split.start, split.end):
                yield from _split_rows(split, opts, pushdown, schema)
        else:
            yield from _split_rows(split, opts, pushdown, schema)


def _split_rows(split, opts: SourceOptions, pushdown: Pushdown, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    aborted = AbortedTransactions(split.aborted)
    log_dir = split.log_dir or log_dir_of(split.path)
    if opts.view == DECODED_VIEW:
        yield from _decoded_view_rows(split, opts, schema, log_dir, aborted)
        return
    findings: list[Finding] = []
    decoded = (_record_stats(split, opts, findings, aborted) if opts.view == "record_stats"
               else _decoded(split, opts, pushdown, findings, aborted))
    for batch in decoded:
        batch = _with_source_columns(batch, schema, log_dir, opts, split)
        table = pushdown.apply(pa.Table.from_batches([batch]))
        yield from table.to_batches()
    check_failfast(opts, findings)
    if findings:
        table = pushdown.apply(pa.Table.from_batches([_split_problems(findings, split, schema, log_dir, opts)]))
        yield from table.to_batches()


def _split_problems(findings: list[Finding], split, schema: pa.Schema, log_dir: str,
                    opts: SourceOptions) -> pa.RecordBatch:
    problems = problem_rows(findings, split.topic, split.partition, split.base_offset, schema, log_dir)
    if opts.remote_tier:  # a remote segment's problems are the remote tier's
        problems = problems.set_column(schema.get_field_index("tier"), "tier",
                                       pa.repeat(split.tier, problems.num_rows))
    return problems


def _decoded_view_rows(split, opts: SourceOptions, schema: pa.Schema, log_dir: str,
                       aborted: AbortedTransactions) -> Iterator[pa.RecordBatch]:
    """The decoded view's rows of the split (a whole segment): each row one of its parts'
    (:data:`~.views.DECODED_PARTS`), as the part's own view has it, in that part's struct column. One read of the
    split, one decode of its records: the batches view's rows and problems, the record_stats view's, the records
    view's control records (without problem rows, as a read of the records view filtered on ``isControl`` has them),
    and, of a segment (a KRaft snapshot is none), what :func:`_segment_fact_rows` computes of it."""
    from ..format.records import BatchBytes
    from ..log.reader import iter_segment_once
    from ..log.record_stats import RecordStats

    parts = {part: _part_schema(schema, part) for part in DECODED_PARTS}
    found: dict[str, list[Finding]] = {part: [] for part in DECODED_PROBLEM_PARTS}
    sizes = BatchBytes()
    stats = RecordStats(aborted, sizes)
    summarized = split.base_offset is not None
    batch_rows: list[pa.RecordBatch] = []
    for part, batch in iter_segment_once(split.path, found["batches"], found["record_stats"], start=split.start,
                                         end=split.end, topic=split.topic, partition=split.partition,
                                         chunk_bytes=opts.chunk_bytes, max_decompressed=opts.max_decompressed_bytes,
                                         file_size=split.file_size, base_offset=split.base_offset, sizes=sizes):
        for findings in found.values():
            check_failfast(opts, findings)
        if part == "records":
            stats.add(batch)
            batch = batch.filter(batch.column("isControl"))
            if not batch.num_rows:
                continue
        elif summarized:
            batch_rows.append(batch.select(_KEPT_COLUMNS))
        yield _in_part(schema, part, _with_source_columns(batch, parts[part], log_dir, opts, split, part))
    stats_row = _with_source_columns(_record_stats_row(split, stats), parts["record_stats"], log_dir, opts, split,
                                     "record_stats")
    yield _in_part(schema, "record_stats", stats_row)
    if summarized:
        yield from _segment_fact_rows(split, batch_rows, schema, parts, log_dir)
    for part, findings in found.items():
        if findings:
            yield _in_part(schema, part, _split_problems(findings, split, parts[part], log_dir, opts))


# what the task keeps of a segment's batch rows: the columns of what it computes of the segment
_KEPT_COLUMNS = list(dict.fromkeys((*SUMMARY_COLUMNS, *ENTRY_CHECK_COLUMNS, *BATCH_CHECK_COLUMNS)))


def _segment_fact_rows(split, batch_rows: list[pa.RecordBatch], schema: pa.Schema, parts: dict[str, pa.Schema],
                       log_dir: str) -> Iterator[pa.RecordBatch]:
    """What the task computes of a segment from its batch rows (``batch_rows``: :data:`_KEPT_COLUMNS`): its batch
    summary, the findings of its batches among themselves, and those of its index entries, read here (each file's
    size as listed, so a store is asked for nothing but its bytes)."""
    table = pa.Table.from_batches(batch_rows) if batch_rows else None
    summary = batch_summary_row(table) if table is not None else None
    if summary is not None:
        keys = {"logDir": log_dir, "topic": split.topic, "partition": split.partition,
                "segmentBaseOffset": split.base_offset, "tier": split.tier}
        row = pa.RecordBatch.from_pylist([keys | summary], schema=parts[BATCH_SUMMARY_PART])
        yield _in_part(schema, BATCH_SUMMARY_PART, row)
    key = {"logDir": log_dir, "topic": split.topic, "partition": split.partition, "baseOffset": split.base_offset}
    indexes = read_entries(split.index, split.time_index)
    for part, rows in ((BATCH_FINDINGS_PART, segment_batch_findings(key, split.path, table)),
                       (ENTRY_FINDINGS_PART, segment_entry_findings(key, table, indexes, split.file_size))):
        if rows:
            yield _in_part(schema, part, pa.RecordBatch.from_pylist(rows, schema=parts[part]))


def _part_schema(schema: pa.Schema, part: str) -> pa.Schema:
    """The schema of one part of the decoded view (its struct column's fields): that view's own."""
    return pa.schema(list(schema.field(part).type))


def _in_part(schema: pa.Schema, part: str, batch: pa.RecordBatch) -> pa.RecordBatch:
    """Rows of one part of the decoded view: ``batch`` in the part's struct column, the other parts null."""
    n = batch.num_rows
    return pa.RecordBatch.from_arrays(
        [pa.StructArray.from_arrays(batch.columns, fields=list(batch.schema)) if f.name == part
         else pa.nulls(n, f.type) for f in schema], schema=schema)


def _segment_batches(split, opts: SourceOptions, findings: list[Finding], **kwargs) -> Iterator[pa.RecordBatch]:
    view = "batches" if opts.view == "batches" else "records"
    for batch in iter_segment(split.path, view, findings, start=split.start, end=split.end, topic=split.topic,
                              partition=split.partition, chunk_bytes=opts.chunk_bytes,
                              max_decompressed=opts.max_decompressed_bytes, file_size=split.file_size,
                              base_offset=split.base_offset, **kwargs):
        check_failfast(opts, findings)
        yield batch


def _decoded(split, opts: SourceOptions, pushdown: Pushdown, findings: list[Finding],
             aborted: AbortedTransactions) -> Iterator[pa.RecordBatch]:
    control_only = opts.view == "records" and pushdown.control_only()
    for batch in _segment_batches(split, opts, findings, control_only=control_only):
        if opts.view == "records" and opts.isolation == "read_committed":
            batch = batch.filter(pa.array(committed_mask(batch, aborted)))
        yield batch


def _record_stats(split, opts: SourceOptions, findings: list[Finding],
                  aborted: AbortedTransactions) -> Iterator[pa.RecordBatch]:
    """The split's one row of the record_stats view: its records aggregated as they are decoded."""
    from ..format.records import BatchBytes
    from ..log.record_stats import RecordStats

    sizes = BatchBytes()
    stats = RecordStats(aborted, sizes)
    for batch in _segment_batches(split, opts, findings, sizes=sizes):
        stats.add(batch)
    yield _record_stats_row(split, stats)


def _record_stats_row(split, stats) -> pa.RecordBatch:
    """The record_stats view's row of ``split`` from its records' aggregates
    (:class:`~kafkalog_spark.log.record_stats.RecordStats`)."""
    from ..log.log_dir import KRaftSnapshot
    from ..schemas import RECORD_STATS

    snapshot = KRaftSnapshot.parse(split.path)
    row = {"topic": split.topic, "partition": split.partition, "segmentBaseOffset": split.base_offset,
           "position": split.start, "snapshotEndOffset": snapshot.end_offset if snapshot else None,
           "snapshotEpoch": snapshot.epoch if snapshot else None} | stats.row()
    return pa.RecordBatch.from_pylist([row], schema=arrow_schema(RECORD_STATS))


def listing_problem_rows(problems, opts: SourceOptions, pushdown: Pushdown,
                         schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The driver's listing problems (a directory that cannot be listed, a FIFO named like a segment) as rows,
    or the failure naming the first (FAILFAST). The decoded view has them in the parts that have problem rows."""
    check_failfast(opts, [p.finding for p in problems])
    for p in problems:
        if opts.view == DECODED_VIEW:
            for part in DECODED_PROBLEM_PARTS:
                yield _in_part(schema, part, problem_rows([p.finding], p.topic, p.partition, None,
                                                          _part_schema(schema, part), p.log_dir))
            continue
        rows = problem_rows([p.finding], p.topic, p.partition, None, schema, p.log_dir)
        yield from pushdown.apply(pa.Table.from_batches([rows])).to_batches()


def read_group(group, opts: SourceOptions, pushdown: Pushdown, spark_schema) -> Iterator[pa.RecordBatch]:
    schema = arrow_schema(spark_schema)
    yield from listing_problem_rows(group.problems, opts, pushdown, schema)
    if group.splits:
        yield from read_splits(group.splits, opts, pushdown, schema)
    if group.partition_dirs:
        for batch in read_partition_views(group.partition_dirs, opts, schema):
            yield from pushdown.apply(pa.Table.from_batches([batch], schema=schema)).to_batches()
