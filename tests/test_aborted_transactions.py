"""Kafka's rule for what is aborted, implemented once (kafkalog_spark.log.aborted_transactions), and the
places that use it agreeing on the broker-written corpus: read_committed, the segment statistics and the
cleaner model."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kafkalog_spark.log.aborted_transactions import AbortedTransactions

# producer 7 aborted offsets 10..14 (marker at 14) and 30..31; producer 8 aborted 20..22
TXNS = AbortedTransactions([(7, 10, 14), (8, 20, 22), (7, 30, 31)])


def test_find_gives_the_aborted_transaction_holding_an_offset() -> None:
    assert TXNS.find(7, 10) == (10, 14) and TXNS.find(7, 14) == (10, 14) and TXNS.find(7, 31) == (30, 31)
    assert TXNS.find(7, 9) is None and TXNS.find(7, 15) is None and TXNS.find(7, 20) is None
    assert TXNS.find(8, 21) == (20, 22) and TXNS.find(9, 12) is None
    assert not AbortedTransactions() and TXNS


def test_only_transactional_records_of_the_same_producer_are_aborted() -> None:
    pids = np.array([7, 7, 8, 7, 8, 7, 7, 9])
    offsets = np.array([10, 15, 12, 12, 21, 30, 29, 11])
    txn = np.array([True, True, True, False, True, True, True, True])
    assert TXNS.mask(pids, offsets, txn).tolist() == [True, False, False, False, True, True, False, False]
    assert [TXNS.is_aborted(int(p), int(o), bool(t)) for p, o, t in zip(pids, offsets, txn, strict=True)] == \
        TXNS.mask(pids, offsets, txn).tolist()
    assert AbortedTransactions().mask(pids, offsets, txn).tolist() == [False] * 8


def test_read_committed_and_segment_stats_agree_on_the_corpus(spark, samples: Path) -> None:
    # txn-mixed (data/samples/README.md, as the broker wrote it): 8 transactions of 5 records, 3 aborted
    from kafkalog_spark.analysis.segment_stats import segment_stats
    from kafkalog_spark.source import read_views

    views = read_views(spark, [str(samples / "broker")], ["segments", "batches", "records", "record_stats"],
                       topics="txn-mixed")
    stats = segment_stats(views["segments"], views["batches"], views["record_stats"])
    assert stats.agg({"abortedRecords": "sum"}).first()[0] == 15
    records = views["records"].where("problem is null and not isControl")
    committed = read_views(spark, [str(samples / "broker")], ["records"], topics="txn-mixed",
                           isolation="read_committed")["records"]
    assert records.count() - committed.count() == 15
    # README: 78 records, 8 of them the transactions' markers; 70 data records, 55 of them not aborted
    assert (records.count(), committed.count()) == (70, 55)
