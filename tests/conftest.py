"""Shared fixtures: the committed corpus written by real Kafka brokers, and one local Spark session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.corpus import SAMPLES

# Every Spark JVM the tests start (this process's session, the child processes', the servers') reads
# tests/spark-conf/spark-defaults.conf, which says why; a SPARK_CONF_DIR given from outside is kept.
SPARK_CONF_DIR = Path(__file__).parent / "spark-conf"
os.environ.setdefault("SPARK_CONF_DIR", str(SPARK_CONF_DIR))


@pytest.fixture(scope="session")
def samples() -> Path:
    return SAMPLES


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    from kafkalog_spark.session import local_session

    session = local_session("kafkalog-tests", master="local[2]",
                            warehouse=str(tmp_path_factory.mktemp("warehouse")))
    yield session
    session.stop()


# The long suites' markers (pyproject.toml): `make test-integration` runs several of them in one pytest process
# (one JVM), so each one's time is summed here from its tests' and printed at the end.
SUITES = ("cluster", "clusters_nightly", "engines", "field", "kill", "long", "many_dirs", "packaging", "stores")
_suite_times: dict[str, dict[str, float]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    suite = next((s for s in SUITES if s in report.keywords), None)
    if suite is None:
        return
    times = _suite_times.setdefault(suite, {"seconds": 0.0, "passed": 0, "failed": 0, "skipped": 0})
    times["seconds"] += report.duration
    if report.when == "call" or report.outcome != "passed":
        times[report.outcome] += 1


def pytest_terminal_summary(terminalreporter) -> None:
    for suite, t in sorted(_suite_times.items()):
        terminalreporter.write_line(f"== suite {suite}: {t['passed']} passed, {t['failed']} failed, "
                                    f"{t['skipped']} skipped in {t['seconds']:.0f} s")
