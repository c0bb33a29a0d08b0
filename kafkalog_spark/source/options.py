"""Options of the `kafkalog` source: all strings, case-insensitive, as Spark hands them over."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..log.object_stores import StoreOptions

INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", "__cluster_metadata", "__share_group_state")
# The state views of the internal topics (kafkalog_spark.state), each reading only its topic's partition dirs.
VIEW_TOPICS = {
    "consumer_offsets": "__consumer_offsets",
    "group_metadata": "__consumer_offsets",
    "transactions": "__transaction_state",
    "cluster_metadata": "__cluster_metadata",
    "topic_catalog": "__cluster_metadata",
    "metadata_configs": "__cluster_metadata",
    "remote_log_segments": "__remote_log_metadata",
}
VIEWS = ("records", "batches", "record_stats", "decoded", "segments", "index", "partition_files", *VIEW_TOPICS)
# the views that read `.log` files, split by bytes (decoded: the three others from one read, source.views)
SEGMENT_VIEWS = ("records", "batches", "record_stats", "decoded")
# the views whose task reads each segment whole (what it computes of a segment needs all of it); the others cut a
# segment larger than maxSplitBytes at batch boundaries
WHOLE_SEGMENT_VIEWS = ("decoded",)
# the views a remote store (remoteStorage) adds the remote tier's segments to, rows marked by a `tier` column
TIERED_VIEWS = (*SEGMENT_VIEWS, "segments", "index")


MAX_SIZE = 2**63 - 1  # a Java long, as Spark's own byte sizes


def parse_size(text: str, name: str) -> int:
    """A positive byte size: ``134217728``, ``128m``, ``4MiB``, ``1g``. Zero would plan or read nothing, forever;
    the ValueError names the option."""
    m = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)i?b?\s*", str(text).lower())
    if not m:
        raise ValueError(f"{name} {text!r}: expected bytes, or a number with k/m/g/t (e.g. 128m)")
    size = int(m[1]) * 1024 ** " kmgt".index(m[2] or " ")
    if not 1 <= size <= MAX_SIZE:
        raise ValueError(f"{name} {text!r}: expected 1 byte to {MAX_SIZE} bytes")
    return size


def _size(options: dict[str, str], name: str, default: str) -> int:
    return parse_size(options.get(name.lower(), default), f"kafkalog: {name}")


def _parse_bool(options: dict[str, str], name: str, default: bool) -> bool:
    text = options.get(name.lower(), str(default)).lower()
    if text not in ("true", "false"):
        raise ValueError(f"kafkalog: {name} must be true or false, not {text!r}")
    return text == "true"


@dataclass(frozen=True)
class SourceOptions:
    paths: tuple[str, ...]
    view: str = "records"
    topics: tuple[str, ...] = ()  # exact names
    topic_pattern: str | None = None  # a regular expression on the whole name
    include_internal: bool = False
    isolation: str = "read_uncommitted"
    mode: str = "PERMISSIVE"
    max_split_bytes: int = 128 * 1024 * 1024
    open_cost_bytes: int = 4 * 1024 * 1024  # what a small segment costs when grouping, like Spark's files
    chunk_bytes: int = 8 * 1024 * 1024
    max_decompressed_bytes: int = 256 * 1024 * 1024
    pushdown: bool = True  # false: hand every filter back to Spark (for comparisons and debugging)
    kraft_snapshots: bool = True  # list and decode the metadata log's KRaft snapshots (`.checkpoint`) too
    decode_internal: bool = False  # records view: add the decoded form of the internal topics' records
    # the `.log` views: decode only these segment files (their paths as listed); None: every segment. The index
    # view: only the entries of these segments (and of those without a `.log`), every index still checked
    segment_files: frozenset[str] | None = None
    drop_cache: bool = False  # the `.log` views: leave the page cache as found (kafkalog_spark.log.page_cache)
    # the tiered partitions' remote segments (LocalTieredStorage's layout: kafkalog_spark.log.remote_storage), read
    # as part of their partitions in TIERED_VIEWS; None: the local tier only
    remote_storage: str | None = None
    store: StoreOptions = field(default_factory=StoreOptions)  # object stores: endpoint, region, anonymous

    @classmethod
    def parse(cls, options: dict[str, str]) -> SourceOptions:
        o = {k.lower(): v for k, v in options.items()}
        paths = tuple(json.loads(o["paths"])) if "paths" in o else ((o["path"],) if "path" in o else ())
        if not paths:
            raise ValueError("kafkalog: give one or more log dirs or partition dirs: load(path) or load([paths])")
        view = o.get("view", "records").lower()
        if view not in VIEWS:
            raise ValueError(f"kafkalog: unknown view {view!r}; expected one of {', '.join(VIEWS)}")
        isolation = o.get("isolation", "read_uncommitted").lower()
        if isolation not in ("read_uncommitted", "read_committed"):
            raise ValueError(f"kafkalog: isolation must be read_uncommitted or read_committed, not {isolation!r}")
        mode = o.get("mode", "PERMISSIVE").upper()
        if mode not in ("PERMISSIVE", "FAILFAST"):
            raise ValueError(f"kafkalog: mode must be PERMISSIVE or FAILFAST, not {mode!r}")
        topics = tuple(t.strip() for t in o.get("topics", "").split(",") if t.strip())
        pattern = o.get("topicpattern")
        if pattern is not None:
            try:
                re.compile(pattern)  # fail at planning, not on the executors
            except re.error as e:
                raise ValueError(f"kafkalog: topicPattern {pattern!r}: {e}") from None
        internal = _parse_bool(o, "includeInternal", False)
        segment_files = None
        if "segmentfiles" in o:
            files = json.loads(o["segmentfiles"])
            if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
                raise ValueError("kafkalog: segmentFiles must be a JSON list of `.log` file paths")
            segment_files = frozenset(files)
        return cls(
            paths=paths, view=view, topics=topics, topic_pattern=pattern, include_internal=internal,
            isolation=isolation, mode=mode, pushdown=_parse_bool(o, "pushdown", True),
            kraft_snapshots=_parse_bool(o, "kraftSnapshots", True),
            decode_internal=_parse_bool(o, "decodeInternal", False), segment_files=segment_files,
            drop_cache=_parse_bool(o, "dropCache", False), remote_storage=o.get("remotestorage") or None,
            max_split_bytes=_size(o, "maxSplitBytes", "128m"),
            open_cost_bytes=_size(o, "openCostBytes", "4m"),
            chunk_bytes=_size(o, "chunkBytes", "8m"),
            max_decompressed_bytes=_size(o, "maxDecompressedBytes", "256m"),
            store=StoreOptions.from_options(o),
        )

    @property
    def remote_tier(self) -> bool:
        """Whether this read adds the remote tier (and the ``tier`` column) to its view."""
        return self.remote_storage is not None and self.view in TIERED_VIEWS

    def wants_topic(self, topic: str) -> bool:
        if self.view in VIEW_TOPICS:  # a state view reads its own topic, whatever the topic options say
            return topic == VIEW_TOPICS[self.view]
        # Named internal topics are read even without includeInternal: naming them is opting in.
        if topic in self.topics:
            return True
        if self.topics and not self.topic_pattern:
            return False
        if self.topic_pattern and not re.fullmatch(self.topic_pattern, topic):
            return False
        return self.include_internal or topic not in INTERNAL_TOPICS
