"""Split planning on the driver: directory listings and index files only, never a `.log` scan
(except a header hop over a large segment whose index is missing or wrong).

One task per segment; a segment larger than ``max_split_bytes`` is cut at batch boundaries found through
its `.index` so one big segment uses every core (not for the views of :data:`~.options.WHOLE_SEGMENT_VIEWS`, whose
task reads each segment whole); small segments are grouped (each costing at least
``open_cost_bytes``, like Spark's file sources) so 10,000 tiny segments do not become 10,000 tasks.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pyarrow.fs as pafs

from ..findings import Finding, KafkaLogError
from ..log.files import open_read
from ..log.log_dir import INDEX_SUFFIX, TIME_INDEX_SUFFIX, LogSegment, PartitionLog, find_partitions
from .filters import Pushdown
from .options import WHOLE_SEGMENT_VIEWS, SourceOptions


@dataclass(frozen=True)
class SegmentSplit:
    """Entries of one `.log` file starting in [start, end) (end None: to the end of the file)."""

    path: str
    topic: str
    partition: int
    base_offset: int | None  # None for a KRaft snapshot (`.checkpoint`), read whole as one split
    start: int
    end: int | None
    size: int  # bytes this split covers, for grouping
    aborted: tuple[tuple[int, int, int], ...] = ()  # (producerId, firstOffset, lastOffset) of the partition
    file_size: int | None = None  # the file's size as listed (an object store then opens it without a request)
    tier: str = "local"  # "remote": a tiered segment's copy in the remote store (the base offset not in its name)
    log_dir: str | None = None  # a remote segment's partition's log dir (a local one's is its file's)
    # the segment's `.index` and `.timeindex` with their sizes, as listed (None: it has none)
    index: tuple[str, int | None] | None = None
    time_index: tuple[str, int | None] | None = None


@dataclass(frozen=True)
class ListingProblem:
    """A finding of the driver's listing, which no task would see otherwise, with the location of its rows: a
    partition's, or none for a log dir that cannot be listed (its ``logDir`` is then the dir itself)."""

    finding: Finding
    topic: str | None
    partition: int | None
    log_dir: str


def _log_dir_problems(findings: list[Finding]) -> list[ListingProblem]:
    return [ListingProblem(f, None, None, f.file) for f in findings]


def select_partitions(opts: SourceOptions, pushdown: Pushdown, filesystem: pafs.FileSystem | None = None,
                      findings: list[Finding] | None = None) -> list[PartitionLog]:
    """The live partition dirs the options and filters select. A log dir that cannot be listed adds a finding
    to ``findings`` (see :func:`find_partitions`); a partition dir's listing findings stay on it. With a remote
    store (``remoteStorage``, for the views of TIERED_VIEWS) a tiered partition's remote segments come first
    (:func:`.remote_tier.add_remote_tier`); the store's own findings go to ``findings`` too."""
    every = find_partitions(list(opts.paths), filesystem, findings)

    def wanted(topic: str, partition: int) -> bool:
        return opts.wants_topic(topic) and pushdown.accepts("topic", topic) and pushdown.accepts("partition", partition)

    chosen = [p for p in every if p.topic_partition.kind == "live" and wanted(p.topic, p.partition)]
    if opts.remote_tier:
        from .remote_tier import add_remote_tier

        store_findings = add_remote_tier(chosen, every, opts.remote_storage, wanted, filesystem)
        if findings is None and store_findings:
            raise KafkaLogError(store_findings[0])
        findings = [] if findings is None else findings
        findings += store_findings
    return chosen


def _offset_range_prunes(pushdown: Pushdown, first: int, last: int | None) -> bool:
    """True when no offset in [first, last] can pass the offset predicates (last None: unbounded)."""
    low, high = pushdown.lower_bound("offset"), pushdown.upper_bound("offset")
    return (high is not None and high < first) or (low is not None and last is not None and low > last)


def _segment_max_timestamp(seg: LogSegment, filesystem) -> int | None:
    from ..log.time_index import TimeIndex

    if seg.time_index is None or seg.is_active:
        return None  # the active segment grows past its last time index entry
    index = TimeIndex.read(seg.time_index, filesystem)
    if index.findings or len(index.timestamps) == 0:
        return None
    return int(index.timestamps[-1])


def _to_ms(value) -> int:
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.astimezone()
        return int(aware.timestamp() * 1000) - 1  # round down: pruning must never drop a passing row
    return int(value)


def prune_segments(log: PartitionLog, pushdown: Pushdown, view: str, filesystem=None,
                   only: frozenset[str] | None = None) -> list[LogSegment]:
    """The segments of a partition that may hold rows passing the pushed filters (and, given ``only``, whose
    `.log` is one of those files)."""
    out = []
    segs = log.segments
    ts_low = pushdown.lower_bound("timestamp") if view == "records" else None
    for i, seg in enumerate(segs):
        last = segs[i + 1].base_offset - 1 if i + 1 < len(segs) else None
        if only is not None and seg.log not in only:
            continue
        if not pushdown.accepts("segmentBaseOffset", seg.base_offset) and view != "segments":
            continue
        if view == "segments" and not pushdown.accepts("baseOffset", seg.base_offset):
            continue
        if view == "records" and _offset_range_prunes(pushdown, seg.base_offset, last):
            continue
        if ts_low is not None:
            max_ts = _segment_max_timestamp(seg, filesystem)
            if max_ts is not None and max_ts < _to_ms(ts_low):
                continue
        out.append(seg)
    return out


def _is_boundary(f, position: int, base_offset: int, indexed_offset: int) -> bool:
    """Does a batch start at ``position`` (an index entry), holding offsets up to the indexed one?"""
    head = f.read_at(17, position)
    if len(head) < 17:
        return False
    first = int.from_bytes(head[0:8], "big", signed=True)
    size = int.from_bytes(head[8:12], "big", signed=True)
    return head[16] in (0, 1, 2) and size >= 14 and base_offset <= first <= indexed_offset


def _hop_boundaries(f, size: int) -> list[int]:
    """Every batch start, read header by header (12 bytes each): the fallback when the index fails."""
    out, pos = [], 0
    while pos + 17 <= size:
        head = f.read_at(12, pos)
        n = int.from_bytes(head[8:12], "big", signed=True)
        if n < 14 or pos + 12 + n > size:
            break
        out.append(pos)
        pos += 12 + n
    return out


def split_points(seg: LogSegment, max_split_bytes: int, start: int, filesystem=None) -> list[int]:
    """Batch-boundary positions cutting [start, log size) into pieces of about ``max_split_bytes``."""
    from ..log.offset_index import OffsetIndex

    size = seg.log_size
    if size - start <= max_split_bytes:
        return [start]
    candidates: list[tuple[int, int]] = []
    if seg.index is not None:
        index = OffsetIndex.read(seg.index, filesystem)
        candidates = list(zip(index.positions.tolist(), index.offsets.tolist(), strict=True))
    points = [start]
    with open_read(seg.log, filesystem) as f:
        chosen = _thin(candidates, start, max_split_bytes)
        if chosen and all(_is_boundary(f, p, seg.base_offset, o) for p, o in chosen):
            points += [p for p, _ in chosen]
        else:
            points += [p for p, _ in _thin([(p, 0) for p in _hop_boundaries(f, size)], start, max_split_bytes)]
    return points


def _thin(candidates: list[tuple[int, int]], start: int, step: int) -> list[tuple[int, int]]:
    out, next_cut = [], start + step
    for pos, off in candidates:
        if pos >= next_cut:
            out.append((pos, off))
            next_cut = pos + step
    return out


def seek_position(seg: LogSegment, pushdown: Pushdown, filesystem=None) -> int:
    """Where to start reading a segment for the lowest offset the filters allow (0: from the start)."""
    from ..log.offset_index import OffsetIndex

    low = pushdown.lower_bound("offset")
    if low is None or seg.index is None or low <= seg.base_offset:
        return 0
    index = OffsetIndex.read(seg.index, filesystem)
    if index.findings:
        return 0  # a damaged index could make us skip rows: read from the start instead
    offset, position = index.lookup(low)
    if position == 0:
        return 0
    with open_read(seg.log, filesystem) as f:
        return position if _is_boundary(f, position, seg.base_offset, offset) else 0


def aborted_transactions(log: PartitionLog, filesystem=None) -> tuple[tuple[int, int, int], ...]:
    from ..log.transaction_index import TransactionIndex

    out = []
    for seg in log.segments:
        if seg.txn_index is not None:
            out += [(t.producer_id, t.first_offset, t.last_offset)
                    for t in TransactionIndex.read(seg.txn_index, filesystem).aborted_txns]
    return tuple(out)


def _listed_indexes(seg: LogSegment) -> tuple[tuple[str, int | None] | None, tuple[str, int | None] | None]:
    """The segment's `.index` and `.timeindex` with their listed sizes (None for one it has not)."""
    return tuple((path, seg.sizes.get(suffix)) if path else None
                 for path, suffix in ((seg.index, INDEX_SUFFIX), (seg.time_index, TIME_INDEX_SUFFIX)))


def plan_splits(opts: SourceOptions, pushdown: Pushdown, filesystem=None,
                problems: list[ListingProblem] | None = None) -> list[SegmentSplit]:
    """The splits to read; what the listings find wrong (a directory that cannot be listed, a FIFO named like
    a segment) goes to ``problems``, for a task to turn into rows."""
    splits = []
    log_dir_findings: list[Finding] = []
    for log in select_partitions(opts, pushdown, filesystem, log_dir_findings):
        if problems is not None:
            problems += [ListingProblem(f, log.topic, log.partition, log.log_dir) for f in log.findings]
        # read_committed drops the aborted records; record_stats counts them (so does the decoded view's part)
        wanted = opts.isolation == "read_committed" or opts.view in ("record_stats", "decoded")
        aborted = aborted_transactions(log, filesystem) if wanted else ()
        for seg in prune_segments(log, pushdown, opts.view, filesystem, opts.segment_files):
            if seg.log is None:
                continue
            start = seek_position(seg, pushdown, filesystem) if opts.view == "records" else 0
            points = ([start] if opts.view in WHOLE_SEGMENT_VIEWS
                      else split_points(seg, opts.max_split_bytes, start, filesystem))
            for a, b in zip(points, [*points[1:], None], strict=True):
                splits.append(SegmentSplit(seg.log, log.topic, log.partition, seg.base_offset, a, b,
                                           (b if b is not None else seg.log_size) - a, aborted, seg.log_size,
                                           seg.tier, log.log_dir if seg.tier == "remote" else None,
                                           *_listed_indexes(seg)))
        if opts.kraft_snapshots and pushdown.accepts("segmentBaseOffset", None):
            # Snapshots are small (the metadata state, not its history) and hold no transactions.
            splits += [SegmentSplit(s.path, log.topic, log.partition, None, 0, None, s.size, (), s.size)
                       for s in log.kraft_snapshots
                       if s.state == "snapshot" and (opts.segment_files is None or s.path in opts.segment_files)]
    if problems is not None:
        problems += _log_dir_problems(log_dir_findings)
    return splits


def plan_partition_dirs(opts: SourceOptions, pushdown: Pushdown, filesystem=None,
                        problems: list[ListingProblem] | None = None) -> list[PartitionLog]:
    """The partition dirs, as listed, that the views that read no `.log` read on the executors (each partition
    dir's listing problems travel with it); the log dirs' listing problems go to ``problems``. The executors take
    this listing rather than list again: every view of one plan sees the same files, and an object store is
    listed once."""
    log_dir_findings: list[Finding] = []
    logs = select_partitions(opts, pushdown, filesystem, log_dir_findings)
    if problems is not None:
        problems += _log_dir_problems(log_dir_findings)
    return logs


def group_splits(splits: list[SegmentSplit], max_bytes: int, open_cost: int) -> list[list[SegmentSplit]]:
    """Pack splits, in order, into groups of about ``max_bytes`` (each costing at least ``open_cost``)."""
    groups: list[list[SegmentSplit]] = []
    current: list[SegmentSplit] = []
    used = 0
    for s in splits:
        cost = max(s.size, open_cost)
        if current and used + cost > max_bytes:
            groups.append(current)
            current, used = [], 0
        current.append(s)
        used += cost
    if current:
        groups.append(current)
    return groups
