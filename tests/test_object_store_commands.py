"""Every command over every corpus in an S3-compatible store (moto's server on loopback, behind the counting
proxy) prints what it prints over the local copies, on the local engine (Sail, in the client's process), and never
the secret. About 2 minutes, in the stores suite (make test-stores, make test-integration); the nightly job and
`stats` over the store on Spark are in tests/test_object_store_spark.py, the source's views on every corpus in
tests/test_object_store.py.
"""

from __future__ import annotations

import pytest

from tests.helpers.object_store import CORPORA, SECRET, s3_server
from tests.test_object_store_spark import run_client

pytestmark = pytest.mark.stores


@pytest.fixture(scope="module")
def commands(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("s3-commands")
    with s3_server(work) as s3:
        result, _ = run_client("commands", work, CORPORA, s3)
    return result


@pytest.mark.parametrize("command", ["stats", "validate", "retention-plan", "compaction-preview",
                                     "consumer-positions", "open-transactions", "catalog-checks", "dump"])
def test_every_command_over_the_store_prints_what_it_prints_locally(commands: dict, command: str) -> None:
    run = commands["commands"][command]
    assert run["codes"][0] == run["codes"][1] and run["codes"][0] in (0, 1), run["stderr"]
    assert run["difference"] is None
    assert run["lines"] > 0


def test_no_secret_in_any_output(commands: dict) -> None:
    everything = "\n".join(commands["outputs"])
    assert SECRET not in everything and len(everything) > 100_000
