"""How the report writes numbers, sizes and times for people (the exact values stay in the page's data)."""

from __future__ import annotations

import datetime as dt
import os

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def format_bytes(n: int | float | None) -> str:
    """1536 -> '1.5 KiB' (binary units, as segment.bytes and retention.bytes are meant)."""
    if n is None:
        return ""
    value, unit = float(n), 0
    while abs(value) >= 1024 and unit < len(_UNITS) - 1:
        value, unit = value / 1024, unit + 1
    return f"{int(value)} B" if unit == 0 else f"{value:.1f} {_UNITS[unit]}"


def format_count(n: int | float | None) -> str:
    return "" if n is None else f"{n:,}"


def format_ratio(x: float | None) -> str:
    return "" if x is None else f"{x:.3f}"


def to_datetime(ms: int | None) -> dt.datetime | None:
    """Epoch milliseconds as a UTC datetime; None for a missing or negative (Kafka's NO_TIMESTAMP) time."""
    if ms is None or ms < 0:
        return None
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC)


def format_time_ms(ms: int | None) -> str:
    t = to_datetime(ms)
    return "" if t is None else t.strftime("%Y-%m-%d %H:%M:%S")


def format_time(t: dt.datetime | None) -> str:
    return "" if t is None else t.strftime("%Y-%m-%d %H:%M:%S UTC")


def bucket_label(power: int) -> str:
    """The size bucket [2^power, 2^(power+1)) bytes; -1: empty partitions."""
    if power < 0:
        return "empty"
    return f"{format_bytes(2 ** power)} – {format_bytes(2 ** (power + 1))}"


def short_dir(log_dir: str | None) -> str:
    """A log dir by its last two path components: enough to tell brokers apart in a chart's label."""
    if not log_dir:
        return ""
    parts = log_dir.rstrip("/").split("/")
    return os.path.join(*parts[-2:]) if len(parts) > 1 else parts[0]


def partition_label(row: dict) -> str:
    return f"{row['topic']}-{row['partition']} ({short_dir(row.get('logDir'))})"
