"""The source's views read without Spark: every view's name, its rows as the Spark source makes them (planning,
then every task), and the problem rows among them."""

from __future__ import annotations

from kafkalog_spark.source.datasource import KafkaLogDataSource

VIEWS = ("records", "batches", "record_stats", "segments", "index", "partition_files")


def view_rows(path: str, view: str, **options: str) -> list[dict]:
    """The rows of ``view`` as the Spark source makes them (planning, then every task), without Spark."""
    source = KafkaLogDataSource({"path": path, "view": view, **options})
    reader = source.reader(source.schema())
    return [row for part in reader.partitions() for batch in reader.read(part) for row in batch.to_pylist()]


def problems(rows: list[dict]) -> list[tuple]:
    return sorted((r["problem"]["kind"], r["problem"]["file"], r["problem"]["detail"], r["topic"], r["partition"],
                   r["logDir"]) for r in rows if r["problem"])
