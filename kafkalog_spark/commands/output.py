"""Printing rows for people (aligned tables) or for machines (JSON Lines)."""

from __future__ import annotations

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


def print_json(rows: Iterable[dict], out=None) -> None:
    out = out or sys.stdout
    for r in rows:
        print(json.dumps({k: _plain(v) for k, v in r.items()}), file=out)


def print_table(rows: Sequence[dict], columns: Sequence[str], out=None) -> None:
    out = out or sys.stdout
    cells = [[("" if r.get(c) is None else str(_plain(r.get(c)))) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(), file=out)
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip(), file=out)


def progress(message: str) -> None:
    print(f"kafkalog: {message}", file=sys.stderr, flush=True)
