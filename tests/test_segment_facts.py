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


def test_the_tasks_index_entry_findings_equal_the_cogroup_of_the_index_and_batches_views(spark, samples: Path,
                                                                                        tmp_path: Path) -> None:
    """The nightly job has the task that reads a segment check its index entries against its batches (the decoded
    view's ``index_entry_findings`` part); validate checks them in a cogroup of the index view with the batches view.
    The same rules (log/index_entry_checks.py), so the same findings, on copies of the corpus with damaged indexes
    and logs (a zeroed or corrupted index, a cut batch, a flipped bit, a deleted segment)."""
    from kafkalog_spark.analysis.index_validation import entry_findings, read_validation_views
    from kafkalog_spark.source import decoded_views, read_views
    from tests.helpers.damaged import damaged_log_dirs

    root, _, _ = damaged_log_dirs(samples, tmp_path)
    paths = [str(root)]
    cogroup = entry_findings(read_validation_views(spark, paths))
    tasks = decoded_views(read_views(spark, paths, ["decoded"])["decoded"])["index_entry_findings"]

    def rows(df) -> list[tuple]:
        return sorted(tuple(r) for r in df.where("check != 'segment_log_missing'").collect())

    expected = rows(cogroup)
    assert rows(tasks) == expected
    assert len({r[5] for r in expected}) >= 3, expected  # several kinds of entry finding compared


def test_the_tasks_batch_findings_equal_those_of_the_batches_view_grouped_by_segment(spark, samples: Path,
                                                                                    tmp_path: Path) -> None:
    """The task that reads a segment checks its batches among themselves (CRCs, offset order: the decoded view's
    ``batch_findings`` part); validate applies the same rules (log/batch_checks.py) to the batches view grouped by
    segment: the same findings, on copies of the corpus with damaged logs (a flipped bit among them), a segment
    whose first two batches are swapped, and the legacy corpus (messages and compressed wrappers)."""
    import shutil

    from kafkalog_spark.analysis.index_validation import batch_findings, read_validation_views
    from kafkalog_spark.source import decoded_views, read_views
    from tests.helpers.damaged import damaged_log_dirs
    from tests.helpers.framing import batches

    root, _, _ = damaged_log_dirs(samples, tmp_path)
    swapped = Path(shutil.copytree(samples / "broker" / "tutorial-segments-0", tmp_path / "swapped" / "swapped-0"))
    log = swapped / f"{12:020d}.log"
    data = log.read_bytes()
    first, second = batches(log)[:2]
    log.write_bytes(data[second.position:second.position + second.size] + data[:first.size]
                    + data[second.position + second.size:])
    paths = [str(root), str(swapped.parent), str(samples / "legacy")]
    grouped = batch_findings(read_validation_views(spark, paths))
    tasks = decoded_views(read_views(spark, paths, ["decoded"])["decoded"])["batch_findings"]
    expected = sorted(tuple(r) for r in grouped.collect())
    assert sorted(tuple(r) for r in tasks.collect()) == expected
    found = {(r[5], r[6], r[7]) for r in expected}
    assert ("batch_crc_invalid", str(root / "crc-flip-0" / f"{12:020d}.log"),
            batches(root / "crc-flip-0" / f"{12:020d}.log")[3].position) in found
    assert ("batch_offsets_not_increasing", str(log), second.size) in found, expected


def test_the_nightly_job_names_the_segments_without_a_log(spark, samples: Path, tmp_path: Path) -> None:
    """The tasks that read the `.log` files check their segments' index entries, so the nightly job's index view
    holds the entries of the segments with index files and no `.log` only, and index_findings, given the tasks' rows
    as the job gives them, names those segments (``segment_log_missing``, at the first of their files with
    entries)."""
    import shutil

    from kafkalog_spark.analysis.index_validation import index_findings
    from kafkalog_spark.nightly.incremental import BATCH_FINDINGS_VIEW, ENTRY_FINDINGS_VIEW
    from kafkalog_spark.nightly.pipeline import read_cached_views

    logs = tmp_path / "logs"
    tutorial = Path(shutil.copytree(samples / "broker" / "tutorial-segments-0", logs / "tutorial-segments-0"))
    tiny = Path(shutil.copytree(samples / "broker" / "tiny-index-interval-0", logs / "tiny-index-interval-0"))

    def entry_findings() -> tuple[int, list[tuple]]:
        views = read_cached_views(spark, [str(logs)])
        try:
            rows = index_findings(spark, views, [str(logs)], entry_rows=views[ENTRY_FINDINGS_VIEW],
                                  batch_rows=views[BATCH_FINDINGS_VIEW]).where("check = 'segment_log_missing'")
            return views["index"].count(), sorted((r.check, r.file, r.baseOffset) for r in rows.collect())
        finally:
            for df in views.values():
                df.unpersist()

    assert entry_findings() == (0, [])
    # the .log of two segments deleted, their indexes left behind: one's .index holds entries, the other's is empty
    (tiny / f"{44:020d}.log").unlink()
    (tutorial / f"{36:020d}.log").unlink()
    index_rows, found = entry_findings()
    assert index_rows > 0
    assert found == sorted([("segment_log_missing", str(tiny / f"{44:020d}.index"), 44),
                            ("segment_log_missing", str(tutorial / f"{36:020d}.timeindex"), 36)])
