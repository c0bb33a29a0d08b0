"""What the cleaner model reads of one partition: its live segments, its batches and records (keys only as
MD5 hashes, as the cleaner's offset map hashes them), its producer snapshots and aborted transactions, and
the v2 record-format sizes (``DefaultRecordBatch``, ``ByteUtils``) the rebuilt batches are measured with."""

from __future__ import annotations

from dataclasses import dataclass, field

from .settings import CleanerSettings

BATCH_OVERHEAD = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD: a v2 batch header


def varint_size(value: int) -> int:
    """Bytes of a zig-zag varint/varlong (ByteUtils.sizeOfVarint / sizeOfVarlong)."""
    v = (value << 1) ^ (value >> 63) if value < 0 else value << 1
    size = 1
    while v >= 0x80:
        v >>= 7
        size += 1
    return size


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
