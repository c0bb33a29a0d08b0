"""Our `kafkalog dump` run as kafka-dump-log is run for a golden (tests/harness/golden.py): the golden modes, the
tool's flags of a mode as DumpOptions, our dump's stdout/stderr/exit code, and the part of the tool's stderr we
print. Shared by the byte-for-byte comparisons with kafka-dump-log (tests/test_dump_fidelity.py,
tests/test_remote_log_metadata_dump.py) and tests/compat/dump_compare.py."""

from __future__ import annotations

import os
from pathlib import Path

from kafkalog_spark.dump import DumpOptions, run_dump
from kafkalog_spark.kafka_versions import KafkaVersion
from tests.harness.golden import mode_flags

MODES = ("deep", "verify", "sanity", "head")


def options(rel: str, mode: str, version: KafkaVersion) -> DumpOptions:
    flags = mode_flags(Path(rel), mode)
    max_bytes = int(flags[flags.index("--max-bytes") + 1]) if "--max-bytes" in flags else 2**31 - 1
    return DumpOptions(deep_iteration="--deep-iteration" in flags, print_data_log="--print-data-log" in flags,
                       kafka_version=version, skip_record_metadata="--skip-record-metadata" in flags,
                       max_bytes=max_bytes, verify_index_only="--verify-index-only" in flags,
                       index_sanity_check="--index-sanity-check" in flags)


def ours(root: Path, files: list[str], opts: DumpOptions) -> tuple[bytes, str, int]:
    """stdout (bytes), stderr (absolute paths made relative to `root`, as the goldens have them), exit code."""
    out: list[str] = []
    err: list[str] = []
    cwd = os.getcwd()
    os.chdir(root)
    try:
        code = run_dump(files, opts, out.append, err.append)
    finally:
        os.chdir(cwd)
    return "".join(f"{line}\n" for line in out).encode(), "".join(f"{line}\n" for line in err).replace(
        f"{root}/", ""), code


def theirs_stderr(path: Path) -> str:
    err = path.read_bytes().decode() if path.exists() else ""
    if err.startswith('Exception in thread "main" '):
        return err.split("\n", 1)[0] + "\n"  # the Java stack frames are not ours to print
    return err
