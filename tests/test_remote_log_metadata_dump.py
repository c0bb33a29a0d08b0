"""`__remote_log_metadata` (KIP-405 tiered storage) read from the tiered corpora of real 3.9.2 and 4.4.0 brokers
(data/samples-internal/<version>/tiered, tests/harness/tiered_corpus.py), against what the brokers and their remote
store said (oracle.json); and the records view's decodeInternal for the topic.

Also plain `kafkalog dump` against kafka-dump-log 3.9.2's and 4.4.0's own output on every file of the tiered
corpora, in every mode of tests/harness/golden.py (`<corpus>/golden*/`, as tests/test_dump_fidelity.py does for
data/samples*): empty active segments, a deleted topic's dir without .index, producer snapshots. Byte-identity with
kafka-dump-log --remote-log-metadata-decoder on every file of the `__remote_log_metadata` partitions and on crafted
segments is tested with the other decoders in tests/test_internal_topic_dump.py.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from kafkalog_spark import read_log
from kafkalog_spark.cli import main
from kafkalog_spark.format.internal_topics import (
    REMOTE_LOG_METADATA,
    REMOTE_PARTITION_DELETE_STATES,
    REMOTE_SEGMENT_STATES,
    decode_remote_log_metadata,
)
from kafkalog_spark.format.message_json import kafka_uuid
from kafkalog_spark.kafka_versions import KafkaVersion, parse_kafka_version
from tests.harness.golden import GOLDEN_DIR, dumpable_files, modes_for
from tests.helpers.corpus import INTERNAL
from tests.helpers.dump_tool import MODES, options, ours, theirs_stderr

VERSIONS = ("3.9.2", "4.4.0")
KEPT, DOOMED = "tiered", "tiered-doomed"


def _golden_runs() -> list[tuple[str, str, str, str]]:
    """(corpus version, golden dir, file, mode) of every kafka-dump-log run kept with the tiered corpora."""
    runs = []
    for version in VERSIONS:
        for gdir in sorted((INTERNAL / version / "tiered").glob(f"{GOLDEN_DIR}*")):
            for p in sorted(gdir.rglob("*.txt")):
                name = p.relative_to(gdir).as_posix()
                rel, _, mode = name.removesuffix(".txt").rpartition(".")
                if not name.endswith(".stderr.txt") and mode in MODES:
                    runs.append((version, gdir.name, rel, mode))
    return runs


RUNS = _golden_runs()


@pytest.mark.parametrize(("version", "gdir", "rel", "mode"), RUNS, ids=[f"{v}/{g}/{r}.{m}" for v, g, r, m in RUNS])
def test_plain_dump_equals_kafka_dump_log(version: str, gdir: str, rel: str, mode: str) -> None:
    root = INTERNAL / version / "tiered"
    tool = parse_kafka_version(version if gdir == GOLDEN_DIR else gdir.removeprefix(f"{GOLDEN_DIR}-"))
    out, err, code = ours(root, [rel], options(rel, mode, tool))
    assert out == (root / gdir / f"{rel}.{mode}.txt").read_bytes()
    expected_err = theirs_stderr(root / gdir / f"{rel}.{mode}.stderr.txt")
    assert err == expected_err
    assert code == (1 if expected_err.startswith("Exception") else 0)


def test_the_goldens_hold_both_tools_on_both_corpora() -> None:
    assert {(v, g) for v, g, _, _ in RUNS} == {("3.9.2", "golden"), ("3.9.2", "golden-4.4.0"), ("4.4.0", "golden"),
                                               ("4.4.0", "golden-3.9.2")}
    assert {Path(r).suffix for _, _, r, _ in RUNS} == {".log", ".index", ".timeindex", ".snapshot", ".checkpoint"}
    # every golden run the harness made is compared: each dumpable file of the corpus (found here, not from the
    # golden files RUNS was listed from) in each of its modes, per golden dir
    assert set(RUNS) == {(v, gdir.name, rel.as_posix(), mode) for v in VERSIONS
                         for gdir in (INTERNAL / v / "tiered").glob(f"{GOLDEN_DIR}*")
                         for rel in dumpable_files(INTERNAL / v / "tiered") for mode in modes_for(rel) if mode in MODES}
    # the deleted topic's dir: a preallocated .timeindex and no .index, which the tool's run did not leave behind
    assert {(v, g, Path(r).suffix) for v, g, r, _ in RUNS if "-delete/" in r} == {
        (v, g, suffix) for v, g, _, _ in RUNS for suffix in (".log", ".snapshot", ".timeindex")}
    assert not list(INTERNAL.glob("*/tiered/broker/tiered-doomed-0.*-delete/*.index"))


def _records(version: str) -> list[tuple[str, dict]]:
    """(record type, message) of every __remote_log_metadata record of one corpus, in log order per partition."""
    out = []
    for log in sorted((INTERNAL / version / "tiered" / "broker").glob(f"{REMOTE_LOG_METADATA}-*/*.log")):
        for r in read_log(str(log), "records").to_pylist():
            assert r["key"] is None  # TopicBasedRemoteLogMetadataManager's producer sends no key
            m = decode_remote_log_metadata(r["value"], KafkaVersion.V4)
            out.append((m.schema.name, m.message))
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_the_metadata_says_what_the_remote_store_holds(version: str) -> None:
    oracle = json.loads((INTERNAL / version / "tiered" / "oracle.json").read_text())
    kept_id, doomed_id = oracle["topics"][KEPT]["topic_id"], oracle["deleted_topics"][DOOMED]
    segments: dict[str, dict] = {}  # segment id -> start offset, topic id, states in order
    partition_deletes: dict[str, list[str]] = {}
    for name, m in _records(version):
        if name == "RemotePartitionDeleteMetadataRecord":
            topic_id = kafka_uuid(m["TopicIdPartition"]["Id"])
            partition_deletes.setdefault(topic_id, []).append(REMOTE_PARTITION_DELETE_STATES[
                m["RemotePartitionDeleteState"]])
            continue
        segment = m["RemoteLogSegmentId"]
        entry = segments.setdefault(kafka_uuid(segment["Id"]), {
            "topic_id": kafka_uuid(segment["TopicIdPartition"]["Id"]), "states": []})
        if name == "RemoteLogSegmentMetadataRecord":
            entry["start"] = m["StartOffset"]
        entry["states"].append(REMOTE_SEGMENT_STATES[m["RemoteLogSegmentState"]])

    # the remote store names a segment's file <20-digit start offset>-<segment id>.log
    def files(topic_id: str, last_state: str) -> list[str]:
        return sorted(f"{s['start']:020d}-{sid}.log" for sid, s in segments.items()
                      if s["topic_id"] == topic_id and s["states"][-1] == last_state)

    # every state of every record, as many times as kafka-dump-log printed it
    states = oracle["remote_log_metadata_states"]
    assert Counter(state for s in segments.values() for state in s["states"]) + Counter(
        state for d in partition_deletes.values() for state in d) == Counter(states)
    assert {sid: s["states"][0] for sid, s in segments.items()} == dict.fromkeys(segments, "COPY_SEGMENT_STARTED")
    assert files(kept_id, "COPY_SEGMENT_FINISHED") == oracle["remote_segments_at_stop"][KEPT]
    copied, kept = oracle["remote_segments_copied"][KEPT], oracle["remote_segments_at_stop"][KEPT]
    expired = files(kept_id, "DELETE_SEGMENT_FINISHED")
    assert sorted(expired + kept) == copied and expired == sorted(set(copied) - set(kept))
    assert len(expired) == len(copied) - len(kept) > 0
    # the deleted topic's segments: all copied, then all deleted (the rest of the copies and of the deletions)
    doomed = files(doomed_id, "DELETE_SEGMENT_FINISHED")
    assert len(doomed) == states["COPY_SEGMENT_STARTED"] - len(copied) == states["DELETE_SEGMENT_FINISHED"] - len(
        expired) > 0
    assert files(doomed_id, "COPY_SEGMENT_FINISHED") == oracle["remote_segments_at_stop"][DOOMED] == []
    assert {s["topic_id"] for s in segments.values()} == {kept_id, doomed_id}
    # the first remote segment left starts where the broker said the log starts
    assert int(oracle["remote_segments_at_stop"][KEPT][0][:20]) == oracle["topics"][KEPT]["log_start"]
    assert partition_deletes == {doomed_id: ["DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED",
                                             "DELETE_PARTITION_FINISHED"]}


def test_only_4x_reads_txn_index_empty() -> None:
    """TxnIndexEmpty is a tagged field of 4.x's schema: 4.4.0 writes it (true: no transactions), 3.9.2's schema
    has no such field and its reader skips the tag."""
    log = INTERNAL / "4.4.0" / "tiered" / "broker" / f"{REMOTE_LOG_METADATA}-0" / f"{0:020d}.log"
    value = next(r["value"] for r in read_log(str(log), "records").to_pylist())
    assert decode_remote_log_metadata(value, KafkaVersion.V4).message["TxnIndexEmpty"] is True
    assert "TxnIndexEmpty" not in decode_remote_log_metadata(value, KafkaVersion.V3_9).message


def test_the_tools_order_of_decoder_flags(capsys: pytest.CaptureFixture[str]) -> None:
    """Given several decoder flags the tool takes the first of offsets, transaction log, cluster metadata, remote
    log metadata, share group state. Observed: kafka-dump-log 4.4.0 given --share-group-state-decoder and
    --remote-log-metadata-decoder prints the remote log metadata; 3.9.2 given --remote-log-metadata-decoder and
    --cluster-metadata-decoder reads it as cluster metadata and fails."""
    root = INTERNAL / "4.4.0" / "tiered"
    log = f"broker/{REMOTE_LOG_METADATA}-1/{0:020d}.log"
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["dump", log, "--share-group-state-decoder", "--remote-log-metadata-decoder",
                     "--kafka-version", "4.x"]) == 0
        assert "headerKeys: [] payload: RemoteLogSegmentMetadata{" in capsys.readouterr().out.splitlines()[3]
        assert main(["dump", log, "--remote-log-metadata-decoder", "--cluster-metadata-decoder",
                     "--kafka-version", "3.9"]) == 0
        assert capsys.readouterr().out.splitlines()[3].endswith(
            "payload: Error at 0, skipping. Failed to deserialize record with type 0")
    finally:
        os.chdir(cwd)
    assert main(["dump", str(root / log), "--remote-log-metadata-decoder", "--json"]) == 2
    assert "leave out --json" in capsys.readouterr().err


def test_decode_internal_reads_remote_log_metadata(spark) -> None:
    df = (spark.read.format("kafkalog").option("decodeInternal", "true").option("topics", REMOTE_LOG_METADATA)
          .load(str(INTERNAL / "4.4.0" / "tiered" / "broker")))
    rows = df.where(F.col("problem").isNull() & ~F.col("isControl")).collect()
    # one record per state kafka-dump-log printed (the broker's oracle.json)
    oracle = json.loads((INTERNAL / "4.4.0" / "tiered" / "oracle.json").read_text())
    assert len(rows) == sum(oracle["remote_log_metadata_states"].values()) == 45
    assert all(r.decodeError is None and r.decodedKey is None and r.valueVersion == 0 for r in rows)
    assert {r.keyType for r in rows} == {"REMOTE_LOG_SEGMENT_METADATA_RECORD",
                                        "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD",
                                        "REMOTE_PARTITION_DELETE_METADATA_RECORD"}
    deletes = [json.loads(r.decodedValue) for r in rows if r.keyType == "REMOTE_PARTITION_DELETE_METADATA_RECORD"]
    assert [d["remotePartitionDeleteState"] for d in deletes] == [0, 1, 2]
    assert {d["topicIdPartition"]["name"] for d in deletes} == {DOOMED}
