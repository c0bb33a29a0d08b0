"""What Kafka's log cleaner would do to one partition now: a pure-Python model, no Spark.

Modelled on Apache Kafka 3.9.2 and 4.4.0 (``CleanerSettings.kafka_version`` picks one; where their cleaners
differ is :mod:`.versions`), one module per part of the cleaner (core's ``kafka.log.LogCleaner`` in 3.9,
storage's ``org.apache.kafka.storage.internals.log`` classes of the same names in 4.x):

- :mod:`.cleanable`: ``LogCleanerManager.cleanableOffsets`` / ``calculateCleanableBytes`` /
  ``maxCompactionDelay`` and ``LogToClean``, the choice of the log and of its cleanable range;
- :mod:`.offset_map`: ``Cleaner.buildOffsetMap`` into the dedupe buffer (``SkimpyOffsetMap``, sized in
  :mod:`.settings`);
- :mod:`.grouping`: ``Cleaner.groupSegmentsBySize``;
- :mod:`.clean_pass` and :mod:`.record_filter`: ``Cleaner.doClean`` / ``cleanInto`` / ``shouldRetainRecord``
  and ``MemoryRecords.filterTo``;
- :mod:`.transaction_metadata`: ``CleanedTransactionMetadata``;
- :mod:`.producer_state` and :mod:`.log_load`: ``ProducerStateManager`` and ``UnifiedLog.lastStableOffset``;
- :mod:`.log_segments`: ``LogSegments`` and ``LogSegment.largestTimestamp``;
- :mod:`.versions`: the rules that differ between 3.9 and 4.x (KAFKA-17076 / KAFKA-20452,
  ``LogConfig.segmentSize``).

:mod:`kafkalog_spark.analysis.compaction` feeds it from the `kafkalog` views and turns its results into
DataFrames.

Keys never reach this package: records carry a key hash (MD5 hex, as the cleaner's offset map hashes keys).
"""

from __future__ import annotations

from .clean_pass import no_pass, simulate_pass
from .cleanable import choose_log
from .log_load import load_offsets
from .log_segments import LogSegments, place_batches
from .model_input import AbortedTxn, Batch, PartitionInput, ProducerEntry, Record, Segment, varint_size
from .results import GroupResult, PartitionResult, RecordFate, SegmentResult
from .settings import CleanerSettings

__all__ = [
    "AbortedTxn", "Batch", "CleanerSettings", "GroupResult", "PartitionInput", "PartitionResult", "ProducerEntry",
    "Record", "RecordFate", "Segment", "SegmentResult", "preview_partition", "varint_size",
]


def preview_partition(inp: PartitionInput, now_ms: int, *, simulate_all: bool = False,
                      keep_fates: bool = True) -> PartitionResult:
    """Decide whether the cleaner would clean this partition at ``now_ms`` and simulate that pass.

    ``simulate_all`` simulates the pass even when the cleaner would not pick the log now (what a pass
    would do if it ran). ``keep_fates`` keeps one :class:`RecordFate` per record.
    """
    s = inp.settings
    res = PartitionResult(inp.topic, inp.partition, ",".join(sorted(s.cleanup_policy)), s.compact, now_ms,
                          kafka_version=s.kafka_version.value,
                          min_cleanable_dirty_ratio=s.min_cleanable_dirty_ratio,
                          delete_retention_ms=s.delete_retention_ms, offset_map_slots=s.map_slots,
                          offset_map_capacity=s.map_capacity, problems=inp.problems)
    if not inp.segments:
        res.clean_reason = None
        return res
    segs = LogSegments(inp.segments)
    ordered, by_segment = place_batches(inp.batches, segs)

    offsets, state = load_offsets(inp, segs, ordered, now_ms)
    res.log_start_offset, res.log_end_offset = offsets.log_start, offsets.log_end
    res.high_watermark, res.high_watermark_source = offsets.high_watermark, offsets.high_watermark_source
    res.last_stable_offset = offsets.last_stable
    res.active_segment_base_offset = segs.active.base_offset
    res.active_producers, res.open_transactions = len(state.producers), len(state.open_txns)

    first_dirty, first_uncleanable = choose_log(inp, res, segs, by_segment, offsets, now_ms)
    # simulate_all runs the pass the cleaner would run if picked, as long as it could run at all.
    simulate = s.compact and (res.would_clean or (simulate_all and first_dirty < first_uncleanable
                                                  and s.map_slots * s.dedupe_load_factor > 1))
    if simulate:
        simulate_pass(inp, res, segs, by_segment, state, first_dirty, first_uncleanable, now_ms, keep_fates)
    else:
        no_pass(res, segs, by_segment, first_dirty, first_uncleanable, keep_fates)
    return res
