"""Printing rows for people (aligned tables) or for machines (JSON Lines)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Iterable, Sequence


def _plain(v: object) -> object:
    if isinstance(v, dt.datetime):
        return v.isoformat()
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    return v


def parse_time(text: str | None, flag: str) -> int:
    """Epoch milliseconds from a command-line time: epoch milliseconds, or ISO 8601 (no zone: UTC);
    None means now."""
    if text is None:
        return int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    text = text.strip()
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{flag} {text!r}: expected ISO 8601 (e.g. 2024-05-01T12:00:00Z) or epoch milliseconds"
                         ) from None
    return int((when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp() * 1000)


def add_config_arguments(p: argparse.ArgumentParser, what_if: bool = True) -> None:
    """The topic-configuration options the commands share (``--set`` only where a what-if means something)."""
    p.add_argument("--broker-config", metavar="server.properties", help="the broker's server.properties")
    p.add_argument("--topic-config", metavar="FILE",
                   help="per-topic overrides: kafka-configs --describe output, [topic] INI sections, YAML or JSON")
    if not what_if:
        return
    p.add_argument("--set", dest="what_if", action="append", default=[], metavar="key=value",
                   help="what-if config for every topic (repeatable), e.g. --set retention.ms=86400000")


def print_json(rows: Iterable[dict], out=None) -> None:
    out = out or sys.stdout
    for r in rows:
        print(json.dumps({k: _plain(v) for k, v in r.items()}), file=out)


def _cell(v: object) -> str:
    if v is None:
        return ""
    return str(v).lower() if isinstance(v, bool) else str(_plain(v))


def print_table(rows: Sequence[dict], columns: Sequence[str], out=None) -> None:
    out = out or sys.stdout
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(), file=out)
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip(), file=out)


def progress(message: str) -> None:
    print(f"kafkalog: {message}", file=sys.stderr, flush=True)
