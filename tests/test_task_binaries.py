"""What a stage ships to its tasks stays small: Spark's runtime Bloom filters, each 1 MiB and serialized into every
task of the stages reading the side they filter, made segment_stats' task binaries 15 to 37 MiB for one small log
dir, and the nightly job's union of three such dirs 110 MiB (a 1 GiB driver ran out of heap serializing it). The
session :func:`kafkalog_spark.source.register` prepares has them off; this watches the sizes Spark itself reports."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import functions as F

# Spark warns of a task binary over TaskSetManager.TASK_SIZE_TO_WARN_KIB (1000 KiB), the size this watches for.
LARGE_TASK_BINARY = "Broadcasting large task binary"


@contextmanager
def dag_scheduler_warnings(spark) -> Iterator[list[str]]:
    """The DAGScheduler's warnings while the block runs, as lines (filled in when it ends). The test session logs
    at ERROR, so the DAGScheduler gets a logger of its own at WARN, writing to a buffer, for the block's time."""
    jvm = spark._jvm
    core = jvm.org.apache.logging.log4j.core
    warn = jvm.org.apache.logging.log4j.Level.WARN
    context = jvm.org.apache.logging.log4j.LogManager.getContext(False)
    config = context.getConfiguration()
    name = "org.apache.spark.scheduler.DAGScheduler"
    assert not config.getLoggers().containsKey(name)  # the shipped log4j2.properties gives it none to restore
    buffer = jvm.java.io.StringWriter()
    layout = core.layout.PatternLayout.newBuilder().withPattern("%m%n").build()
    appender = core.appender.WriterAppender.createAppender(layout, None, buffer, "kafkalog-tests-dag", False, True)
    appender.start()
    logger = core.config.LoggerConfig(name, warn, False)
    logger.addAppender(appender, warn, None)
    config.addLogger(name, logger)
    context.updateLoggers()
    lines: list[str] = []
    try:
        yield lines
    finally:
        config.removeLogger(name)
        context.updateLoggers()
        appender.stop()
        lines += str(buffer.toString()).splitlines()


def test_the_warning_is_seen(spark) -> None:
    # Without this, a capture that saw nothing would pass the test below: a 1.5 MB literal is in every task
    with dag_scheduler_warnings(spark) as warnings:
        spark.range(1).where(F.col("id").cast("string") != F.lit("x" * 1_500_000)).count()
    # Spark names the size: at least the literal's 1.5 MB
    sizes = [float(m[1]) for w in warnings if (m := re.search(rf"{LARGE_TASK_BINARY} with size ([\d.]+) KiB", w))]
    assert sizes and min(sizes) >= 1_500_000 / 1024


def test_segment_stats_tasks_stay_under_spark_s_warning_size(spark, samples: Path) -> None:
    from kafkalog_spark.analysis.segment_stats import segment_stats
    from kafkalog_spark.nightly import read_cached_views

    # The nightly job's cached views: the records without payloads, a projection Spark sizes at ~6e18 bytes.
    views = read_cached_views(spark, [str(samples / "live-copy")])
    try:
        # The job's earlier queries leave the segments view materialized: Spark then knows it is small, what
        # made it the filters' source (status = 'live' its selective predicate)
        views["segments"].count()
        stats = segment_stats(views["segments"], views["batches"], views["record_stats"])
        with dag_scheduler_warnings(spark) as warnings:
            rows = stats.collect()
    finally:
        for view in views.values():
            view.unpersist()
    assert len(rows) == 5  # the copy's segments
    assert [w for w in warnings if LARGE_TASK_BINARY in w] == []  # with the filters: 15.1 to 36.5 MiB
