"""Spark's Python daemon with the decoder loaded before it forks a task's worker.

Spark starts one daemon per kind of Python worker and forks every worker of that kind from it
(``spark.python.daemon.module``; the default is :mod:`pyspark.daemon`). A worker forked from the default daemon
imports the decoder, numba and its compiled functions (from numba's on-disk cache) when its first split is decoded:
about a second of that task, once per worker, and a run starts many workers (a coalesced task reads each split of
the source in a worker of its own; a polite run's workers end with their task). This daemon decodes the segments of
the package's demo corpus (real broker files: plain, zstd and control batches, transactions, a compacted topic, the
metadata log) once, through the source's task path, then runs Spark's own daemon: each task's worker is forked
with the decoder ready, and shares those pages with the daemon.

Only the tasks' daemon (its worker module ``pyspark.worker``) loads it: the daemons of the Python data source's
planning steps never decode. A local session of ours sets it (:data:`~kafkalog_spark.session.LOCAL_ENGINE_CONFS`); on
a cluster, ``spark.python.daemon.module=kafkalog_spark.session.worker_daemon`` does the same where the package is
installed on the executors.
"""

from __future__ import annotations

import sys
from pathlib import Path

DEMO_BROKER = Path(__file__).resolve().parent.parent / "demo" / "broker"
TASK_WORKER = "pyspark.worker"  # the worker module of the tasks' daemon (Spark passes it as the first argument)


def load_decoder() -> int:
    """Read the demo corpus's decoded view as a task reads it (the source's own splits and task path: both views of
    every `.log` and KRaft snapshot, the records' aggregates, the aborted transactions); returns how many splits were
    read. Every compiled function a decode of plain and zstd batches calls is then loaded (lz4's, gzip's and snappy's
    codecs load on a worker's first batch of theirs)."""
    from ..schemas import arrow_schema
    from ..source.filters import Pushdown
    from ..source.options import SourceOptions
    from ..source.planning import plan_splits
    from ..source.task_reader import read_splits
    from ..source.views import DECODED_VIEW, view_schema

    opts = SourceOptions(paths=(str(DEMO_BROKER),), view=DECODED_VIEW, include_internal=True)
    splits = plan_splits(opts, Pushdown())
    for _ in read_splits(splits, opts, Pushdown(), arrow_schema(view_schema(DECODED_VIEW))):
        pass
    return len(splits)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] == TASK_WORKER:
        try:
            load_decoder()
        except Exception:  # noqa: BLE001 - only a head start: a worker that decodes meets the same error and reports it
            pass
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main(sys.argv)
