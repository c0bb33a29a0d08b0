"""How findings reach a view's rows: as problem rows (PERMISSIVE) or as a failure (FAILFAST).

Shared by the `.log` views (:mod:`.task_reader`) and the views that read listings and small files (:mod:`.views`).
"""

from __future__ import annotations

import pyarrow as pa

from ..findings import Finding, KafkaLogError, Severity
from .options import SourceOptions


def log_dir_of(path: str) -> str:
    """The broker log dir holding a segment file (``<log dir>/<topic>-<partition>/<file>``)."""
    return path.rstrip("/").rsplit("/", 2)[0]


def problem_rows(findings: list[Finding], topic: str | None, partition: int | None, base_offset: int | None,
                 schema: pa.Schema, log_dir: str) -> pa.RecordBatch:
    """Rows carrying only their location and the finding (no topic-partition: a log dir's own problem)."""
    n = len(findings)
    columns = {f.name: pa.nulls(n, f.type) for f in schema}
    columns["topic"] = pa.array([topic] * n, pa.string())
    columns["logDir"] = pa.array([log_dir] * n, pa.string())
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


def check_failfast(opts: SourceOptions, findings: list[Finding]) -> None:
    if opts.mode == "FAILFAST":
        for f in findings:
            if f.severity == Severity.ERROR:
                raise KafkaLogError(f)
