"""The KRaft metadata log's own files in every view: snapshots (`<end offset>-<epoch>.checkpoint`) in segments,
batches and records, `quorum-state` in partition_files, and `.checkpoint.part` / `.checkpoint.deleted` as
stray files. Oracle: the files a 4.4.0 broker wrote (data/samples-kafka4) and kafka-dump-log 4.4.0's dumps of
each snapshot (golden/)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from kafkalog_spark import read_log
from kafkalog_spark.analysis.index_validation import validate
from kafkalog_spark.log.log_dir import list_partition
from kafkalog_spark.log.quorum_state import QuorumStateFile
from tests.helpers.corpus import KAFKA4

METADATA = KAFKA4 / "broker" / "__cluster_metadata-0"
GOLDEN = KAFKA4 / "golden" / "broker" / "__cluster_metadata-0"
SNAPSHOTS = sorted(METADATA.glob("*.checkpoint"))


def _dumped(snapshot: Path) -> tuple[tuple[int, int], list[tuple[int, int, int]], list[int]]:
    """(end offset, epoch), (baseOffset, lastOffset, position) per batch and record offsets, as the tool dumped."""
    text = (GOLDEN / f"{snapshot.name}.deep.txt").read_bytes().decode()
    end, epoch = re.search(r"^Snapshot end offset: (\d+), epoch: (\d+)$", text, re.M).groups()
    batches = [tuple(map(int, m)) for m in re.findall(
        r"^baseOffset: (\d+) lastOffset: (\d+) .* position: (\d+) ", text, re.M)]
    return (int(end), int(epoch)), batches, [int(o) for o in re.findall(r"^\| offset: (\d+) ", text, re.M)]


def test_the_corpus_has_several_snapshots() -> None:
    # the snapshots data/samples-kafka4/README.md lists, each dumped by kafka-dump-log (golden/)
    readme = (KAFKA4 / "README.md").read_text()
    listed = re.search(r"KRaft snapshots in `__cluster_metadata-0` \((\d+)\): (.*)", readme)
    names = re.findall(r"`([^`]+\.checkpoint)`", listed[2])
    assert [p.name for p in SNAPSHOTS] == names and len(names) == int(listed[1]) == 6
    assert sorted(p.name.removesuffix(".deep.txt") for p in GOLDEN.glob("*.checkpoint.deep.txt")) == names


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=lambda p: p.name)
def test_snapshot_batches_and_records_match_kafka_dump_log(snapshot: Path) -> None:
    (end, epoch), batches, offsets = _dumped(snapshot)
    ours = read_log(str(snapshot), "batches", findings=(found := [])).to_pylist()
    assert found == []
    assert [(b["baseOffset"], b["lastOffset"], b["position"]) for b in ours] == batches
    assert {(b["snapshotEndOffset"], b["snapshotEpoch"], b["segmentBaseOffset"]) for b in ours} == {(end, epoch, None)}
    records = read_log(str(snapshot), "records", findings=[]).to_pylist()
    assert [r["offset"] for r in records] == offsets


def test_a_partition_read_adds_its_snapshots_after_its_segments() -> None:
    rows = read_log(str(METADATA), "batches", findings=[]).to_pylist()
    from_snapshots = [r for r in rows if r["snapshotEndOffset"] is not None]
    assert {r["snapshotEndOffset"] for r in from_snapshots} == {_dumped(s)[0][0] for s in SNAPSHOTS}
    assert len(from_snapshots) == sum(len(_dumped(s)[1]) for s in SNAPSHOTS)
    first = rows.index(from_snapshots[0])
    assert rows[first:] == from_snapshots
    # before them, the segment's batches as kafka-dump-log dumped them (README: 1 segment, 152 batches)
    dumped = re.findall(r"^baseOffset: (\d+) lastOffset: \d+ .* position: (\d+) ",
                        (GOLDEN / f"{0:020d}.log.deep.txt").read_bytes().decode(), re.M)
    assert [(r["segmentBaseOffset"], r["baseOffset"], r["position"]) for r in rows[:first]] == [
        (0, int(base), int(pos)) for base, pos in dumped]
    assert len(dumped) == 152
    without = read_log(str(METADATA), "batches", findings=[], kraft_snapshots=False).to_pylist()
    assert without == rows[:first]


def test_quorum_state_is_read_as_the_broker_wrote_it() -> None:
    doc = json.loads((METADATA / "quorum-state").read_text())
    state = QuorumStateFile.read(str(METADATA / "quorum-state"))
    assert state.findings == []
    assert (state.leader_id, state.leader_epoch, state.voted_id, state.data_version) == (
        doc["leaderId"], doc["leaderEpoch"], doc["votedId"], doc["data_version"])
    assert state.voters == [v["voterId"] for v in doc["currentVoters"]]
    assert "quorum-state" in list_partition(str(METADATA)).other_files


@pytest.mark.parametrize(("text", "position"), [(b'{"leaderId":1,"leaderEpoch":', 28), (b"[1, 2]", 0),
                                                 (b'{"leaderId":1,"leaderEpoch":2,"votedId":-1}', 0)])
def test_malformed_quorum_state_is_a_finding_at_its_position(tmp_path: Path, text: bytes, position: int) -> None:
    path = tmp_path / "quorum-state"
    path.write_bytes(text)
    state = QuorumStateFile.read(str(path))
    assert [(f.kind, f.position, f.severity.value) for f in state.findings] == [
        ("quorum_state_malformed", position, "error")]
    assert state.leader_epoch is None


def _copy_with_leftovers(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The metadata partition plus an unfinished snapshot write and a snapshot marked for deletion, named as
    Kafka's Snapshots.createTempFile and Snapshots.markForDelete name them."""
    part = Path(shutil.copytree(METADATA, tmp_path / "logs" / METADATA.name))
    newest = SNAPSHOTS[-1]
    partial = part / f"{newest.name.removesuffix('.checkpoint')}-4242.checkpoint.part"
    deleted = part / f"{SNAPSHOTS[0].name}.deleted"
    shutil.copy(newest, partial)
    (part / SNAPSHOTS[0].name).rename(deleted)
    return part, partial, deleted


def test_spark_views_list_and_decode_snapshots(spark, tmp_path: Path) -> None:
    part, partial, deleted = _copy_with_leftovers(tmp_path)
    reader = spark.read.format("kafkalog").option("includeInternal", "true")
    segs = reader.option("view", "segments").load(str(part)).where("problem IS NULL AND baseOffset IS NULL").collect()
    expected = {(str(p), "snapshot") for p in part.glob("*.checkpoint")} | {
        (str(partial), "partial"), (str(deleted), "deleted")}
    assert {(r.logFile, r.status) for r in segs} == expected
    for r in segs:  # the id is in the name: <20-digit end offset>-<10-digit epoch>
        end, epoch = Path(r.logFile).name.split(".")[0].split("-")[:2]
        assert (r.snapshotEndOffset, r.snapshotEpoch, r.logSize) == (int(end), int(epoch),
                                                                     Path(r.logFile).stat().st_size)
    batches = reader.option("view", "batches").load(str(part))
    snap = batches.where("snapshotEndOffset IS NOT NULL").groupBy("snapshotEndOffset").count().collect()
    live = [s for s in SNAPSHOTS[1:]]  # the first one is now .checkpoint.deleted: not read
    assert {r.snapshotEndOffset: r["count"] for r in snap} == {_dumped(s)[0][0]: len(_dumped(s)[1]) for s in live}
    off = reader.option("view", "batches").option("kraftSnapshots", "false").load(str(part))
    assert off.where("snapshotEndOffset IS NOT NULL").count() == 0
    assert off.count() == batches.count() - sum(len(_dumped(s)[1]) for s in live)
    qs = (reader.option("view", "partition_files").load(str(part)).where("fileType = 'quorum-state'").collect())
    doc = json.loads((METADATA / "quorum-state").read_text())
    assert [(r.epoch, r.leaderId, r.votedId, r.problem) for r in qs] == [
        (doc["leaderEpoch"], doc["leaderId"], doc["votedId"], None)]


def test_validate_reports_snapshot_leftovers_as_stray_files_only(spark, tmp_path: Path) -> None:
    part, partial, deleted = _copy_with_leftovers(tmp_path)
    try:
        rows = validate(spark, [str(part.parent)], records=True).collect()
    finally:
        spark.catalog.clearCache()
    assert [r for r in rows if r.severity == "error"] == []
    stray = {(r.file, r.severity) for r in rows if r.check == "stray_temp_file"}
    assert stray == {(str(partial), "warning"), (str(deleted), "warning")}
    assert [(r.check, "never finished" in r.detail) for r in rows if r.file == str(partial)] == [
        ("stray_temp_file", True)]
