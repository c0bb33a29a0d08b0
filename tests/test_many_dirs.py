"""Fifty log dirs in one job on a small driver heap (``make many-dirs``; minutes, not part of make test).

Each dir is a copy of the same two sample partitions (:mod:`tests.bench.many_dirs`), so the job must give every
dir the same rows, and those of one dir analysed alone: read at once, the copies stay fifty logs. The driver heap
is 512 MiB, half of Spark's default, and the executors share it in local mode.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers.corpus import ROOT

DIRS, HEAP = 50, "512m"

pytestmark = pytest.mark.many_dirs


def _run(job: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "tests.bench.many_dirs", "--job", job, "--dirs", str(DIRS),
                           "--driver-memory", HEAP], capture_output=True, text=True, timeout=1800, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    print(json.dumps(result))  # the figures, for the README (pytest -s)
    return result


def test_the_nightly_job_over_fifty_dirs_gives_each_dir_its_own_rows() -> None:
    r = _run("nightly")
    assert r["log_dirs_in_segment_stats"] == DIRS and r["segment_stats_rows"] == 14 * DIRS
    assert (r["same_rows_in_every_dir"], r["rows_as_one_dir_alone"]) == (True, True)
    assert r["driver_heap_max_mb"] <= 512


def test_validate_over_fifty_dirs_finds_the_same_in_each() -> None:
    r = _run("validate")
    # one stray_temp_file warning per partition: the empty .log.cleaned tests/bench/many_dirs.py leaves in each
    assert (r["same_findings_in_every_dir"], r["findings"], r["errors"]) == (True, 2 * DIRS, 0)
    assert r["driver_heap_max_mb"] <= 512
