"""The keys analyses group and join by: a partition's log is a topic-partition *in one log dir*.

Several brokers' log dirs hold replicas of the same topic-partition (and a copy may sit next to its original):
each is a log of its own, with its own segments, checkpoints, producer state and cleaner state. Every view of the
`kafkalog` source carries the log dir it read the row from (``logDir``), so one job can analyse all the log dirs of
a fleet at once, as long as no analysis groups or joins by topic and partition alone.
"""

from __future__ import annotations

LOG_DIR = "logDir"
PARTITION = [LOG_DIR, "topic", "partition"]  # Kafka's TopicPartition, qualified by the log dir holding the log
SEGMENT = [*PARTITION, "segmentBaseOffset"]  # a LogSegment (the views name its base offset segmentBaseOffset)
