"""A Spark session for scripts, the CLI and tests: local (classic) or over Spark Connect, with Delta, Python
filter pushdown and the venv's Python, quiet unless asked.

On a cluster (spark-submit, Databricks, a shared or serverless cluster over Connect) use the session you
are given and call :func:`kafkalog_spark.register` on it instead.
"""

from __future__ import annotations

import os
import sys

from pyspark.sql import DataFrame, SparkSession

from ..delta.packages import delta_spark_confs
from ..logging_config import quiet_python_logging, quiet_spark_confs
from .launch import launch_quietly

PACKAGES = "spark.jars.packages"
# Settings a session of ours needs; all are runtime SQL settings, so they can be set over Connect too.
RUNTIME_CONFIGS = {
    "spark.sql.python.filterPushdown.enabled": "true",  # the source prunes segments with pushed filters
    "spark.sql.session.timeZone": "UTC",
}

# A Spark on one machine (local sessions, and the Connect server the tests start): sizes for two cores, not a cluster.
LOCAL_ENGINE_CONFS = {
    "spark.ui.enabled": "false",
    # With no UI, the plans and metrics Spark's SQL listener keeps of past queries (1,000 by default) only
    # fill the driver's heap: the nightly job runs hundreds of queries
    "spark.sql.ui.retainedExecutions": "50",
    "spark.sql.shuffle.partitions": "4",
    # Delta's default of 50 partitions to rebuild a table's state is for clusters; one machine wants few
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.python.worker.reuse": "true",
    # the tasks' workers forked with the decoder loaded, not each loading it on its first split (worker_daemon)
    "spark.python.daemon.module": "kafkalog_spark.session.worker_daemon",
    # PySpark records each DataFrame call's Python call site in the JVM for error messages: four calls into the JVM
    # and a walk of the Python stack per function call. The analyses build their columns with thousands of calls:
    # that was seconds of every job's driver time (its errors still name the failing expression).
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect session (no JVM, no SparkContext on this side)."""
    from pyspark.sql.utils import is_remote

    return is_remote() or type(spark).__module__.startswith("pyspark.sql.connect")


def parallelism(spark: SparkSession) -> int | None:
    """How many tasks ``spark`` runs at once (Spark's default parallelism: a local master's threads, a cluster's
    executors' cores); None over Spark Connect, whose client cannot ask."""
    return None if is_connect(spark) else spark.sparkContext.defaultParallelism


def collected(df: DataFrame) -> DataFrame:
    """``df``'s rows collected once (one Spark job), as a DataFrame of local data with the same schema: for a small
    view that many queries read. Spark answers a query that filters and selects local data, and collects it, on the
    driver, without a job; joined with a large DataFrame, local data is broadcast."""
    return df.sparkSession.createDataFrame(df.toArrow(), df.schema)


def classic_session_running() -> bool:
    """Whether this process already runs a classic Spark session (a JVM of its own). pyspark switches its
    functions to Spark Connect for the whole process once a Connect session starts, so such a process cannot
    also use the local engine (:mod:`.sail`) or another Connect session."""
    from pyspark import SparkContext
    from pyspark.sql.utils import is_remote

    return not is_remote() and SparkContext._active_spark_context is not None


def launched_by_spark_submit() -> bool:
    """Whether spark-submit started this process: PySpark then joins the JVM spark-submit launched (its address in
    ``PYSPARK_GATEWAY_PORT``), which holds the master, the jars (Delta's, from ``--packages``) and the confs given
    on its command line."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def where_it_runs(spark: SparkSession) -> str:
    """The session's master as a progress line says it: ``local[2]``, ``spark://host:7077``, ``Spark Connect``."""
    return "Spark Connect" if is_connect(spark) else spark.sparkContext.master


def local_session(app_name: str = "kafkalog", master: str = "local[*]", *, delta: bool = True,
                  warehouse: str | None = None, extra: dict[str, str] | None = None, remote: str | None = None,
                  quiet: bool = True, starting: dict[str, str] | None = None) -> SparkSession:
    """Build (or get) a session wired for kafkalog-spark: a local one, or with ``remote`` a Spark Connect
    session (``sc://host:port`` for a running server, ``local[N]`` to start one in this process). Under
    spark-submit (:func:`launched_by_spark_submit`) or when this process already runs a classic session, that
    session, as it was configured, with our runtime settings. ``starting``: settings only a session this call starts
    in this process takes (the driver's memory, how Python workers start), left out otherwise."""
    if remote is None and (launched_by_spark_submit() or classic_session_running()):
        # the session this process was given (spark-submit's, a notebook's, a test's): its master, jars and confs,
        # and its executors' Python (spark.pyspark.python or theirs), which need not be at this driver's path
        spark = SparkSession.builder.getOrCreate()
        for k, v in {**RUNTIME_CONFIGS, **_at_run_time(extra)}.items():
            spark.conf.set(k, v)
        return _registered(spark)
    # Workers must run this interpreter (the venv's), or they miss pyarrow, numba and this package.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    if remote is not None and remote.startswith("sc://"):
        spark = SparkSession.builder.remote(remote).getOrCreate()  # the server has its own static settings
        for k, v in {**RUNTIME_CONFIGS, **_at_run_time(extra)}.items():
            spark.conf.set(k, v)
        return _registered(spark)
    builder = SparkSession.builder.appName(app_name)
    builder = builder.remote(remote) if remote is not None else builder.master(master)
    quiet_python_logging(verbose=not quiet)
    settings = {
        **RUNTIME_CONFIGS,
        **quiet_spark_confs(verbose=not quiet),  # log4j2 and Ivy quiet, no progress bar (unless verbose)
        **LOCAL_ENGINE_CONFS,
    }
    if warehouse:
        settings["spark.sql.warehouse.dir"] = os.path.abspath(warehouse)
    if delta:
        # Delta's JARs for the installed Spark come from Maven Central through spark.jars.packages on first
        # use and are then served from the local Ivy cache (~/.ivy2.5.2), so later runs work offline.
        settings.update(delta_spark_confs())
    extra = dict(extra or {}) | (starting if remote is None and starting else {})
    # packages are joined, not replaced: an s3a:// warehouse's hadoop-aws (warehouse_store) beside Delta's
    packages = [p for p in (settings.get(PACKAGES), extra.pop(PACKAGES, None)) if p]
    settings.update(extra)
    if packages:
        settings[PACKAGES] = ",".join(packages)
    for k, v in settings.items():
        builder = builder.config(k, v)
    if quiet and remote is None:
        launch_quietly({"spark.master": master, "spark.app.name": app_name, **settings})  # no Ivy report
    spark = builder.getOrCreate()
    if not is_connect(spark):
        spark.sparkContext.setLogLevel("ERROR" if quiet else "WARN")
    return _registered(spark)


def _at_run_time(extra: dict[str, str] | None) -> dict[str, str]:
    """``extra`` as a running session takes it: no packages (its JARs are the ones it started with), and Hadoop's
    settings by their own names, which the session's Hadoop configuration reads at run time (``spark.hadoop.``
    is for a session's start only)."""
    return {k.removeprefix("spark.hadoop."): v for k, v in (extra or {}).items() if k != PACKAGES}


def _registered(spark: SparkSession) -> SparkSession:
    from ..source import register

    register(spark)
    return spark
