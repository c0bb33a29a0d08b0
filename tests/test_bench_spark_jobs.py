"""The Spark-jobs benchmark's reading of an event log (tests/bench/spark_jobs.py): runs told apart by time, the time
a job was running merged over overlapping jobs, and each job counted for the table its root SQL execution writes."""

from __future__ import annotations

from tests.bench.spark_jobs import summarize

PLAN = ("== Physical Plan ==\nExecute SaveIntoDataSourceCommand (1)\n+- SaveIntoDataSourceCommand (2)\n\n"
        "(1) Execute SaveIntoDataSourceCommand\n\n(2) SaveIntoDataSourceCommand\n"
        "Arguments: org.apache.spark.sql.delta.sources.DeltaDataSource, Map(path=/w/wh/{table}, mode=append)\n")


def _job(job: int, start: float, end: float, root: int | None) -> list[dict]:
    properties = {} if root is None else {"spark.sql.execution.root.id": str(root),
                                          "spark.sql.execution.id": str(root + 100)}
    return [{"Event": "SparkListenerJobStart", "Job ID": job, "Submission Time": int(start * 1000),
             "Properties": properties},
            {"Event": "SparkListenerJobEnd", "Job ID": job, "Completion Time": int(end * 1000)}]


def test_jobs_are_counted_per_run_and_per_table_written() -> None:
    events = [
        {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart", "executionId": 1,
         "physicalPlanDescription": PLAN.format(table="index_findings")},
        {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart", "executionId": 2,
         "physicalPlanDescription": "== Physical Plan ==\nAdaptiveSparkPlan (3)\n"},
        *_job(0, 10.0, 12.0, 1), *_job(1, 11.0, 13.0, 1),  # overlapping: 3 s running, not 4
        *_job(2, 15.0, 16.0, 2), *_job(3, 17.0, 17.5, None),
        *_job(4, 30.0, 31.0, 1),  # the second run's
    ]
    first, second = summarize(events, [(9.0, 20.0), (29.0, 32.0)])
    assert (first["jobs"], first["job_running_s"], first["no_job_s"]) == (4, 4.5, 6.5)
    assert first["by"] == {"write index_findings": [2, 4.0], "other queries (collects, caching, Delta's own)": [2, 1.5]}
    assert (second["jobs"], second["by"]) == (1, {"write index_findings": [1, 1.0]})
