"""Printing rows for people (aligned tables) or for machines (JSON Lines), and progress lines.

People get one time format: ISO 8601 in UTC with milliseconds and a ``Z`` (:func:`iso_utc`). Machines keep
machine values: epoch milliseconds stay numbers, datetimes become ISO strings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TextIO

from .arguments import (
    add_kafka_version,
    parse_time,  # noqa: F401 - re-exported: the commands and their tests import it from here
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# Columns holding epoch milliseconds that mean a point in time (not a duration such as retentionMs).
TIME_COLUMNS = frozenset({
    "minTimestamp", "maxTimestamp", "largestTimestamp", "eligibleAt", "eligibleAtMs", "asOfMs", "nowMs",
    "newDeleteHorizon", "newDeleteHorizonMs", "deleteHorizonMs", "logModified", "maxIndexedTimestamp", "baseTimestamp",
})

_progress: bool | None = None  # None: only when stderr is a terminal


def set_progress(quiet: bool = False, verbose: bool = False) -> None:
    """``--quiet``: never print progress; ``--verbose``: always (on stderr); neither: only on a terminal."""
    global _progress
    _progress = False if quiet else (True if verbose else None)


def progress(message: str) -> None:
    """A progress line on stderr, never on stdout: piped output stays data only."""
    shown = _progress if _progress is not None else sys.stderr.isatty()
    if shown:
        print(f"kafkalog: {message}", file=sys.stderr, flush=True)


def _utc(value: dt.datetime) -> dt.datetime:
    # PySpark hands timestamps back as naive datetimes in this process's local time zone.
    return value.astimezone(dt.UTC)


def iso_utc(value: int | float | dt.datetime | None) -> str | None:
    """A time for people: epoch milliseconds or a datetime as ``2026-11-21T12:00:00.000Z``; None stays None."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        when = _utc(value)
    elif value < 0:
        return str(value)  # Kafka's -1: no timestamp
    else:
        try:
            when = dt.datetime.fromtimestamp(value / 1000, dt.UTC)
        except (OverflowError, ValueError, OSError):
            return str(value)  # e.g. Long.MAX_VALUE for "never": past year 9999
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _plain(v: object) -> object:
    if isinstance(v, dt.datetime):
        return _utc(v).isoformat().replace("+00:00", "Z")
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    return v


def add_config_arguments(p: argparse.ArgumentParser, what_if: bool = True) -> None:
    """The topic-configuration options the commands share (``--set`` only where a what-if means something), and
    ``--kafka-version``: whose config keys, defaults and ranges apply (and whose cleaner, where one is modelled)."""
    add_kafka_version(p)
    p.add_argument("--broker-config", metavar="server.properties", help="the broker's server.properties")
    p.add_argument("--topic-config", metavar="FILE",
                   help="per-topic overrides: kafka-configs --describe output, [topic] INI sections, YAML or JSON")
    p.add_argument("--no-metadata-configs", dest="metadata_configs", action="store_false",
                   help="ignore the topic and broker configs the KRaft metadata log (__cluster_metadata) in the log "
                        "dirs records (by default they apply, as the broker applies them)")
    if not what_if:
        return
    p.add_argument("--set", dest="what_if", action="append", default=[], metavar="key=value",
                   help="what-if config for every topic (repeatable), e.g. --set retention.ms=86400000")


def row_dicts(df: DataFrame) -> list[dict]:
    """``df``'s rows as dicts (nested rows too), each map column's entries in key order: a map has no order of its
    own, and engines hand one back in different orders (Spark's classic collect in a Java HashMap's, Spark Connect
    and the local engine in the map's), which the printed output must not show."""
    from pyspark.sql.types import MapType

    maps = [f.name for f in df.schema.fields if isinstance(f.dataType, MapType)]
    rows = [r.asDict(recursive=True) for r in df.collect()]
    for r in rows:
        for name in maps:
            if r[name] is not None:
                r[name] = dict(sorted(r[name].items()))
    return rows


def print_json(rows: Iterable[dict], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    for r in rows:
        print(json.dumps({k: _plain(v) for k, v in r.items()}), file=out)


def _cell(column: str, v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, dt.datetime) or (column in TIME_COLUMNS and isinstance(v, int) and not isinstance(v, bool)):
        return iso_utc(v) or ""
    return str(v).lower() if isinstance(v, bool) else str(_plain(v))


def several_log_dirs(rows: Sequence[dict]) -> bool:
    """Whether ``rows`` come from more than one log dir (replicas of a partition in several dirs are rows of their
    own, told apart by their ``logDir``)."""
    return len({r.get("logDir") for r in rows}) > 1


def table_columns(columns: list[str], rows: Sequence[dict]) -> list[str]:
    """A command's table columns for ``rows``, led by ``logDir`` when they come from several log dirs."""
    return (["logDir"] if several_log_dirs(rows) else []) + columns


def print_table(rows: Sequence[dict], columns: Sequence[str], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    cells = [[_cell(c, r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(), file=out)
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip(), file=out)
