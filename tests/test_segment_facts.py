"""Each segment's batch summary, computed in the task that reads it (the decoded view's ``batch_summary`` part),
against Kafka's own kafka-dump-log: the batch lines of its deep dump (3.9.2 and 4.4.0, committed in the golden
dirs), aggregated here by the rules the summary documents (LogSegment keeps the first batch of its largest
timestamp: only a larger one replaces it). And the same rules applied to a batches view grouped by segment (what
the commands that read the batches view alone use) give the same rows as the tasks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.views import view_rows

SAMPLES = Path(__file__).resolve().parent.parent / "data"
CORPORA = [(SAMPLES / "samples" / "broker", SAMPLES / "samples" / "golden" / "broker"),
           (SAMPLES / "samples-kafka4" / "broker", SAMPLES / "samples-kafka4" / "golden" / "broker")]
_FIELD = re.compile(rb"(\w+): (\S+)")


def _dump_batches(deep_dump: Path) -> list[dict]:
    """The batch lines of a deep dump (records, which start with ``| ``, and the header lines left out)."""
    out = []
    for line in deep_dump.read_bytes().split(b"\n"):
        if not line.startswith(b"baseOffset: "):
            continue
        fields = {k.decode(): v.decode() for k, v in _FIELD.findall(line)}
        ts_type = "CreateTime" if "CreateTime" in fields else "LogAppendTime"
        horizon = fields["deleteHorizonMs"]
        out.append({"baseOffset": int(fields["baseOffset"]), "lastOffset": int(fields["lastOffset"]),
                    "count": int(fields["count"]), "producerId": int(fields["producerId"]),
                    "isTransactional": fields["isTransactional"] == "true",
                    "isControl": fields["isControl"] == "true", "deleteHorizon": horizon != "OptionalLong.empty",
                    "position": int(fields["position"]), "timestamp": int(fields[ts_type]), "timestampType": ts_type,
                    "size": int(fields["size"]), "codec": fields["compresscodec"],
                    "isValid": fields["isvalid"] == "true"})
    return out


def _expected(batches: list[dict]) -> dict:
    largest = max(b["timestamp"] for b in batches)
    first = min(batches, key=lambda b: b["position"])
    codecs: dict[str, int] = {}
    for b in batches:
        codecs[b["codec"]] = codecs.get(b["codec"], 0) + 1
    at_or_above_zero = [b["timestamp"] for b in batches if b["timestamp"] >= 0]
    return {
        "batches": len(batches), "declaredRecords": sum(b["count"] for b in batches),
        "firstOffset": min(b["baseOffset"] for b in batches), "lastOffset": max(b["lastOffset"] for b in batches),
        "maxTimestamp": largest, "largestTimestamp": max(at_or_above_zero) if at_or_above_zero else None,
        "maxTimestampPosition": min(b["position"] for b in batches if b["timestamp"] == largest),
        "timestampTypes": sorted({b["timestampType"] for b in batches}),
        "batchBytes": sum(b["size"] for b in batches), "avgBatchSize": sum(b["size"] for b in batches) / len(batches),
        "maxBatchSize": max(b["size"] for b in batches),
        "transactionalBatches": sum(b["isTransactional"] for b in batches),
        "controlBatches": sum(b["isControl"] for b in batches),
        "invalidBatches": sum(not b["isValid"] for b in batches),
        "emptyBatches": sum(b["count"] == 0 for b in batches),
        "deleteHorizonBatches": sum(b["deleteHorizon"] for b in batches),
        "producerIds": len({b["producerId"] for b in batches if b["producerId"] >= 0}),
        "codecMix": codecs, "firstPosition": first["position"], "firstBatchSize": first["size"],
        "firstBatchMaxTimestamp": first["timestamp"], "firstBatchLastOffset": first["lastOffset"],
        "firstBatchBaseOffset": first["baseOffset"],
    }


def _summaries(log_dir: Path) -> dict[tuple, dict]:
    rows = view_rows(str(log_dir), "decoded", includeInternal="true")
    out = {}
    for row in rows:
        summary = row["batch_summary"]
        if summary is not None:
            key = (summary.pop("topic"), summary.pop("partition"), summary.pop("segmentBaseOffset"))
            assert key not in out, f"two summary rows for one segment: {key}"
            assert summary.pop("logDir") == str(log_dir)
            summary["codecMix"] = dict(summary["codecMix"])
            out[key] = summary
    return out


@pytest.mark.parametrize("log_dir,golden", CORPORA, ids=["3.9.2", "4.4.0"])
def test_each_segments_summary_is_what_kafka_dump_log_shows_of_its_batches(log_dir: Path, golden: Path) -> None:
    summaries = _summaries(log_dir)
    compared = 0
    for dump in sorted(golden.glob("*-*/*.log.deep.txt")):
        topic, _, partition = dump.parent.name.rpartition("-")
        if not partition.isdigit():  # a deleted topic's dir (`<topic>-<partition>.<id>-delete`): no partition's
            continue
        batches = _dump_batches(dump)
        key = (topic, int(partition), int(dump.name.split(".")[0]))
        if not batches:  # an empty segment has no summary row
            assert key not in summaries, key
            continue
        assert summaries[key] == _expected(batches), key
        compared += 1
    assert compared == len(summaries) and compared > 40, (compared, len(summaries))


def test_the_summary_of_a_batches_view_grouped_by_segment_equals_the_tasks(spark) -> None:
    """The commands that read the batches view alone (stats, retention-plan) summarize it grouped by segment, each
    segment perhaps cut into several splits (here at 1 KiB), with the same rules: the same rows as the tasks of the
    decoded view, which read each segment whole."""
    from kafkalog_spark.analysis.batch_summary import batch_summary
    from kafkalog_spark.source import decoded_views, read_views

    log_dir = str(CORPORA[0][0])
    batches = read_views(spark, [log_dir], ["batches"], maxSplitBytes="1k")["batches"]
    from kafkalog_spark.source.datasource import KafkaLogDataSource

    cut = KafkaLogDataSource({"path": log_dir, "view": "batches", "maxSplitBytes": "1k", "includeInternal": "true"})
    splits = [s for part in cut.reader(cut.schema()).partitions() for s in part.splits]
    assert len(splits) > len({(s.topic, s.partition, s.base_offset) for s in splits}) + 50  # segments cut
    grouped = batch_summary(batches)
    tasks = decoded_views(read_views(spark, [log_dir], ["decoded"])["decoded"])["batch_summary"]
    assert grouped.schema == tasks.schema
    key = ("topic", "partition", "segmentBaseOffset")
    rows = [sorted((r.asDict(recursive=True) for r in df.collect()), key=lambda r: [r[k] for k in key])
            for df in (grouped, tasks)]
    assert rows[0] == rows[1]
    assert len(rows[1]) > 40
