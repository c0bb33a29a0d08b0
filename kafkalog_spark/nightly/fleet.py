"""One warehouse for a fleet: a run on every broker over its own log dirs, and the fleet step that joins them.

A broker's run (``[output] fleet``, ``kafkalog nightly --fleet``) writes into a warehouse of its own inside the
fleet's, ``<warehouse>/brokers/<cluster id>-node-<node id>`` (:func:`broker_location`): no two brokers ever write
the same Delta table, so their runs at the same time need nothing of the storage but what one writer needs (Delta's
commits to one table from several processes are safe only where the storage's log store makes them so: not on a
local or network file system, nor on S3 without a DynamoDB log store). Besides its tables, it stores what the tables of
several brokers together are computed from (:data:`INPUTS`): each log dir's broker, its listing views, the internal
topics' views and the records the replica comparison reads beyond the job's own.

The fleet step (:func:`fleet_tables`, ``kafkalog fleet``) takes each broker's latest committed snapshot and the log
dirs it read (:func:`members`), copies those snapshots' rows of the tables of one log dir each, and computes from their
stored views, as a run over all their dirs would, what needs several brokers: the replica comparison (and its
findings) and each cluster's internal-state tables. It writes them as one snapshot, ``fleet-<time>``, into the
fleet's warehouse itself.

A log dir is known by its path and its broker (``meta.properties``' cluster id and node id). Two brokers' dirs of the
same path (every pod of a StatefulSet mounts ``/var/lib/kafka/data``) are told apart in the fleet snapshot as
``node-<id>:<path>``; distinct paths stay as they are, so the fleet snapshot equals a single run over every dir.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from ..config import TopicConfigs
from ..delta import TableLocation, committed, read_table, run_rows
from ..source import decoded_part
from .incremental import KEYS, ROWS, SEGMENTS, union_rows
from .pipeline import CLUSTER_TABLES, compared_replicas, no_cluster_tables, state_tables, union_per_cluster

# view (or input) -> the table a broker's run stores it in
INPUTS = {"log_dirs": "fleet_log_dirs", "segments": "fleet_segments", "partition_files": "fleet_partition_files",
          "topic_catalog": "fleet_topic_catalog", "consumer_offsets": "fleet_consumer_offsets",
          "transactions": "fleet_transactions", "partition_dirs": "fleet_partition_dirs", "records": "fleet_records"}
INPUT_TABLES = tuple(INPUTS.values())
MEMBERS = "fleet_members"  # the fleet snapshot's members: each log dir's name there, broker and snapshot
MEMBERS_SCHEMA = ("logDir string, memberLogDir string, clusterId string, nodeId int, brokerWarehouse string, "
                  "memberSnapshotId string, memberSnapshotTime timestamp")
LOG_DIRS_SCHEMA = "logDir string, clusterId string, nodeId int"
SNAPSHOT_PREFIX = "fleet-"
STATE_VIEWS = ("topic_catalog", "consumer_offsets", "transactions")


def broker_inputs(spark: SparkSession, views: Mapping[str, DataFrame], log_dirs: Sequence[str],
                  brokers: Mapping[str, tuple[str | None, int | None]], replica_records: DataFrame | None,
                  **options: str) -> dict[str, DataFrame]:
    """What a broker's run stores for the fleet step, by table name: from its cached ``views`` (segments,
    partition_files and, with the internal topics, topic_catalog), the internal topics' views read here,
    ``brokers`` (:func:`~.pipeline.log_dir_brokers`) and the records its replica comparison read beyond the views'
    (``replica_records``). ``options``: the source's, as the job read its views."""
    from ..analysis.catalog_checks import partition_dirs
    from ..analysis.index_validation import log_dirs_of
    from ..analysis.record_sizes import without_payloads
    from ..source import read_views as source_views

    state = source_views(spark, log_dirs, [v for v in STATE_VIEWS if v not in views], **options)
    records = replica_records
    if records is None:  # the schema, no rows
        records = without_payloads(source_views(spark, log_dirs, ["records"], **options)["records"]).where("false")
    rows = [(d, cluster, node) for d, (cluster, node) in brokers.items()]
    return {INPUTS["log_dirs"]: spark.createDataFrame(rows, LOG_DIRS_SCHEMA),
            INPUTS["segments"]: views["segments"], INPUTS["partition_files"]: views["partition_files"],
            INPUTS["partition_dirs"]: partition_dirs(spark, views["partition_files"], log_dirs_of(log_dirs)),
            INPUTS["records"]: records} | {INPUTS[v]: views[v] if v in views else state[v] for v in STATE_VIEWS}


class NoFleet(ValueError):
    """The warehouse holds no broker's inputs to the fleet step."""


BROKERS = "brokers"  # the warehouse's dir of the brokers' own warehouses


def broker_label(brokers: Mapping[str, tuple[str | None, int | None]]) -> str:
    """The name of a broker's own warehouse: ``<cluster id>-node-<node id>`` of its log dirs' ``meta.properties``,
    or, when they name none or several, ``host-<host name>``."""
    import socket

    identities = set(brokers.values())
    if len(identities) == 1 and None not in (identity := identities.pop()):
        label = f"{identity[0]}-node-{identity[1]}"
    else:
        label = f"host-{socket.gethostname()}"
    return re.sub(r"[^A-Za-z0-9._-]", "_", label)


def broker_location(where: TableLocation, label: str) -> TableLocation:
    """A broker's own warehouse in the fleet's ``where``: ``<warehouse>/brokers/<label>``."""
    if not where.by_path:
        raise ValueError("fleet: the brokers' runs write into a warehouse path (--warehouse), not a catalog schema")
    return TableLocation(warehouse=f"{where.warehouse.rstrip('/')}/{BROKERS}/{label}")


def broker_locations(where: TableLocation) -> list[TableLocation]:
    """The brokers' own warehouses in the fleet's ``where`` (each with a ``fleet_log_dirs`` table)."""
    from ..log.files import expand_paths

    if not where.by_path:
        return []
    try:
        found = expand_paths([f"{where.warehouse.rstrip('/')}/{BROKERS}/*/{INPUTS['log_dirs']}/_delta_log"])
    except FileNotFoundError:
        return []
    return [TableLocation(warehouse=p.rsplit("/", 2)[0]) for p in found]


@dataclass(frozen=True)
class Member:
    """A log dir in the fleet snapshot: its ``name`` there, its path and broker, the broker's own warehouse, and the
    snapshot (and its committed run) there it comes from."""

    name: str
    log_dir: str
    cluster_id: str | None
    node_id: int | None
    where: TableLocation
    snapshot_id: str
    run_id: str
    snapshot_time: object


def members(spark: SparkSession, where: TableLocation, since: dt.datetime | None = None) -> list[Member]:
    """The log dirs (path, cluster id, node id) of the latest committed snapshot of each broker's own warehouse in
    ``where``, named as :mod:`this module <.fleet>` says; with ``since``, of the brokers whose latest snapshot is
    that recent only (:func:`stale_brokers` names the others). A log dir a broker no longer has leaves the fleet
    with the broker's next snapshot."""
    return fleet_by_age(spark, where, since)[0]


def stale_brokers(spark: SparkSession, where: TableLocation, since: dt.datetime) -> list[tuple[str, dt.datetime]]:
    """The brokers (their warehouse's name, ``<cluster id>-node-<node id>``) whose latest committed snapshot is
    older than ``since``, with its time: a broker that stopped reporting (decommissioned, or its job failing)."""
    return sorted((_broker_name(location), _aware(latest.snapshotTime))
                  for location, latest in _latest_snapshots(spark, where) if _aware(latest.snapshotTime) < since)


def fleet_by_age(spark: SparkSession, where: TableLocation,
                 since: dt.datetime | None) -> tuple[list[Member], list[tuple[str, dt.datetime]]]:
    """:func:`members` and :func:`stale_brokers` (none without ``since``) from one read of each broker's
    manifest."""
    found, stale = [], []
    for location, latest in _latest_snapshots(spark, where):
        if since is not None and _aware(latest.snapshotTime) < since:
            stale.append((_broker_name(location), _aware(latest.snapshotTime)))
            continue
        dirs = run_rows(spark, location, INPUTS["log_dirs"], latest.snapshotId, latest.runId)
        found += [(location, latest, r) for r in dirs.collect()]
    paths = [r.logDir for _, _, r in found]
    out = []
    for location, snapshot, r in found:
        label = f"node-{r.nodeId}" if r.nodeId is not None else _broker_name(location)
        name = f"{label}:{r.logDir}" if paths.count(r.logDir) > 1 else r.logDir
        out.append(Member(name, r.logDir, r.clusterId, r.nodeId, location, snapshot.snapshotId, snapshot.runId,
                          snapshot.snapshotTime))
    return sorted(out, key=lambda m: m.name), sorted(stale)


def _latest_snapshots(spark: SparkSession, where: TableLocation) -> list[tuple[TableLocation, Row]]:
    """Each broker's warehouse in ``where`` with its latest committed snapshot's manifest row (none before its first
    run commits)."""
    out = []
    for location in broker_locations(where):
        latest = committed(spark, location).orderBy(F.desc("snapshotTime"), F.desc("snapshotId")).first()
        if latest is not None:
            out.append((location, latest))
    return out


def _broker_name(location: TableLocation) -> str:
    """A broker's own warehouse's name in the fleet's (:func:`broker_label`)."""
    return location.warehouse.rstrip("/").rsplit("/", 1)[-1]


def _aware(at: dt.datetime) -> dt.datetime:
    """A snapshot's time in UTC: PySpark gives a timestamp column as a naive datetime in this process's local time,
    which is what ``astimezone`` takes a naive one to be."""
    return at.astimezone(dt.UTC)


def members_table(spark: SparkSession, fleet: Sequence[Member]) -> DataFrame:
    """The fleet snapshot's rows of :data:`MEMBERS`."""
    return spark.createDataFrame([(m.name, m.log_dir, m.cluster_id, m.node_id, m.where.warehouse, m.snapshot_id,
                                   m.snapshot_time) for m in fleet], MEMBERS_SCHEMA)


def _per_broker(spark: SparkSession, fleet: Sequence[Member],
                rows: Callable[[Member], DataFrame]) -> DataFrame:
    """``rows(member)`` of one member of each broker (the rows of its broker's snapshot), unioned, of the members'
    log dirs only, ``logDir`` their names in the fleet."""
    per_broker = []
    for location in dict.fromkeys(m.where for m in fleet):
        mine = [m for m in fleet if m.where == location]
        names = spark.createDataFrame([(m.log_dir, m.name) for m in mine], "logDir string, fleetLogDir string")
        found = rows(mine[0]).join(F.broadcast(names), "logDir")
        per_broker.append(found.select(*[F.col("fleetLogDir").alias("logDir") if c == "logDir" else F.col(c)
                                         for c in found.columns if c != "fleetLogDir"]))
    return reduce(union_rows, per_broker)


def member_rows(spark: SparkSession, table: str, fleet: Sequence[Member]) -> DataFrame:
    """The rows of ``table`` of each member's log dir in its snapshot, ``logDir`` its name in the fleet."""
    return _per_broker(spark, fleet, lambda m: run_rows(spark, m.where, table, m.snapshot_id, m.run_id))


def decoded_rows(spark: SparkSession, view: str, fleet: Sequence[Member]) -> DataFrame:
    """The rows of the decoded ``view`` (a part of :data:`~.incremental.ROWS`) of every live segment of each
    member's snapshot, read from the snapshot that decoded it (its ``decodedIn``)."""
    def rows(m: Member) -> DataFrame:
        segments = (run_rows(spark, m.where, SEGMENTS, m.snapshot_id, m.run_id)
                    .select(*KEYS, F.col("decodedIn").alias("snapshotId")))
        return decoded_part(read_table(spark, m.where, ROWS).join(segments, [*KEYS, "snapshotId"]), view)
    return _per_broker(spark, fleet, rows)


def fleet_tables(spark: SparkSession, fleet: Sequence[Member], configs: TopicConfigs, now_ms: int,
                 dir_tables: Mapping[str, str], include_internal: bool = True) -> dict[str, DataFrame]:
    """The job's tables (by name; ``dir_tables``: each table of one log dir and its name in the warehouse) over the
    ``fleet``'s log dirs: the members' rows of the tables of one log dir each, and, computed here from their stored
    views as a run over all of them computes them, the replica comparison (with its findings in
    ``index_findings``) and each cluster's internal-state tables, as of ``now_ms``."""
    from ..finding_kinds import KINDS

    stored = {view: member_rows(spark, table, fleet) for view, table in INPUTS.items()}
    extra = stored.pop("records")  # the records the brokers' replica comparisons read beyond the decoded ones
    views = stored | {view: decoded_rows(spark, view, fleet) for view in ("batches", "records")}
    if not include_internal:
        del views["topic_catalog"]
    brokers = {m.name: (m.cluster_id, m.node_id) for m in fleet}
    rows, findings, _ = compared_replicas(views, brokers, configs,
                                          lambda topics: extra.where(F.col("topic").isin(topics)))
    replica_kinds = [k.name for k in KINDS.values() if k.source == "replica_comparison"]
    tables = {name: member_rows(spark, table, fleet) for name, table in dir_tables.items()
              if name != "replica_comparison"}
    tables["replica_comparison"] = rows
    tables["index_findings"] = tables["index_findings"].where(~F.col("check").isin(replica_kinds)) \
        .unionByName(findings)
    return tables | stored_cluster_tables(spark, views, tables["log_offsets"], clusters_of(brokers), now_ms,
                                          include_internal)


def stored_cluster_tables(spark: SparkSession, views: Mapping[str, DataFrame], log_offsets: DataFrame,
                          clusters: Mapping[str | None, Sequence[str]], now_ms: int,
                          include_internal: bool) -> dict[str, DataFrame]:
    """Each cluster's internal-state tables (:data:`~.pipeline.CLUSTER_TABLES`) from stored views (those of
    :data:`STATE_VIEWS` and ``partition_dirs``, as :func:`broker_inputs` stores them) and ``log_offsets`` rows;
    ``clusters``: each cluster's log dirs (their ``logDir``)."""
    if not include_internal or not clusters:
        return no_cluster_tables(spark)
    per_cluster = []
    for cluster, names in clusters.items():
        mine = {view: df.where(F.col("logDir").isin(list(names))) for view, df in views.items()}
        per_cluster.append(state_tables(cluster, CLUSTER_TABLES, mine,
                                        log_offsets.where(F.col("logDir").isin(list(names))), mine["partition_dirs"],
                                        now_ms))
    return {name: rows for name, (rows, _) in union_per_cluster(per_cluster, CLUSTER_TABLES).items()}


def clusters_of(brokers: Mapping[str, tuple[str | None, int | None]]) -> dict[str | None, list[str]]:
    """Each cluster's log dirs, from each log dir's (cluster id, node id)."""
    clusters: dict[str | None, list[str]] = {}
    for log_dir, (cluster, _) in brokers.items():
        clusters.setdefault(cluster, []).append(log_dir)
    return clusters
