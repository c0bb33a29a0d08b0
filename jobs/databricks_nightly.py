# Databricks notebook source
# MAGIC %md
# MAGIC # kafkalog-spark nightly
# MAGIC Reads broker log dirs (copied to DBFS, a Volume or object storage), writes the nightly tables and shows them.
# MAGIC Runs on a classic cluster and over Spark Connect (shared and serverless clusters).

# COMMAND ----------

# MAGIC %pip install kafkalog-spark

# COMMAND ----------

dbutils.widgets.text("log_dirs", "/Volumes/main/kafka/logs/broker-1")  # noqa: F821 - Databricks global
dbutils.widgets.text("schema", "main.kafkalog")  # noqa: F821
dbutils.widgets.text("snapshot_id", "")  # noqa: F821
dbutils.widgets.dropdown("kafka_version", "4.x", ["4.x", "3.9"])  # noqa: F821 - whose config rules apply

# COMMAND ----------

import kafkalog_spark  # noqa: E402
from kafkalog_spark import nightly  # noqa: E402
from kafkalog_spark.delta import TableLocation  # noqa: E402
from kafkalog_spark.kafka_versions import parse_kafka_version  # noqa: E402

kafkalog_spark.register(spark)  # noqa: F821 - the notebook's session (classic or Spark Connect)
catalog, _, schema = dbutils.widgets.get("schema").rpartition(".")  # noqa: F821
config = nightly.NightlyConfig(
    log_dirs=tuple(p.strip() for p in dbutils.widgets.get("log_dirs").split(",")),  # noqa: F821
    location=TableLocation(catalog=catalog or None, schema=schema),
    snapshot_id=dbutils.widgets.get("snapshot_id") or None,  # noqa: F821
    kafka_version=parse_kafka_version(dbutils.widgets.get("kafka_version")),  # noqa: F821
)
tables = nightly.run(spark, config)  # noqa: F821

# COMMAND ----------

display(nightly.summary(tables))  # noqa: F821

# COMMAND ----------

# MAGIC %md
# MAGIC The report of the snapshot: the page `kafkalog report` writes (summary, segment timelines, retention forecast,
# MAGIC compaction, findings), inline.

# COMMAND ----------

from kafkalog_spark.report import report_html  # noqa: E402

displayHTML(report_html(tables))  # noqa: F821 - Databricks global

# COMMAND ----------

for name, df in tables.items():
    print(name)
    display(df.limit(100))  # noqa: F821
