"""`validate` never cries wolf on what a healthy Kafka 4.x broker wrote (data/samples-kafka4: after cleaning, a
restart, an open transaction, a deleted topic), and the transaction-index rule is Kafka's: an ABORT marker needs
a `.txnindex` entry only while data of its transaction is still in the log."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kafkalog_spark.analysis.index_validation import validate
from tests.helpers.corpus import KAFKA4


def _findings(spark, *paths: Path) -> list:
    try:
        return validate(spark, [str(p) for p in paths], records=True).collect()
    finally:
        spark.catalog.clearCache()


def _abort_markers(partition: Path, golden: Path) -> set[tuple[str, int, int]]:
    """(segment .log, marker offset, producer id) of every ABORT marker, as kafka-dump-log dumped the partition's
    segments (``golden``: their golden dir)."""
    out = set()
    for log in sorted(partition.glob("*.log")):
        producer = None
        for line in (golden / f"{log.name}.deep.txt").read_bytes().decode().split("\n"):
            if line.startswith("baseOffset: "):
                producer = int(re.search(r" producerId: (-?\d+) ", line)[1])
            elif " endTxnMarker: ABORT " in line:
                out.add((str(log), int(re.match(r"\| offset: (\d+) ", line)[1]), producer))
    return out


def _txnindex_last_offsets(golden: Path) -> set[int]:
    """The aborted transactions' last offsets in the partition's `.txnindex` files, as kafka-dump-log dumped them."""
    return {int(m) for p in golden.glob("*.txnindex.deep.txt")
            for m in re.findall(r"(?m)^version: \d+ producerId: \d+ firstOffset: \d+ lastOffset: (\d+) ",
                                p.read_text())}


@pytest.fixture(scope="module")
def kafka4(spark) -> list:
    return _findings(spark, KAFKA4 / "broker", KAFKA4 / "live-copy")


def test_healthy_kafka4_dirs_have_no_errors(kafka4: list) -> None:
    assert [r for r in kafka4 if r.severity == "error"] == []


def test_cleaned_abort_markers_stand_without_entries_and_that_is_no_finding(kafka4: list) -> None:
    partition = KAFKA4 / "broker" / "compacted-txn-0"
    golden = KAFKA4 / "golden" / "broker" / "compacted-txn-0"
    markers = _abort_markers(partition, golden)
    # README: 4 ABORT markers, 3 aborted-txn entries in 2 .txnindex files
    assert len(markers) == 4 and len(_txnindex_last_offsets(golden)) == 3
    # the scenario really has what fooled the old rule: ABORT markers the cleaner kept without an entry (#1's, whose
    # data the first cleaning removed)
    assert {offset for _, offset, _ in markers} - _txnindex_last_offsets(golden) == {11}
    assert [r for r in kafka4 if r.check == "txnindex_entry_missing"] == []


def test_abort_marker_whose_data_remains_needs_its_entry(spark, samples: Path, tmp_path: Path) -> None:
    """txn-mixed (3.9.2 corpus, never cleaned): every aborted transaction still has its data; with the
    `.txnindex` files emptied, each ABORT marker is reported at its segment's transaction index."""
    partition = Path(shutil.copytree(samples / "broker" / "txn-mixed-0", tmp_path / "txn-mixed-0"))
    markers = _abort_markers(partition, samples / "golden" / "broker" / "txn-mixed-0")
    assert len(markers) == 3  # README: 3 ABORT markers
    for index in partition.glob("*.txnindex"):
        index.write_bytes(b"")
    found = [r for r in _findings(spark, partition) if r.check == "txnindex_entry_missing"]
    assert {(r.file, r.severity) for r in found} == {
        (log.removesuffix(".log") + ".txnindex", "error") for log, _, _ in markers}
    assert sorted(int(r.expected.rsplit(" ", 1)[-1]) for r in found) == sorted(o for _, o, _ in markers)
