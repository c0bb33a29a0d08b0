"""Hostile inputs and usage mistakes: directories that cannot be listed, special files named like segments, zero
sizes, configuration mistakes. Each ends in a finding naming the file or directory (PERMISSIVE), a failure naming
it (FAILFAST) or one line and exit 2 (a usage mistake): never a traceback, a hang or a silent skip.

Root reads every directory whatever its mode, so directories that cannot be listed are simulated with a pyarrow
filesystem that refuses to list them (:class:`Unlistable`); the same with chmod runs when not root. Anything
that could block on a FIFO runs in a subprocess with a timeout, or with :class:`FifoWatchdog` beside it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pyarrow.fs as pafs
import pytest
from pyspark.sql import functions as F

from kafkalog_spark.findings import Finding, KafkaLogError
from kafkalog_spark.log import log_dir
from kafkalog_spark.log.log_dir import find_partitions
from kafkalog_spark.log.reader import read_log
from kafkalog_spark.source.datasource import KafkaLogDataSource
from kafkalog_spark.source.options import SourceOptions
from tests.helpers.corpus import BROKER, PACKAGE, ROOT, SAMPLES
from tests.helpers.views import VIEWS, problems, view_rows

HANG_SECONDS = 60  # a subprocess that takes longer is blocked, not slow (each takes a few seconds)


def copy_partitions(tmp: Path, *names: str) -> Path:
    """A log dir holding copies of the sample broker's partition dirs ``names`` (inputs are never touched)."""
    logs = tmp / "logs"
    for name in names:
        shutil.copytree(BROKER / name, logs / name)
    return logs


def run_python(code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter; a hang fails the test instead of blocking the suite."""
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                              timeout=HANG_SECONDS, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"blocked for {HANG_SECONDS} s")


class Unlistable(pafs.FileSystemHandler):
    """The local filesystem, except that listing the directories ``refused`` fails as without permission."""

    def __init__(self, *refused: Path) -> None:
        self.local = pafs.LocalFileSystem()
        self.refused = {str(p) for p in refused}

    def get_file_info_selector(self, selector):
        if selector.base_dir.rstrip("/") in self.refused:
            raise PermissionError(13, "Permission denied", selector.base_dir)
        return self.local.get_file_info(selector)

    def get_type_name(self):
        return "unlistable"

    def get_file_info(self, paths):
        return self.local.get_file_info(paths)

    def normalize_path(self, path):
        return path

    def open_input_file(self, path):
        return self.local.open_input_file(path)

    def open_input_stream(self, path):
        return self.local.open_input_stream(path)

    def _read_only(self, *args):
        raise AssertionError("the readers never write")

    create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = delete_file = _read_only
    move = copy_file = open_output_stream = open_append_stream = _read_only


def unlistable(*refused: Path) -> pafs.FileSystem:
    return pafs.PyFileSystem(Unlistable(*refused))


# --------------------------------------------------------------- D5: a directory that cannot be listed


def test_an_unlistable_partition_dir_is_a_finding_naming_it(tmp_path: Path) -> None:
    logs = copy_partitions(tmp_path, "codec-none-0", "tutorial-segments-0")
    refused = logs / "tutorial-segments-0"
    fs = unlistable(refused)
    findings: list[Finding] = []
    table = read_log(str(logs), "records", findings=findings, filesystem=fs)
    assert table.equals(read_log(str(logs / "codec-none-0"), "records", findings=[]))  # the other one is read
    assert [(f.kind, f.file, f.severity) for f in findings] == [("unreadable_file", str(refused), "error")]
    assert "cannot list the directory" in findings[0].detail and "Permission denied" in findings[0].detail
    with pytest.raises(KafkaLogError, match=str(refused)):
        read_log(str(logs), "records", mode="FAILFAST", filesystem=fs)
    # named directly, the partition dir is one that cannot be listed (its name says which topic-partition)
    found: list[Finding] = []
    [log] = find_partitions([str(refused)], fs, found)
    assert (log.topic, log.partition, found) == ("tutorial-segments", 0, [])
    assert [(f.kind, f.file) for f in log.findings] == [("unreadable_file", str(refused))]


def test_an_unlistable_log_dir_is_a_finding_naming_it(tmp_path: Path) -> None:
    logs = copy_partitions(tmp_path, "codec-none-0")
    findings: list[Finding] = []
    assert read_log(str(logs), "batches", findings=findings, filesystem=unlistable(logs)).num_rows == 0
    assert [(f.kind, f.file) for f in findings] == [("unreadable_file", str(logs))]
    with pytest.raises(KafkaLogError, match=str(logs)):
        find_partitions([str(logs)], unlistable(logs))  # no list to collect it in: raised, never dropped


def test_a_glob_through_an_unlistable_dir_is_a_finding_not_no_match(tmp_path: Path) -> None:
    logs = copy_partitions(tmp_path, "codec-none-0")
    findings: list[Finding] = []
    assert read_log(f"{logs}/codec-*", "batches", findings=findings, filesystem=unlistable(logs)).num_rows == 0
    assert [(f.kind, f.file) for f in findings] == [("unreadable_file", str(logs))]
    with pytest.raises(PermissionError):  # no list to collect it in: raised, not "matches nothing"
        find_partitions([f"{logs}/codec-*"], unlistable(logs))


# codec-none-0's rows per view, from kafka-dump-log's goldens (data/samples/README.md): 300 records in 19 batches
# in 9 segments (each below the split size: one record_stats row each), 9 offset-index and 12 time-index entries;
# its partition files: the leader-epoch checkpoint's one entry, partition.metadata, one producer in each of the 9
# producer snapshots (the copied log dir has no checkpoint files of its own)
CODEC_NONE_ROWS = {"records": 300, "batches": 19, "segments": 9, "record_stats": 9, "index": 9 + 12,
                   "partition_files": 1 + 1 + 9}


@pytest.mark.parametrize("view", VIEWS)
def test_the_source_makes_an_unlistable_dir_a_problem_row_in_every_view(view: str, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    logs = copy_partitions(tmp_path, "codec-none-0", "tutorial-segments-0")
    refused = logs / "tutorial-segments-0"
    clean_rows = view_rows(str(logs), view)
    clean = problems(clean_rows)
    fs = unlistable(refused)
    monkeypatch.setattr(log_dir, "resolve", lambda path, filesystem=None: (filesystem or fs, path))
    rows = view_rows(str(logs), view)
    added = [p for p in problems(rows) if p not in clean]
    assert [(kind, file, topic, partition, at) for kind, file, _, topic, partition, at in added] == [
        ("unreadable_file", str(refused), "tutorial-segments", 0, str(logs))]
    assert not any(r["topic"] == "tutorial-segments" and not r["problem"] for r in rows)
    # the other partition is read whole, as without the refused one
    other = [r for r in rows if r["topic"] == "codec-none" and not r["problem"]]
    assert other == [r for r in clean_rows if r["topic"] == "codec-none" and not r["problem"]]
    assert len(other) == CODEC_NONE_ROWS[view]
    with pytest.raises(KafkaLogError, match=str(refused)):
        view_rows(str(logs), view, mode="FAILFAST")
    # the log dir itself: a row without a topic-partition, its logDir the dir
    monkeypatch.setattr(log_dir, "resolve", lambda path, filesystem=None: (filesystem or unlistable(logs), path))
    assert [(p[0], p[1], p[3], p[4], p[5]) for p in problems(view_rows(str(logs), view))] == [
        ("unreadable_file", str(logs), None, None, str(logs))]


def test_the_decoded_view_has_an_unlistable_dir_in_the_parts_with_problem_rows(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's listing problems reach the decoded view's batches and record_stats parts as they reach those
    views read on their own; its control records part has no problem rows."""
    logs = copy_partitions(tmp_path, "codec-none-0", "tutorial-segments-0")
    refused = logs / "tutorial-segments-0"
    fs = unlistable(refused)
    monkeypatch.setattr(log_dir, "resolve", lambda path, filesystem=None: (filesystem or fs, path))
    decoded = view_rows(str(logs), "decoded")
    for part in ("batches", "record_stats"):
        rows = [r[part] for r in decoded if r[part] is not None]
        assert problems(rows) == problems(view_rows(str(logs), part)), part
        assert [(p[0], p[1]) for p in problems(rows)] == [("unreadable_file", str(refused))], part
    assert not any(r["records"]["problem"] for r in decoded if r["records"] is not None)


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists every directory whatever its mode")
def test_a_partition_dir_without_permissions_is_a_finding(tmp_path: Path) -> None:
    logs = copy_partitions(tmp_path, "codec-none-0", "tutorial-segments-0")
    refused = logs / "tutorial-segments-0"
    refused.chmod(0)
    try:
        findings: list[Finding] = []
        read_log(str(logs), "records", findings=findings)
        assert [(f.kind, f.file) for f in findings] == [("unreadable_file", str(refused))]
        added = problems(view_rows(str(logs), "segments"))
        assert [(p[0], p[1]) for p in added] == [("unreadable_file", str(refused))]
    finally:
        refused.chmod(0o755)


# --------------------------------------------------------------- D7: special files named like Kafka's

SPECIAL = {  # name -> what it is, in a copy of a partition dir
    "00000000000000099999.log": "a FIFO",
    "00000000000000099998.index": "a directory",
    "00000000000000099997.timeindex": "a FIFO",  # a symlink to the FIFO: followed
    "00000000000000099996.snapshot": "a FIFO",
}


def with_special_files(tmp: Path) -> Path:
    logs = copy_partitions(tmp, "codec-none-0")
    part = logs / "codec-none-0"
    os.mkfifo(part / "00000000000000099999.log")
    (part / "00000000000000099998.index").mkdir()
    (part / "00000000000000099997.timeindex").symlink_to(part / "00000000000000099999.log")
    os.mkfifo(part / "00000000000000099996.snapshot")
    return logs


def test_a_fifo_named_like_a_partition_dir_is_a_finding(tmp_path: Path) -> None:
    logs = copy_partitions(tmp_path, "codec-none-0")
    os.mkfifo(logs / "orders-0")
    findings: list[Finding] = []
    assert [log.path for log in find_partitions([str(logs)], None, findings)] == [str(logs / "codec-none-0")]
    assert [(f.kind, f.file, f.detail) for f in findings] == [
        ("unreadable_file", str(logs / "orders-0"), "not a regular file (a FIFO); not opened")]


def test_a_dangling_symlink_named_like_a_segment_is_a_finding(tmp_path: Path) -> None:
    """pyarrow's listing leaves such a link out in silence; Kafka would fail to load the log."""
    logs = copy_partitions(tmp_path, "codec-none-0")
    link = logs / "codec-none-0" / "00000000000000099999.log"
    link.symlink_to(tmp_path / "gone.log")
    findings: list[Finding] = []
    # codec-none-0's 19 batches (data/samples/README.md, from kafka-dump-log's goldens), all read
    assert read_log(str(logs), "batches", findings=findings).num_rows == 19
    assert [(f.kind, f.file, f.detail) for f in findings] == [
        ("missing_file", str(link), f"a symbolic link to {tmp_path / 'gone.log'}, which does not exist; not read")]


def test_special_files_are_findings_never_opened(tmp_path: Path) -> None:
    """read_log, dump and every view of the source (without Spark), in a subprocess: before, the FIFO blocked
    them and the rest was skipped in silence."""
    logs = with_special_files(tmp_path / "special")
    pristine = copy_partitions(tmp_path / "pristine", "codec-none-0")
    done = run_python(f"""
        import json, sys
        from kafkalog_spark.dump import DumpOptions, run_dump
        from kafkalog_spark.log.reader import read_log
        from tests.helpers.views import VIEWS, problems, view_rows

        def summary(logs):
            findings = []
            rows = read_log(logs, "records", findings=findings).num_rows
            return {{"rows": rows, "findings": sorted([f.kind, f.file, f.detail] for f in findings),
                    "views": {{v: problems(view_rows(logs, v)) for v in VIEWS}}}}

        err = []
        code = run_dump([{str(logs / "codec-none-0" / "00000000000000099999.log")!r}], DumpOptions(as_json=True),
                        lambda line: None, err.append)
        print(json.dumps({{"special": summary({str(logs)!r}), "pristine": summary({str(pristine)!r}),
                          "dump": [code, [json.loads(e) for e in err]]}}))
    """)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    part = logs / "codec-none-0"
    expected = sorted(["unreadable_file", str(part / name), f"not a regular file ({what}); not opened"]
                      for name, what in SPECIAL.items())
    special, pristine_ = out["special"], out["pristine"]
    assert special["rows"] == pristine_["rows"] == 300  # codec-none-0's records (data/samples/README.md)
    assert special["findings"] == expected
    for view in VIEWS:
        added = [p for p in special["views"][view]
                 if [p[0], p[1].replace(str(logs), str(pristine)), *p[2:]] not in pristine_["views"][view]]
        assert sorted(p[:3] for p in added) == expected, view
        assert {(p[3], p[4], p[5]) for p in added} == {("codec-none", 0, str(logs))}
    code, lines = out["dump"]
    assert code == 0
    assert [(d["kind"], d["file"], d["detail"]) for d in lines] == [
        ("unreadable_file", str(part / "00000000000000099999.log"), "not a regular file (a FIFO); not opened")]


class FifoWatchdog:
    """Opens ``fifo`` for writing whenever someone opens it for reading: that unblocks the reader (it then sees
    an empty file) and records that it was opened, which must never happen."""

    def __init__(self, fifo: Path) -> None:
        self.fifo, self.opened, self.stop = fifo, 0, threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self.stop.wait(0.05):
            try:
                fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO while no reader has it open
            except OSError:
                continue
            self.opened += 1
            os.close(fd)

    def __enter__(self) -> FifoWatchdog:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def test_the_spark_source_reports_special_files_and_never_opens_them(spark, tmp_path: Path) -> None:
    """Through Spark: the driver's listing problems reach the rows (records), the executors' own listing too
    (segments); every view's code is checked above, without Spark."""
    logs = with_special_files(tmp_path)
    fifo = logs / "codec-none-0" / "00000000000000099999.log"
    expected = sorted(("records", "unreadable_file", str(logs / "codec-none-0" / name),
                       f"not a regular file ({what}); not opened") for name, what in SPECIAL.items())
    with FifoWatchdog(fifo) as watchdog:
        dfs = [spark.read.format("kafkalog").option("view", view).load(str(logs))
               .where("problem.file like '%0000009999%'").select(F.lit(view).alias("view"), "problem.*")
               for view in ("records", "segments")]
        rows = dfs[0].unionByName(dfs[1]).collect()
    assert sorted((r.view, r.kind, r.file, r.detail) for r in rows) == sorted(
        expected + [("segments", *e[1:]) for e in expected])
    assert watchdog.opened == 0


def test_validate_junit_counts_no_partition_for_a_log_dirs_own_problem(spark, tmp_path: Path) -> None:
    """A special file named like a partition dir is the log dir's problem row (no topic-partition): JUnit cases are
    made per partition read, and that row is none."""
    from kafkalog_spark.commands.junit import partitions_read

    logs = copy_partitions(tmp_path, "codec-none-0")
    os.mkfifo(logs / "orders-0")
    with FifoWatchdog(logs / "orders-0") as watchdog:
        assert partitions_read(spark, [str(logs)], True) == {("codec-none", 0)}
    assert watchdog.opened == 0


def test_a_config_file_that_is_a_fifo_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from kafkalog_spark.cli import main

    fifo = tmp_path / "topics.ini"
    os.mkfifo(fifo)
    with FifoWatchdog(fifo) as watchdog:
        assert main(["retention-plan", str(BROKER), "--topic-config", str(fifo)]) == 2
    assert watchdog.opened == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--topic-config {fifo}: not a regular file" in err[0]


# --------------------------------------------------------------- D8: sizes of zero


def test_a_zero_chunk_size_is_refused_not_a_hang() -> None:
    done = run_python(f"""
        from kafkalog_spark.log.reader import read_log
        for option in ("chunk_bytes", "max_decompressed"):
            try:
                read_log({str(BROKER / "codec-none-0")!r}, "records", findings=[], **{{option: 0}})
            except ValueError as e:
                print(e)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["chunk_bytes must be a whole number of bytes, at least 1, not 0",
                                        "max_decompressed must be a whole number of bytes, at least 1, not 0"]


@pytest.mark.parametrize("option", ["maxSplitBytes", "openCostBytes", "chunkBytes", "maxDecompressedBytes"])
@pytest.mark.parametrize("value", ["0", "0k", "-1", "1.5m", "99999999t"])
def test_the_source_refuses_sizes_below_one_byte(option: str, value: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"kafkalog: {option} '{value}': expected")) as e:
        SourceOptions.parse({"path": str(BROKER), option: value})
    with pytest.raises(ValueError, match=re.escape(str(e.value))):  # at planning, before any task
        KafkaLogDataSource({"path": str(BROKER), option: value}).schema()


# --------------------------------------------------------------- D6: configuration mistakes


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mistake must be caught before Spark starts: starting it fails the test."""
    from kafkalog_spark.commands import nightly, report, runner

    def refuse(*args: object, **kwargs: object):
        raise AssertionError("Spark started: the mistake was not caught")

    for module in (nightly, report, runner):  # the nightly job's start, the report's from tables, the rest
        monkeypatch.setattr(module, "spark_session", refuse)


def one_usage_line(capsys: pytest.CaptureFixture, code: int, names: str) -> str:
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and ": error: " in lines[0] and names in lines[0], err
    return lines[0]


CONFIG_MISTAKES = [  # (the file's text, [input] and [output] added where it has none; what the message names)
    ('[input\n', "invalid TOML"),
    ('[inputs]\nlog_dirs = ["x"]\n', "'inputs'"),
    ('[input]\nlog_dir = ["x"]\n', "[input] log_dir: unknown key"),
    ('input = 5\n', "[input]: expected a section"),
    ('[input]\nlog_dirs = "{broker}"\n', "[input] log_dirs = "),
    ('[input]\nlog_dirs = ["{broker}", 5]\n', "[input] log_dirs = "),
    ('[input]\ninclude_internal = "yes"\n', "[input] include_internal = 'yes': expected true or false"),
    ('[input]\nmax_split_bytes = 0\n', "[input] max_split_bytes '0': expected 1 byte"),
    ('[input]\nmax_split_bytes = "lots"\n', "[input] max_split_bytes 'lots': expected bytes"),
    ('[snapshot]\nid = 5\n', "[snapshot] id = 5: expected a string"),
    ('[snapshot]\nid = "a b"\n', "[snapshot] id: snapshot id 'a b'"),
    ('[configs]\nbroker_properties = 5\n', "[configs] broker_properties = 5: expected a string"),
    ('[configs]\nkafka_version = "2.8"\n', "[configs] kafka_version"),
    ('[tables]\nsegment_stats = "../elsewhere"\n', "[tables] segment_stats '../elsewhere': expected"),
    ('[tables]\nsegment_stat = "x"\n', "[tables] segment_stat: unknown key"),
    ('[output]\nwarehouse = 5\n', "[output] warehouse = 5: expected a string"),
]


@pytest.mark.parametrize(("text", "names"), CONFIG_MISTAKES)
def test_a_config_mistake_is_one_line_and_exit_2(text: str, names: str, tmp_path: Path, no_spark: None,
                                                   capsys: pytest.CaptureFixture) -> None:
    from kafkalog_spark.cli import main

    conf = tmp_path / "nightly.toml"
    head = "" if "input" in text else f'[input]\nlog_dirs = ["{BROKER}"]\n'
    tail = "" if "output" in text or text == "[input\n" else f'[output]\nwarehouse = "{tmp_path / "w"}"\n'
    conf.write_text(head + text.replace("{broker}", str(BROKER)) + tail)
    line = one_usage_line(capsys, main(["nightly", "--config", str(conf)]), names)
    assert line.startswith(f"kafkalog nightly: error: --config {conf}: ")


@pytest.mark.parametrize(("args", "names"), [
    (["--config", "{conf}"], "[input] log_dirs = "),
    (["--log-dir", str(BROKER), "--warehouse", "w", "--snapshot-id", "a' OR 1=1 --"], "--snapshot-id: snapshot id"),
    (["--log-dir", str(BROKER), "--schema", "main.kafka-log"], "--schema 'kafka-log'"),
])
def test_the_spark_submit_job_says_the_same_in_one_line(args: list[str], names: str, tmp_path: Path, no_spark: None,
                                                         capsys: pytest.CaptureFixture) -> None:
    from kafkalog_spark.cli import nightly_job  # jobs/nightly.py's entry point

    conf = tmp_path / "nightly.toml"
    conf.write_text(f'[input]\nlog_dirs = "{BROKER}"\n[output]\nwarehouse = "w"\n')
    assert nightly_job([a.replace("{conf}", str(conf)) for a in args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kafkalog nightly: error: ") and names in err[0], err


def test_a_config_that_is_no_utf8_text_is_one_line(tmp_path: Path, no_spark: None,
                                                   capsys: pytest.CaptureFixture) -> None:
    from kafkalog_spark.cli import main

    conf = tmp_path / "nightly.toml"
    conf.write_bytes(b'[input]\nlog_dirs = ["\xff"]\n')
    one_usage_line(capsys, main(["nightly", "--config", str(conf)]), "not UTF-8 text (byte 21)")


def test_the_shipped_configs_still_load() -> None:
    from kafkalog_spark.nightly import NightlyConfig

    # the files' relative log_dirs, resolved against the file's own directory
    expected = {ROOT / "conf" / "nightly.toml": (SAMPLES / "broker", SAMPLES / "legacy", SAMPLES / "live-copy"),
                PACKAGE / "demo" / "nightly.toml": (PACKAGE / "demo" / "broker",)}
    for conf, dirs in expected.items():
        assert NightlyConfig.load(str(conf)).log_dirs == tuple(str(d) for d in dirs), conf
        assert all(d.is_dir() for d in dirs), conf


@pytest.mark.parametrize(("args", "names"), [
    (["retention-plan", str(BROKER), "--as-of", "99999999999999999999"], "--as-of '99999999999999999999'"),
    (["retention-plan", str(BROKER), "--as-of", "-1"], "--as-of '-1'"),
    (["retention-plan", str(BROKER), "--as-of", "253402300800000"], "--as-of '253402300800000'"),
    (["compaction-preview", str(BROKER), "--now", "9999-12-31T23:59:59-01:00"], "--now"),
    (["nightly", "--log-dir", str(BROKER), "--schema", "main.kafka log"], "--schema 'kafka log'"),
    (["nightly", "--log-dir", str(BROKER), "--schema", "a.b.c"], "--schema 'a.b'"),
])
def test_a_cli_value_out_of_range_is_one_line_and_exit_2(args: list[str], names: str, no_spark: None,
                                                         capsys: pytest.CaptureFixture) -> None:
    from kafkalog_spark.cli import main

    one_usage_line(capsys, main(args), names)


def test_the_last_time_iso_8601_can_write_is_taken() -> None:
    from kafkalog_spark.commands.arguments import parse_time

    assert parse_time("9999-12-31T23:59:59.999Z", "--as-of") == 253402300799999 == parse_time("253402300799999", "x")
    assert parse_time("1970-01-01T00:00:00Z", "--as-of") == 0
