"""The `kafkalog` Spark source on the real-broker corpus: what it returns agrees with kafka-dump-log's
golden output and with the decoder core, whatever the pushdown and the splitting."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from kafkalog_spark import read_log
from kafkalog_spark.schemas import with_problem
from kafkalog_spark.source.views import SCHEMAS
from tests.helpers.framing import batches

GOLDEN_RECORD = re.compile(r"^\| offset: (\d+) ")
# data/samples/README.md: the records per partition summed over each log dir (broker/: 100 + 3 * 9 + 6 * 300 + 78 +
# 80 + 64 + 300 + 40 + 160 + 40 + 80 + 15 + 25 + 164; legacy/: 26 + 29; live-copy/: 80), and the batches in broker/
RECORDS = {"broker": 2973, "legacy": 55, "live-copy": 80}
BROKER_BATCHES = 100 + 3 * 9 + 6 * 19 + 25 + 16 + 22 + 44 + 12 + 101 + 4 + 80 + 8 + 25 + 85


def golden_segments(samples: Path, log_dir: str) -> dict[tuple[str, int, int], list[int]]:
    """(topic, partition, segment base offset) -> record offsets, as kafka-dump-log printed them."""
    out = {}
    for g in sorted((samples / "golden" / log_dir).rglob("*.log.deep.txt")):
        tp = g.parent.name
        topic, partition = tp.rsplit("-", 1)
        text = g.read_text(encoding="utf-8")
        offsets = [int(m[1]) for m in re.finditer(r"(?m)^\| offset: (\d+) ", text)]
        out[(topic, int(partition), int(g.name.split(".")[0]))] = offsets
    return out


def load(spark, *paths: Path, **options):
    reader = spark.read.format("kafkalog").option("includeInternal", "true")
    for k, v in options.items():
        reader = reader.option(k, str(v))
    return reader.load([str(p) for p in paths])


@pytest.mark.parametrize("log_dir", ["broker", "legacy", "live-copy"])
def test_records_agree_with_kafka_dump_log(spark, samples: Path, log_dir: str) -> None:
    expected = golden_segments(samples, log_dir)
    rows = load(spark, samples / log_dir).where("problem is null").select(
        "topic", "partition", "segmentBaseOffset", "offset").collect()
    got: dict[tuple[str, int, int], list[int]] = {}
    for r in rows:
        got.setdefault((r.topic, r.partition, r.segmentBaseOffset), []).append(r.offset)
    assert sum(map(len, expected.values())) == RECORDS[log_dir]
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in expected.items() if v}


def test_batches_and_records_agree_with_the_decoder_core(spark, samples: Path) -> None:
    for view, expected in (("records", RECORDS["broker"]), ("batches", BROKER_BATCHES)):
        core = read_log(str(samples / "broker"), view, findings=[])
        df = load(spark, samples / "broker", view=view).where("problem is null")
        assert df.count() == core.num_rows == expected
        assert df.schema == with_problem(SCHEMAS[view])  # the view's columns, then problem


FILTERS = [  # with the rows each selects, from data/samples/README.md
    ("topic = 'tutorial-segments' and offset >= 30 and offset < 70", 40),  # offsets 0..99
    ("topic in ('hello-round-robin') and partition = 1", 9),
    ("topic like 'codec-%' and offset > 150", 6 * 149),  # six codec topics, offsets 0..299 each
    ("topic = 'txn-mixed' and offset = 17", 1),
    ("timestamp >= timestamp'2026-11-22 00:00:00'", 0),  # written on 2026-11-21 (the session's zone is UTC)
    ("segmentBaseOffset = 24 and topic = 'tutorial-segments'", 12),  # 12 records per segment
]


@pytest.mark.parametrize(("condition", "rows"), FILTERS)
def test_same_rows_with_pushdown_on_and_off(spark, samples: Path, condition: str, rows: int) -> None:
    cols = ["topic", "partition", "offset", "key", "value"]
    on = load(spark, samples / "broker").where(condition).select(cols)
    off = load(spark, samples / "broker", pushdown="false").where(condition).select(cols)
    assert_df_equality(on, off, ignore_row_order=True)
    assert off.count() == rows


def test_pushdown_prunes_segments(spark, samples: Path) -> None:
    def tasks(df) -> int:
        return df.rdd.getNumPartitions()

    every = load(spark, samples / "broker", topics="tutorial-segments", maxSplitBytes=1000, openCostBytes=1000)
    pruned = every.where("offset >= 90")
    assert tasks(every) == 9  # one task per segment
    assert sorted(r.offset for r in pruned.select("offset").collect()) == list(range(90, 100))
    if tuple(int(x) for x in spark.version.split(".")[:2]) < (4, 1):
        pytest.skip("Spark 4.0 hands Python data sources no filters: it filters the rows itself, nothing is pruned")
    assert tasks(pruned) == 2  # segments 84 and 96 only


def pieces(partition_dir: Path, max_split_bytes: int) -> int:
    """How many pieces the segments' batch boundaries cut them into, each piece ending at the first boundary
    max_split_bytes or more past its start; the boundaries found by walking the framing (a batch at position P
    has its length field at P + 8 and takes 12 + length bytes)."""
    count = 0
    for log in sorted(partition_dir.glob("*.log")):
        starts = [b.position for b in batches(log)]  # whole batches, none cut
        count += 1
        cut = 0
        for start in starts:
            if start >= cut + max_split_bytes:
                count, cut = count + 1, start
    return count


def test_one_split_or_many_per_segment_give_the_same_rows(spark, samples: Path) -> None:
    cols = ["topic", "partition", "offset", "position", "value"]
    whole = load(spark, samples / "broker", topics="tiny-index-interval")
    cut = load(spark, samples / "broker", topics="tiny-index-interval", maxSplitBytes=512)
    assert whole.rdd.getNumPartitions() == 1
    # one task per piece (each piece costs openCostBytes, 4m, more than maxSplitBytes): 8 + 8 + 3
    assert cut.rdd.getNumPartitions() == pieces(samples / "broker" / "tiny-index-interval-0", 512) == 19
    assert_df_equality(whole.select(cols), cut.select(cols), ignore_row_order=True)


def _corrupt_copy(samples: Path, tmp_path: Path) -> tuple[Path, int, int]:
    """A copy of tutorial-segments-0 with its segment 12's fourth batch (offset 15) zeroed: (log, position, size)
    of that batch, found by walking the framing."""
    src = samples / "broker" / "tutorial-segments-0"
    dst = tmp_path / "logs" / "tutorial-segments-0"
    shutil.copytree(src, dst)
    log = dst / "00000000000000000012.log"
    position, size, base_offset = batches(log)[3]
    assert base_offset == 15
    with open(log, "r+b") as f:
        f.seek(position)
        f.write(bytes(size))
    return log, position, size


def test_permissive_returns_problem_rows_and_the_rest(spark, samples: Path, tmp_path: Path) -> None:
    log, position, size = _corrupt_copy(samples, tmp_path)
    df = load(spark, log.parent)
    problems = df.where("problem is not null").select("problem.*", "segmentBaseOffset").collect()
    # the size field read there is 0, below Kafka's minimum record overhead; reading resumes past the zeros
    assert sorted((p.kind, p.file, p.position, p.segmentBaseOffset, p.detail) for p in problems) == [
        ("corrupt_size", str(log), position, 12, "Found record size 0 smaller than minimum record overhead (14)"),
        ("skipped_region", str(log), position, 12, f"{size} zero-filled bytes skipped from {position} to "
                                                   f"{position + size}; resumed at the next valid batch at "
                                                   f"{position + size}")]
    offsets = sorted(r.offset for r in df.where("problem is null").select("offset").collect())
    assert offsets == [o for o in range(100) if o != 15]  # the zeroed batch held offset 15 alone


def test_failfast_stops_with_file_and_position(spark, samples: Path, tmp_path: Path) -> None:
    log, position, _ = _corrupt_copy(samples, tmp_path)
    with pytest.raises(Exception) as e:
        load(spark, log.parent, mode="FAILFAST").collect()
    assert str(log) in str(e.value) and f"at byte {position}" in str(e.value)


def test_read_committed_drops_aborted_and_control_records(spark, samples: Path) -> None:
    txn_lines = []
    for g in (samples / "golden" / "broker" / "txn-mixed-0").glob("*.txnindex.deep.txt"):
        txn_lines += [line for line in g.read_text().splitlines() if line.startswith("version:")]
    aborted = [tuple(int(x) for x in re.findall(r"(?:producerId|firstOffset|lastOffset): (-?\d+)", line))
               for line in txn_lines]
    assert len(aborted) == 3, "data/samples/README.md: 3 aborted-txn entries"
    raw = load(spark, samples / "broker", topics="txn-mixed").where("problem is null")
    committed = load(spark, samples / "broker", topics="txn-mixed", isolation="read_committed")
    kept = {(r.producerId, r.offset, r.isTransactional, r.isControl) for r in committed.collect()}
    everything = {(r.producerId, r.offset, r.isTransactional, r.isControl) for r in raw.collect()}

    def is_aborted(pid: int, offset: int, txn: bool) -> bool:
        return txn and any(p == pid and first <= offset <= last for p, first, last in aborted)

    expected = {r for r in everything if not r[3] and not is_aborted(r[0], r[1], r[2])}
    assert kept == expected
    # README: 78 offsets = 8 transactions of 5 records + 8 markers + 3 * 8 + 6 non-transactional records;
    # 3 transactions aborted: 78 - 8 - 15 = 55 kept, the 5 * 5 committed transactional records among them
    assert len(kept) == 55 and sum(r[2] for r in kept) == 25


def test_bad_options_are_clear_errors(spark, samples: Path) -> None:
    with pytest.raises(Exception, match="unknown view"):
        load(spark, samples / "broker", view="nope").schema  # noqa: B018
    with pytest.raises(Exception, match="isolation must be"):
        load(spark, samples / "broker", isolation="dirty").collect()


def test_segment_files_decodes_only_the_segments_named(spark, samples: Path) -> None:
    """segmentFiles (the incremental run's): only those `.log` files are decoded; the listing views ignore it."""
    import json

    part = samples / "broker" / "tutorial-segments-0"
    logs = sorted(part.glob("*.log"))
    chosen = [str(logs[1]), str(logs[-1])]
    rows = load(spark, samples / "broker", view="batches", topics="tutorial-segments",
                segmentFiles=json.dumps(chosen)).collect()
    assert {r.segmentBaseOffset for r in rows} == {int(logs[1].stem), int(logs[-1].stem)}
    assert len(rows) == len(load(spark, samples / "broker", view="batches", topics="tutorial-segments").where(
        F.col("segmentBaseOffset").isin(int(logs[1].stem), int(logs[-1].stem))).collect())
    assert load(spark, samples / "broker", view="record_stats", topics="tutorial-segments",
                segmentFiles="[]").count() == 0
    assert load(spark, samples / "broker", view="segments", topics="tutorial-segments",
                segmentFiles="[]").count() == len(logs)
    with pytest.raises(Exception, match="segmentFiles must be a JSON list"):
        load(spark, samples / "broker", view="batches", segmentFiles='{"a": 1}').collect()


def test_segment_files_gives_the_index_entries_of_those_segments_and_the_segments_view_every_problem(
        spark, samples: Path, tmp_path: Path) -> None:
    """The index view with segmentFiles reads the indexes of the segments named and of those without a `.log` (which
    no incremental run reuses): their entries and their problem rows; the segments view, which reads every index,
    has the problem rows of the others."""
    import json
    import shutil

    part = tmp_path / "tutorial-segments-0"
    shutil.copytree(samples / "broker" / "tutorial-segments-0", part)
    logs = sorted(part.glob("*.log"))
    orphan = part / f"{int(logs[-1].stem) + 10**6:020d}.timeindex"  # an index whose `.log` is gone
    shutil.copy(logs[0].with_suffix(".timeindex"), orphan)
    damaged = logs[0].with_suffix(".index")  # not named: its problem row is the segments view's
    damaged.write_bytes(damaged.read_bytes() + b"\x01\x02\x03")
    every = load(spark, part, view="index").collect()
    named = load(spark, part, view="index", segmentFiles=json.dumps([str(logs[1])])).collect()
    entries = {int(logs[1].stem), int(orphan.stem)}
    assert {r.segmentBaseOffset for r in named if r.problem is None} == entries
    assert sorted(r for r in named if r.problem is None) == sorted(
        r for r in every if r.problem is None and r.segmentBaseOffset in entries)
    problems = sorted(r for r in every if r.problem is not None)
    assert any(r.problem.kind == "index_length_not_multiple" and r.problem.file == str(damaged) for r in problems)
    read = {str(logs[1].with_suffix(s)) for s in (".index", ".timeindex")} | {str(orphan)}
    assert sorted(r for r in named if r.problem is not None) == [r for r in problems if r.problem.file in read]
    segments = load(spark, part, view="segments").collect()
    assert {(r.problem.kind, r.problem.file, r.problem.position) for r in problems} <= {
        (r.problem.kind, r.problem.file, r.problem.position) for r in segments if r.problem is not None}


def test_segments_view_lists_the_files(spark, samples: Path) -> None:
    rows = load(spark, samples / "broker", view="segments", topics="tutorial-segments").orderBy("baseOffset").collect()
    part = samples / "broker" / "tutorial-segments-0"
    logs = sorted(part.glob("*.log"))
    assert [r.baseOffset for r in rows] == [int(p.stem) for p in logs]
    assert [r.logSize for r in rows] == [p.stat().st_size for p in logs]
    assert [r.isActive for r in rows] == [False] * (len(logs) - 1) + [True]
    assert [r.nextBaseOffset for r in rows][:-1] == [int(p.stem) for p in logs][1:]


def test_index_view_agrees_with_kafka_dump_log(spark, samples: Path) -> None:
    expected = []
    for g in sorted((samples / "golden" / "broker" / "tiny-index-interval-0").glob("*.index.deep.txt")):
        base = int(g.name.split(".")[0])
        pairs = re.findall(r"(?m)^offset: (\d+) position: (\d+)$", g.read_text())
        expected += [(base, int(o), int(p)) for o, p in pairs]
    rows = load(spark, samples / "broker", view="index", topics="tiny-index-interval").where(
        "indexType = 'offset'").collect()
    assert len(expected) == 98  # data/samples/README.md: 98 offset-index entries
    assert sorted((r.segmentBaseOffset, r.offset, r.position) for r in rows) == sorted(expected)


def test_partition_files_view_has_aborted_transactions_and_checkpoints(spark, samples: Path) -> None:
    df = load(spark, samples / "broker", view="partition_files", topics="txn-mixed")
    txns = {(r.producerId, r.firstOffset, r.lastOffset, r.lastStableOffset)
            for r in df.where("fileType = 'txnindex'").collect()}
    expected = set()
    for g in (samples / "golden" / "broker" / "txn-mixed-0").glob("*.txnindex.deep.txt"):
        expected |= {tuple(int(x) for x in m) for m in re.findall(
            r"producerId: (\d+) firstOffset: (\d+) lastOffset: (\d+) lastStableOffset: (\d+)", g.read_text())}
    assert txns == expected and len(txns) == 3  # data/samples/README.md: 3 aborted-txn entries
    types = {r.fileType for r in df.select("fileType").distinct().collect()}
    # the partition dir's files, and the log dir's checkpoint files that have a line for txn-mixed 0
    kinds = {".snapshot": "producer-snapshot", ".txnindex": "txnindex", "leader-epoch-checkpoint":
             "leader-epoch-checkpoint", "partition.metadata": "partition.metadata"}
    part = samples / "broker" / "txn-mixed-0"
    on_disk = {kinds[k] for p in part.iterdir() for k in (p.suffix, p.name) if k in kinds}
    root = {p.name: any(line.startswith("txn-mixed 0 ") for line in p.read_text().splitlines()[2:])
            for p in (samples / "broker").glob("*-offset-checkpoint")}
    assert {name for name, has_line in root.items() if has_line} == {"recovery-point-offset-checkpoint",
                                                                       "replication-offset-checkpoint"}
    # every root checkpoint file present has a row; one without a line for the partition, with no entry or offset
    assert types == on_disk | set(root)
    no_line = df.where(F.col("fileType").isin(list(root)) & F.col("entry").isNull() & F.col("offset").isNull())
    assert {r.fileType for r in no_line.collect()} == {name for name, has_line in root.items() if not has_line}


@pytest.mark.parametrize("damage", ["remove", "garble"])
def test_split_points_fall_back_to_a_header_walk(spark, samples: Path, tmp_path: Path, damage: str) -> None:
    src = samples / "broker" / "tiny-index-interval-0"
    dst = tmp_path / "logs" / src.name
    shutil.copytree(src, dst)
    for index in dst.glob("*.index"):
        if damage == "remove":
            index.unlink()
        else:  # entries that point into the middle of batches
            data = bytearray(index.read_bytes())
            for i in range(4, len(data), 8):
                data[i:i + 4] = (int.from_bytes(data[i:i + 4], "big") + 3).to_bytes(4, "big")
            index.write_bytes(bytes(data))
    cols = ["topic", "partition", "offset", "value"]
    cut = load(spark, dst.parent, maxSplitBytes=512)
    # the boundaries come from a header walk instead of the index: the same pieces
    assert cut.rdd.getNumPartitions() == pieces(dst, 512) == 19
    assert_df_equality(load(spark, src.parent, topics="tiny-index-interval").select(cols),
                       cut.where("problem is null").select(cols), ignore_row_order=True)
    assert cut.where("problem is not null").count() == 0


def test_planning_in_a_fresh_process_leaves_the_decoder_unloaded(samples: Path) -> None:
    """Spark plans a Python source's read in Python processes of its own, several a run: planning every view (the
    listing, the split points from the indexes) must not load the decoder core and numba, most of a second each;
    the package's ``read_log`` still loads them on first use."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from kafkalog_spark.source.datasource import KafkaLogDataSource\n"
            "from kafkalog_spark.source.options import VIEWS\n"
            "for view in VIEWS:\n"
            f"    source = KafkaLogDataSource({{'path': {str(samples / 'broker')!r}, 'view': view}})\n"
            "    assert source.reader(source.schema()).partitions(), view\n"
            "loaded = sorted(m for m in ('numba', 'kafkalog_spark.log.reader') if m in sys.modules)\n"
            "from kafkalog_spark import read_log\n"
            "print(loaded, 'numba' in sys.modules, read_log.__module__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[-2] == "[] True kafkalog_spark.log.reader"


def _canonical(rows: list[dict]) -> list[str]:
    import json

    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _separate_and_decoded(path: Path, **options: str) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
    """The batches, record_stats and control records views of ``path``, each read on its own, and as the decoded
    view's parts (without Spark: planning, then every task)."""
    from tests.helpers.views import view_rows

    separate = {view: view_rows(str(path), view, **options) for view in ("batches", "record_stats", "records")}
    separate["records"] = [r for r in separate["records"] if r["isControl"]]  # as a filter on isControl keeps
    decoded = view_rows(str(path), "decoded", **options)
    assert all(sum(r[p] is not None for p in ("batches", "record_stats", "records", "batch_summary",
                                              "index_entry_findings")) == 1
               for r in decoded)
    return separate, {view: [r[view] for r in decoded if r[view] is not None] for view in separate}


@pytest.mark.parametrize("split_bytes", ["128m", "700"])
def test_the_decoded_view_holds_what_the_three_views_read_on_their_own(samples: Path, split_bytes: str) -> None:
    """One read of each segment gives the batches view's rows, the record_stats view's and the control records, as
    reading each view on its own does. The decoded view reads each segment whole, whatever ``maxSplitBytes`` (what
    its tasks compute of a segment needs all of it): its record_stats rows are those of the view read uncut."""
    options = {"includeInternal": "true", "kraftSnapshots": "false"}
    separate, _ = _separate_and_decoded(samples / "broker", **options, maxSplitBytes="128m")
    _, decoded = _separate_and_decoded(samples / "broker", **options, maxSplitBytes=split_bytes)
    assert len(separate["batches"]) == BROKER_BATCHES
    assert len(separate["records"]) > 0 and len(separate["record_stats"]) >= 86
    for view, rows in separate.items():
        assert _canonical(decoded[view]) == _canonical(rows), view


def test_the_decoded_view_has_each_views_problem_rows(samples: Path, tmp_path: Path) -> None:
    """Damage: the batches part has the batches view's problem rows and the record_stats part the record_stats
    view's (what reading the file finds is in both), and a FAILFAST read stops at the same byte."""
    from kafkalog_spark.findings import KafkaLogError
    from tests.helpers.views import view_rows

    log, position, _ = _corrupt_copy(samples, tmp_path)
    separate, decoded = _separate_and_decoded(log.parent)
    for view in ("batches", "record_stats"):
        found = [(r["problem"]["kind"], r["problem"]["position"]) for r in decoded[view] if r["problem"]]
        assert sorted(found) == [("corrupt_size", position), ("skipped_region", position)], view
    for view, rows in separate.items():
        assert _canonical(decoded[view]) == _canonical(rows), view
    with pytest.raises(KafkaLogError, match=f"at byte {position}"):
        view_rows(str(log.parent), "decoded", mode="FAILFAST")


def test_decoded_views_split_one_cached_read_as_spark_reads_each_view(spark, samples: Path, tmp_path: Path) -> None:
    """Through Spark: :func:`decoded_views` of one persisted read of the decoded view equal the three views read
    each on its own, schema included."""
    from kafkalog_spark.source import control_records, decoded_views, read_views

    log, _, _ = _corrupt_copy(samples, tmp_path)
    shutil.copytree(samples / "broker" / "txn-mixed-0", log.parent.parent / "txn-mixed-0")
    paths = [str(log.parent.parent)]
    separate = read_views(spark, paths, ["batches", "record_stats", "records"])
    separate["records"] = control_records(separate["records"])
    decoded = read_views(spark, paths, ["decoded"])["decoded"].persist()
    try:
        parts = decoded_views(decoded)
        for view, df in separate.items():
            assert parts[view].schema == df.schema, view
            expected = _canonical([r.asDict(recursive=True) for r in df.collect()])
            assert _canonical([r.asDict(recursive=True) for r in parts[view].collect()]) == expected, view
            assert len(expected) > {"batches": 100, "record_stats": 10, "records": 0}[view], view
        assert parts["batches"].where("problem is not null").count() == 2
    finally:
        decoded.unpersist()
