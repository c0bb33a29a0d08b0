"""Damaged copies dumped by Kafka's own DumpLogSegments and by `kafkalog dump`: the truncated-tail and
zero-tail behaviour must match Kafka's (the committed goldens only cover files as Kafka left them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafkalog_spark.dump import DumpOptions, dump_log_file
from kafkalog_spark.log.offset_index import OffsetIndex

SRC = Path(__file__).resolve().parent.parent / "data" / "samples" / "broker" / "codec-gzip-0"

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="java is needed to run kafka-dump-log")


@pytest.fixture(scope="module")
def kafka():
    from tests.harness.broker import KafkaDistribution

    return KafkaDistribution().ensure()


def _ours(path: Path) -> list[str]:
    return "\n".join(dump_log_file(str(path), DumpOptions(deep_iteration=True, print_data_log=True))).split("\n")


def _theirs(kafka, path: Path, *flags: str) -> list[str]:
    from tests.harness.broker import dump_log

    out, _ = dump_log([path], *flags, dist=kafka)
    return out.removesuffix("\n").split("\n")[1:]  # without "Dumping <path>"


@pytest.mark.parametrize("cut", [1, 16, 61, 300])
def test_truncated_tail_matches_kafka(kafka, tmp_path: Path, cut: int) -> None:
    part = tmp_path / SRC.name
    shutil.copytree(SRC, part)
    log = part / "00000000000000000000.log"
    log.write_bytes(log.read_bytes()[:-cut])
    theirs = _theirs(kafka, log, "--deep-iteration", "--print-data-log")
    assert theirs[-1].startswith("Found ") and theirs[-1].endswith(f"invalid bytes at the end of {log.name}")
    assert _ours(log) == theirs


def test_zero_tailed_index_matches_kafka(kafka, tmp_path: Path) -> None:
    part = tmp_path / SRC.name
    shutil.copytree(SRC, part)
    index = part / "00000000000000000000.index"
    index.write_bytes(index.read_bytes() + bytes(8 * 64))  # preallocated slots after an unclean shutdown
    theirs = _theirs(kafka, index, "--deep-iteration")
    ours = OffsetIndex.read(str(index)).dump_lines()
    assert ours == theirs and len(ours) > 1
