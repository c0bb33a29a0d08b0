"""The remote tier of a tiered partition, as the `.log`, segments and index views read it (``remoteStorage``).

A tiered partition's log is its remote segments, then its local ones. Which remote segments are part of it is
what ``__remote_log_metadata`` says, replayed as the broker's metadata manager loads it
(:func:`~kafkalog_spark.state.remote_log_metadata.replay`; of several replicas of a metadata partition in the
paths, the one that has read furthest): the COPY_SEGMENT_FINISHED segments of the partition's topic id (its
``partition.metadata``'s) that end below its first local segment, the ones a fetch is served from. A segment
copied and still local is read once, from the local disk. Each such segment's files are found in the remote
store by its segment id (:mod:`kafkalog_spark.log.remote_storage`) and become a :class:`LogSegment` of tier
``remote`` ahead of the local ones. Without the metadata in the paths, the store's segments below the local ones
are read as listed (a ``remote_log_metadata_missing`` finding says so).

What the store and the metadata disagree on is a finding on the partition: a copied segment whose `.log` the
store lacks (``remote_segment_missing``) or whose size differs from the metadata's
(``remote_segment_size_mismatch``), and files of a segment the metadata does not hold
(``remote_segment_not_in_metadata``: an upload that failed and was never cleaned up, a deleted topic's
leftovers); segments being copied or deleted are the metadata's to report (``remote_copy_not_finished``,
``remote_delete_not_finished``).
"""

from __future__ import annotations

from collections.abc import Callable

from ..findings import Finding
from ..format.internal_topics import REMOTE_LOG_METADATA
from ..log.log_dir import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, LogSegment, PartitionLog
from ..log.remote_storage import (
    RemoteLogSegmentFileset,
    RemoteTopicPartitionDirectory,
    list_remote_storage,
    storage_root,
)
from ..state.remote_log_metadata import COPY_SEGMENT_FINISHED, RemoteLogMetadataCache

_SUFFIX = {"log": LOG_SUFFIX, "index": INDEX_SUFFIX, "timeindex": TIME_INDEX_SUFFIX, "txnindex": TXN_INDEX_SUFFIX}


# The last replay, by the metadata partitions' files as listed (path, size, mtime): a job reads several views of the
# same log dirs, each planned in a Python process Spark reuses, and the metadata topic is never compacted
_replayed: dict[tuple, dict[tuple[str, str, int], RemoteLogMetadataCache]] = {}


def remote_log_metadata(logs: list[PartitionLog], filesystem=None
                        ) -> dict[tuple[str, str, int], RemoteLogMetadataCache]:
    """The remote log metadata of the ``__remote_log_metadata`` partitions among ``logs``, by (topic id, topic,
    partition): of several replicas of a metadata partition, the one that has read furthest."""
    from ..state.internal_records import read_internal
    from ..state.remote_log_metadata import replay

    replicas = [log for log in logs if log.topic == REMOTE_LOG_METADATA and log.topic_partition.kind == "live"]
    key = tuple((s.log, s.log_size, s.log_mtime_ms) for log in replicas for s in log.segments)
    if key in _replayed:
        return _replayed[key]
    furthest: dict[int, tuple[int, list]] = {}
    for log in replicas:
        records = read_internal(log, [], filesystem=filesystem)  # its own findings are its state view's to report
        reach = records[-1].offset if records else -1
        if log.partition not in furthest or reach > furthest[log.partition][0]:
            furthest[log.partition] = (reach, records)
    out: dict[tuple[str, str, int], RemoteLogMetadataCache] = {}
    for _, records in furthest.values():
        out |= replay(records)[0]
    _replayed.clear()
    _replayed[key] = out
    return out


def _topic_id(log: PartitionLog, filesystem=None) -> str | None:
    from ..log.checkpoints import PARTITION_METADATA, PartitionMetadataFile

    path = log.other_files.get(PARTITION_METADATA)
    parsed = PartitionMetadataFile.read(path, filesystem) if path else None
    return parsed.topic_id if parsed is not None and not parsed.findings else None


def _segment(fileset: RemoteLogSegmentFileset) -> LogSegment:
    files = {_SUFFIX[k]: path for k, path in fileset.files.items() if k in _SUFFIX}
    return LogSegment(fileset.start_offset, files.get(LOG_SUFFIX), files.get(INDEX_SUFFIX),
                      files.get(TIME_INDEX_SUFFIX), files.get(TXN_INDEX_SUFFIX),
                      {_SUFFIX[k]: size for k, size in fileset.sizes.items() if k in _SUFFIX},
                      log_mtime_ms=fileset.mtime_ms, tier="remote", remote_segment_id=fileset.segment_id)


def _not_in_metadata(directory: RemoteTopicPartitionDirectory, known: set[str]) -> list[Finding]:
    return [Finding(f.files.get("log") or next(iter(f.files.values())), -1, "remote_segment_not_in_metadata",
                    f"remote segment {f.segment_id} (start offset {f.start_offset}, {sum(f.sizes.values())} bytes) is "
                    "in the remote store but __remote_log_metadata holds no such segment of the partition")
            for f in directory.filesets.values() if f.segment_id not in known]


def remote_segments(directory: RemoteTopicPartitionDirectory | None, cache: RemoteLogMetadataCache | None,
                    with_metadata: bool, local_start: int | None, expected_dir: str) -> tuple[list[LogSegment],
                                                                                              list[Finding]]:
    """A partition's remote segments below ``local_start`` (its first local segment's base offset; None: none),
    in offset order, and what the store and the metadata disagree on. ``cache``: the partition's remote log
    metadata (None: it holds none), ``with_metadata``: whether the metadata was read at all."""
    filesets = directory.filesets if directory is not None else {}

    def below(end: int) -> bool:
        return local_start is None or end < local_start

    if not with_metadata:
        chosen = sorted((f for f in filesets.values() if "log" in f.files and below(f.start_offset)),
                        key=lambda f: f.start_offset)
        findings = [Finding(directory.path, -1, "remote_log_metadata_missing",
                            "no __remote_log_metadata in the paths: the remote store's segments are read as listed, "
                            "whatever their state (copies unfinished or deleted included)")] if chosen else []
        return [_segment(f) for f in chosen], findings
    known = cache.segments if cache is not None else {}
    findings = _not_in_metadata(directory, set(known)) if directory is not None else []
    out = []
    for meta in sorted(known.values(), key=lambda m: (m.start_offset, m.segment_id)):
        if meta.state != COPY_SEGMENT_FINISHED or not below(meta.end_offset):
            continue
        fileset = filesets.get(meta.segment_id)
        if fileset is None or "log" not in fileset.files:
            findings.append(Finding(f"{expected_dir}/{meta.start_offset:020d}-{meta.segment_id}.log", -1,
                                    "remote_segment_missing",
                                    f"remote segment {meta.segment_id} (offsets {meta.start_offset} to "
                                    f"{meta.end_offset}) is copied as __remote_log_metadata says (offset "
                                    f"{meta.metadata_offset}) but the remote store has no such `.log`"))
            continue
        if fileset.sizes["log"] != meta.size:
            findings.append(Finding(fileset.files["log"], -1, "remote_segment_size_mismatch",
                                    f"{fileset.sizes['log']} bytes in the remote store, {meta.size} as "
                                    f"__remote_log_metadata says (offset {meta.metadata_offset})"))
        out.append(_segment(fileset))
    return out, findings


def add_remote_tier(logs: list[PartitionLog], all_logs: list[PartitionLog], store: str,
                    wants: Callable[[str, int], bool], filesystem=None) -> list[Finding]:
    """Put each tiered partition's remote segments ahead of its local ones in ``logs`` (the partitions a read
    selected; their findings gain the partition's disagreements); returns the findings of the store's partitions
    no local partition of ``logs`` has (``wants(topic, partition)``: those of the read's topics), and of files the
    store should not hold. ``all_logs``: every partition the read's paths hold (the metadata partitions among
    them)."""
    findings: list[Finding] = []
    directories = list_remote_storage(store, filesystem, findings)
    root = storage_root(store, filesystem)
    replayed = remote_log_metadata(all_logs, filesystem)
    metadata = {(topic_id, partition): cache for (topic_id, _, partition), cache in replayed.items()}
    with_metadata = any(log.topic == REMOTE_LOG_METADATA for log in all_logs)
    # only a tiered topic's partitions have their partition.metadata read (a broker holds thousands of others)
    tiered = {d.topic for d in directories.values()} | {topic for _, topic, _ in replayed}
    claimed = set()
    for log in logs:
        tiered_here = log.topic_partition.kind == "live" and log.topic in tiered
        topic_id = _topic_id(log, filesystem) if tiered_here else None
        key = (topic_id, log.partition)
        if topic_id is None or (key not in directories and key not in metadata):
            continue
        claimed.add(key)
        local_start = log.segments[0].base_offset if log.segments else None
        remote, problems = remote_segments(directories.get(key), metadata.get(key), with_metadata, local_start,
                                           f"{root}/{log.topic}-{log.partition}-{topic_id}")
        log.segments = remote + log.segments
        log.findings += problems
    for key, directory in directories.items():
        if key not in claimed and with_metadata and wants(directory.topic, directory.partition):
            known = set(metadata[key].segments) if key in metadata else set()
            findings += _not_in_metadata(directory, known)
    return findings
