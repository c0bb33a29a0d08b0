"""What a Spark task does (in the executor's Python worker): decode its splits into Arrow batches with
the view's exact schema, apply isolation and the accepted filters, and turn findings into problem rows
(PERMISSIVE) or a failure naming the file and byte position (FAILFAST)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from ..findings import Finding, KafkaLogError, Severity
from ..reader import iter_segment
from ..schemas import arrow_schema
from .filters import Pushdown
from .options import SourceOptions


def problem_rows(findings: list[Finding], topic: str, partition: int, base_offset: int | None,
                 schema: pa.Schema) -> pa.RecordBatch:
    """Rows carrying only their location and the finding."""
    n = len(findings)
    columns = {f.name: pa.nulls(n, f.type) for f in schema}
    columns["topic"] = pa.array([topic] * n, pa.string())
    columns["partition"] = pa.array([partition] * n, pa.int32())
    for name in ("segmentBaseOffset", "baseOffset"):
        if name in columns and base_offset is not None:
            columns[name] = pa.array([base_offset] * n, pa.int64())
            break
    if "position" in columns:
        columns["position"] = pa.array([f.position for f in findings], pa.int64())
    columns["problem"] = pa.array(
        [{"severity": str(f.severity), "kind": f.kind, "file": f.file, "position": f.position, "detail": f.detail}
         for f in findings],
        schema.field("problem").type,
    )
    return pa.RecordBatch.from_arrays([columns[f.name] for f in schema], schema=schema)


def _with_null_problem(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([*batch.columns, pa.nulls(batch.num_rows, schema.field("problem").type)],
                                      schema=schema)


def committed_mask(batch: pa.RecordBatch, aborted: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    """read_committed: drop control records and records of aborted transactions (from `.txnindex`)."""
    keep = ~batch.column("isControl").to_numpy(zero_copy_only=False).astype(bool)
    if not aborted:
        return keep
    txn = batch.column("isTransactional").to_numpy(zero_copy_only=False).astype(bool)
    pids = batch.column("producerId").to_numpy(zero_copy_only=False)
    offsets = batch.column("offset").to_numpy(zero_copy_only=False)
    ranges = np.array(aborted, np.int64)
    for pid in np.unique(pids[txn]):
        r = ranges[ranges[:, 0] == pid]
        if len(r) == 0:
            continue
        r = r[np.argsort(r[:, 1])]
        rows = np.flatnonzero(txn & (pids == pid))
        i = np.searchsorted(r[:, 1], offsets[rows], side="right") - 1
        hit = (i >= 0) & (offsets[rows] <= r[np.maximum(i, 0), 2])
        keep[rows[hit]] = False
    return keep


def check_failfast(opts: SourceOptions, findings: list[Finding]) -> None:
    if opts.mode == "FAILFAST":
        for f in findings:
            if f.severity == Severity.ERROR:
                raise KafkaLogError(f)


def read_splits(splits, opts: SourceOptions, pushdown: Pushdown, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    for split in splits:
        findings: list[Finding] = []
        for batch in iter_segment(split.path, opts.view, findings, start=split.start, end=split.end,
                                  topic=split.topic, partition=split.partition, chunk_bytes=opts.chunk_bytes,
                                  max_decompressed=opts.max_decompressed_bytes):
            check_failfast(opts, findings)
            if opts.view == "records" and opts.isolation == "read_committed":
                batch = batch.filter(pa.array(committed_mask(batch, split.aborted)))
            table = pushdown.apply(pa.Table.from_batches([_with_null_problem(batch, schema)]))
            yield from table.to_batches()
        check_failfast(opts, findings)
        if findings:
            problems = problem_rows(findings, split.topic, split.partition, split.base_offset, schema)
            table = pushdown.apply(pa.Table.from_batches([problems]))
            yield from table.to_batches()


def read_group(group, opts: SourceOptions, pushdown: Pushdown, spark_schema) -> Iterator[pa.RecordBatch]:
    schema = arrow_schema(spark_schema)
    if group.splits:
        yield from read_splits(group.splits, opts, pushdown, schema)
    if group.partition_dirs:
        from .views import read_partition_views

        for batch in read_partition_views(group.partition_dirs, opts, schema):
            yield from pushdown.apply(pa.Table.from_batches([batch], schema=schema)).to_batches()
