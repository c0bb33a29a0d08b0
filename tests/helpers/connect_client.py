"""What a user does over Spark Connect, run in its own process (a process holds either a classic or a Connect
session, never both): register the source, read every view, run the nightly job and the Databricks notebook.
Prints one JSON object with what it saw; tests/test_connect.py compares it with the classic engine.

    python -m tests.helpers.connect_client sc://127.0.0.1:15002 <samples dir> <work dir>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

VIEWS = ("records", "batches", "record_stats", "segments", "index", "partition_files")


def main(url: str, samples: str, work: str) -> dict:
    import kafkalog_spark
    from kafkalog_spark import nightly
    from kafkalog_spark.delta import TableLocation
    from kafkalog_spark.kafka_versions import KafkaVersion
    from kafkalog_spark.session import is_connect, local_session

    spark = local_session("kafkalog-connect-test", remote=url)
    kafkalog_spark.register(spark)  # the top-level entry point, as in a notebook (again: idempotent)
    out: dict = {"connect": is_connect(spark)}
    broker = str(Path(samples) / "broker")
    reader = spark.read.format("kafkalog").option("includeInternal", "true")
    out["views"] = {v: reader.option("view", v).load(broker).count() for v in VIEWS}
    committed = (spark.read.format("kafkalog").option("topics", "txn-mixed").option("isolation", "read_committed")
                 .load(broker))
    out["committed_txn_mixed"] = committed.count()
    pushed = reader.option("view", "records").load(broker).where("topic = 'tutorial-segments' and offset >= 96")
    out["pushdown_rows"] = sorted(r.offset for r in pushed.select("offset").collect())

    config = nightly.NightlyConfig(log_dirs=(broker,), location=TableLocation(warehouse=str(Path(work) / "wh")),
                                   snapshot_id="connect", topic_config=str(Path(samples).parent.parent / "conf"
                                                                           / "samples-topics.ini"),
                                   kafka_version=KafkaVersion.V3_9)  # the corpus was written by Kafka 3.9.2
    tables = nightly.run(spark, config)
    out["nightly"] = {name: df.count() for name, df in tables.items()}
    out["summary_topics"] = sorted({r.topic for r in nightly.summary(tables).collect()})

    out["notebook"] = run_notebook(spark, str(Path(samples) / "legacy"))
    return out


def run_notebook(spark, log_dir: str) -> dict:
    from tests.helpers.notebook import NOTEBOOK, DBUtils, cells
    from tests.helpers.report_page import report_numbers

    spark.sql("CREATE DATABASE IF NOT EXISTS kafkalog_nb_connect")
    shown: list = []
    pages: list[str] = []
    env = {"spark": spark, "display": shown.append, "displayHTML": pages.append,
           "dbutils": DBUtils({"log_dirs": log_dir, "schema": "kafkalog_nb_connect", "snapshot_id": "nb"})}
    for cell in cells(NOTEBOOK.read_text()):
        exec(compile(cell, str(NOTEBOOK), "exec"), env)  # noqa: S102 - the notebook is ours
    return {"displayed": len(shown), "tables": len(env["tables"]), "report": report_numbers(pages),
            "summary_topics": sorted({r.topic for r in shown[0].collect()})}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:4])))
