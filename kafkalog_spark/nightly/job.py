"""The nightly job's run: every table computed, then written as one snapshot into Delta, all-or-nothing.

The job only wires configuration (:mod:`.config`) to the tables (:mod:`.pipeline`, functions of DataFrames) and to
the snapshot writer (:mod:`kafkalog_spark.delta`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import DataFrame, SparkSession

from ..delta import (
    MANIFEST,
    RUNS,
    append_rows,
    begin,
    clean_up,
    commit,
    new_run_id,
    read_table,
    replaced_runs,
    run_rows,
)
from ..log.files import expand_paths
from ..log.object_stores import configure, file_cache, is_object_store
from ..source.options import parse_size
from .config import NightlyConfig, topic_configs, what_if_configs
from .incremental import CACHE_TABLES, Reuse
from .pipeline import CLUSTER_TABLES, DIR_TABLES, TABLES, analysed, cluster_tables


def run(spark: SparkSession, config: NightlyConfig, now: Callable[[], dt.datetime] | None = None, *,
        after_commit: Callable[[str], None] | None = None,
        progress: Callable[[str], None] | None = None) -> dict[str, DataFrame]:
    """Compute every table and write them as one snapshot, all-or-nothing; returns the snapshot's tables as
    readers see them (:func:`kafkalog_spark.delta.read_table`).

    All log dirs are read and analysed in one job; each row says its log dir (``logDir``): several brokers' log dirs
    hold replicas of the same partitions, which must not be merged, and every analysis keys partitions by log dir
    (:mod:`kafkalog_spark.analysis.grouping_keys`). The rows are appended to every table (:data:`PARALLEL_WRITES`
    tables at once), then the manifest commit makes the snapshot visible, then the rows of runs it replaces are
    removed (see :mod:`kafkalog_spark.delta.snapshots`). A run killed anywhere leaves the previous state visible;
    running the same snapshot id again completes it. ``after_commit`` is called with the name of each Delta commit
    made, from the thread that made it (``runs`` first, the table's name, ``snapshots``, ``clean-up <table>``: that
    one also when there was nothing to remove), and with ``report`` once the report (``config.report``) is written:
    it is written last, from the committed snapshot. ``progress`` is told, once planned, what the run decodes and
    what it reads back (:mod:`.incremental`)."""
    started = (now or (lambda: dt.datetime.now(dt.UTC)))()
    # a configured id was checked with the config (NightlyConfig); the default, a UTC time, is a valid one
    snapshot_id = config.snapshot_id or started.strftime("%Y-%m-%dT%H:%M:%SZ")
    names = [config.table_names[name] for name in TABLES]
    kept = list(CACHE_TABLES)  # what the next run reads back: the segments and the rows decoded of them
    done = after_commit or (lambda _: None)
    run_id = new_run_id()
    configure(config.store)  # log dirs in an object store: listed here, read by the tasks with these options
    configs = topic_configs(config)  # a bad config file or value fails here, before any work
    alternative = what_if_configs(config, configs)
    log_dirs = expand_paths(config.log_dirs)  # globs and file:/dbfs:/Volumes URIs, as the readers take them
    if not log_dirs:
        raise ValueError("nightly: no log dirs to read")
    where = config.location

    def append(tables: dict[str, DataFrame], name: str) -> Callable[[], None]:
        def write() -> None:
            append_rows(tables[name], where, config.table_names.get(name, name), snapshot_id, started, run_id)
            done(name)
        return write

    def clean(table: str, replaced: bool) -> Callable[[], None]:
        def remove_other_runs() -> None:
            if replaced:  # else no other run of the snapshot was recorded: the table holds none of its rows
                clean_up(spark, where, table, snapshot_id, run_id)
            done(f"clean-up {table}")
        return remove_other_runs

    # the small files several views read (indexes, checkpoints) fetched once from a store, where a local session's
    # processes can share them
    with file_cache(any(is_object_store(d) for d in log_dirs) and _all_on_this_host(spark)):
        begin(spark, where, snapshot_id, started, run_id, [*names, *kept])  # before any table: a killed run is recorded
        done(RUNS)
        reuse = Reuse(spark, where, snapshot_id, parse_size(config.max_split_bytes, "max_split_bytes"),
                      full=config.full)
        with analysed(spark, log_dirs, started, configs, alternative, include_internal=config.include_internal,
                      max_split_bytes=config.max_split_bytes, reuse=reuse, polite=config.polite) as tables:
            if progress:
                progress(_decoding(reuse.counts))
            _in_parallel([append(tables, name) for name in (*DIR_TABLES, *kept)])
        # Then each cluster's dirs together, from this run's own log_offsets rows: the data is not decoded again.
        offsets = run_rows(spark, where, config.table_names["log_offsets"], snapshot_id, run_id)
        tables = cluster_tables(spark, log_dirs, offsets, int(started.timestamp() * 1000), config.include_internal)
        _in_parallel([append(tables, name) for name in CLUSTER_TABLES])
        # only once every table's rows are in
        commit(spark, where, snapshot_id, started, run_id, [*names, *kept], reuse.counts)
        done(MANIFEST)
        replaced = bool(replaced_runs(spark, where, snapshot_id, run_id))
        _in_parallel([clean(table, replaced) for table in [*names, *kept]])
        tables = {name: read_table(spark, config.location, table, snapshot_id) for name, table in zip(TABLES, names,
                                                                                                        strict=True)}
        if config.report:
            from ..report import write_report

            write_report(tables, config.report)  # from the committed snapshot, as any reader of the tables sees it
            done("report")
    return tables


def _decoding(counts: dict[str, int]) -> str:
    """What a run decodes and reads back, in a line."""
    return (f"decoding {counts['segmentsDecoded']} segment(s), {counts['bytesDecoded'] / 1e6:,.1f} MB; "
            f"{counts['segmentsReused']} unchanged ({counts['bytesReused'] / 1e6:,.1f} MB) read back from earlier "
            "snapshots")


def _all_on_this_host(spark: SparkSession) -> bool:
    """Whether the session's driver and executors run on this host: a classic session with a local master."""
    from ..session import is_connect

    return not is_connect(spark) and spark.sparkContext.master.startswith("local")


# Delta commits the job makes at once. Each table's write is a Spark job and a commit to a table of its own, so
# they do not conflict; on a few cores most of a small table's time is the driver's (planning, the Delta log),
# which the other writes' tasks overlap.
PARALLEL_WRITES = 4


def _in_parallel(writes: Sequence[Callable[[], None]], threads: int = PARALLEL_WRITES) -> None:
    """Run ``writes`` on ``threads`` threads, started in their order. The first failure cancels the writes not
    yet started and is raised once the started ones have ended (each ends in a whole commit or none)."""
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="kafkalog-write") as pool:
        futures = [pool.submit(write) for write in writes]
        try:
            for future in futures:
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise
