"""Shared fixtures: the committed corpus written by real Kafka brokers, and one local Spark session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.corpus import SAMPLES


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
