"""What the cleaner model reports for one partition: the choice and the pass (:class:`PartitionResult`), each
live segment (:class:`SegmentResult`), each cleaned segment the pass writes (:class:`GroupResult`), and each
record's fate with the reason it stays or goes."""

from __future__ import annotations

from dataclasses import dataclass, field


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
    kafka_version: str = ""  # whose cleaner rules the result follows (KafkaVersion's value)
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
