"""Our dump of every `.log` file in the corpus equals kafka-dump-log's own output, line for line."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalog_spark.dump import DumpOptions, dump_log_file

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"
GOLDEN = SAMPLES / "golden"
LOG_GOLDENS = sorted(GOLDEN.rglob("*.log.deep.txt"))


def golden_stdout(path: Path) -> list[str]:
    # split on newlines only: printed payloads may hold other line separators
    # bytes, not read_text(): printed payloads hold carriage returns that universal newlines would change
    return path.read_bytes().decode("utf-8").removesuffix("\n").split("\n")


@pytest.mark.parametrize("golden", LOG_GOLDENS, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_log_dump_matches_kafka_dump_log(golden: Path) -> None:
    relative = golden.relative_to(GOLDEN).as_posix().removesuffix(".deep.txt")
    expected = golden_stdout(golden)
    assert expected[0] == f"Dumping {relative}"
    ours = list(dump_log_file(str(SAMPLES / relative), DumpOptions(deep_iteration=True, print_data_log=True)))
    assert "\n".join(ours).split("\n") == expected[1:]


def test_corpus_has_log_goldens() -> None:
    assert len(LOG_GOLDENS) > 50
