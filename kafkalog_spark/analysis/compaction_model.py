"""What Kafka's log cleaner would do to one partition now: a pure-Python model, no Spark.

Modelled on Apache Kafka 3.9 (``LogCleanerManager.cleanableOffsets`` / ``calculateCleanableBytes`` /
``maxCompactionDelay`` and ``LogToClean`` for the choice, ``Cleaner.doClean`` / ``buildOffsetMap`` /
``groupSegmentsBySize`` / ``cleanInto`` / ``shouldRetainRecord``, ``CleanedTransactionMetadata`` and
``MemoryRecords.filterTo`` for the pass, ``SkimpyOffsetMap`` for the dedupe buffer, ``ProducerStateManager``
and ``UnifiedLog.lastStableOffset`` for producer state). :mod:`kafkalog_spark.analysis.compaction` feeds it
from the `kafkalog` views and turns its results into DataFrames.

Keys never reach this module: records carry a key hash (MD5 hex, as the cleaner's offset map hashes keys).
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
BATCH_OVERHEAD = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD: a v2 batch header
HASH_BYTES = 16  # MD5, CleanerConfig.HASH_ALGORITHM
MAP_ENTRY_BYTES = HASH_BYTES + 8  # SkimpyOffsetMap.bytesPerEntry: hash + offset


def varint_size(value: int) -> int:
    """Bytes of a zig-zag varint/varlong (ByteUtils.sizeOfVarint / sizeOfVarlong)."""
    v = (value << 1) ^ (value >> 63) if value < 0 else value << 1
    size = 1
    while v >= 0x80:
        v >>= 7
        size += 1
    return size


# --------------------------------------------------------------------------------------------------
# Settings


@dataclass(frozen=True)
class CleanerSettings:
    """The topic and broker settings the cleaner reads, with Kafka 3.9's defaults."""

    cleanup_policy: frozenset[str] = frozenset({"delete"})
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    delete_retention_ms: int = 86400000
    segment_bytes: int = 1073741824
    segment_index_bytes: int = 10485760
    dedupe_buffer_size: int = 134217728  # log.cleaner.dedupe.buffer.size (all threads)
    cleaner_threads: int = 1  # log.cleaner.threads
    dedupe_load_factor: float = 0.9  # log.cleaner.io.buffer.load.factor
    producer_id_expiration_ms: int = 86400000  # producer.id.expiration.ms
    cleaner_enabled: bool = True  # log.cleaner.enable (deprecated in 3.9, still honoured)

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def map_slots(self) -> int:
        """SkimpyOffsetMap slots of one cleaner thread: min(buffer / threads, Int.MAX) / 24."""
        memory = min(self.dedupe_buffer_size // max(self.cleaner_threads, 1), INT_MAX)
        return memory // MAP_ENTRY_BYTES

    @property
    def map_capacity(self) -> int:
        """Entries the cleaner puts before it calls the map full (``maxDesiredMapSize``)."""
        return int(self.map_slots * self.dedupe_load_factor)


_SETTING_KEYS = {
    "cleanup_policy": "cleanup.policy",
    "min_cleanable_dirty_ratio": "min.cleanable.dirty.ratio",
    "min_compaction_lag_ms": "min.compaction.lag.ms",
    "max_compaction_lag_ms": "max.compaction.lag.ms",
    "delete_retention_ms": "delete.retention.ms",
    "segment_bytes": "segment.bytes",
    "segment_index_bytes": "segment.index.bytes",
    "dedupe_buffer_size": "log.cleaner.dedupe.buffer.size",
    "cleaner_threads": "log.cleaner.threads",
    "dedupe_load_factor": "log.cleaner.io.buffer.load.factor",
    "producer_id_expiration_ms": "producer.id.expiration.ms",
    "cleaner_enabled": "log.cleaner.enable",
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _lookup(config: Any, attr: str, key: str) -> Any:
    """A setting from a mapping of Kafka names or an object with snake_case / camelCase attributes."""
    if config is None:
        return None
    if isinstance(config, Mapping):
        for k in (key, attr, _camel(attr)):
            if k in config:
                return config[k]
        return None
    for name in (attr, _camel(attr), key.replace(".", "_")):
        if hasattr(config, name):
            return getattr(config, name)
    getter = getattr(config, "get", None)
    if callable(getter):
        try:
            return getter(key)
        except (KeyError, TypeError, ValueError):
            return None
    return None


def _policy(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset(p.strip().lower() for p in value.split(",") if p.strip())
    return frozenset(str(p).strip().lower() for p in value)


def settings_from(config: Any, **overrides: Any) -> CleanerSettings:
    """CleanerSettings from a ``TopicConfig`` (kafkalog_spark.config.topic_config), a mapping of Kafka
    config names (``{"cleanup.policy": "compact", ...}``), or None (Kafka's defaults)."""
    if isinstance(config, CleanerSettings):
        values = {k: getattr(config, k) for k in _SETTING_KEYS}
    else:
        values = {}
        for attr, key in _SETTING_KEYS.items():
            v = _lookup(config, attr, key)
            if v is not None:
                values[attr] = v
    values.update({k: v for k, v in overrides.items() if v is not None})
    out: dict[str, Any] = {}
    for attr, v in values.items():
        if attr == "cleanup_policy":
            out[attr] = _policy(v)
        elif attr in ("min_cleanable_dirty_ratio", "dedupe_load_factor"):
            out[attr] = float(v)
        elif attr == "cleaner_enabled":
            out[attr] = v if isinstance(v, bool) else str(v).strip().lower() == "true"
        else:
            out[attr] = int(v)
    return CleanerSettings(**out)


# --------------------------------------------------------------------------------------------------
# Inputs


@dataclass(slots=True)
class Segment:
    base_offset: int
    log_size: int
    index_size: int | None = None  # bytes of the .index file (None: absent)
    time_index_size: int | None = None
    is_active: bool = False
    mtime_ms: int = 0  # the .log file's last modified time
    max_indexed_timestamp: int | None = None  # the last .timeindex entry's timestamp (None: no entry/file)


@dataclass(slots=True)
class Record:
    offset: int
    key_hash: str | None  # None: no key
    has_value: bool  # False: a tombstone
    timestamp: int = -1
    body_without_timestamp: int | None = None  # v2 record body bytes minus the timestamp-delta varlong
    legacy_size: int | None = None  # v0/v1: entry bytes (offset + size + message), uncompressed


@dataclass(slots=True)
class Batch:
    segment: int  # base offset of the segment holding it
    position: int
    size: int
    base_offset: int
    last_offset: int
    magic: int = 2
    compressed: bool = False
    is_control: bool = False
    is_transactional: bool = False
    control_type: str | None = None  # of its (single) control record; None for an empty control batch
    producer_id: int = -1
    producer_epoch: int = -1
    delete_horizon_ms: int | None = None
    base_timestamp: int = -1
    max_timestamp: int = -1
    log_append_time: bool = False
    records: list[Record] = field(default_factory=list)


@dataclass(slots=True)
class ProducerEntry:
    producer_id: int
    producer_epoch: int
    last_data_offset: int  # -1: no batch metadata
    last_timestamp: int
    current_txn_first_offset: int = -1  # -1: no open transaction


@dataclass(slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int  # the ABORT marker's offset


@dataclass
class PartitionInput:
    topic: str
    partition: int
    segments: list[Segment]  # live segments; sorted here
    batches: list[Batch]  # any order; sorted here
    settings: CleanerSettings
    cleaner_checkpoint: int | None = None
    log_start_checkpoint: int | None = None
    high_watermark_checkpoint: int | None = None
    snapshots: dict[int, list[ProducerEntry]] = field(default_factory=dict)  # producer snapshots by offset
    aborted_txns: list[AbortedTxn] = field(default_factory=list)
    problems: int = 0  # problem rows seen for this partition in the inputs


# --------------------------------------------------------------------------------------------------
# Outputs


@dataclass(slots=True)
class RecordFate:
    segment: int
    batch_base_offset: int
    offset: int
    key_hash: str | None
    is_tombstone: bool
    is_control: bool
    control_type: str | None
    retained: bool
    reason: str
    delete_horizon_ms: int | None  # what the record's batch carries after the pass


# reasons a record stays
NO_PASS = "noPass"  # the partition is not cleaned now
NOT_IN_PASS = "notInPass"  # its segment is at or above the pass's end offset
BEYOND_MAP = "beyondOffsetMap"  # the offset map filled up before reaching it
LATEST = "latest"  # the latest record of its key
TOMBSTONE_RETAINED = "tombstoneRetained"  # the latest of its key, a tombstone before its delete horizon
MARKER_RETAINED = "markerRetained"
# reasons a record goes
SUPERSEDED = "superseded"
TOMBSTONE_EXPIRED = "tombstoneExpired"
KEYLESS = "keyless"
ABORTED = "aborted"
MARKER_REMOVED = "markerRemoved"


@dataclass
class SegmentResult:
    base_offset: int
    next_base_offset: int | None
    is_active: bool
    section: str  # clean, cleanable, uncleanable, active
    in_pass: bool = False
    log_size: int = 0
    batches: int = 0
    records: int = 0
    records_kept: int = 0
    records_removed: int = 0
    bytes_after: int = 0  # estimated .log bytes this segment contributes after the pass
    batches_removed: int = 0
    empty_batches_retained: int = 0
    superseded_removed: int = 0
    tombstones: int = 0
    tombstones_removed: int = 0
    tombstones_kept: int = 0
    markers: int = 0
    markers_removed: int = 0
    markers_kept: int = 0
    aborted_removed: int = 0
    keyless_removed: int = 0
    delete_horizons_set: int = 0  # batches that get a delete horizon in this pass
    group_base_offset: int | None = None  # base offset of the cleaned segment it is merged into
    group_index: int | None = None

    @property
    def bytes_removed(self) -> int:
        return self.log_size - self.bytes_after if self.in_pass else 0


@dataclass
class GroupResult:
    base_offset: int
    last_segment_base_offset: int
    segments: int
    log_bytes_before: int
    log_bytes_after: int
    index_bytes_before: int
    time_index_bytes_before: int


@dataclass
class PartitionResult:
    topic: str
    partition: int
    cleanup_policy: str
    compacted: bool
    now_ms: int
    log_start_offset: int | None = None
    log_end_offset: int | None = None
    high_watermark: int | None = None
    high_watermark_source: str | None = None
    last_stable_offset: int | None = None
    active_segment_base_offset: int | None = None
    checkpoint_dirty_offset: int | None = None
    first_dirty_offset: int | None = None
    first_dirty_reset: bool = False
    uncleanable_offset: int | None = None
    uncleanable_reason: str | None = None
    first_uncleanable_offset: int | None = None
    clean_bytes: int = 0
    cleanable_bytes: int = 0
    total_bytes: int = 0
    dirty_ratio: float | None = None
    min_cleanable_dirty_ratio: float = 0.5
    max_compaction_delay_ms: int = 0
    would_clean: bool = False
    clean_reason: str | None = None
    pass_simulated: bool = False
    end_offset: int | None = None  # the pass's next dirty offset (the new cleaner checkpoint)
    offset_map_slots: int = 0
    offset_map_capacity: int = 0
    offset_map_entries: int = 0
    offset_map_full: bool = False
    offset_map_full_at_offset: int | None = None
    dirty_distinct_keys: int = 0  # entries the map would need to cover the whole cleanable range
    delete_retention_ms: int = 0
    new_delete_horizon_ms: int | None = None
    legacy_delete_horizon_ms: int | None = None
    active_producers: int = 0
    open_transactions: int = 0
    problems: int = 0
    segments: list[SegmentResult] = field(default_factory=list)
    groups: list[GroupResult] = field(default_factory=list)
    fates: list[RecordFate] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(s, name) for s in self.segments)


# --------------------------------------------------------------------------------------------------
# Segment helpers (LogSegments.values / floor / nonActiveLogSegmentsFrom)


class _Segments:
    def __init__(self, segments: list[Segment]):
        self.list = sorted(segments, key=lambda s: s.base_offset)
        self.bases = [s.base_offset for s in self.list]

    def floor_index(self, offset: int) -> int | None:
        i = bisect_right(self.bases, offset) - 1
        return i if i >= 0 else None

    def values(self, start: int, end: int) -> list[Segment]:
        """Segments from the one holding ``start`` to the one holding ``end - 1`` (LogSegments.values)."""
        if start >= end:
            return []
        i = self.floor_index(start)
        lo = 0 if i is None else i
        return [s for s in self.list[lo:] if s.base_offset < end]

    @property
    def active(self) -> Segment:
        return self.list[-1]

    def non_active_from(self, start: int) -> list[Segment]:
        if start > self.active.base_offset:
            return []
        return self.values(start, self.active.base_offset)


def _largest_timestamp(seg: Segment, batches: list[Batch]) -> int:
    """LogSegment.largestTimestamp: the time index's last timestamp, else the file's mtime. Without a
    .timeindex file the broker rebuilds it on load, so the batches' largest timestamp stands in."""
    if seg.time_index_size is not None:
        ts = seg.max_indexed_timestamp if seg.max_indexed_timestamp is not None else -1
    else:
        ts = max((b.max_timestamp for b in batches), default=-1)
    return ts if ts >= 0 else seg.mtime_ms


# --------------------------------------------------------------------------------------------------
# Producer state (ProducerStateManager load + replay)


@dataclass
class _ProducerState:
    producers: dict[int, ProducerEntry]
    open_txns: dict[int, int]  # producer id -> first offset of its open transaction
    unreplicated: list[tuple[int, int]]  # (first offset, marker offset) of txns completed during replay


def _producer_state(inp: PartitionInput, ordered: list[Batch], log_start: int, log_end: int,
                    now_ms: int) -> _ProducerState:
    """Latest producer snapshot in (logStartOffset, logEndOffset], entries not expired at ``now``, then
    the batches from the snapshot offset to the log end replayed (no snapshot: from the log start)."""
    expiry = inp.settings.producer_id_expiration_ms
    usable = [o for o in inp.snapshots if log_start < o <= log_end]
    producers: dict[int, ProducerEntry] = {}
    replay_from = log_start
    if usable:
        replay_from = max(usable)
        for e in inp.snapshots[replay_from]:
            if e.current_txn_first_offset < 0 and now_ms - e.last_timestamp >= expiry:
                continue  # isProducerExpired at load
            producers[e.producer_id] = ProducerEntry(e.producer_id, e.producer_epoch, e.last_data_offset,
                                                     e.last_timestamp, e.current_txn_first_offset)
    completed: list[tuple[int, int]] = []
    for b in ordered:
        if b.producer_id < 0 or b.base_offset < replay_from:
            continue
        e = producers.get(b.producer_id)
        if e is None:
            e = producers[b.producer_id] = ProducerEntry(b.producer_id, b.producer_epoch, -1, -1)
        if e.producer_epoch != b.producer_epoch:  # maybeUpdateProducerEpoch clears the batch metadata
            e.producer_epoch = b.producer_epoch
            e.last_data_offset = -1
        e.last_timestamp = b.max_timestamp
        if b.is_control:
            if b.control_type in ("COMMIT", "ABORT"):
                if e.current_txn_first_offset >= 0:
                    completed.append((e.current_txn_first_offset, b.last_offset))
                e.current_txn_first_offset = -1
        else:
            e.last_data_offset = b.last_offset
            if b.is_transactional and e.current_txn_first_offset < 0:
                e.current_txn_first_offset = b.base_offset
    # The periodic expiry (producer.id.expiration.check.interval.ms) drops idle producers without an
    # open transaction; at ``now`` they are gone.
    active = {pid: e for pid, e in producers.items()
              if e.current_txn_first_offset >= 0 or now_ms - e.last_timestamp < expiry}
    open_txns = {pid: e.current_txn_first_offset for pid, e in producers.items() if e.current_txn_first_offset >= 0}
    return _ProducerState(active, open_txns, completed)


# --------------------------------------------------------------------------------------------------
# Transaction metadata while cleaning (CleanedTransactionMetadata)


class _TxnMetadata:
    def __init__(self, aborted: list[AbortedTxn]):
        self._all = aborted
        self._queue: list[tuple[int, int, AbortedTxn]] = []
        self._seq = 0
        self.ongoing_committed: set[int] = set()
        self.ongoing_aborted: dict[int, list] = {}  # pid -> [txn, last observed batch offset or None]

    def add_range(self, start: int, end: int) -> None:
        """log.collectAbortedTransactions(start, end): aborted txns overlapping [start, end)."""
        for t in self._all:
            if t.last_offset >= start and t.first_offset < end:
                self._seq += 1
                heapq.heappush(self._queue, (t.first_offset, self._seq, t))

    def _consume_up_to(self, offset: int) -> None:
        while self._queue and self._queue[0][0] <= offset:
            t = heapq.heappop(self._queue)[2]
            self.ongoing_aborted.setdefault(t.producer_id, [t, None])

    def on_control_batch(self, b: Batch) -> bool:
        """True when the marker may be discarded."""
        self._consume_up_to(b.last_offset)
        if not b.records:
            return True  # an empty control batch was already cleaned
        if b.control_type == "ABORT":
            meta = self.ongoing_aborted.pop(b.producer_id, None)
            return not (meta is not None and meta[1] is not None)
        if b.control_type == "COMMIT":
            present = b.producer_id in self.ongoing_committed
            self.ongoing_committed.discard(b.producer_id)
            return not present
        return False

    def on_batch(self, b: Batch) -> bool:
        """True when the batch belongs to an aborted transaction."""
        self._consume_up_to(b.last_offset)
        if not b.is_transactional:
            return False
        meta = self.ongoing_aborted.get(b.producer_id)
        if meta is not None:
            meta[1] = b.last_offset
            return True
        self.ongoing_committed.add(b.producer_id)
        return False


# --------------------------------------------------------------------------------------------------
# The model


def _ordered(batches: list[Batch], segments: _Segments) -> list[Batch]:
    live = set(segments.bases)
    return sorted((b for b in batches if b.segment in live), key=lambda b: (b.segment, b.position))


def preview_partition(inp: PartitionInput, now_ms: int, *, simulate_all: bool = False,
                      keep_fates: bool = True) -> PartitionResult:
    """Decide whether the cleaner would clean this partition at ``now_ms`` and simulate that pass.

    ``simulate_all`` simulates the pass even when the cleaner would not pick the log now (what a pass
    would do if it ran). ``keep_fates`` keeps one :class:`RecordFate` per record.
    """
    s = inp.settings
    res = PartitionResult(inp.topic, inp.partition, ",".join(sorted(s.cleanup_policy)), s.compact, now_ms,
                          min_cleanable_dirty_ratio=s.min_cleanable_dirty_ratio,
                          delete_retention_ms=s.delete_retention_ms, offset_map_slots=s.map_slots,
                          offset_map_capacity=s.map_capacity, problems=inp.problems)
    if not inp.segments:
        res.clean_reason = None
        return res
    segs = _Segments(inp.segments)
    ordered = _ordered(inp.batches, segs)
    by_segment: dict[int, list[Batch]] = {b: [] for b in segs.bases}
    for b in ordered:
        by_segment[b.segment].append(b)
    active = segs.active

    # Offsets at load: log start, log end, high watermark, producer state, last stable offset.
    log_end = max([active.base_offset] + [b.last_offset + 1 for b in ordered])
    log_start = max(inp.log_start_checkpoint if inp.log_start_checkpoint is not None else -1, segs.bases[0])
    if inp.high_watermark_checkpoint is not None:
        hw, res.high_watermark_source = min(max(inp.high_watermark_checkpoint, log_start), log_end), "checkpoint"
    else:
        hw, res.high_watermark_source = log_end, "logEndOffset"
    state = _producer_state(inp, ordered, log_start, log_end, now_ms)
    unstable = list(state.open_txns.values()) + [first for first, marker in state.unreplicated if marker >= hw]
    first_unstable = max(min(unstable), log_start) if unstable else None
    lso = first_unstable if first_unstable is not None and first_unstable < hw else hw
    res.log_start_offset, res.log_end_offset, res.high_watermark, res.last_stable_offset = log_start, log_end, hw, lso
    res.active_segment_base_offset = active.base_offset
    res.active_producers, res.open_transactions = len(state.producers), len(state.open_txns)

    # LogCleanerManager.cleanableOffsets
    res.checkpoint_dirty_offset = inp.cleaner_checkpoint
    first_dirty = inp.cleaner_checkpoint if inp.cleaner_checkpoint is not None else log_start
    if first_dirty < log_start or first_dirty > log_end:
        first_dirty, res.first_dirty_reset = log_start, True
    limits = {"activeSegment": active.base_offset, "lastStableOffset": lso}  # ties: the first one names it
    if s.min_compaction_lag_ms > 0:
        for seg in segs.non_active_from(first_dirty):
            if _largest_timestamp(seg, by_segment[seg.base_offset]) > now_ms - s.min_compaction_lag_ms:
                limits["minCompactionLag"] = seg.base_offset
                break
    low = min(limits.values())
    uncleanable = max(first_dirty, low)
    res.uncleanable_reason = next(k for k, v in limits.items() if v == low)
    if uncleanable > low:
        res.uncleanable_reason = "firstDirtyOffset"
    res.first_dirty_offset, res.uncleanable_offset = first_dirty, uncleanable

    # LogToClean / calculateCleanableBytes
    first_unclean_seg = next(iter(segs.non_active_from(uncleanable)), active)
    first_uncleanable = first_unclean_seg.base_offset
    res.first_uncleanable_offset = first_uncleanable
    res.clean_bytes = sum(x.log_size for x in segs.values(-1, first_dirty))
    res.cleanable_bytes = sum(x.log_size for x in segs.values(min(first_dirty, first_uncleanable), first_uncleanable))
    res.total_bytes = res.clean_bytes + res.cleanable_bytes
    res.dirty_ratio = res.cleanable_bytes / res.total_bytes if res.total_bytes > 0 else None

    # maxCompactionDelay
    firsts = [by_segment[x.base_offset][0].max_timestamp for x in segs.non_active_from(first_dirty)
              if by_segment[x.base_offset]]
    earliest = min((t for t in firsts if t > 0), default=LONG_MAX)
    clean_until = now_ms - max(s.max_compaction_lag_ms, 0)
    res.max_compaction_delay_ms = clean_until - earliest if earliest < clean_until else 0

    if not s.compact:
        res.clean_reason = "notCompacted"
    elif res.total_bytes <= 0:
        res.clean_reason = "nothingCleanable"  # LogToClean.totalBytes is 0 (only an active segment): skipped
    elif res.max_compaction_delay_ms > 0 and res.cleanable_bytes > 0:
        res.would_clean, res.clean_reason = True, "maxCompactionLag"
    elif res.dirty_ratio is not None and res.dirty_ratio > s.min_cleanable_dirty_ratio:
        res.would_clean, res.clean_reason = True, "dirtyRatio"
    elif res.cleanable_bytes <= 0:
        res.clean_reason = "nothingCleanable"
    else:
        res.clean_reason = "belowMinCleanableDirtyRatio"
    if res.would_clean and (not s.cleaner_enabled or s.cleaner_threads < 1):
        res.would_clean, res.clean_reason = False, "cleanerDisabled"
    if res.would_clean and s.map_slots * s.dedupe_load_factor <= 1:
        res.would_clean, res.clean_reason = False, "offsetMapTooSmall"  # Cleaner's require(slots * lf > 1)

    simulate = s.compact and (res.would_clean or (simulate_all and first_dirty < first_uncleanable
                                                  and s.map_slots * s.dedupe_load_factor > 1))
    if simulate:
        _simulate_pass(inp, res, segs, by_segment, state, first_dirty, first_uncleanable, now_ms, keep_fates)
    else:
        _no_pass(res, segs, by_segment, first_dirty, first_uncleanable, keep_fates)
    return res


def _section(seg: Segment, first_dirty: int, first_uncleanable: int, nxt: int | None) -> str:
    if seg.is_active:
        return "active"
    if seg.base_offset >= first_uncleanable:
        return "uncleanable"
    if nxt is not None and nxt <= first_dirty:
        return "clean"
    return "cleanable"


def _segment_results(res: PartitionResult, segs: _Segments, by_segment: dict[int, list[Batch]], first_dirty: int,
                     first_uncleanable: int) -> dict[int, SegmentResult]:
    out = {}
    for i, seg in enumerate(segs.list):
        nxt = segs.list[i + 1].base_offset if i + 1 < len(segs.list) else None
        r = SegmentResult(seg.base_offset, nxt, seg.is_active, _section(seg, first_dirty, first_uncleanable, nxt),
                          log_size=seg.log_size)
        for b in by_segment[seg.base_offset]:
            r.batches += 1
            r.records += len(b.records)
            if b.is_control:
                r.markers += len(b.records)
            else:
                r.tombstones += sum(1 for x in b.records if not x.has_value)
        r.records_kept = r.records
        r.bytes_after = seg.log_size
        out[seg.base_offset] = r
    res.segments = list(out.values())
    return out


def _no_pass(res: PartitionResult, segs: _Segments, by_segment: dict[int, list[Batch]], first_dirty: int,
             first_uncleanable: int, keep_fates: bool) -> None:
    results = _segment_results(res, segs, by_segment, first_dirty, first_uncleanable)
    for r in results.values():
        r.tombstones_kept, r.markers_kept = r.tombstones, r.markers
    if keep_fates:
        for seg in segs.list:
            for b in by_segment[seg.base_offset]:
                for x in b.records:
                    res.fates.append(RecordFate(seg.base_offset, b.base_offset, x.offset, x.key_hash,
                                                not x.has_value and not b.is_control, b.is_control, b.control_type,
                                                True, NO_PASS, b.delete_horizon_ms))


def _build_offset_map(inp: PartitionInput, res: PartitionResult, segs: _Segments, by_segment: dict[int, list[Batch]],
                      start: int, end: int) -> tuple[dict[str, int], int]:
    """Cleaner.buildOffsetMap: MD5(key) -> latest offset over [start, end); returns (map, latestOffset).

    The walk goes on past a full map only to count the keys a full pass would need (dirtyDistinctKeys)."""
    capacity = inp.settings.map_capacity
    offset_map: dict[str, int] = {}
    wanted: set[str] = set()
    latest = -1
    full = False
    txns = _TxnMetadata(inp.aborted_txns)
    txns.add_range(start, end)
    dirty = segs.values(start, end)
    for i, seg in enumerate(dirty):
        next_start = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
        for b in by_segment[seg.base_offset]:
            if b.is_control:
                txns.on_control_batch(b)
            elif not txns.on_batch(b):  # aborted batches never reach the map
                for x in b.records:
                    if x.key_hash is not None and x.offset >= start:
                        wanted.add(x.key_hash)
                        if full:
                            continue
                        if len(offset_map) >= capacity:  # checked before every put, even of a known key
                            full = True
                            res.offset_map_full, res.offset_map_full_at_offset = True, x.offset
                            continue
                        offset_map[x.key_hash] = x.offset
                        latest = x.offset
            if b.last_offset >= start and not full:
                latest = b.last_offset
        if not full:
            latest = next_start - 1  # fast-forward over offset gaps to the segment's end
    res.dirty_distinct_keys = len(wanted)
    return offset_map, latest


def _group_segments(segments: list[Segment], max_size: int, max_index_size: int,
                    first_uncleanable: int) -> list[list[Segment]]:
    """Cleaner.groupSegmentsBySize."""
    def idx(size: int | None, entry: int) -> int:
        return (size or 0) // entry * entry  # AbstractIndex.sizeInBytes: whole entries

    groups: list[list[Segment]] = []
    rest = list(segments)
    while rest:
        head = rest.pop(0)
        group = [head]
        log_size, index_size, time_size = head.log_size, idx(head.index_size, 8), idx(head.time_index_size, 12)
        while rest:
            nxt = rest[0]
            last_offset = rest[1].base_offset - 1 if len(rest) > 1 else first_uncleanable - 1
            if not (log_size + nxt.log_size <= max_size
                    and index_size + idx(nxt.index_size, 8) <= max_index_size
                    and time_size + idx(nxt.time_index_size, 12) <= max_index_size
                    and (nxt.log_size == 0 or last_offset - group[-1].base_offset <= INT_MAX)):
                break
            group.append(rest.pop(0))
            log_size += nxt.log_size
            index_size += idx(nxt.index_size, 8)
            time_size += idx(nxt.time_index_size, 12)
        groups.append(group)
    return groups


def _rebuilt_size(b: Batch, kept: list[Record], horizon: int | None) -> int:
    """Bytes of the batch MemoryRecords.filterTo rebuilds from the retained records (exact for
    uncompressed v2; compressed and legacy batches are estimated from the share of records kept)."""
    if b.magic >= 2 and not b.compressed and all(x.body_without_timestamp is not None for x in kept):
        base_ts = horizon if horizon is not None and horizon >= 0 else kept[0].timestamp
        total = BATCH_OVERHEAD
        for x in kept:
            body = x.body_without_timestamp + varint_size(x.timestamp - base_ts)
            total += varint_size(body) + body
        return total

    def raw(x: Record) -> int:
        if x.legacy_size is not None:
            return x.legacy_size
        if x.body_without_timestamp is not None:
            return x.body_without_timestamp + 2
        return 1

    before = sum(raw(x) for x in b.records) or 1
    payload = b.size - (BATCH_OVERHEAD if b.magic >= 2 else 0)
    share = sum(raw(x) for x in kept) / before
    return (BATCH_OVERHEAD if b.magic >= 2 else 0) + round(payload * share)


def _simulate_pass(inp: PartitionInput, res: PartitionResult, segs: _Segments, by_segment: dict[int, list[Batch]],
                   state: _ProducerState, first_dirty: int, first_uncleanable: int, now_ms: int,
                   keep_fates: bool) -> None:
    s = inp.settings
    res.pass_simulated = True
    offset_map, latest = _build_offset_map(inp, res, segs, by_segment, first_dirty, first_uncleanable)
    res.offset_map_entries = len(offset_map)
    end_offset = latest + 1
    res.end_offset = end_offset
    clean = segs.values(0, first_dirty)
    legacy_horizon = clean[-1].mtime_ms - s.delete_retention_ms if clean else 0
    res.legacy_delete_horizon_ms = legacy_horizon
    new_horizon = now_ms + s.delete_retention_ms
    results = _segment_results(res, segs, by_segment, first_dirty, first_uncleanable)
    txns = _TxnMetadata(inp.aborted_txns)
    in_pass = segs.values(0, end_offset)
    groups = _group_segments(in_pass, s.segment_bytes, s.segment_index_bytes, first_uncleanable)
    for gi, group in enumerate(groups):
        for k, seg in enumerate(group):
            r = results[seg.base_offset]
            r.in_pass, r.group_base_offset, r.group_index = True, group[0].base_offset, gi
            r.records_kept = r.bytes_after = 0
            batches = by_segment[seg.base_offset]
            if k + 1 < len(group):
                upper = group[k + 1].base_offset
            else:
                upper = batches[-1].last_offset + 1 if batches else seg.base_offset
            txns.add_range(seg.base_offset, upper)
            retain_legacy = seg.mtime_ms > legacy_horizon
            for b in batches:
                kept_records, horizon = _clean_batch(b, txns, state, offset_map, latest, retain_legacy, now_ms,
                                                     new_horizon, r, res if keep_fates else None, seg.base_offset)
                if kept_records is None:
                    r.batches_removed += 1
                elif not kept_records:
                    r.empty_batches_retained += 1
                    r.bytes_after += BATCH_OVERHEAD
                elif len(kept_records) == len(b.records) and horizon == b.delete_horizon_ms:
                    r.bytes_after += b.size
                else:
                    r.bytes_after += _rebuilt_size(b, kept_records, horizon)
    if any(r.delete_horizons_set for r in results.values()):
        res.new_delete_horizon_ms = new_horizon
    for group in groups:
        rs = [results[x.base_offset] for x in group]
        res.groups.append(GroupResult(
            group[0].base_offset, group[-1].base_offset, len(group), sum(x.log_size for x in group),
            sum(x.bytes_after for x in rs), sum((x.index_size or 0) // 8 * 8 for x in group),
            sum((x.time_index_size or 0) // 12 * 12 for x in group)))
    if keep_fates:
        for seg in segs.list:
            if results[seg.base_offset].in_pass:
                continue
            for b in by_segment[seg.base_offset]:
                for x in b.records:
                    res.fates.append(RecordFate(seg.base_offset, b.base_offset, x.offset, x.key_hash,
                                                not x.has_value and not b.is_control, b.is_control, b.control_type,
                                                True, NOT_IN_PASS, b.delete_horizon_ms))
        res.fates.sort(key=lambda f: f.offset)
    for r in results.values():
        if not r.in_pass:
            r.tombstones_kept, r.markers_kept = r.tombstones, r.markers


def _clean_batch(b: Batch, txns: _TxnMetadata, state: _ProducerState, offset_map: dict[str, int], latest: int,
                 retain_legacy: bool, now_ms: int, new_horizon: int, r: SegmentResult,
                 res: PartitionResult | None, segment: int) -> tuple[list[Record] | None, int | None]:
    """Cleaner.cleanInto's RecordFilter on one batch. Returns (retained records, or None when the batch
    is dropped; the delete horizon the written batch carries)."""
    can_discard = txns.on_control_batch(b) if b.is_control else txns.on_batch(b)
    if b.is_control:
        discard_records = can_discard and b.delete_horizon_ms is not None and b.delete_horizon_ms <= now_ms
    else:
        discard_records = can_discard
    last_of_producer = False
    entry = state.producers.get(b.producer_id) if b.producer_id >= 0 else None
    if entry is not None:
        if entry.last_data_offset >= 0:
            last_of_producer = b.last_offset == entry.last_data_offset
        else:
            last_of_producer = b.is_control and b.producer_epoch == entry.producer_epoch
    retention = "RETAIN_EMPTY" if last_of_producer else ("DELETE" if discard_records else "DELETE_EMPTY")
    marker_for_empty_txn = can_discard and b.is_control

    kept: list[Record] = []
    contains_tombstones = False
    decisions: list[tuple[Record, bool, str]] = []
    for x in b.records:
        if retention == "DELETE" or discard_records:
            keep, why = False, (MARKER_REMOVED if b.is_control else ABORTED)
        elif b.is_control:
            keep, why = True, MARKER_RETAINED
        elif x.offset > latest:
            keep, why = True, BEYOND_MAP
        elif x.key_hash is None:
            keep, why = False, KEYLESS
        else:
            found = offset_map.get(x.key_hash, -1)
            if x.offset < found:
                keep, why = False, SUPERSEDED
            elif x.has_value:
                keep, why = True, LATEST
            else:
                if b.magic >= 2:
                    retain = b.delete_horizon_ms is None or now_ms < b.delete_horizon_ms
                else:
                    retain = retain_legacy
                keep, why = (True, TOMBSTONE_RETAINED) if retain else (False, TOMBSTONE_EXPIRED)
        if keep:
            kept.append(x)
            if not x.has_value and not b.is_control:
                contains_tombstones = True
        decisions.append((x, keep, why))

    horizon = b.delete_horizon_ms
    if kept:
        if b.magic >= 2 and (contains_tombstones or marker_for_empty_txn) and b.delete_horizon_ms is None:
            horizon = new_horizon
            r.delete_horizons_set += 1
        out: list[Record] | None = kept
    elif retention == "RETAIN_EMPTY" and b.magic >= 2:
        out, horizon = [], None  # DefaultRecordBatch.writeEmptyHeader: no delete horizon
    else:
        out, horizon = None, None

    for x, keep, why in decisions:
        tomb = not x.has_value and not b.is_control
        if keep:
            r.records_kept += 1
            if b.is_control:
                r.markers_kept += 1
            elif tomb:
                r.tombstones_kept += 1
        else:
            r.records_removed += 1
            if b.is_control:
                r.markers_removed += 1
            elif why == ABORTED:
                r.aborted_removed += 1
            elif why == KEYLESS:
                r.keyless_removed += 1
            elif why == SUPERSEDED:
                r.superseded_removed += 1
            if tomb:
                r.tombstones_removed += 1
        if res is not None:
            res.fates.append(RecordFate(segment, b.base_offset, x.offset, x.key_hash, tomb, b.is_control,
                                        b.control_type, keep, why, horizon if keep else None))
    return out, horizon
