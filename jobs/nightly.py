"""Nightly kafkalog-spark job, for spark-submit or a Databricks job (Python script task): ``kafkalog nightly`` in the
session spark-submit configures (its master, Delta's jars and confs), same options, output and exit codes.

    spark-submit --packages io.delta:delta-spark_4.2_2.13:4.4.0 \
      --conf spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension \
      --conf spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog \
      jobs/nightly.py --config conf/nightly.toml [--log-dir DIR ...] [--warehouse PATH] [--snapshot-id ID]
"""

import sys

from kafkalog_spark.cli import nightly_job

if __name__ == "__main__":
    sys.exit(nightly_job())
