"""The Python API for notebooks and tests: read log files, partition dirs or log dirs into Arrow.

    >>> import kafkalog_spark
    >>> table = kafkalog_spark.read_log("/var/lib/kafka/data/orders-0", view="records")

Problems in the files never raise in the default PERMISSIVE mode: they become :class:`Finding`s,
appended to the ``findings`` list you pass, or emitted as :class:`KafkaLogWarning` when you pass none.
FAILFAST raises :class:`KafkaLogError` at the first error.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.fs as pafs

from ..findings import Finding, KafkaLogError, Severity
from ..format.batches import SegmentContext, batches_view, view_schema
from ..format.compression import DEFAULT_MAX_DECOMPRESSED
from ..format.records import BatchBytes, records_view
from ..schemas import BATCHES, RECORDS
from .file_records import DEFAULT_CHUNK_BYTES, Chunk, FileRecords, require_positive
from .files import expand_paths, os_error_detail, resolve
from .log_dir import LOG_SUFFIX, KRaftSnapshot, find_partitions, segment_of_file

VIEWS = {"records": RECORDS, "batches": BATCHES}


class KafkaLogWarning(UserWarning):
    """A finding reported while reading, when the caller did not ask to collect findings."""


def iter_segment(path: str, view: str = "records", findings: list[Finding] | None = None, *,
                 start: int = 0, end: int | None = None, filesystem: pafs.FileSystem | None = None,
                 topic: str | None = None, partition: int | None = None,
                 chunk_bytes: int = DEFAULT_CHUNK_BYTES,
                 max_decompressed: int = DEFAULT_MAX_DECOMPRESSED, control_only: bool = False,
                 sizes: BatchBytes | None = None, file_size: int | None = None,
                 base_offset: int | None = None) -> Iterator[pa.RecordBatch]:
    """Arrow batches of one `.log` file's (or KRaft snapshot's) ``view``, for entries starting in [start, end).
    The records view only: ``control_only`` decodes the control batches alone, ``sizes`` adds up the batches'
    bytes on disk and uncompressed (:class:`~kafkalog_spark.format.records.BatchBytes`). ``file_size``, the size
    a listing gave, spares an object store the request for it; ``base_offset``, the segment's, when the file name
    does not say it (a remote copy's)."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}: expected one of {sorted(VIEWS)}")
    findings = [] if findings is None else findings
    for chunk, ctx in _chunks(path, findings, start, end, filesystem, topic, partition, chunk_bytes,
                              max_decompressed, file_size, base_offset):
        if view == "batches":
            yield batches_view(chunk, ctx, findings)
        else:
            yield from records_view(chunk, ctx, findings, max_decompressed, control_only=control_only, sizes=sizes)


def iter_segment_once(path: str, batch_findings: list[Finding], record_findings: list[Finding], *,
                      start: int = 0, end: int | None = None, filesystem: pafs.FileSystem | None = None,
                      topic: str | None = None, partition: int | None = None,
                      chunk_bytes: int = DEFAULT_CHUNK_BYTES, max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
                      sizes: BatchBytes | None = None, file_size: int | None = None,
                      base_offset: int | None = None) -> Iterator[tuple[str, pa.RecordBatch]]:
    """Both views of :func:`iter_segment` from one read of the file: ``("batches", batch)`` and ``("records",
    batch)`` pairs, chunk by chunk, each view's findings in its own list, as two calls of :func:`iter_segment`
    would report them (what reading the file finds goes to both)."""
    read: list[Finding] = []

    def shared() -> None:
        batch_findings.extend(read)
        record_findings.extend(read)
        read.clear()

    for chunk, ctx in _chunks(path, read, start, end, filesystem, topic, partition, chunk_bytes, max_decompressed,
                              file_size, base_offset):
        shared()
        yield "batches", batches_view(chunk, ctx, batch_findings)
        for batch in records_view(chunk, ctx, record_findings, max_decompressed, sizes=sizes):
            yield "records", batch
    shared()


def _chunks(path: str, findings: list[Finding], start: int, end: int | None, filesystem: pafs.FileSystem | None,
            topic: str | None, partition: int | None, chunk_bytes: int, max_decompressed: int,
            file_size: int | None, base_offset: int | None) -> Iterator[tuple[Chunk, SegmentContext]]:
    """The file's chunks of entries starting in [start, end), with the context its rows and findings carry; a file
    that is missing or cannot be read is a finding."""
    tp, base = segment_of_file(path)
    snapshot = KRaftSnapshot.parse(path)  # record batches too, stamped with the snapshot's id instead
    ctx = SegmentContext(path, topic if topic is not None else (tp.topic if tp else ""),
                         partition if partition is not None else (tp.partition if tp else -1),
                         None if snapshot else (base_offset if base_offset is not None
                                                else base if base is not None else -1),
                         snapshot.end_offset if snapshot else None, snapshot.epoch if snapshot else None)
    require_positive(max_decompressed=max_decompressed)
    fs, inner = resolve(path, filesystem)
    records = FileRecords(inner, fs, chunk_bytes=chunk_bytes, size=file_size)
    records.path = path
    try:  # FileRecords opens regular files only: a FIFO, socket or directory raises, never blocks
        for chunk in records.chunks(findings, start, end):
            yield chunk, ctx
    except FileNotFoundError:
        findings.append(Finding(path, -1, "missing_file", "file not found"))
    except OSError as e:
        findings.append(Finding(path, -1, "unreadable_file", os_error_detail(e)))


def segment_files(paths: str | list[str], filesystem: pafs.FileSystem | None = None, *,
                  kraft_snapshots: bool = True, findings: list[Finding] | None = None) -> list[str]:
    """The live `.log` files under files, partition dirs or log dirs (paths, ``file:`` URIs or globs), in
    topic/partition/offset order, each partition's complete KRaft snapshots after its segments (unless
    ``kraft_snapshots`` is false; a snapshot file named directly is always read). What the listings find
    wrong (a directory that cannot be listed, a FIFO named like a segment) is appended to ``findings``;
    without that list it raises :class:`KafkaLogError`."""
    out = []
    dirs = []
    listed: list[Finding] = []
    for p in expand_paths([paths] if isinstance(paths, str) else paths, filesystem, listed):
        if p.endswith(LOG_SUFFIX) or KRaftSnapshot.parse(p):
            out.append(p)
        else:
            dirs.append(p)
    for log in find_partitions(dirs, filesystem, listed):
        listed += log.findings
        out.extend(s.log for s in log.segments if s.log)
        if kraft_snapshots:
            out.extend(s.path for s in log.kraft_snapshots if s.state == "snapshot")
    if findings is not None:
        findings += listed
    elif listed:
        raise KafkaLogError(listed[0])
    return out


def read_log(paths: str | list[str], view: str = "records", *, findings: list[Finding] | None = None,
             mode: str = "PERMISSIVE", filesystem: pafs.FileSystem | None = None, kraft_snapshots: bool = True,
             **options) -> pa.Table:
    """Read `.log` files, partition dirs or log dirs into one Arrow table of ``view``
    (``"records"`` or ``"batches"``; schemas in :mod:`kafkalog_spark.schemas`). KRaft snapshots
    (`.checkpoint`) of a metadata log are read too, their rows marked by ``snapshotEndOffset``."""
    mode = mode.upper()
    if mode not in ("PERMISSIVE", "FAILFAST"):
        raise ValueError(f"unknown mode {mode!r}: expected PERMISSIVE or FAILFAST")
    require_positive(**{k: v for k, v in options.items() if k in ("chunk_bytes", "max_decompressed")})
    collected: list[Finding] = []
    batches = []
    files = segment_files(paths, filesystem, kraft_snapshots=kraft_snapshots, findings=collected)
    _raise_if_failfast(mode, collected)
    for path in files:
        for batch in iter_segment(path, view, collected, filesystem=filesystem, **options):
            batches.append(batch)
            _raise_if_failfast(mode, collected)
        _raise_if_failfast(mode, collected)
    if findings is not None:
        findings.extend(collected)
    else:
        for f in collected:
            warnings.warn(str(f), KafkaLogWarning, stacklevel=2)
    return pa.Table.from_batches(batches, schema=view_schema(view))


def _raise_if_failfast(mode: str, findings: list[Finding]) -> None:
    if mode == "FAILFAST":
        for f in findings:
            if f.severity == Severity.ERROR:
                raise KafkaLogError(f)
