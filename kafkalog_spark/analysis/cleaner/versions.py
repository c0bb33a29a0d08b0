"""Where the log cleaners of the Kafka versions we model differ: one function per rule, one place for both.

Read from the bytecode and history of the verified builds (``kafka_versions.VERIFIED``); everything else the
model does is the same in 3.9.2 and 4.4.0 (``LogCleanerManager.cleanableOffsets``, ``buildOffsetMap``,
``groupSegmentsBySize``, ``shouldRetainRecord``, ``CleanedTransactionMetadata``, the producer state that
``lastRecordsOfActiveProducers`` comes from: an END_TXN marker's epoch replaces the producer's and clears its
batch metadata in both, which with transactions V2 markers, epoch + 1, makes the marker the producer's last).

- The last batch of a cleaning round (KAFKA-17076): an emptied batch whose next offset is the round's upper
  bound is written as a header-only batch, so the log end offset survives the clean. 3.9.2 has it as
  backported to 3.9 (``kafka.log.Cleaner.cleanInto``, core/src/main/scala/kafka/log/LogCleaner.scala: the
  bound is ``LogToClean.firstUncleanableOffset``); 3.9.0 and 3.9.1 do not. 4.4.0 bounds it by the log's high
  watermark instead (KAFKA-20452; ``Cleaner.cleanSegments`` passes ``log.highWatermark()`` to ``cleanInto``,
  storage/src/main/java/org/apache/kafka/storage/internals/log/Cleaner.java). A cleaned batch never ends
  past the first uncleanable offset, which is at most the last stable offset and so at most the high
  watermark: 4.x keeps the batch only when the high watermark is the first uncleanable offset too (an empty
  active segment, or a high watermark behind the log end), 3.9.2 whenever that batch is emptied.

The size ``groupSegmentsBySize`` limits a group to is ``LogConfig.segmentSize()`` in both, which in 4.x is
``internal.segment.bytes`` when a topic sets it: a config fact, resolved with the topic's config
(``TopicConfig.segment_size``).
"""

from __future__ import annotations

from ...kafka_versions import KafkaVersion


def round_upper_bound(version: KafkaVersion, first_uncleanable_offset: int, high_watermark: int) -> int:
    """The next offset at which an emptied batch is kept as a header-only batch (``BatchRetention.RETAIN_EMPTY``
    in ``checkBatchRetention``, after the rule for an active producer's last batch)."""
    if version is KafkaVersion.V3_9:
        return first_uncleanable_offset  # upperBoundOffsetOfCleaningRound = cleanable.firstUncleanableOffset
    return high_watermark
