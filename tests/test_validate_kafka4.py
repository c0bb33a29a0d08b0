"""`validate` never cries wolf on what a healthy Kafka 4.x broker wrote (data/samples-kafka4: after cleaning, a
restart, an open transaction, a deleted topic), and the transaction-index rule is Kafka's: an ABORT marker needs
a `.txnindex` entry only while data of its transaction is still in the log."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafkalog_spark import read_log
from kafkalog_spark.analysis.index_validation import validate
from kafkalog_spark.log.transaction_index import TransactionIndex

KAFKA4 = Path(__file__).resolve().parent.parent / "data" / "samples-kafka4"


def _findings(spark, *paths: Path) -> list:
    try:
        return validate(spark, [str(p) for p in paths], records=True).collect()
    finally:
        spark.catalog.clearCache()


def _abort_markers(partition: Path) -> set[tuple[str, int, int]]:
    """(segment .log, marker offset, producer id) of every ABORT marker, from the records themselves."""
    rows = read_log(str(partition), "records", findings=[]).to_pylist()
    return {(f"{partition}/{r['segmentBaseOffset']:020d}.log", r["offset"], r["producerId"])
            for r in rows if r["controlType"] == "ABORT"}


def _txnindex_last_offsets(partition: Path) -> set[int]:
    return {t.last_offset for p in partition.glob("*.txnindex") for t in TransactionIndex.read(str(p)).aborted_txns}


@pytest.fixture(scope="module")
def kafka4(spark) -> list:
    return _findings(spark, KAFKA4 / "broker", KAFKA4 / "live-copy")


def test_healthy_kafka4_dirs_have_no_errors(kafka4: list) -> None:
    assert [r for r in kafka4 if r.severity == "error"] == []


def test_cleaned_abort_markers_stand_without_entries_and_that_is_no_finding(kafka4: list) -> None:
    partition = KAFKA4 / "broker" / "compacted-txn-0"
    markers = _abort_markers(partition)
    # the scenario really has what fooled the old rule: ABORT markers the cleaner kept without an entry
    assert {offset for _, offset, _ in markers} - _txnindex_last_offsets(partition)
    assert [r for r in kafka4 if r.check == "txnindex_entry_missing"] == []


def test_abort_marker_whose_data_remains_needs_its_entry(spark, samples: Path, tmp_path: Path) -> None:
    """txn-mixed (3.9.2 corpus, never cleaned): every aborted transaction still has its data; with the
    `.txnindex` files emptied, each ABORT marker is reported at its segment's transaction index."""
    partition = Path(shutil.copytree(samples / "broker" / "txn-mixed-0", tmp_path / "txn-mixed-0"))
    markers = _abort_markers(partition)
    assert markers
    for index in partition.glob("*.txnindex"):
        index.write_bytes(b"")
    found = [r for r in _findings(spark, partition) if r.check == "txnindex_entry_missing"]
    assert {(r.file, r.severity) for r in found} == {
        (log.removesuffix(".log") + ".txnindex", "error") for log, _, _ in markers}
    assert sorted(int(r.expected.rsplit(" ", 1)[-1]) for r in found) == sorted(o for _, o, _ in markers)
