"""A local session's tasks run in Python workers forked from :mod:`kafkalog_spark.session.worker_daemon`, the decoder
already loaded: the first task of a fresh session, which decodes nothing, finds the decoder's compiled functions in
its process; with Spark's own daemon it finds none. The planning steps' daemons load nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from kafkalog_spark.session import worker_daemon
from tests.helpers.corpus import ROOT

PROBE = textwrap.dedent("""
    import json, sys
    from kafkalog_spark.session import local_session
    extra = {"spark.python.daemon.module": sys.argv[1]} if len(sys.argv) > 1 else None
    spark = local_session("daemon-test", master="local[1]", delta=False, extra=extra)

    def probe(_):
        import os, sys
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
            parent = f.read().replace(b"\\0", b" ").decode()
        scanners = sys.modules.get("kafkalog_spark.format.compiled_scanners")
        compiled = sum(len(f.overloads) for f in vars(scanners).values() if hasattr(f, "overloads")) if scanners else 0
        yield {"parent": parent, "compiled": compiled}

    print(json.dumps(spark.sparkContext.parallelize([0], 1).mapPartitions(probe).collect()[0]))
""")


def first_task(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", PROBE, *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def result(proc: subprocess.Popen) -> dict:
    import json

    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    return json.loads(out.splitlines()[-1])


def test_the_first_task_of_a_session_finds_the_decoder_loaded() -> None:
    ours, spark_own = first_task(), first_task("pyspark.daemon")  # two fresh sessions at once
    forked, control = result(ours), result(spark_own)
    assert "kafkalog_spark.session.worker_daemon pyspark.worker" in forked["parent"], forked
    assert forked["compiled"] > 0, forked
    # the same probe with Spark's own daemon: the worker has loaded nothing of the decoder
    assert "pyspark.daemon pyspark.worker" in control["parent"] and control["compiled"] == 0, control


@pytest.mark.parametrize(("argv", "loads"), [
    (["worker_daemon", "pyspark.worker"], True),
    (["worker_daemon"], True),  # a Spark that names no worker module runs the tasks' workers
    (["worker_daemon", "pyspark.sql.worker.plan_data_source_read"], False),
    (["worker_daemon", "pyspark.sql.worker.lookup_data_sources"], False),
])
def test_only_the_tasks_daemon_loads_the_decoder(monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                  loads: bool) -> None:
    import pyspark.daemon

    calls: list[str] = []
    monkeypatch.setattr(worker_daemon, "load_decoder", lambda: calls.append("load") or 0)
    monkeypatch.setattr(pyspark.daemon, "manager", lambda: calls.append("manager"))
    worker_daemon.main(argv)
    assert calls == (["load", "manager"] if loads else ["manager"])


def test_a_decoder_that_cannot_load_still_starts_sparks_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    import pyspark.daemon

    def broken() -> int:
        raise ImportError("numba missing")

    started: list[bool] = []
    monkeypatch.setattr(worker_daemon, "load_decoder", broken)
    monkeypatch.setattr(pyspark.daemon, "manager", lambda: started.append(True))
    worker_daemon.main(["worker_daemon", "pyspark.worker"])
    assert started == [True]


def test_the_demo_corpus_it_decodes_is_in_the_package() -> None:
    assert worker_daemon.load_decoder() == len(list(worker_daemon.DEMO_BROKER.glob("*/*.log"))) > 20
