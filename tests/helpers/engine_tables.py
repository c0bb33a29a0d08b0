"""The tables both engines compute, as sorted JSON rows: the local engine's test (tests/test_local_engine.py)
computes them with Spark in its own process and with the local engine in a child process running this module
(a process holds either a classic or a Spark Connect session, never both).

Run as ``python -m tests.helpers.engine_tables OUT DIRS TOGETHER [ENGINE]`` (DIRS and TOGETHER: JSON lists)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

AS_OF = 1_900_000_000_000  # a fixed "now" for the plans (2030-03-17), so both engines see the same time


def _plain(v: object) -> object:
    """A value as JSON keeps it; a datetime (handed back naive, in this process's zone) as its UTC instant."""
    if isinstance(v, dt.datetime):
        return v.astimezone(dt.UTC).isoformat()
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in sorted(v.items())}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, bytes | bytearray):
        return v.hex()
    return v


def _rows(df) -> list[str]:
    """A DataFrame's rows as sorted JSON lines (row order is neither engine's promise)."""
    return sorted(json.dumps(_plain(r.asDict(recursive=True)), sort_keys=True) for r in df.collect())


def engine_tables(spark, log_dirs: list[str], together: list[str]) -> dict[str, list[str]]:
    """The tables both engines compute: per log dir (as the commands run them) the segment statistics, the
    validation findings, the retention plan and the compaction preview; and the index findings of ``together``
    read as one (partitions in several dirs)."""
    from kafkalog_spark.analysis.compaction import preview_log_dirs
    from kafkalog_spark.analysis.index_validation import index_findings, log_dirs_of, read_validation_views, validate
    from kafkalog_spark.analysis.retention import retention_plan
    from kafkalog_spark.analysis.segment_stats import segment_stats
    from kafkalog_spark.source import read_views as source_views

    out: dict[str, list[str]] = {}
    for d in log_dirs:
        v = source_views(spark, d, ("segments", "batches", "record_stats", "partition_files"))
        out[f"segment_stats {d}"] = _rows(segment_stats(v["segments"], v["batches"], v["record_stats"]))
        out[f"retention_plan {d}"] = _rows(retention_plan(v["segments"], v["batches"], v["partition_files"],
                                                          None, AS_OF))
        preview = preview_log_dirs(spark, [d], None, AS_OF, simulate_all=True)
        out[f"compaction_preview.partitions {d}"] = _rows(preview.partitions)
        out[f"compaction_preview.segments {d}"] = _rows(preview.segments)
        preview.unpersist()
    out["validate"] = _rows(validate(spark, log_dirs))
    views = read_validation_views(spark, together, records=True)
    out["index_findings together"] = _rows(index_findings(spark, views, log_dirs_of(together)))
    return out


def main(out: str, dirs: str, together: str, engine: str = "local") -> None:
    """The tables of one engine into the JSON file ``out`` (``spark``: to compare by hand, outside pytest)."""
    if engine == "local":
        from kafkalog_spark.session.sail import sail_session

        spark = sail_session()
    else:
        from kafkalog_spark.session import local_session

        spark = local_session("kafkalog-local-engine-test", delta=False)
    Path(out).write_text(json.dumps(engine_tables(spark, json.loads(dirs), json.loads(together))))


if __name__ == "__main__":
    main(*sys.argv[1:])
