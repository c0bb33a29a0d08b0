"""The `kafkalog` command line as a tool: every usage mistake ends in one line naming the option or path and
exit 2, before any Spark session starts (checked by closing every way to one: tests/helpers/sessionless_cli.py);
--version, --help, quiet pipes; and the exit codes of the other endings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from kafkalog_spark import __version__
from kafkalog_spark.cli import main
from kafkalog_spark.commands import output
from kafkalog_spark.commands.arguments import check_log_dirs
from kafkalog_spark.commands.junit import junit_xml
from kafkalog_spark.finding_kinds import KINDS
from tests.helpers.corpus import BROKER
from tests.helpers.sessionless_cli import SessionlessCli

SEGMENT = BROKER / "codec-none-0" / "00000000000000000110.log"
_served: SessionlessCli


@pytest.fixture(scope="module", autouse=True)
def _cli():
    global _served
    _served = SessionlessCli()
    yield
    _served.close()


def kafkalog(*args: str) -> tuple[int, str, str, list[str]]:
    """Exit code, stdout, stderr, and each attempt to start a Spark session, a JVM or the local engine."""
    return _served.run(*args)


def usage_error(*args: str, names: str) -> str:
    """Run a mistake: exit 2, no traceback, one error line naming ``names``, no session started. Returns stderr."""
    code, out, err, sessions = kafkalog(*args)
    assert code == 2, (code, err)
    assert "Traceback" not in err and out == ""
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 1 and names in errors[0], err
    assert len(err.splitlines()) <= 2, err  # at most argparse's usage line, then the error
    assert sessions == [], f"a usage mistake started {sessions}"
    return err


# a local Spark session's first door is the JVM's launch (kafkalog_spark.session.launch: quiet start-up output)
@pytest.mark.parametrize(("engine", "door"), [("spark", "launch_gateway"),
                                              ("local", "SparkConnectServer.start")])
def test_a_command_that_needs_a_session_is_seen_asking_for_one(engine: str, door: str) -> None:
    """The check above can fail: a command past its usage checks is caught at the door it takes."""
    if engine == "local":
        pytest.importorskip("pysail")
    code, _, err, sessions = kafkalog("stats", str(BROKER), "--engine", engine)
    assert sessions == [door], err
    assert code == 3 and f"internal error: RuntimeError: {door} was called" in err


@pytest.fixture(scope="module")
def configs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("configs")
    (d / "bad-value.ini").write_text("[orders]\nsegment.bytes=1\n")
    (d / "bad.toml").write_text("[input\nlog_dirs = ['x']\n")
    (d / "no-output.toml").write_text(f"[input]\nlog_dirs = ['{BROKER}']\n")
    (d / "server.properties").write_text("log.retention.hours=x\n")
    return d


# --------------------------------------------------------------------------------------- argparse's mistakes


@pytest.mark.parametrize(("args", "names"), [
    (["stats", str(BROKER), "--bogus"], "--bogus"),
    (["--bogus", "dump", str(SEGMENT)], "--bogus"),
    (["dump", str(SEGMENT), "--deep"], "--deep"),  # a prefix of --deep-iteration is no guess either
    (["frob"], "frob"),
    ([], "command"),
    (["dump"], "FILE"),
    (["stats"], "LOGDIR"),
    (["validate"], "LOGDIR"),
    (["retention-plan"], "LOGDIR"),
    (["compaction-preview"], "LOGDIR"),
    (["validate", str(BROKER), "--fail-on", "fatal"], "--fail-on"),
    (["-q", "-v", "dump", str(SEGMENT)], "--quiet and --verbose"),
    (["dump", str(SEGMENT), "--remote", "http://x"], "--remote http://x"),
])
def test_argparse_mistakes(args: list[str], names: str) -> None:
    err = usage_error(*args, names=names)
    assert err.startswith("usage: kafkalog")


# ------------------------------------------------------------------------------------ paths, before Spark


@pytest.mark.parametrize("command", ["stats", "validate", "retention-plan", "compaction-preview"])
def test_missing_log_dir(command: str, tmp_path: Path) -> None:
    usage_error(command, str(BROKER), str(tmp_path / "nope"), names=str(tmp_path / "nope"))


def test_log_dir_that_is_a_file() -> None:
    usage_error("stats", str(SEGMENT), names=f"{SEGMENT}: not a directory")


def test_uris_and_globs_are_checked_as_the_readers_read_them(tmp_path: Path) -> None:
    usage_error("validate", f"file://{tmp_path}/nope", names=f"file://{tmp_path}/nope")
    usage_error("stats", f"file:{tmp_path}/nope", names=f"file:{tmp_path}/nope")
    usage_error("retention-plan", f"{BROKER}/no-such-*", names=f"{BROKER}/no-such-*: no file or directory matches")
    usage_error("stats", f"{BROKER}/*-checkpoint", names="not a directory")  # matches files only
    # what exists passes, and the URI of a file system other than the object stores (or a Connect server's path) is
    # left to its reader; object stores are checked (tests/test_object_store.py)
    check_log_dirs([f"file:{BROKER}/codec-*-0", f"file://{BROKER}", "hdfs://namenode/kafka"], "LOGDIR")
    check_log_dirs([str(tmp_path / "nope")], "LOGDIR", remote="sc://server:15002")


def test_dump_missing_file_and_directory(tmp_path: Path) -> None:
    usage_error("dump", str(SEGMENT), str(tmp_path / "nope.log"), names=str(tmp_path / "nope.log"))
    usage_error("dump", str(BROKER / "codec-none-0"), names=f"{BROKER / 'codec-none-0'}: is a directory")


def test_junit_into_a_missing_directory(tmp_path: Path) -> None:
    usage_error("validate", str(BROKER), "--junit", str(tmp_path / "no" / "report.xml"),
                names=f"--junit {tmp_path / 'no' / 'report.xml'}")


@pytest.mark.parametrize("option", ["--broker-config", "--topic-config"])
@pytest.mark.parametrize("command", ["stats", "retention-plan", "compaction-preview"])
def test_missing_config_file(command: str, option: str, tmp_path: Path) -> None:
    usage_error(command, str(BROKER), option, str(tmp_path / "nope"), names=f"{option} {tmp_path / 'nope'}")


def test_config_files_with_bad_values(configs: Path) -> None:
    usage_error("compaction-preview", str(BROKER), "--topic-config", str(configs / "bad-value.ini"),
                names=f"--topic-config {configs / 'bad-value.ini'}: segment.bytes=1")
    usage_error("stats", str(BROKER), "--broker-config", str(configs / "server.properties"),
                names="--broker-config")


# ------------------------------------------------------------------------------------------ values


@pytest.mark.parametrize(("args", "names"), [
    (["retention-plan", str(BROKER), "--as-of", "yesterday"], "--as-of 'yesterday'"),
    (["compaction-preview", str(BROKER), "--now", "soon"], "--now 'soon'"),
    (["retention-plan", str(BROKER), "--set", "retention.ms"], "--set retention.ms: expected key=value"),
    (["retention-plan", str(BROKER), "--set", "retention.mss=1"], "--set retention.mss=1: unknown"),
    (["compaction-preview", str(BROKER), "--set", "min.cleanable.dirty.ratio=x"],
     "--set min.cleanable.dirty.ratio=x"),
])
def test_bad_values(args: list[str], names: str) -> None:
    usage_error(*args, names=names)


# ------------------------------------------------------------------------------------------- nightly


def test_nightly_without_config(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    usage_error("nightly", "--log-dir", str(missing), "--warehouse", str(tmp_path / "w"),
                names=f"--log-dir {missing}")
    usage_error("nightly", "--log-dir", str(BROKER), names="--warehouse or --schema is required")
    usage_error("nightly", "--warehouse", str(tmp_path / "w"), names="--log-dir is required")
    usage_error("nightly", "--log-dir", str(BROKER), "--warehouse", "w", "--schema", "a.b",
                names="--warehouse and --schema")
    usage_error("nightly", "--log-dir", str(BROKER), "--warehouse", "w", "--snapshot-id", "../x",
                names="--snapshot-id")


def test_fleet_mistakes(tmp_path: Path) -> None:
    usage_error("nightly", "--fleet", "--log-dir", str(BROKER), "--schema", "a.b", names="[output] fleet")
    usage_error("fleet", "--warehouse", str(tmp_path / "w"), names="no broker's warehouse in it")
    usage_error("fleet", names="--warehouse or --schema is required")
    usage_error("fleet", "--warehouse", str(tmp_path / "w"), "--max-age-hours", "0", names="--max-age-hours 0")


def test_nightly_config_file_mistakes(configs: Path, tmp_path: Path) -> None:
    usage_error("nightly", "--config", str(tmp_path / "nope.toml"), names=f"--config {tmp_path / 'nope.toml'}")
    usage_error("nightly", "--config", str(configs / "bad.toml"), names=f"--config {configs / 'bad.toml'}: "
                                                                       "invalid TOML")
    usage_error("nightly", "--config", str(configs / "no-output.toml"), names="--warehouse or --schema")


# -------------------------------------------------------------------------------- the other endings


@pytest.mark.parametrize("args", [["--version"], ["dump", "--version"]])
def test_version(args: list[str]) -> None:
    code, out, err, sessions = kafkalog(*args)
    assert (code, out, err, sessions) == (0, f"kafkalog {__version__}\n", "", [])


def test_help() -> None:
    code, out, err, _ = kafkalog("--help")
    assert code == 0 and err == "" and "exit codes:" in out and "--remote URL" in out
    code, out, _, _ = kafkalog("validate", "--help")
    assert code == 0 and "--junit" in out and "--quiet" in out


def test_dump_into_head_ends_quietly() -> None:
    # several copies: more than a pipe's buffer, so the writer really meets the closed pipe
    cmd = (f"{sys.executable} -m kafkalog_spark.cli dump --deep-iteration --print-data-log "
           + " ".join([str(SEGMENT)] * 6) + " | head -1; exit ${PIPESTATUS[0]}")
    done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Dumping {SEGMENT}\n"
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr and "Exception" not in done.stderr


def test_global_options_before_and_after_the_command() -> None:
    for args in (["--quiet", "dump", str(SEGMENT)], ["dump", str(SEGMENT), "--quiet", "--debug"]):
        code, out, err, _ = kafkalog(*args)
        assert code == 0 and out.startswith(f"Dumping {SEGMENT}\n") and err == ""


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    code, _, err, _ = kafkalog("--debug", "dump", str(tmp_path / "nope.log"))
    assert code != 0 and "Traceback" in err and "UsageError" in err


def test_internal_error_is_one_line_and_exit_3(monkeypatch, capsys) -> None:
    def boom(*args, **kwargs):
        raise RuntimeError("boom\nat some.jvm.Frame")

    monkeypatch.setattr("kafkalog_spark.dump.run_dump", boom)
    assert main(["dump", str(SEGMENT)]) == 3
    err = capsys.readouterr().err
    assert err == ("kafkalog dump: internal error: RuntimeError: boom (run with --debug for the traceback)\n")
    with pytest.raises(RuntimeError):
        main(["dump", str(SEGMENT), "--debug"])


def test_interrupt_is_exit_130(monkeypatch, capsys) -> None:
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("kafkalog_spark.dump.run_dump", interrupted)
    assert main(["dump", str(SEGMENT)]) == 130
    assert capsys.readouterr().err == "kafkalog dump: interrupted\n"


# ----------------------------------------------------------------------------------- output conventions


def test_progress_only_on_a_terminal_or_verbose(capsys) -> None:
    try:
        output.set_progress()
        output.progress("hidden")  # pytest's stderr is no terminal
        output.set_progress(verbose=True)
        output.progress("shown")
        output.set_progress(quiet=True)
        output.progress("hidden")
    finally:
        output.set_progress()
    assert capsys.readouterr() == ("", "kafkalog: shown\n")


def test_times_for_people_are_iso_utc_with_milliseconds(capsys) -> None:
    import datetime as dt

    assert output.iso_utc(1795262400000) == "2026-11-21T12:00:00.000Z"
    assert output.iso_utc(dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)) == "2026-11-21T12:00:00.000Z"
    assert output.iso_utc(None) is None and output.iso_utc(-1) == "-1"
    assert output.iso_utc(2**63 - 1) == str(2**63 - 1)  # "never": past year 9999
    output.print_table([{"topic": "t", "maxTimestamp": 1795262400000, "retentionMs": 1000}],
                       ["topic", "maxTimestamp", "retentionMs"])
    assert capsys.readouterr().out.splitlines()[1].split() == ["t", "2026-11-21T12:00:00.000Z", "1000"]
    output.print_json([{"maxTimestamp": 1795262400000, "at": dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)}])
    assert capsys.readouterr().out == '{"maxTimestamp": 1795262400000, "at": "2026-11-21T12:00:00Z"}\n'


def test_junit_has_a_case_per_check_and_partition() -> None:
    checks = [k.name for k in KINDS.values() if k.source == "validate"]
    finding = {"topic": "a", "partition": 0, "file": "a-0/0.log", "position": 7, "detail": "bad"}
    rows = [finding | {"severity": "error", "check": "batch_crc_invalid"},
            finding | {"severity": "error", "check": "batch_crc_invalid", "position": 9},
            finding | {"severity": "warning", "check": checks[0]}]
    suite = ET.fromstring(junit_xml(rows, [("a", 0), ("b", 1)]))
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases) == 2 * len(checks) + 1
    assert int(suite.get("failures")) == len(suite.findall(".//failure")) == 1
    failed = [c for c in cases if c.find("failure") is not None][0]
    assert (failed.get("classname"), failed.get("name")) == ("a-0", "batch_crc_invalid")
    assert "(and 1 more)" in failed.find("failure").get("message")
    assert [c.find("system-out").text for c in cases if c.find("system-out") is not None] == [
        "warning: a-0/0.log at byte 7: bad"]
    clean = ET.fromstring(junit_xml([], [("a", 0)]))
    assert clean.get("tests") == str(len(checks)) and clean.get("failures") == "0"
    gated = ET.fromstring(junit_xml(rows, [("a", 0)], gate="warning"))
    assert gated.get("failures") == "2"


def test_the_command_line_loads_no_decoder_until_a_command_decodes_in_its_own_process() -> None:
    """A command on Spark decodes in the Python workers, never in the driver: the CLI's process does not load the
    compiled scanners (numba and its compiler, about 130 MiB resident: a polite run's memory cap) until a command
    that decodes in it (dump) runs."""
    probe = ("import sys, kafkalog_spark.cli as cli; before = 'numba' in sys.modules; "
             "cli.main(['-q', 'dump', sys.argv[1]]); print(before, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe, str(SEGMENT)], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "False True", out.stdout[-500:]
