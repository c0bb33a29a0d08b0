"""Text checkpoint readers against the files real Kafka 3.9.2 brokers wrote, and against damaged copies.

Corpus checks assert only what the files themselves show and how they relate to the corpus (every
partition a checkpoint names has a directory, partitions of one topic share a topic id, ...).
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from kafkalog_spark.findings import Severity
from kafkalog_spark.log.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    OFFSET_CHECKPOINT_FILES,
    PARTITION_METADATA,
    EpochEntry,
    LeaderEpochCheckpointFile,
    MetaProperties,
    OffsetCheckpointFile,
    PartitionMetadataFile,
    java_split,
    parse_uuid,
)
from kafkalog_spark.log.log_dir import TopicPartition
from tests.helpers.corpus import SAMPLES

LOG_DIRS = [SAMPLES / "broker", SAMPLES / "live-copy", SAMPLES / "legacy"]
OFFSET_CHECKPOINTS = sorted(str(d / n) for d in LOG_DIRS for n in OFFSET_CHECKPOINT_FILES
                            if (d / n).exists())
PARTITION_DIRS = sorted(p for d in LOG_DIRS for p in d.iterdir()
                        if p.is_dir() and TopicPartition.parse(p.name))
CORPUS_PARTITIONS = {(tp.topic, tp.partition)
                     for tp in map(TopicPartition.parse, (p.name for p in PARTITION_DIRS))}


def ids(paths: list) -> list[str]:
    return [str(Path(p).relative_to(SAMPLES)) for p in paths]


def errors(findings) -> list:
    return [f for f in findings if f.severity == Severity.ERROR]


def kinds_at(findings) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for f in findings:
        out.setdefault(f.kind, []).append(f.position)
    return out


def _readme_partition_dirs() -> set[str]:
    """The partition dirs data/samples/README.md (written by the corpus generator) describes."""
    text = (SAMPLES / "README.md").read_text()
    return set(re.findall(r"`((?:broker|live-copy|legacy)/[A-Za-z0-9._-]+-\d+)`", text))


def _entries(path: str | Path) -> list[list[str]]:
    """A checkpoint's entry lines (after the version and count lines), split on blanks."""
    return [line.split() for line in Path(path).read_text().splitlines()[2:]]


def _golden(log: Path) -> str:
    return (SAMPLES / "golden" / f"{log.relative_to(SAMPLES)}.deep.txt").read_bytes().decode()


def _log_end_offset(pdir: Path) -> int:
    """The last batch's lastOffset + 1, from kafka-dump-log's dump of the partition's last segment."""
    last = sorted(pdir.glob("*.log"))[-1]
    return int(re.findall(r"(?m)^baseOffset: \d+ lastOffset: (\d+) ", _golden(last))[-1]) + 1


def test_corpus_has_checkpoints() -> None:
    # the four root offset checkpoints of the broker and of the live copy (README: Layout); legacy/ has none
    assert OFFSET_CHECKPOINTS == sorted(str(SAMPLES / d / n) for d in ("broker", "live-copy") for n in (
        "cleaner-offset-checkpoint", "log-start-offset-checkpoint", "recovery-point-offset-checkpoint",
        "replication-offset-checkpoint"))
    assert ids(PARTITION_DIRS) == sorted(_readme_partition_dirs()) and len(PARTITION_DIRS) == 24


# --- the corpus -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", OFFSET_CHECKPOINTS, ids=ids(OFFSET_CHECKPOINTS))
def test_offset_checkpoints_parse_and_name_corpus_partitions(path: str) -> None:
    cp = OffsetCheckpointFile.read(path)
    assert errors(cp.findings) == []
    text = Path(path).read_text()
    if text == "":  # a copy taken mid-write: Kafka reads an empty file as no entries
        assert [f.kind for f in cp.findings] == ["checkpoint_empty"] and cp.offsets == {}
        return
    assert cp.findings == [] and cp.version == 0
    assert cp.expected_count == len(cp.offsets) == len(text.splitlines()) - 2
    assert cp.offsets == {(topic, int(partition)): int(offset) for topic, partition, offset in _entries(path)}
    assert set(cp.offsets) <= CORPUS_PARTITIONS


def test_broker_checkpoints_cover_its_partitions() -> None:
    broker = SAMPLES / "broker"
    dirs = {(tp.topic, tp.partition) for tp in (TopicPartition.parse(p.name) for p in broker.iterdir())
            if tp and (broker / f"{tp.topic}-{tp.partition}").is_dir()}
    recovery = OffsetCheckpointFile.read(str(broker / "recovery-point-offset-checkpoint")).offsets
    hw = OffsetCheckpointFile.read(str(broker / "replication-offset-checkpoint")).offsets
    # every partition log the broker manages, the KRaft metadata log excepted, after a clean shutdown
    assert set(recovery) == set(hw) == dirs - {("__cluster_metadata", 0)}
    assert len(dirs) == 21
    # after a clean shutdown of a single-node cluster both are each partition's log end offset (kafka-dump-log)
    ends = {(topic, partition): _log_end_offset(broker / f"{topic}-{partition}") for topic, partition in recovery}
    assert recovery == hw == ends
    cleaner = OffsetCheckpointFile.read(str(broker / "cleaner-offset-checkpoint")).offsets
    # README: the cleaner-offset-checkpoint reached 455 after round 2, the base offset of the active segment
    assert cleaner == {("compacted-cleaned", 0): 455}
    for (topic, partition), offset in cleaner.items():
        # the cleaner stops at the active segment: its checkpoint is a segment's base offset
        assert (broker / f"{topic}-{partition}" / f"{offset:020d}.log").exists()
    assert OffsetCheckpointFile.read(str(broker / "log-start-offset-checkpoint")).offsets == {}


@pytest.mark.parametrize("pdir", PARTITION_DIRS, ids=ids(PARTITION_DIRS))
def test_leader_epoch_checkpoints(pdir: Path) -> None:
    cp = LeaderEpochCheckpointFile.read(str(pdir / LEADER_EPOCH_CHECKPOINT))
    if not (pdir / LEADER_EPOCH_CHECKPOINT).exists():
        assert pdir.parent.name == "legacy"  # written without a broker (README: legacy/)
        assert [f.kind for f in cp.findings] == ["missing_file"]
        return
    assert cp.findings == [] and cp.version == 0 and cp.expected_count == len(cp.entries) >= 1
    written = _entries(pdir / LEADER_EPOCH_CHECKPOINT)
    assert cp.entries == [EpochEntry(int(epoch), int(start)) for epoch, start in written]
    # the epochs are those the batches carry (kafka-dump-log's partitionLeaderEpoch), each starting at or before
    # its first batch still in the log (compaction may have removed the batch it started at)
    firsts: dict[int, int] = {}
    for log in sorted(pdir.glob("*.log")):
        for base, epoch in re.findall(r"(?m)^baseOffset: (\d+) .* partitionLeaderEpoch: (\d+) ", _golden(log)):
            firsts.setdefault(int(epoch), int(base))
    assert [e.epoch for e in cp.entries] == sorted(firsts)
    assert [e for e in cp.entries if e.start_offset > firsts[e.epoch]] == []


def test_partition_metadata_topic_ids() -> None:
    # the controller's TopicRecords, as kafka-dump-log --cluster-metadata-decoder printed them, and the metadata
    # log's own fixed id (Kafka's Topic.CLUSTER_METADATA_TOPIC_ID, Uuid(0, 1))
    metadata = (SAMPLES / "golden" / "broker" / "__cluster_metadata-0" / f"{0:020d}.log.decoded.txt").read_bytes()
    created = dict(re.findall(r'"type":"TOPIC_RECORD","version":0,"data":\{"name":"([^"]+)","topicId":"([^"]+)"\}',
                              metadata.decode()))
    created["__cluster_metadata"] = "AAAAAAAAAAAAAAAAAAAAAQ"
    by_topic: dict[str, set[str]] = {}
    for pdir in PARTITION_DIRS:
        if not (pdir / PARTITION_METADATA).exists():
            continue
        pm = PartitionMetadataFile.read(str(pdir / PARTITION_METADATA))
        assert pm.findings == [] and pm.version == 0
        assert pm.topic_id == (pdir / PARTITION_METADATA).read_text().split("topic_id: ")[1].strip()
        assert parse_uuid(pm.topic_id) == base64.urlsafe_b64decode(pm.topic_id + "==")
        by_topic.setdefault(TopicPartition.parse(pdir.name).topic, set()).add(pm.topic_id)
    # one id per topic (all partitions, both copies), the one the controller gave it; every topic it created
    assert by_topic == {topic: {topic_id} for topic, topic_id in created.items()}
    assert len(by_topic) == 19
    assert len(set(created.values())) == len(created)  # distinct topics, distinct ids


def test_meta_properties() -> None:
    path = SAMPLES / "broker" / "meta.properties"
    mp = MetaProperties.read(str(path))
    assert mp.findings == []
    assert mp.version == 1 and mp.node_id == 1  # KRaft, node.id=1 (see data/samples/README.md)
    props = dict(line.split("=", 1) for line in path.read_text().splitlines() if line and not line.startswith("#"))
    assert (mp.cluster_id, mp.directory_id) == (props["cluster.id"], props["directory.id"])
    for uuid in (mp.cluster_id, mp.directory_id):
        assert parse_uuid(uuid) == base64.urlsafe_b64decode(uuid + "==") and len(parse_uuid(uuid)) == 16


# --- damaged / hand-made files ----------------------------------------------------------------------------

def write(tmp_path: Path, data: bytes, name: str = "recovery-point-offset-checkpoint") -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def test_offset_checkpoint_malformed(tmp_path: Path) -> None:
    cp = OffsetCheckpointFile.read(write(tmp_path, b"1\n0\n"))
    assert kinds_at(cp.findings) == {"checkpoint_bad_version": [0]} and cp.offsets == {}

    cp = OffsetCheckpointFile.read(write(tmp_path, b"zero\n0\n"))
    assert kinds_at(cp.findings) == {"checkpoint_malformed": [0]}

    cp = OffsetCheckpointFile.read(write(tmp_path, b"0\n3\na 0 5\n"))
    assert kinds_at(cp.findings) == {"checkpoint_count_mismatch": [2]}
    assert cp.offsets == {("a", 0): 5}

    data = b"0\n3\na 0 5\nb x 6\n c 1 7\nd 2 99999999999999999999\n"
    cp = OffsetCheckpointFile.read(write(tmp_path, data))
    lines = data.split(b"\n")
    at = [sum(len(x) + 1 for x in lines[:i]) for i in (3, 4, 5)]
    assert kinds_at(cp.findings) == {"checkpoint_malformed": at, "checkpoint_count_mismatch": [2]}
    assert "line 4" in cp.findings[0].detail
    assert cp.offsets == {("a", 0): 5}

    cp = OffsetCheckpointFile.read(write(tmp_path, b"0\n2\na 0 5\na 0 6\n"))
    assert kinds_at(cp.findings) == {"checkpoint_duplicate_entry": [10]}
    assert cp.findings[0].severity == Severity.WARNING and cp.offsets == {("a", 0): 6}

    cp = OffsetCheckpointFile.read(write(tmp_path, b"0\n1\nt\xff 0 5\n"))
    assert kinds_at(cp.findings) == {"checkpoint_not_utf8": [5]}


def test_offset_checkpoint_java_line_rules(tmp_path: Path) -> None:
    # \r\n and \r end lines like \n; tabs and runs of spaces separate fields; trailing blanks are dropped
    cp = OffsetCheckpointFile.read(write(tmp_path, b"0\r\n2\ra\t0   5  \nb-c 3 -1"))
    assert cp.findings == [] and cp.offsets == {("a", 0): 5, ("b-c", 3): -1}
    # an empty file, or a version line alone, is no entries for Kafka
    for data in (b"", b"0\n"):
        cp = OffsetCheckpointFile.read(write(tmp_path, data))
        assert [(f.kind, f.severity) for f in cp.findings] == [("checkpoint_empty", Severity.INFO)]
    assert java_split(" a 0 5") == ["", "a", "0", "5"] and java_split("a 0 5 ") == ["a", "0", "5"]


def test_checkpoint_too_large_and_missing(tmp_path: Path) -> None:
    big = b"0\n1\n" + b"a 0 5\n" + b"#" * (9 * 1024 * 1024)
    cp = OffsetCheckpointFile.read(write(tmp_path, big))
    assert kinds_at(cp.findings) == {"checkpoint_too_large": [8 * 1024 * 1024]} and cp.offsets == {}
    cp = OffsetCheckpointFile.read(write(tmp_path, b"0\n1\na 0 5\n"), max_bytes=8)
    assert kinds_at(cp.findings) == {"checkpoint_too_large": [8]}
    for cls in (OffsetCheckpointFile, LeaderEpochCheckpointFile, PartitionMetadataFile, MetaProperties):
        obj = cls.read(str(tmp_path / "absent"))
        assert [f.kind for f in obj.findings] == ["missing_file"]
        assert [f.kind for f in cls.read(str(tmp_path)).findings] == ["unreadable_file"]


def test_leader_epoch_checkpoint_malformed(tmp_path: Path) -> None:
    cp = LeaderEpochCheckpointFile.read(write(tmp_path, b"0\n4\n0 0\n5 abc\n3 10\n2 20\n",
                                                      "leader-epoch-checkpoint"))
    assert kinds_at(cp.findings) == {"checkpoint_malformed": [8], "leader_epoch_not_monotonic": [19]}
    assert cp.entries == [EpochEntry(0, 0), EpochEntry(3, 10), EpochEntry(2, 20)]
    cp = LeaderEpochCheckpointFile.read(write(tmp_path, b"0\n1\n0 0 0\n", "leader-epoch-checkpoint"))
    assert kinds_at(cp.findings) == {"checkpoint_malformed": [4]}


def test_partition_metadata_malformed(tmp_path: Path) -> None:
    ok = PartitionMetadataFile.read(write(tmp_path, b"version: 0\ntopic_id: BsBqhrxTSG6dJT2ti0K8MQ", "pm"))
    assert ok.findings == [] and ok.topic_id == "BsBqhrxTSG6dJT2ti0K8MQ"
    cases = {
        b"version 0\ntopic_id: BsBqhrxTSG6dJT2ti0K8MQ\n": {"checkpoint_malformed": [0]},
        b"version: -1\ntopic_id: BsBqhrxTSG6dJT2ti0K8MQ\n": {"checkpoint_bad_version": [0]},
        b"version: 0\n": {"checkpoint_malformed": [10]},
        b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n": {"partition_metadata_bad_topic_id": [11]},
        b"version: 0\ntopic_id: not*base64\n": {"partition_metadata_bad_topic_id": [11]},
        b"": {"checkpoint_malformed": [0]},
    }
    for data, expected in cases.items():
        assert kinds_at(PartitionMetadataFile.read(write(tmp_path, data, "pm")).findings) == expected, data


def test_meta_properties_rules(tmp_path: Path) -> None:
    v0 = MetaProperties.read(write(tmp_path, b"#c\nversion=0\nbroker.id : 7\ncluster.id=abc\n", "mp"))
    assert v0.findings == [] and (v0.version, v0.node_id, v0.cluster_id) == (0, 7, "abc")
    cases = {
        b"version=2\nnode.id=1\n": {"meta_properties_bad_version": [0]},
        b"version=1\ncluster.id=x\n": {"meta_properties_missing_key": [-1]},
        b"version=1\nnode.id=one\ncluster.id=x\n": {"meta_properties_bad_value": [10]},
        b"version=1\nnode.id=1\ncluster.id=x\ndirectory.id=nope!\n": {"meta_properties_bad_value": [33]},
    }
    for data, expected in cases.items():
        assert kinds_at(MetaProperties.read(write(tmp_path, data, "mp")).findings) == expected, data
    # java.util.Properties semantics: continuation, escaped backslash, '!' comment, escaped ':' in a key,
    # \u0041 and \t escapes, whitespace as the separator; a finding points at the byte where its key's line starts.
    mp = MetaProperties.from_bytes(b"a\\\n   b = c\\\\\n! comment\nk\\:ey:v\\u0041\\t\n  spaced   value here\n"
                                   b"broker.id=x", "mp")
    assert list(mp.properties.items())[:3] == [("ab", "c\\"), ("k:ey", "vA\t"), ("spaced", "value here")]
    assert kinds_at(mp.findings) == {"meta_properties_bad_value": [62]}
    # a malformed \uXXXX escape makes Properties.load throw: Kafka cannot read the file
    assert kinds_at(MetaProperties.from_bytes(b"version=0\nbroker.id=1\\u00zz\n", "mp").findings) == {
        "checkpoint_malformed": [10]}
