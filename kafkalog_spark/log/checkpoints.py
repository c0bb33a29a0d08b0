"""Text checkpoint and metadata files: where a broker records recovery points, high watermarks, log start
offsets, cleaner progress, leader epochs, topic ids and its own identity.

Kafka writes these with CheckpointFile (server-common): UTF-8, a version line, a count line, then one
entry per line split on whitespace, written to ``.tmp`` then renamed. Reading mirrors
CheckpointReadBuffer: lines end at ``\\n``, ``\\r`` or ``\\r\\n`` (Java's readLine), an empty file or one
with only a version line reads as no entries, a wrong version, a malformed line or a count that does
not match the lines is an error (Kafka throws and treats the log dir as failed). Here each becomes a
finding naming the byte position and line; good lines are still returned, so a damaged checkpoint can be
inspected. Files are capped (:data:`DEFAULT_MAX_CHECKPOINT_BYTES`): a checkpoint is small, and a huge file
where one should be is refused with a finding rather than read.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Self

import javaproperties
import pyarrow.fs as pafs

from ..findings import Finding, Severity
from .files import read_capped

DEFAULT_MAX_CHECKPOINT_BYTES = 8 * 1024 * 1024

RECOVERY_POINT_OFFSET_CHECKPOINT = "recovery-point-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"  # high watermarks
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
OFFSET_CHECKPOINT_FILES = (RECOVERY_POINT_OFFSET_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT,
                           LOG_START_OFFSET_CHECKPOINT, CLEANER_OFFSET_CHECKPOINT)
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
META_PROPERTIES = "meta.properties"

_INT = re.compile(r"[+-]?[0-9]+")  # Java's Integer/Long.parseInt (ASCII digits)
_JAVA_WS = re.compile(r"[ \t\n\x0b\f\r]+")  # Java regex \s
_EOL = re.compile(rb"\r\n|\r|\n")
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


class Line(NamedTuple):
    """One line as Java's BufferedReader.readLine returns it: 1-based ``number``, byte ``position``."""

    number: int
    position: int
    text: str


def split_lines(data: bytes) -> list[tuple[int, bytes]]:
    """(byte position, raw line) pairs, terminators removed; no empty last line after a final newline."""
    out, start = [], 0
    for m in _EOL.finditer(data):
        out.append((start, data[start:m.start()]))
        start = m.end()
    if start < len(data):
        out.append((start, data[start:]))
    return out


def decode_lines(path: str, data: bytes, findings: list[Finding], encoding: str = "utf-8") -> list[Line]:
    """Split and decode; invalid UTF-8 is a finding at its byte (Kafka's reader throws on it) and is
    replaced by U+FFFD so the rest can still be read."""
    lines = []
    for i, (pos, raw) in enumerate(split_lines(data), start=1):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as e:
            findings.append(Finding(path, pos + e.start, "checkpoint_not_utf8",
                                    f"line {i}: invalid UTF-8 ({e.reason})", Severity.ERROR))
            text = raw.decode(encoding, errors="replace")
        lines.append(Line(i, pos, text))
    return lines


def java_split(line: str, pattern: re.Pattern[str] = _JAVA_WS) -> list[str]:
    """Java's Pattern.split: a leading empty field is kept, trailing empty fields are dropped."""
    parts = pattern.split(line)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def parse_java_int(text: str, bounds: tuple[int, int] = _INT32) -> int | None:
    """Integer.parseInt / Long.parseLong: ``None`` when Java would throw NumberFormatException."""
    if not _INT.fullmatch(text):
        return None
    v = int(text)
    return v if bounds[0] <= v <= bounds[1] else None


def parse_uuid(text: str) -> bytes | None:
    """Kafka's Uuid.fromString: at most 24 chars of URL-safe base64 decoding to 16 bytes; ``None`` if not."""
    if len(text) > 24 or not re.fullmatch(r"[A-Za-z0-9_-]*={0,2}", text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        return None
    return raw if len(raw) == 16 else None


def _malformed(path: str, line: Line, why: str, kind: str = "checkpoint_malformed") -> Finding:
    return Finding(path, line.position, kind, f"line {line.number}: {why}: {line.text[:200]!r}",
                   Severity.ERROR)


def read_versioned_entries(
    path: str, lines: list[Line], version: int, parse_entry: Callable[[str], Any | None],
    findings: list[Finding],
) -> tuple[int | None, int | None, list[tuple[Line, Any]]]:
    """CheckpointReadBuffer.read: (version read, count declared, [(line, entry)]) for the good lines."""
    if not lines:
        findings.append(Finding(path, 0, "checkpoint_empty", "empty file: Kafka reads it as no entries",
                                Severity.INFO))
        return None, None, []
    read_version = parse_java_int(lines[0].text)
    if read_version is None:
        findings.append(_malformed(path, lines[0], "version line is not an integer"))
        return None, None, []
    if read_version != version:
        findings.append(Finding(path, lines[0].position, "checkpoint_bad_version",
                                f"line 1: version {read_version}, expected {version}", Severity.ERROR))
        return read_version, None, []
    if len(lines) < 2:
        end = lines[0].position + len(lines[0].text.encode())
        findings.append(Finding(path, end, "checkpoint_empty", "no count line: Kafka reads it as no entries",
                                Severity.INFO))
        return read_version, None, []
    count = parse_java_int(lines[1].text)
    if count is None:
        findings.append(_malformed(path, lines[1], "count line is not an integer"))
    entries = []
    for line in lines[2:]:
        entry = parse_entry(line.text)
        if entry is None:
            findings.append(_malformed(path, line, "not a valid entry"))
        else:
            entries.append((line, entry))
    if count is not None and count != len(lines) - 2:
        findings.append(Finding(path, lines[1].position, "checkpoint_count_mismatch",
                                f"line 2 declares {count} entries but {len(lines) - 2} entry lines follow",
                                Severity.ERROR))
    return read_version, count, entries


def _load_lines(path: str, filesystem: pafs.FileSystem | None, max_bytes: int, findings: list[Finding],
                encoding: str = "utf-8") -> list[Line] | None:
    data = read_capped(path, filesystem, max_bytes, findings, refuse_larger=True,
                       too_large_kind="checkpoint_too_large")
    return None if data is None else decode_lines(path, data, findings, encoding)


class _LineCheckpoint:
    """``read``/``from_bytes`` for the line-based text files: the class parses decoded lines in ``_parse``."""

    __slots__ = ()

    @classmethod
    def read(cls, path: str, filesystem: pafs.FileSystem | None = None, *,
             max_bytes: int = DEFAULT_MAX_CHECKPOINT_BYTES) -> Self:
        """Read and parse; never raises on bad or missing content (see ``findings``)."""
        cp = cls(path)
        lines = _load_lines(path, filesystem, max_bytes, cp.findings)
        if lines is not None:
            cp._parse(lines)
        return cp

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> Self:
        cp = cls(path)
        cp._parse(decode_lines(path, data, cp.findings))
        return cp


@dataclass(slots=True)
class OffsetCheckpointFile(_LineCheckpoint):
    """An offset checkpoint at the log-dir root (recovery points, high watermarks, log start offsets,
    cleaner offsets): ``offsets[(topic, partition)] = offset``. A later duplicate line wins, as in
    Kafka's map, and is reported."""

    path: str
    version: int | None = None
    expected_count: int | None = None
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    # (topic-partition, byte position) of every entry line that parses, even under a bad version line or
    # repeated: where a finding about an entry points
    line_positions: list[tuple[tuple[str, int], int]] = field(default_factory=list)

    VERSION = 0

    @staticmethod
    def parse_entry(text: str) -> tuple[tuple[str, int], int] | None:
        parts = java_split(text)
        if len(parts) != 3 or not parts[0]:
            return None
        partition, offset = parse_java_int(parts[1]), parse_java_int(parts[2], _INT64)
        if partition is None or offset is None:
            return None
        return (parts[0], partition), offset

    def _parse(self, lines: list[Line]) -> None:
        self.version, self.expected_count, entries = read_versioned_entries(
            self.path, lines, self.VERSION, self.parse_entry, self.findings)
        for line, (tp, offset) in entries:
            if tp in self.offsets:
                self.findings.append(Finding(self.path, line.position, "checkpoint_duplicate_entry",
                                             f"line {line.number}: {tp[0]}-{tp[1]} appears again; the later "
                                             "line wins", Severity.WARNING))
            self.offsets[tp] = offset
        for line in lines[2:]:
            parsed = self.parse_entry(line.text)
            if parsed is not None:
                self.line_positions.append((parsed[0], line.position))

    def __len__(self) -> int:
        return len(self.offsets)


def read_root_checkpoints(log_dir: str, filesystem: pafs.FileSystem | None = None) -> dict[str, OffsetCheckpointFile]:
    """The offset checkpoint files present at a log dir's root, parsed, by file name. A missing one is left
    out: not every log dir has every checkpoint (no cleaner checkpoint without a compacted topic)."""
    out = {}
    for name in OFFSET_CHECKPOINT_FILES:
        f = OffsetCheckpointFile.read(f"{log_dir.rstrip('/')}/{name}", filesystem)
        if not any(x.kind == "missing_file" for x in f.findings):
            out[name] = f
    return out


class EpochEntry(NamedTuple):
    """A leader epoch and the first offset written in it."""

    epoch: int
    start_offset: int


@dataclass(slots=True)
class LeaderEpochCheckpointFile(_LineCheckpoint):
    """``leader-epoch-checkpoint`` in a partition dir: the epoch -> start offset lineage the broker uses
    to truncate correctly after a leader change. Epochs must increase and start offsets not decrease
    (LeaderEpochFileCache keeps them so); a violation is a warning."""

    path: str
    version: int | None = None
    expected_count: int | None = None
    entries: list[EpochEntry] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    VERSION = 0

    @staticmethod
    def parse_entry(text: str) -> EpochEntry | None:
        parts = java_split(text)
        if len(parts) != 2:
            return None
        epoch, start = parse_java_int(parts[0]), parse_java_int(parts[1], _INT64)
        return None if epoch is None or start is None else EpochEntry(epoch, start)

    def _parse(self, lines: list[Line]) -> None:
        self.version, self.expected_count, entries = read_versioned_entries(
            self.path, lines, self.VERSION, self.parse_entry, self.findings)
        prev: EpochEntry | None = None
        for line, entry in entries:
            if prev is not None and (entry.epoch <= prev.epoch or entry.start_offset < prev.start_offset):
                self.findings.append(Finding(
                    self.path, line.position, "leader_epoch_not_monotonic",
                    f"line {line.number}: epoch {entry.epoch} at {entry.start_offset} after epoch "
                    f"{prev.epoch} at {prev.start_offset}", Severity.WARNING))
            self.entries.append(entry)
            prev = entry

    def __len__(self) -> int:
        return len(self.entries)


@dataclass(slots=True)
class PartitionMetadataFile(_LineCheckpoint):
    """``partition.metadata``: ``version: 0`` then ``topic_id: <22-char URL-safe base64 Uuid>``, which ties
    the directory to one incarnation of the topic (a re-created topic gets a new id). Parsed as
    PartitionMetadataReadBuffer does: each line split on ``:`` + whitespace into two parts; a version
    >= 0 is accepted; a zero topic id is invalid."""

    path: str
    version: int | None = None
    topic_id: str | None = None
    findings: list[Finding] = field(default_factory=list)

    def _parse(self, lines: list[Line]) -> None:
        colon = re.compile(r":[ \t\n\x0b\f\r]+")
        if not lines:
            self.findings.append(Finding(self.path, 0, "checkpoint_malformed", "empty file", Severity.ERROR))
            return
        parts = java_split(lines[0].text, colon)
        version = parse_java_int(parts[1]) if len(parts) == 2 else None
        if version is None:
            self.findings.append(_malformed(self.path, lines[0], "expected 'version: <int>'"))
            return
        self.version = version
        if version < 0:
            self.findings.append(Finding(self.path, lines[0].position, "checkpoint_bad_version",
                                         f"line 1: version {version}, expected >= 0", Severity.ERROR))
            return
        if len(lines) < 2:
            self.findings.append(Finding(self.path, lines[0].position + len(lines[0].text.encode()),
                                         "checkpoint_malformed", "no topic_id line", Severity.ERROR))
            return
        parts = java_split(lines[1].text, colon)
        if len(parts) != 2:
            self.findings.append(_malformed(self.path, lines[1], "expected 'topic_id: <uuid>'"))
            return
        raw = parse_uuid(parts[1])
        if raw is None or raw == bytes(16):
            what = "the zero Uuid" if raw is not None else "not a base64 Uuid"
            self.findings.append(_malformed(self.path, lines[1], f"topic id is {what}",
                                            "partition_metadata_bad_topic_id"))
            return
        self.topic_id = parts[1]


@dataclass(slots=True)
class MetaProperties:
    """``meta.properties`` at the log-dir root: which broker and cluster the directory belongs to.

    Version 0 (ZooKeeper era: ``broker.id``, optional ``cluster.id``) or 1 (KRaft: ``node.id`` and
    ``cluster.id`` required); ``directory.id`` (a Uuid) is optional in both. Validated as Kafka's
    MetaProperties.Builder does; ``node_id`` is broker.id for v0 and node.id for v1. Read as Latin-1,
    as Properties.load(InputStream) does."""

    path: str
    version: int | None = None
    node_id: int | None = None
    cluster_id: str | None = None
    directory_id: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    @classmethod
    def read(cls, path: str, filesystem: pafs.FileSystem | None = None, *,
             max_bytes: int = DEFAULT_MAX_CHECKPOINT_BYTES) -> Self:
        mp = cls(path)
        data = read_capped(path, filesystem, max_bytes, mp.findings, refuse_larger=True,
                           too_large_kind="checkpoint_too_large")
        if data is not None:
            mp._parse(data)
        return mp

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> Self:
        mp = cls(path)
        mp._parse(data)
        return mp

    def _parse(self, data: bytes) -> None:
        text = data.decode("latin-1")  # one char per byte: string indexes are byte positions
        where: dict[str, int] = {}
        pos = 0
        try:
            # parse() rather than loads(): each element carries its source lines, whose lengths summed give
            # the byte position of each key's line. The last occurrence of a key wins, as in Properties.load.
            for element in javaproperties.parse(text):
                if isinstance(element, javaproperties.KeyValue):
                    self.properties[element.key] = element.value
                    where[element.key] = pos
                pos += len(element.source)
        except javaproperties.InvalidUEscapeError as e:  # Properties.load throws: Kafka cannot read the file
            self.findings.append(Finding(self.path, pos, "checkpoint_malformed", str(e), Severity.ERROR))
            return

        def bad(key: str, why: str, kind: str = "meta_properties_bad_value") -> None:
            self.findings.append(Finding(self.path, where.get(key, -1), kind, why, Severity.ERROR))

        raw_version = self.properties.get("version", "0")
        version = parse_java_int(raw_version.strip())
        if version not in (0, 1):
            bad("version", f"unknown meta.properties version {raw_version!r} (expected 0 or 1)",
                "meta_properties_bad_version")
            return
        self.version = version
        id_key = "broker.id" if version == 0 else "node.id"
        if id_key in self.properties:
            self.node_id = parse_java_int(self.properties[id_key])
            if self.node_id is None:
                bad(id_key, f"{id_key} {self.properties[id_key]!r} is not a base-10 int")
        elif version == 1:
            bad(id_key, "node.id was not found (required in version 1)", "meta_properties_missing_key")
        self.cluster_id = self.properties.get("cluster.id")
        if self.cluster_id is None and version == 1:
            bad("cluster.id", "cluster.id was not found (required in version 1)",
                "meta_properties_missing_key")
        if "directory.id" in self.properties:
            if parse_uuid(self.properties["directory.id"]) is None:
                bad("directory.id", f"directory.id {self.properties['directory.id']!r} is not a Uuid")
            else:
                self.directory_id = self.properties["directory.id"]
