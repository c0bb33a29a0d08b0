"""A remote store in the layout of Kafka's LocalTieredStorage (KIP-405's reference RemoteStorageManager, in
Kafka's `storage` test sources): the remote copies of tiered segments, listed read-only.

LocalTieredStorage keeps, under its ``dir``, a ``kafka-tiered-storage`` directory with one directory per
partition, ``<topic>-<partition>-<topic id>`` (RemoteTopicPartitionDirectory), holding one file set per remote
segment (RemoteLogSegmentFileset): ``<start offset, 20 digits>-<segment id>.<kind>``, the kinds being the
segment's ``log``, ``index``, ``timeindex``, ``txnindex`` (only when the segment has aborted transactions),
``snapshot`` (the producer snapshot) and ``leader_epoch_checkpoint``. Topic and segment ids are Kafka's base64
UUIDs. The store may be a local directory or an object-store prefix; only listings are read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyarrow.fs as pafs

from ..findings import Finding
from .files import normalize_path, os_error_detail, resolve

ROOT_DIR = "kafka-tiered-storage"  # LocalTieredStorage's directory under its `dir`
_UUID = r"[A-Za-z0-9_-]{22}"
_PARTITION_DIR = re.compile(rf"^(?P<topic>.+)-(?P<partition>\d+)-(?P<topic_id>{_UUID})$")
_FILE = re.compile(rf"^(?P<offset>\d{{20}})-(?P<segment_id>{_UUID})\."
                   r"(?P<kind>log|index|timeindex|txnindex|snapshot|leader_epoch_checkpoint)$")


@dataclass(slots=True)
class RemoteLogSegmentFileset:
    """One remote segment's files in the store: ``files`` and ``sizes`` by kind (``log``, ``index``, ...)."""

    topic: str
    partition: int
    topic_id: str
    start_offset: int
    segment_id: str
    files: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    mtime_ms: int | None = None  # the `.log`'s


@dataclass(slots=True)
class RemoteTopicPartitionDirectory:
    topic: str
    partition: int
    topic_id: str
    path: str
    filesets: dict[str, RemoteLogSegmentFileset] = field(default_factory=dict)  # by segment id


def storage_root(path: str, filesystem: pafs.FileSystem | None = None) -> str:
    """The ``kafka-tiered-storage`` directory: ``path`` itself, or the directory of that name in it (the ``dir``
    LocalTieredStorage was given)."""
    path = normalize_path(path).rstrip("/")
    if path.rsplit("/", 1)[-1] == ROOT_DIR:
        return path
    fs, inner = resolve(f"{path}/{ROOT_DIR}", filesystem)
    return f"{path}/{ROOT_DIR}" if fs.get_file_info(inner).type == pafs.FileType.Directory else path


def list_remote_storage(path: str, filesystem: pafs.FileSystem | None = None,
                        findings: list[Finding] | None = None) -> dict[tuple[str, int], RemoteTopicPartitionDirectory]:
    """The store's partition directories by (topic id, partition), with their segments' file sets. A store that
    does not exist raises FileNotFoundError (a mistake in what was asked for); one that cannot be listed, or a
    file named like no LocalTieredStorage file, is a finding appended to ``findings``."""
    findings = findings if findings is not None else []
    root = storage_root(path, filesystem)
    fs, inner = resolve(root, filesystem)
    if fs.get_file_info(inner).type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"remote storage {path}: no such directory")
    try:
        infos = fs.get_file_info(pafs.FileSelector(inner, recursive=True))
    except OSError as e:
        findings.append(Finding(root, -1, "unreadable_file", f"cannot list the remote storage: {os_error_detail(e)}"))
        return {}
    out: dict[tuple[str, int], RemoteTopicPartitionDirectory] = {}
    for info in sorted(infos, key=lambda i: i.path):
        relative = info.path[len(inner.rstrip("/")) + 1:]
        parts = relative.split("/")
        if info.type != pafs.FileType.File:
            continue
        dir_match, file_match = (_PARTITION_DIR.match(parts[0]), _FILE.match(parts[1])) if len(parts) == 2 \
            else (None, None)
        full = f"{root}/{relative}"
        if dir_match is None or file_match is None:
            findings.append(Finding(full, -1, "unknown_remote_file",
                                    "not a file of LocalTieredStorage's layout (<topic>-<partition>-<topic id>/"
                                    "<start offset>-<segment id>.<kind>): not read"))
            continue
        key = (dir_match["topic_id"], int(dir_match["partition"]))
        directory = out.setdefault(key, RemoteTopicPartitionDirectory(
            dir_match["topic"], int(dir_match["partition"]), dir_match["topic_id"], f"{root}/{parts[0]}"))
        fileset = directory.filesets.setdefault(file_match["segment_id"], RemoteLogSegmentFileset(
            directory.topic, directory.partition, directory.topic_id, int(file_match["offset"]),
            file_match["segment_id"]))
        fileset.files[file_match["kind"]] = full
        fileset.sizes[file_match["kind"]] = info.size
        if file_match["kind"] == "log" and info.mtime_ns is not None:
            fileset.mtime_ms = info.mtime_ns // 1_000_000
    return out
