"""The remote tier read as part of its partition (the source's ``remoteStorage``, ``kafkalog stats|validate
--remote-storage``): a tiered partition copied from real 3.9.2 and 4.4.0 brokers while their retention deleted its
oldest local segments (data/samples-internal/<version>/tiered-restart/middle: the log dir and Kafka's
LocalTieredStorage, tests/harness/tiered_restart_corpus.py). The oracle is what the harness produced (90 records,
value ``restart #<i>``, timestamps a second apart) and what the broker's directories held; damaged copies of the
store give one finding each."""

from __future__ import annotations

import json
import shutil

import pytest

from kafkalog_spark.source import read_views
from tests.helpers.corpus import INTERNAL

VERSIONS = ("3.9.2", "4.4.0")
TOPIC = "restart"


def _corpus(version: str):
    root = INTERNAL / version / "tiered-restart"
    return root / "middle", json.loads((root / "oracle.json").read_text())


def _read(spark, middle, views, store=None, paths=None):
    store = str(middle / "remote-store") if store is None else store
    return read_views(spark, paths or [str(middle / "broker")], views, topics=TOPIC, remoteStorage=store)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_tiered_partitions_whole_log_is_one_table(spark, version: str) -> None:
    middle, oracle = _corpus(version)
    local_start = int(oracle["middle"]["local_segments"][0].removesuffix(".log"))
    rows = _read(spark, middle, ["records"])["records"].orderBy("offset").collect()
    assert all(r.problem is None for r in rows)
    # every record the harness produced, once, in order: the oldest from the remote store, the rest from the disk
    assert [r.offset for r in rows] == list(range(oracle["records"])) == list(range(oracle["middle"]["log_end"]))
    assert [r.value.decode() for r in rows] == [f"{TOPIC} #{i:05d} ".ljust(100, ".") for i in range(90)]
    assert [int(r.timestamp.timestamp() * 1000) for r in rows] == [
        oracle["first_timestamp_ms"] + 1000 * i for i in range(90)]
    assert {r.offset for r in rows if r.tier == "remote"} == set(range(local_start))
    assert {r.logDir for r in rows} == {str(middle / "broker")}  # remote rows name their partition's log dir
    # the remote segments read are the store's copies (by segment id) below the local log start
    segments = _read(spark, middle, ["segments"])["segments"].where("problem is null").orderBy("baseOffset").collect()
    remote = [s for s in segments if s.tier == "remote"]
    store_names = sorted(n for n in oracle["middle"]["remote_segments"] if int(n.split("-")[0]) < local_start)
    assert [s.logFile.rsplit("/", 1)[1] for s in remote] == store_names
    assert [s.baseOffset for s in segments if s.tier == "local"] == [
        int(n.removesuffix(".log")) for n in oracle["middle"]["local_segments"]]


def test_stats_and_validation_cover_the_remote_tier(spark) -> None:
    """3.9.2's corpus (the nightly job's test below covers 4.4.0's the same way)."""
    from kafkalog_spark.analysis.index_validation import validate
    from kafkalog_spark.analysis.segment_stats import segment_stats

    middle, oracle = _corpus("3.9.2")
    views = _read(spark, middle, ["segments", "batches", "record_stats", "index"])
    stats = segment_stats(views["segments"], views["batches"], views["record_stats"]).orderBy("baseOffset").collect()
    assert [(s.tier, s.records) for s in stats if s.tier == "remote"] == [("remote", 11)] * 3
    assert sum(s.records for s in stats) == oracle["records"]
    entries = views["index"].where("tier = 'remote' and problem is null").select("file").distinct().collect()
    assert {e.file.rsplit(".", 1)[1] for e in entries} <= {"index", "timeindex"} and entries
    findings = validate(spark, [str(middle / "broker")], topics=TOPIC,
                        remoteStorage=str(middle / "remote-store")).collect()
    # the remote segments check out as the local ones do: only the live copy's active segment has notes
    assert {f.baseOffset for f in findings if f.topic == TOPIC} == {oracle["records"] - 2}
    assert all(f.severity == "info" for f in findings if f.topic == TOPIC)


def test_the_store_and_the_metadata_disagreeing_are_findings(spark, tmp_path) -> None:
    middle, oracle = _corpus("3.9.2")
    store = tmp_path / "store"
    shutil.copytree(middle / "remote-store", store)
    (part,) = (store / "kafka-tiered-storage").iterdir()
    by_offset = {int(p.name.split("-")[0]): p for p in part.glob("*.log")}
    by_offset[0].unlink()  # a copied segment the store lost
    with open(by_offset[11], "ab") as f:  # one whose size is not the metadata's
        f.write(b"\0")
    orphan = part / f"{99:020d}-AAAAAAAAAAAAAAAAAAAAAA.log"
    orphan.write_bytes(by_offset[22].read_bytes())  # an upload the metadata does not know
    (store / "kafka-tiered-storage" / "notes.txt").write_text("x")
    rows = _read(spark, middle, ["segments"], store=str(store))["segments"].collect()
    problems = {(r.problem.kind, r.problem.file.rsplit("/", 1)[1]) for r in rows if r.problem is not None}
    missing = by_offset[0].name
    assert {("remote_segment_missing", missing), ("remote_segment_size_mismatch", by_offset[11].name),
            ("remote_segment_not_in_metadata", orphan.name), ("unknown_remote_file", "notes.txt")} <= problems
    assert [r.baseOffset for r in rows if r.tier == "remote" and r.problem is None] == [11, 22]
    # the store given without __remote_log_metadata in the paths: read as listed, and said so
    alone = _read(spark, middle, ["segments"], paths=[str(middle / "broker" / f"{TOPIC}-0")])["segments"].collect()
    kinds = {r.problem.kind for r in alone if r.problem is not None}  # and the live copy's active segment's notes
    assert {k for k in kinds if "remote" in k} == {"remote_log_metadata_missing"}
    assert sorted(r.baseOffset for r in alone if r.tier == "remote") == [0, 11, 22]


def test_without_a_remote_store_the_views_are_as_before(spark) -> None:
    middle, _ = _corpus("3.9.2")
    views = read_views(spark, [str(middle / "broker")], ["records", "segments"], topics=TOPIC)
    assert "tier" not in views["records"].columns and "tier" not in views["segments"].columns
    assert views["records"].count() == 90 - 33


def test_kafkalog_validate_and_stats_take_the_remote_store(spark, capsys) -> None:
    from kafkalog_spark.cli import main

    middle, _ = _corpus("4.4.0")
    broker, store = str(middle / "broker"), str(middle / "remote-store")
    assert main(["stats", broker, "--remote-storage", store, "--json", "-q", "--no-internal"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["tier"] for r in rows if r["topic"] == TOPIC][:4] == ["remote"] * 3 + ["local"]
    assert main(["validate", broker, "--remote-storage", store, "-q", "--no-internal"]) == 0
    assert main(["validate", broker, "--remote-storage", str(middle / "nowhere"), "-q"]) == 2
    assert "--remote-storage" in capsys.readouterr().err


def test_the_nightly_job_covers_the_remote_tier(spark, tmp_path) -> None:
    """[input] remote_storage: segment_stats and index_findings hold the remote segments; the retention plan and
    the accounting (tiered_storage, the report's section) stay the local log's, the remote tier planned and counted
    from __remote_log_metadata: the broker's own view at the copy."""
    from kafkalog_spark import nightly
    from kafkalog_spark.delta import TableLocation, read_table
    from kafkalog_spark.kafka_versions import parse_kafka_version

    middle, oracle = _corpus("4.4.0")
    local = [int(n.removesuffix(".log")) for n in oracle["middle"]["local_segments"]]
    report = tmp_path / "report.html"
    config = nightly.NightlyConfig(log_dirs=(str(middle / "broker"),), location=TableLocation(warehouse=str(tmp_path)),
                                   snapshot_id="one", kafka_version=parse_kafka_version("4.4.0"),
                                   remote_storage=str(middle / "remote-store"), report=str(report))
    nightly.run(spark, config)

    def rows(table: str):
        return read_table(spark, config.location, table, "one").where(f"topic = '{TOPIC}'").collect()

    stats = sorted((r.tier, r.baseOffset, r.records) for r in rows("segment_stats"))
    assert [s for s in stats if s[0] == "remote"] == [("remote", b, 11) for b in range(0, local[0], 11)]
    assert sum(s[2] for s in stats) == oracle["records"]
    plan = sorted((r.tier, r.baseOffset) for r in rows("retention_plan"))
    assert [p[1] for p in plan if p[0] == "local"] == local
    assert len([p for p in plan if p[0] == "remote"]) == len(oracle["middle"]["remote_segments"])
    assert {f.baseOffset for f in rows("index_findings")} == {local[-1]}  # the live copy's active segment's notes
    (tiered,) = rows("tiered_storage")
    assert (tiered.logStartOffset, tiered.remoteSegments, tiered.localLogStartOffset) == (
        oracle["middle"]["log_start"], len(oracle["middle"]["remote_segments"]), local[0])
    assert tiered.highestCopiedOffset + 1 == local[-1]  # every closed segment copied, the active one not
    # the report's section: the topic's remote bytes (its remote segments' sizes) next to its local ones
    page = report.read_text()
    section = page[page.index('<section id="tiered">'):]
    section = section[:section.index("</section>")]
    assert f'data-value="{tiered.remoteBytes}"' in section and f">{TOPIC}<" in section
