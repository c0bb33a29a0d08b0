"""Which Delta Lake JARs pair with the running Spark, for ``spark.jars.packages``.

Since Delta 4.1 each release publishes one artifact per Spark minor, ``io.delta:delta-spark_<minor>_2.13``,
compiled against that Spark (delta-spark's own ``configure_spark_with_delta_pip`` names them the same
way). A JAR built for another Spark minor fails at run time, so the artifact follows the Spark version
and not the version of the ``delta-spark`` Python package. A Databricks runtime ships Delta already:
these settings are for sessions that start their own JVM.
"""

from __future__ import annotations

import re

# Spark minor -> Delta artifact. Sources: delta-spark 4.4.0 on PyPI (Requires-Dist pyspark>=4.0.1,<=4.2.0)
# and each artifact's POM on Maven Central, whose provided org.apache.spark:spark-sql_2.13 is the Spark it
# was built against (noted per line). All resolve on Maven Central; 4.4.1's JARs are not published there.
DELTA_FOR_SPARK = {
    "4.0": "io.delta:delta-spark_4.0_2.13:4.4.0",  # spark-sql 4.0.1
    "4.1": "io.delta:delta-spark_4.1_2.13:4.4.0",  # spark-sql 4.1.0
    "4.2": "io.delta:delta-spark_4.2_2.13:4.4.0",  # spark-sql 4.2.0
}

DELTA_SQL_CONFS = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    # Delta 3.3+ lists a small table's files in each commit's checksum (.crc), which only the next commit and a
    # cross-check read: building the list is a Spark job at each table's creation and after a schema change, and
    # where the JVM's time zone is not UTC (a broker host's, often) Delta checks the list against the table's state
    # after every commit, two jobs more per append. The checksum keeps its counts and sizes without it (the list is
    # optional in Delta's protocol); its readers, the next commit included, do without.
    "spark.databricks.delta.allFilesInCrc.enabled": "false",
}


class NoDeltaForSpark(ValueError):
    """No Delta Lake release in the table pairs with this Spark version."""


def spark_minor(spark_version: str) -> str:
    """``"4.1"`` from ``"4.1.3"``, ``"4.1.0-SNAPSHOT"`` or ``"4.1.0.dev0"``."""
    match = re.match(r"\s*(\d+)\.(\d+)", spark_version)
    if not match:
        raise NoDeltaForSpark(f"cannot read a Spark version from {spark_version!r}")
    return f"{match[1]}.{match[2]}"


def delta_maven_coordinates(spark_version: str) -> str:
    """The Maven coordinates of the Delta JAR built for ``spark_version`` (e.g. ``"4.2.0"``)."""
    coordinates = DELTA_FOR_SPARK.get(spark_minor(spark_version))
    if coordinates is None:
        raise NoDeltaForSpark(
            f"no Delta Lake release pairs with Spark {spark_version}: kafkalog-spark knows Delta for Spark "
            f"{', '.join(DELTA_FOR_SPARK)}. Install one of those (pip install 'kafkalog-spark[spark]'), or give "
            "the session Delta yourself (spark.jars.packages) and build it without kafkalog's Delta settings.")
    return coordinates


def delta_spark_confs(spark_version: str | None = None) -> dict[str, str]:
    """The settings that give a new session Delta: its JARs (for ``spark_version``, default: the installed
    pyspark's) and its SQL extension and catalog. ``spark.jars.packages`` replaces any value set before:
    join other packages to it with a comma."""
    if spark_version is None:
        import pyspark

        spark_version = pyspark.__version__
    return {"spark.jars.packages": delta_maven_coordinates(spark_version), **DELTA_SQL_CONFS}
