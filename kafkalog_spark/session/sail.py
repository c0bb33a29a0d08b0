"""The local engine: the same DataFrame analyses on Sail (LakeSail's Rust engine, the ``pysail`` package), started
inside this process and driven by pyspark's own Spark Connect client, so no JVM starts.

The analyses are not written a second time: they are the functions of DataFrames that run on Spark, sent over
Spark Connect to a server on loopback that Sail runs in threads of this process. Python code (the source's
``read()``, the ``applyInArrow`` functions) runs in this interpreter. Where Sail 0.7 departs from Spark, this
module bridges the gap on the client side, for Sail's sessions only (the analyses do not know):

- Sail converts a data source's ``schema()`` to Arrow with pyspark's ``to_arrow_type`` without a time zone, which
  pyspark 4.2 refuses for timestamp columns: :class:`SailKafkaLogSource` hands Sail the Arrow schema itself.
- Sail's thread that runs a data source's ``read()`` holds the GIL while it waits for room in a 16-batch channel:
  :class:`_WholePartitionReader` hands over each partition in one batch (else validate could hang).
- ``cogroup().applyInArrow``: Sail collects each group's rows into an Arrow struct whose fields it declares
  non-nullable, so a null in any column fails the query (``Found unmasked nulls for non-nullable StructArray
  field``): :func:`_apply_in_arrow` wraps each side's columns into one struct column.
- ``unionByName(allowMissingColumns=True)`` types a missing column as NULL, which a later ``applyInArrow`` cannot
  plan: :func:`_union_by_name` adds the missing columns with the other side's types, as Spark does.
- ``load([path, ...])`` of several paths reaches a Python data source without them: :func:`_load` passes them
  in the ``paths`` option, as Spark does.
- ``persist()`` is a no-op on Sail: :func:`_persist` computes the rows once into a temporary view (up to
  ``PERSIST_MAX_BYTES``), so that the checks reading one view share one decode.

All the rows stay in this process's memory: the engine is for small inputs (``--engine auto`` picks it below a
size, see :mod:`kafkalog_spark.commands.runtime`). A process holds either Spark Connect sessions (this engine, or
``--remote``) or a classic Spark session: pyspark switches its functions to Connect for the whole process.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSourceReader, InputPartition

from ..source.datasource import KafkaLogDataSource

_lock = threading.Lock()
_server: Any = None  # one Sail server per process, started on first use
_sessions: set[str] = set()  # the ids of the sessions on it: the cogroup bridge applies to these only
_ROW, _KEY = "__kafkalog_row", "__kafkalog_key"


def available() -> bool:
    """Whether Sail is installed (the ``[local]`` extra)."""
    import importlib.util

    return importlib.util.find_spec("pysail") is not None


class SailKafkaLogSource(KafkaLogDataSource):
    """The `kafkalog` source as Sail reads it: the same reader, with ``schema()`` as an Arrow schema (Sail's
    conversion of a StructType misses the time zone pyspark 4.2 requires), ``reader()`` given the view's Spark
    schema whatever form Sail passes it in, and each partition's rows handed over in one batch
    (:class:`_WholePartitionReader`)."""

    def schema(self) -> Any:
        from ..schemas import arrow_schema

        return arrow_schema(super().schema())

    def reader(self, schema: Any) -> DataSourceReader:
        import pyspark.sql.datasource

        inner = super().reader(KafkaLogDataSource.schema(self))
        # pyspark 4.0 has no filter classes (pushdown came in 4.1): Sail, finding pushFilters, fails to build them
        pushdown = hasattr(pyspark.sql.datasource, "EqualTo")
        return _PushdownWholePartitionReader(inner) if pushdown else _WholePartitionReader(inner)


class _WholePartitionReader(DataSourceReader):
    """The source's reader, yielding each partition's rows as one Arrow batch. Sail's thread that runs ``read()``
    holds the GIL while it waits for room in a 16-batch channel; once that is full, a consumer that needs the GIL
    itself (a ``cogroup().applyInArrow``) waits on it forever (seen: validate hung with every thread waiting on the
    GIL). One batch per partition never fills the channel. The local engine is for small inputs, so a partition's
    rows fit in memory."""

    def __init__(self, inner: DataSourceReader) -> None:
        self.inner = inner

    def partitions(self) -> Sequence[InputPartition]:
        return self.inner.partitions()

    def read(self, partition: InputPartition) -> Iterator:
        import pyarrow as pa

        batches = list(self.inner.read(partition))
        if len(batches) == 1:
            yield batches[0]
        elif batches:
            # Table.combine_chunks, not pa.concat_batches: that needs pyarrow 19, the package takes 17
            yield from pa.Table.from_batches(batches).combine_chunks().to_batches()


class _PushdownWholePartitionReader(_WholePartitionReader):
    """:class:`_WholePartitionReader` with the source's filter pushdown (pyspark 4.1 and later)."""

    def pushFilters(self, filters: list) -> Iterator:  # noqa: N802 - pyspark's name
        return self.inner.pushFilters(filters)


def _server_address(quiet: bool) -> tuple[str, int]:
    global _server
    with _lock:
        if _server is None or not _server.running:
            # Sail logs each session and query at INFO on stderr; the CLI prints one line per mistake
            os.environ.setdefault("RUST_LOG", "error" if quiet else "warn")
            from pysail.spark import SparkConnectServer

            server = SparkConnectServer(ip="127.0.0.1", port=0)  # loopback only, a free port
            server.start(background=True)
            _server = server
        return _server.listening_address


def sail_session(*, quiet: bool = True) -> SparkSession:
    """A new Spark Connect session on the in-process Sail server (started on the first call), with the
    `kafkalog` source registered and the session settings of :data:`kafkalog_spark.session.RUNTIME_CONFIGS`."""
    from . import RUNTIME_CONFIGS

    host, port = _server_address(quiet)
    _bridge()
    spark = SparkSession.builder.remote(f"sc://{host}:{port}").create()
    for k, v in RUNTIME_CONFIGS.items():
        spark.conf.set(k, v)
    spark.dataSource.register(SailKafkaLogSource)
    _sessions.add(spark.session_id)
    return spark


def is_sail(spark: SparkSession) -> bool:
    """Whether ``spark`` is a session of :func:`sail_session`."""
    return getattr(spark, "session_id", None) in _sessions


def stop() -> None:
    """Stop the in-process server (its sessions end with it)."""
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None
        _sessions.clear()


def _unwrapped(func: Callable) -> Callable:
    """``func`` called with each side's struct column unwrapped into the columns it packs (the function of a
    cogroup takes (left, right) or (key, left, right); pyspark tells them apart by their number)."""
    import inspect

    def columns(table: Any) -> Any:
        import pyarrow as pa

        return pa.Table.from_struct_array(table.column(_ROW))

    if len(inspect.signature(func).parameters) == 2:
        def two(left: Any, right: Any) -> Any:
            return func(columns(left), columns(right))
        return two

    def three(key: Any, left: Any, right: Any) -> Any:
        return func(key, columns(left), columns(right))
    return three


_original_apply_in_arrow: Callable | None = None


def _apply_in_arrow(self: Any, func: Callable, schema: Any) -> Any:
    """``PandasCogroupedOps.applyInArrow`` of pyspark's Connect client, rewritten for Sail's sessions: each side
    becomes its grouping keys and one struct of all its columns (see the module's docstring)."""
    from pyspark.sql import functions as F

    assert _original_apply_in_arrow is not None
    left, right = self._gd1._df, self._gd2._df
    if left._session.session_id not in _sessions:
        return _original_apply_in_arrow(self, func, schema)

    def packed(df: Any, keys: list) -> Any:
        names = [f"{_KEY}{i}" for i in range(len(keys))]
        cols = df.select(*[k.alias(n) for k, n in zip(keys, names, strict=True)],
                         F.struct(*[df[c] for c in df.columns]).alias(_ROW))
        return cols.groupBy(*names)

    ops = type(self)(packed(left, self._gd1._grouping_cols), packed(right, self._gd2._grouping_cols))
    return _original_apply_in_arrow(ops, _unwrapped(func), schema)


_original_persist: Callable | None = None
# The most Arrow bytes a persisted view is made a local relation of: the relation travels in one gRPC message of at
# most 128 MiB by default, which pyspark may also upload as an artifact past
# spark.sql.session.localRelationCacheThreshold (64 MiB).
PERSIST_MAX_BYTES = 32 * 1024 * 1024


def _persist(self: Any, *args: Any, **kwargs: Any) -> Any:
    """``DataFrame.persist`` of pyspark's Connect client, for Sail's sessions (where it is a no-op): the rows,
    computed once, as a temporary view of a local relation with the same schema, so that the checks that read a
    view share one decode (validate persists its views for the same reason on Spark). ``unpersist`` stays Sail's
    no-op: the temporary views live as long as the session."""
    assert _original_persist is not None
    if self._session.session_id not in _sessions:
        return _original_persist(self, *args, **kwargs)
    rows = self.toArrow()
    if rows.nbytes > PERSIST_MAX_BYTES:
        return self  # too large to send in one message: each reader computes the view again
    # a temporary view, sent once: a plan that reads the view several times names it, where a local relation
    # would be copied into the plan at every read (validate's plan over 1 GB of log came to 175 MB)
    name = f"__kafkalog_persisted_{uuid.uuid4().hex}"
    self._session.createDataFrame(rows, schema=self.schema).createOrReplaceTempView(name)
    return self._session.table(name)


_original_union_by_name: Callable | None = None


def _union_by_name(self: Any, other: Any, allowMissingColumns: bool = False) -> Any:  # noqa: N803 - pyspark's name
    """``DataFrame.unionByName`` of pyspark's Connect client, for Sail's sessions: with ``allowMissingColumns``
    Sail types a column missing on one side as NULL in the union's schema, and a later ``applyInArrow`` then
    fails to plan (``coercion from Utf8, ... to the signature Exact(..., Null, ...)``). Spark fills a missing
    column with nulls of the other side's type: so does this, explicitly, before a plain union."""
    from pyspark.sql import functions as F

    assert _original_union_by_name is not None
    if not allowMissingColumns or self._session.session_id not in _sessions:
        return _original_union_by_name(self, other, allowMissingColumns)
    left, right = {f.name: f.dataType for f in self.schema}, {f.name: f.dataType for f in other.schema}
    left_cols = [*self.columns, *[F.lit(None).cast(t).alias(c) for c, t in right.items() if c not in left]]
    right_cols = [*other.columns, *[F.lit(None).cast(t).alias(c) for c, t in left.items() if c not in right]]
    return _original_union_by_name(self.select(*left_cols), other.select(*right_cols), False)


_original_load: Callable | None = None


def _load(self: Any, path: Any = None, *args: Any, **kwargs: Any) -> Any:
    """``DataFrameReader.load`` of pyspark's Connect client, for Sail's sessions: Sail hands a Python data source
    ``options["path"]`` for one path but nothing for several, where Spark sets ``options["paths"]`` (a JSON list);
    this sets it as Spark does."""
    import json

    assert _original_load is not None
    if self._client.session_id in _sessions and isinstance(path, list | tuple):
        if len(path) == 1:
            path = path[0]
        else:
            self.option("paths", json.dumps(list(path)))
            path = None
    return _original_load(self, path, *args, **kwargs)


def _bridge() -> None:
    """Install :func:`_apply_in_arrow`, :func:`_persist`, :func:`_union_by_name` and :func:`_load` on pyspark's
    Connect classes (once)."""
    global _original_apply_in_arrow, _original_persist, _original_union_by_name, _original_load
    from pyspark.sql.connect.dataframe import DataFrame
    from pyspark.sql.connect.group import PandasCogroupedOps
    from pyspark.sql.connect.readwriter import DataFrameReader

    with _lock:
        if _original_load is None:
            _original_load = DataFrameReader.load
            DataFrameReader.load = _load  # type: ignore[method-assign]
        if _original_union_by_name is None:
            _original_union_by_name = DataFrame.unionByName
            DataFrame.unionByName = _union_by_name  # type: ignore[method-assign]
        if _original_apply_in_arrow is None:
            _original_apply_in_arrow = PandasCogroupedOps.applyInArrow
            PandasCogroupedOps.applyInArrow = _apply_in_arrow  # type: ignore[method-assign]
        if _original_persist is None:
            _original_persist = DataFrame.persist
            DataFrame.persist = _persist  # type: ignore[method-assign]
