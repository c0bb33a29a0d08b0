"""The nightly job's run: every table computed, then written as one snapshot into Delta, all-or-nothing.

The job only wires configuration (:mod:`.config`) to the tables (:mod:`.pipeline`, functions of DataFrames) and to
the snapshot writer (:mod:`kafkalog_spark.delta`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace

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
from ..session.threads import in_parallel
from ..source.cluster_configs import read_cluster_configs
from ..source.options import parse_size
from .config import NightlyConfig, topic_configs, what_if_configs
from .fleet import (
    INPUT_TABLES,
    INPUTS,
    MEMBERS,
    SNAPSHOT_PREFIX,
    STATE_VIEWS,
    NoFleet,
    broker_inputs,
    broker_label,
    broker_location,
    clusters_of,
    fleet_by_age,
    fleet_tables,
    members_table,
    stored_cluster_tables,
)
from .incremental import CACHE_TABLES, Reuse
from .pipeline import CLUSTER_TABLES, DIR_TABLES, TABLES, analysed, cluster_tables, log_dir_brokers


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
    what it reads back (:mod:`.incremental`). With ``config.fleet`` the run also stores what the fleet step reads
    (:mod:`.fleet`), and its default snapshot id names its broker."""
    started = (now or (lambda: dt.datetime.now(dt.UTC)))()
    configure(config.store)  # log dirs in an object store: listed here, read by the tasks with these options
    configs = topic_configs(config)  # a bad config file or value fails here, before any work
    alternative = what_if_configs(config, configs)
    log_dirs = expand_paths(config.log_dirs)  # globs and file:/dbfs:/Volumes URIs, as the readers take them
    if not log_dirs:
        raise ValueError("nightly: no log dirs to read")
    brokers = log_dir_brokers(log_dirs) if config.fleet else {}
    if config.fleet:  # the broker's own warehouse in the fleet's: no other broker writes its tables
        config = replace(config, location=broker_location(config.location, broker_label(brokers)))
    # a configured id was checked with the config (NightlyConfig); the default, a UTC time, is a valid one
    snapshot = _Snapshot(spark, config, config.snapshot_id or _default_id(started, brokers), started, after_commit)
    kept = [*CACHE_TABLES, *(INPUT_TABLES if config.fleet else ())]  # for the next run, and for the fleet step
    options = {"includeInternal": str(config.include_internal).lower()}

    def fleet_inputs(views: dict[str, DataFrame], replica_records: DataFrame | None,
                     _tables: dict[str, DataFrame]) -> dict[str, DataFrame]:
        return broker_inputs(spark, views, log_dirs, brokers, replica_records, **options)

    def own_cluster_tables(views: dict[str, DataFrame], _replica_records: DataFrame | None,
                           tables: dict[str, DataFrame]) -> dict[str, DataFrame]:
        # each cluster's dirs together, from this run's log_offsets and the views in hand: the data is not decoded
        # again, nor the partition files and the metadata's topics read again
        return cluster_tables(spark, log_dirs, tables["log_offsets"], int(started.timestamp() * 1000),
                              config.include_internal, views=views)

    # the small files several views read (indexes, checkpoints) fetched once from a store, where a local session's
    # processes can share them; the run recorded (before any table: a killed run is recorded) while it reads
    with (file_cache(any(is_object_store(d) for d in log_dirs) and _all_on_this_host(spark)),
          snapshot.beginning([*TABLES, *kept])):
        reuse = Reuse(spark, config.location, snapshot.id, parse_size(config.max_split_bytes, "max_split_bytes"),
                      full=config.full)
        # what the cluster's metadata log records (kafka-configs --alter), as brokers apply it
        if config.metadata_configs:
            configs = read_cluster_configs(spark, log_dirs, configs, dropCache=str(config.polite).lower())
            alternative = alternative and alternative.with_cluster(configs.cluster)
        with analysed(spark, log_dirs, started, configs, alternative, include_internal=config.include_internal,
                      max_split_bytes=config.max_split_bytes, reuse=reuse, polite=config.polite,
                      remote_storage=config.remote_storage,
                      more=fleet_inputs if config.fleet else own_cluster_tables,
                      keep=lambda for_next: snapshot.append(for_next, CACHE_TABLES)) as tables:
            if progress:
                progress(_decoding(reuse.counts))
            # what the run keeps for the next is here too unless it read rows back (then ``keep`` writes it last)
            snapshot.append(tables, [*DIR_TABLES, *(INPUT_TABLES if config.fleet else CLUSTER_TABLES),
                                     *(name for name in CACHE_TABLES if name in tables)])
        if config.fleet:
            # a broker's run for the fleet: each cluster's dirs together from this run's own log_offsets rows and
            # the internal topics' views it stored
            offsets, now_ms = snapshot.rows("log_offsets"), int(started.timestamp() * 1000)
            stored = {view: snapshot.rows(INPUTS[view]) for view in (*STATE_VIEWS, "partition_dirs")}
            snapshot.append(stored_cluster_tables(spark, stored, offsets, clusters_of(brokers), now_ms,
                                                  config.include_internal), CLUSTER_TABLES)
        return snapshot.finish(reuse.counts)


def run_fleet(spark: SparkSession, config: NightlyConfig, now: Callable[[], dt.datetime] | None = None, *,
              after_commit: Callable[[str], None] | None = None,
              progress: Callable[[str], None] | None = None) -> dict[str, DataFrame]:
    """The fleet step (:mod:`.fleet`): every table over the log dirs of every broker that ran with
    ``config.fleet`` into ``config.location``, each log dir as of its broker's latest committed snapshot, written
    as one snapshot (default id ``fleet-<UTC time>``) as :func:`run` writes its own; returns its tables as readers
    see them. A broker whose latest snapshot is older than ``config.fleet_max_age_hours`` is left out (it stopped
    reporting), and ``progress`` names it. The cluster tables are computed as of now (``now``);
    ``config.log_dirs`` is not read."""
    started = (now or (lambda: dt.datetime.now(dt.UTC)))()
    configs = topic_configs(config)
    since = started - dt.timedelta(hours=config.fleet_max_age_hours)
    fleet, stale = fleet_by_age(spark, config.location, since)  # each broker's manifest read once
    left_out = ", ".join(f"{label} (latest snapshot {at:%Y-%m-%d %H:%M:%S} UTC)" for label, at in stale)
    if not fleet:
        raise NoFleet(f"fleet: no broker's run stored the fleet's inputs in {config.location.description} "
                      "(run `kafkalog nightly --fleet` on each broker first)" if not stale else
                      f"fleet: every broker's latest snapshot in {config.location.description} is older than "
                      f"{config.fleet_max_age_hours:g} hours: {left_out}")
    if progress:
        brokers = {(m.cluster_id, m.node_id) for m in fleet}
        progress(f"fleet of {len(fleet)} log dir(s) of {len(brokers)} broker(s), snapshots "
                 f"{min(str(m.snapshot_time) for m in fleet)} to {max(str(m.snapshot_time) for m in fleet)}")
        if stale:
            progress(f"left out, older than {config.fleet_max_age_hours:g} hours: {left_out}")
    snapshot_id = config.snapshot_id or SNAPSHOT_PREFIX + _default_id(started, {})
    snapshot = _Snapshot(spark, config, snapshot_id, started, after_commit)
    with snapshot.beginning([*TABLES, MEMBERS]):
        dir_tables = {name: config.table_names[name] for name in DIR_TABLES}
        tables = fleet_tables(spark, fleet, configs, int(started.timestamp() * 1000), dir_tables,
                              config.include_internal)
        snapshot.append(tables | {MEMBERS: members_table(spark, fleet)}, [*TABLES, MEMBERS])
        return snapshot.finish({"fleetLogDirs": len(fleet)})


def _default_id(started: dt.datetime, brokers: dict[str, tuple[str | None, int | None]]) -> str:
    """The run's UTC time; a broker's run for the fleet (``brokers``, its log dirs') adds its node id when they
    name one, so that the fleet's members say whose snapshot each is."""
    stamp = started.strftime("%Y-%m-%dT%H:%M:%SZ")
    nodes = {node for _, node in brokers.values()}
    return f"{stamp}-node-{nodes.pop()}" if len(nodes) == 1 and None not in nodes else stamp


class _Snapshot:
    """One run's snapshot being written: :meth:`begin`, :meth:`append` the tables, :meth:`finish` (the manifest's
    commit, the clean-up of the runs it replaces, the report)."""

    def __init__(self, spark: SparkSession, config: NightlyConfig, snapshot_id: str, started: dt.datetime,
                 after_commit: Callable[[str], None] | None) -> None:
        self.spark, self.config, self.id, self.started = spark, config, snapshot_id, started
        self.done = after_commit or (lambda _: None)
        self.run_id = new_run_id()
        self.written: list[str] = []
        self._begun: Future | None = None
        from ..session import parallelism

        self.tasks = parallelism(spark)

    def name(self, table: str) -> str:
        return self.config.table_names.get(table, table)

    @contextmanager
    def beginning(self, tables: Sequence[str]) -> Iterator[None]:
        """Record the run's start (:func:`~kafkalog_spark.delta.begin`, naming ``tables``) in a thread of its own
        while the block reads and computes: a Delta commit of its own, seconds of a run's fixed cost, and nothing
        the reading needs. :meth:`append` waits for it, so no table is written before it; the block waits for it
        on any exit, and raises its failure unless the block's own is on its way."""
        self.written = [self.name(t) for t in tables]

        def record() -> None:
            begin(self.spark, self.config.location, self.id, self.started, self.run_id, self.written)
            self.done(RUNS)

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafkalog-begin") as pool:
            self._begun = pool.submit(record)
            try:
                yield
            finally:
                failed = self._begun.exception()  # waits for it
                self._begun = None
            if failed is not None:
                raise failed

    def append(self, tables: dict[str, DataFrame], names: Sequence[str]) -> None:
        """Append ``tables[name]`` for each of ``names``, :data:`PARALLEL_WRITES` at once, once the run's start is
        recorded (:meth:`beginning`)."""
        if self._begun is None:
            raise RuntimeError("_Snapshot: append() inside beginning() only")
        self._begun.result()

        def append(name: str) -> Callable[[], None]:
            def write() -> None:
                # written by one task a core at most: a Delta write task pays a statistics tracker's set-up (generated
                # code for the table's columns) even when it has no row, and a table is a union of many small parts
                rows = tables[name].coalesce(self.tasks) if self.tasks else tables[name]
                append_rows(rows, self.config.location, self.name(name), self.id, self.started, self.run_id)
                self.done(name)
            return write
        in_parallel([append(name) for name in names], PARALLEL_WRITES, "kafkalog-write")

    def rows(self, table: str) -> DataFrame:
        """This run's rows of ``table`` so far."""
        return run_rows(self.spark, self.config.location, self.name(table), self.id, self.run_id)

    def finish(self, details: dict[str, int]) -> dict[str, DataFrame]:
        """Commit (the manifest row, with ``details``), remove the rows of the runs this one replaces, write the
        report; returns the job's tables of the snapshot as readers see them."""
        spark, where = self.spark, self.config.location
        # once every table's rows are in
        commit(spark, where, self.id, self.started, self.run_id, self.written, details)
        self.done(MANIFEST)
        replaced = bool(replaced_runs(spark, where, self.id, self.run_id))

        def clean(table: str) -> Callable[[], None]:
            def remove_other_runs() -> None:
                if replaced:  # else no other run of the snapshot was recorded: the table holds none of its rows
                    clean_up(spark, where, table, self.id, self.run_id)
                self.done(f"clean-up {table}")
            return remove_other_runs
        in_parallel([clean(table) for table in self.written], PARALLEL_WRITES, "kafkalog-write")
        tables = {name: read_table(spark, where, self.name(name), self.id) for name in TABLES}
        if self.config.report:
            from ..report import write_report

            write_report(tables, self.config.report)  # from the committed snapshot, as any reader of the tables sees it
            self.done("report")
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
