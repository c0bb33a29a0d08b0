"""A local Spark session for scripts, the CLI and tests: Delta, filter pushdown, the venv's Python.

On a cluster (spark-submit, Databricks) use the session you are given and call
:func:`kafkalog_spark.register` on it instead.
"""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

# Delta's JARs come from Maven Central through spark.jars.packages on first use and are then served
# from the local Ivy cache (~/.ivy2.5.2), so later runs work offline.
DELTA_CONFIGS = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


def local_session(app_name: str = "kafkalog", master: str = "local[*]", *, delta: bool = True,
                  warehouse: str | None = None, extra: dict[str, str] | None = None) -> SparkSession:
    """Build (or get) a local session wired for kafkalog-spark."""
    # Workers must run this interpreter (the venv's), or they miss pyarrow, numba and this package.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master)
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        # Delta's default of 50 snapshot partitions is for clusters; a local session wants few
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.python.worker.reuse", "true")
    )
    if warehouse:
        builder = builder.config("spark.sql.warehouse.dir", os.path.abspath(warehouse))
    for k, v in (extra or {}).items():
        builder = builder.config(k, v)
    if delta:
        from delta import configure_spark_with_delta_pip

        for k, v in DELTA_CONFIGS.items():
            builder = builder.config(k, v)
        builder = configure_spark_with_delta_pip(builder)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    from .source import register

    register(spark)
    return spark
