"""The directory model: log dirs -> partition dirs -> segments, named as Kafka names them.

A log dir holds one directory per partition (``<topic>-<partition>``; the topic is everything before
the last ``-``), plus checkpoint files. A partition dir holds segments named by their 20-digit base
offset (``.log``, ``.index``, ``.timeindex``, ``.txnindex``), producer ``.snapshot`` files and a few
metadata files. Files with ``.deleted``/``.cleaned``/``.swap`` suffixes belong to a delete, clean or
swap in progress: they are listed, never mistaken for live segments. The KRaft metadata log
(``__cluster_metadata-0``) also holds snapshots, ``<end offset>-<epoch>.checkpoint`` (see
:class:`KRaftSnapshot`), and ``quorum-state``. Only directory listings and file sizes are read here.

A directory that cannot be listed, and an entry named like a Kafka file that is no regular file (a FIFO, a
socket, a device, a directory), become ``unreadable_file`` findings naming them: the directory's files, or
that entry, are then left out, never opened (opening a FIFO blocks until a writer comes).
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass, field

import pyarrow.fs as pafs

from ..findings import Finding, KafkaLogError
from . import object_stores
from .checkpoints import LEADER_EPOCH_CHECKPOINT, META_PROPERTIES, PARTITION_METADATA, MetaProperties
from .files import expand_paths, not_regular_detail, os_error_detail, resolve
from .quorum_state import QUORUM_STATE

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SNAPSHOT_SUFFIX = ".snapshot"
SEGMENT_FILE_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
TEMP_SUFFIXES = (".deleted", ".cleaned", ".swap")

_LIVE_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
# Kafka appends "." + a dash-less UUID + "-delete" / "-future" / "-stray" to the topic-partition name.
_SPECIAL_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)\.(?P<uuid>[0-9a-f]{32})-(?P<kind>delete|future|stray)$")
_SEGMENT_FILE = re.compile(r"^(?P<base>\d{20})(?P<suffix>\.[a-z]+)(?P<temp>\.deleted|\.cleaned|\.swap)?$")
# Kafka's Snapshots.parse (raft/src/main/java/org/apache/kafka/snapshot/Snapshots.java): 20-digit end offset,
# "-", 10-digit epoch, then ".checkpoint", ".checkpoint.part" (a write in progress, created as a temp file:
# "<id>-<random>.checkpoint.part") or ".checkpoint.deleted" (marked for deletion); Kafka ignores what lies
# between the epoch and the suffix.
_KRAFT_SNAPSHOT = re.compile(r"^(?P<end>\d{20})-(?P<epoch>\d{10})(?:-[^/]*)?\.checkpoint(?P<state>\.part|\.deleted)?$")
_SNAPSHOT_STATES = {None: "snapshot", ".part": "partial", ".deleted": "deleted"}


@dataclass(frozen=True, slots=True)
class TopicPartition:
    topic: str
    partition: int
    kind: str = "live"  # live, delete, future, stray

    @classmethod
    def parse(cls, dir_name: str) -> TopicPartition | None:
        """``None`` when the name is not a partition directory."""
        m = _SPECIAL_DIR.match(dir_name) or _LIVE_DIR.match(dir_name)
        if not m:
            return None
        return cls(m["topic"], int(m["partition"]), m.groupdict().get("kind") or "live")


@dataclass(slots=True)
class LogSegment:
    """One segment's files. ``None`` means the file is absent (a missing index is legal: Kafka rebuilds it)."""

    base_offset: int
    log: str | None = None
    index: str | None = None
    time_index: str | None = None
    txn_index: str | None = None
    sizes: dict[str, int] = field(default_factory=dict)  # suffix -> bytes
    log_mtime_ms: int | None = None
    # The offset index's: the cleaner gives a cleaned `.log` its original's time, never its new index's
    index_mtime_ms: int | None = None
    time_index_mtime_ms: int | None = None
    is_active: bool = False
    # "remote": a copy in tiered storage (the source's remoteStorage), its files named by its segment id
    tier: str = "local"
    remote_segment_id: str | None = None

    @property
    def name(self) -> str:
        return f"{self.base_offset:020d}"

    @property
    def log_size(self) -> int:
        return self.sizes.get(LOG_SUFFIX, 0)


@dataclass(slots=True)
class TempFile:
    """A ``.deleted``/``.cleaned``/``.swap`` file: an operation the broker had not finished."""

    path: str
    base_offset: int
    suffix: str  # the file kind, e.g. ".log"
    temp: str  # ".deleted", ".cleaned" or ".swap"
    size: int


@dataclass(frozen=True, slots=True)
class KRaftSnapshot:
    """A KRaft snapshot of the metadata log: the state up to (not including) ``end_offset``, taken in ``epoch``.

    ``state`` is "snapshot", or "partial" (``.checkpoint.part``: never finished, deleted by the controller at
    startup) or "deleted" (``.checkpoint.deleted``: marked for an asynchronous delete). KafkaMetadataLog deletes
    both kinds when it loads the log, as it does complete snapshots below the log start offset.
    """

    path: str
    end_offset: int
    epoch: int
    state: str
    size: int
    mtime_ms: int | None = None

    @classmethod
    def parse(cls, path: str, size: int = 0, mtime_ms: int | None = None) -> KRaftSnapshot | None:
        m = _KRAFT_SNAPSHOT.match(path.rstrip("/").rsplit("/", 1)[-1])
        if m is None:
            return None
        return cls(path, int(m["end"]), int(m["epoch"]), _SNAPSHOT_STATES[m["state"]], size, mtime_ms)


@dataclass(slots=True)
class PartitionLog:
    """A partition directory (Kafka's UnifiedLog on disk)."""

    path: str
    topic_partition: TopicPartition
    segments: list[LogSegment] = field(default_factory=list)
    snapshots: dict[int, str] = field(default_factory=dict)  # producer snapshot offset -> path
    temp_files: list[TempFile] = field(default_factory=list)
    other_files: dict[str, str] = field(default_factory=dict)  # e.g. leader-epoch-checkpoint -> path
    unknown_files: list[str] = field(default_factory=list)
    kraft_snapshots: list[KRaftSnapshot] = field(default_factory=list)  # by end offset; the metadata log only
    findings: list[Finding] = field(default_factory=list)  # the listing's: an unlistable dir, special files
    file_sizes: dict[str, int] = field(default_factory=dict)  # every regular file's size, by name, as listed

    @property
    def topic(self) -> str:
        return self.topic_partition.topic

    @property
    def partition(self) -> int:
        return self.topic_partition.partition

    @property
    def log_dir(self) -> str:
        """The broker log dir holding this partition dir."""
        return self.path.rstrip("/").rsplit("/", 1)[0]

    @property
    def active_segment(self) -> LogSegment | None:
        return self.segments[-1] if self.segments else None


def list_partition(path: str, filesystem: pafs.FileSystem | None = None,
                   topic_partition: TopicPartition | None = None) -> PartitionLog:
    """List one partition directory (read-only)."""
    fs, inner = resolve(path, filesystem)
    tp = topic_partition or TopicPartition.parse(inner.rstrip("/").rsplit("/", 1)[-1])
    if tp is None:
        raise ValueError(f"{path} is not a partition directory (expected <topic>-<partition>)")
    log = PartitionLog(path, tp)
    segments: dict[int, LogSegment] = {}
    entries = _listing(fs, inner, path, log.findings)
    for name, target in _dangling_links(fs, inner, {info.base_name for info in entries}):
        if _is_kafka_file_name(name):
            log.findings.append(Finding(f"{path.rstrip('/')}/{name}", -1, "missing_file",
                                        f"a symbolic link to {target}, which does not exist; not read"))
    for info in entries:
        name = info.base_name
        full = f"{path.rstrip('/')}/{name}"
        if info.type != pafs.FileType.File:
            if info.type != pafs.FileType.Directory or _is_kafka_file_name(name):
                log.findings.append(Finding(full, -1, "unreadable_file",
                                            not_regular_detail(fs, f"{inner.rstrip('/')}/{name}", info)))
            continue
        log.file_sizes[name] = info.size
        m = _SEGMENT_FILE.match(name)
        if m is None:
            mtime_ms = None if info.mtime_ns is None else info.mtime_ns // 1_000_000
            if snapshot := KRaftSnapshot.parse(full, info.size, mtime_ms):
                log.kraft_snapshots.append(snapshot)
            elif name.endswith(".tmp") or name in (LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA, QUORUM_STATE):
                log.other_files[name] = full
            else:
                log.unknown_files.append(full)
            continue
        base, suffix, temp = int(m["base"]), m["suffix"], m["temp"]
        if temp:
            log.temp_files.append(TempFile(full, base, suffix, temp, info.size))
        elif suffix == SNAPSHOT_SUFFIX:
            log.snapshots[base] = full
        elif suffix in SEGMENT_FILE_SUFFIXES:
            seg = segments.setdefault(base, LogSegment(base))
            setattr(seg, _ATTR[suffix], full)
            seg.sizes[suffix] = info.size
            if suffix in _MTIME_ATTR and info.mtime_ns is not None:
                setattr(seg, _MTIME_ATTR[suffix], info.mtime_ns // 1_000_000)
        else:
            log.unknown_files.append(full)
    log.segments = sorted(segments.values(), key=lambda s: s.base_offset)
    if log.segments:
        log.segments[-1].is_active = True  # the segment with the largest base offset
    log.snapshots = dict(sorted(log.snapshots.items()))
    log.temp_files.sort(key=lambda t: (t.base_offset, t.suffix, t.temp))  # as listed: in no order on a local disk
    log.unknown_files.sort()
    log.kraft_snapshots.sort(key=lambda s: (s.end_offset, s.epoch, s.state))
    return log


_MTIME_ATTR = {LOG_SUFFIX: "log_mtime_ms", INDEX_SUFFIX: "index_mtime_ms", TIME_INDEX_SUFFIX: "time_index_mtime_ms"}
_ATTR = {LOG_SUFFIX: "log", INDEX_SUFFIX: "index", TIME_INDEX_SUFFIX: "time_index", TXN_INDEX_SUFFIX: "txn_index"}


def _is_kafka_file_name(name: str) -> bool:
    """Named as Kafka names a partition dir's files (a directory so named is a file gone wrong)."""
    return bool(_SEGMENT_FILE.match(name) or _KRAFT_SNAPSHOT.match(name) or name.endswith(".tmp")
                or name in (LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA, QUORUM_STATE))


def _dangling_links(fs: pafs.FileSystem, inner: str, listed: set[str]) -> list[tuple[str, str]]:
    """(name, target) of the symbolic links to nothing in a local directory, which pyarrow's listing leaves out
    without a word."""
    if not isinstance(fs, pafs.LocalFileSystem):
        return []
    try:
        names = sorted(set(os.listdir(inner)) - listed)
    except OSError:
        return []
    out = []
    for name in names:
        link = os.path.join(inner, name)
        if os.path.islink(link) and not os.path.exists(link):
            out.append((name, os.readlink(link)))
    return out


def _listing(fs: pafs.FileSystem, inner: str, path: str, findings: list[Finding]) -> list[pafs.FileInfo]:
    """The directory's entries; none, and a finding naming it, when it cannot be listed (permissions, a
    directory gone since its parent was listed, a remote error): its files are then not read."""
    try:
        return fs.get_file_info(pafs.FileSelector(inner))
    except OSError as e:
        kind = "missing_file" if isinstance(e, FileNotFoundError) else "unreadable_file"
        findings.append(Finding(path, -1, kind, f"cannot list the directory: {os_error_detail(e)}"))
        return []


@dataclass(slots=True)
class LogDir:
    """A broker log directory: partition dirs and the root checkpoint files."""

    path: str
    partitions: list[PartitionLog]
    files: dict[str, str]  # root files by name: meta.properties, *-checkpoint, .kafka_cleanshutdown
    findings: list[Finding] = field(default_factory=list)  # the listing's: the log dir cannot be listed


def list_log_dir(path: str, filesystem: pafs.FileSystem | None = None) -> LogDir:
    """List a log dir and its partition dirs (read-only). Root files are read by name (checkpoints,
    meta.properties), and a root file that is no regular file is reported by its reader, not here."""
    fs, inner = resolve(path, filesystem)
    object_stores.prefetch_listing(fs, inner)  # a store's partition dirs then list without a request each
    partitions, files = [], {}
    findings: list[Finding] = []
    for info in sorted(_listing(fs, inner, path, findings), key=lambda i: i.base_name):
        full = f"{path.rstrip('/')}/{info.base_name}"
        if info.type == pafs.FileType.Directory:
            tp = TopicPartition.parse(info.base_name)
            if tp is not None:
                partitions.append(list_partition(full, filesystem, tp))
        elif info.type == pafs.FileType.File:
            files[info.base_name] = full
        elif TopicPartition.parse(info.base_name) is not None:  # a FIFO or socket named like a partition dir
            findings.append(Finding(full, -1, "unreadable_file",
                                    not_regular_detail(fs, f"{inner.rstrip('/')}/{info.base_name}", info)))
    return LogDir(path, partitions, files, findings)


def is_partition_dir(path: str, filesystem: pafs.FileSystem | None = None) -> bool:
    """A partition dir has a partition-like name and holds segment or partition metadata files; a log
    dir's own name may look like one too (``kafka-0``), so the contents decide. A partition-like dir that
    exists but cannot be listed counts as one, so that its finding names its topic-partition."""
    if TopicPartition.parse(path.rstrip("/").rsplit("/", 1)[-1]) is None:
        return False
    fs, inner = resolve(path, filesystem)
    try:
        entries = fs.get_file_info(pafs.FileSelector(inner))
    except FileNotFoundError:
        raise
    except OSError:
        return True
    for info in entries:
        if info.type == pafs.FileType.File and (
            _SEGMENT_FILE.match(info.base_name) or info.base_name in (PARTITION_METADATA, LEADER_EPOCH_CHECKPOINT)
        ):
            return True
        if info.type == pafs.FileType.Directory and TopicPartition.parse(info.base_name):
            return False
    return False


def find_partitions(paths: list[str], filesystem: pafs.FileSystem | None = None,
                    findings: list[Finding] | None = None) -> list[PartitionLog]:
    """Partition logs under any mix of log dirs and partition dirs (paths, ``file:`` URIs or globs).

    A path that does not exist raises FileNotFoundError (a mistake in what was asked for). What the listing
    finds wrong is kept, not raised: a partition dir's on its ``findings``, a log dir's (it cannot be listed)
    appended to ``findings``; without that list, such a finding raises :class:`KafkaLogError`."""
    out: list[PartitionLog] = []
    for p in expand_paths(paths, filesystem, findings):
        fs, inner = resolve(p, filesystem)
        if fs.get_file_info(inner).type == pafs.FileType.NotFound:
            raise FileNotFoundError(errno.ENOENT, "no such file or directory", p)
        if is_partition_dir(p, filesystem):
            out.append(list_partition(p, filesystem))
            continue
        log_dir = list_log_dir(p, filesystem)
        if findings is not None:
            findings.extend(log_dir.findings)
        elif log_dir.findings:
            raise KafkaLogError(log_dir.findings[0])
        out.extend(log_dir.partitions)
    return out


def segment_of_file(path: str) -> tuple[TopicPartition | None, int | None]:
    """The topic-partition (from the parent dir) and base offset (from the name) of a segment file."""
    parts = path.rstrip("/").rsplit("/", 2)
    m = _SEGMENT_FILE.match(parts[-1])
    tp = TopicPartition.parse(parts[-2]) if len(parts) >= 2 else None
    return tp, int(m["base"]) if m else None


def containing_log_dir(path: str, filesystem: pafs.FileSystem | None = None) -> str:
    """The log dir that the rows read from ``path`` name in their ``logDir``: the path itself, or a partition
    dir's parent."""
    path = path.rstrip("/")
    return path.rsplit("/", 1)[0] if is_partition_dir(path, filesystem) else path


def cluster_id(path: str, filesystem: pafs.FileSystem | None = None) -> str | None:
    """The ``cluster.id`` in the ``meta.properties`` of the log dir at or above ``path`` (a log dir or a partition
    dir): None when there is no readable, valid one (its reader's findings are the validation's to report)."""
    return broker_identity(path, filesystem)[0]


def broker_identity(path: str, filesystem: pafs.FileSystem | None = None) -> tuple[str | None, int | None]:
    """(``cluster.id``, the broker's ``node.id`` or ``broker.id``) of the log dir at or above ``path``, from its
    ``meta.properties``; (None, None) when there is no readable, valid one."""
    log_dir = containing_log_dir(path, filesystem)
    fs, inner = resolve(log_dir, filesystem)
    # in a store, the log dir's listing (one LIST, or none when kept) answers whether the file is there, not a HEAD
    object_stores.prefetch_listing(fs, inner.rstrip("/"), recursive=False)
    if fs.get_file_info(f"{inner.rstrip('/')}/{META_PROPERTIES}").type != pafs.FileType.File:
        return None, None
    meta = MetaProperties.read(f"{log_dir.rstrip('/')}/{META_PROPERTIES}", filesystem)
    return (None, None) if meta.findings else (meta.cluster_id, meta.node_id)


def group_by_cluster(log_dirs: list[str], filesystem: pafs.FileSystem | None = None) -> dict[str | None, list[str]]:
    """``log_dirs`` by the cluster they belong to (``meta.properties``' cluster.id), in the order first seen: the
    internal topics of a cluster (group offsets, transactions, the metadata) speak of partitions on all of its
    brokers, never of another cluster's. The dirs whose cluster is unknown (no meta.properties: copied partition
    dirs, say) are taken as one cluster, under None."""
    groups: dict[str | None, list[str]] = {}
    for d in log_dirs:
        groups.setdefault(cluster_id(d, filesystem), []).append(d)
    return groups
