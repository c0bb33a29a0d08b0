"""Nightly kafkalog-spark job, for spark-submit or a Databricks job (Python script task).

    spark-submit --packages io.delta:delta-spark_4.2_2.13:4.4.0 \
      --conf spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension \
      --conf spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog \
      jobs/nightly.py --config conf/nightly.toml [--log-dir DIR ...] [--warehouse PATH] [--snapshot-id ID]
"""

import sys

from kafkalog_spark.nightly import main

if __name__ == "__main__":
    sys.exit(main())
