"""Filter pushdown: which Spark filters the reader takes, how they prune and seek, how they are applied.

Spark does not re-check a filter the reader accepted, so every accepted filter is applied exactly to
the rows (as an Arrow expression) besides being used to skip segments and to seek through indexes.
Only column-vs-literal comparisons on the location columns are taken (and, on the records view, ``isControl``:
``isControl = true`` decodes the control batches alone); the rest stay with Spark.
"""

from __future__ import annotations

import datetime as dt
import operator
from dataclasses import dataclass, field

# The columns a filter may be pushed on, per view, and what each means for pruning.
PUSHABLE = {
    "records": {"topic", "partition", "segmentBaseOffset", "offset", "timestamp", "isControl"},
    "record_stats": {"topic", "partition", "segmentBaseOffset"},
    "batches": {"topic", "partition", "segmentBaseOffset", "baseOffset", "lastOffset"},
    "decoded": set(),  # its columns are its parts' rows (structs): a filter on their fields is Spark's
    "segments": {"topic", "partition", "baseOffset"},
    "index": {"topic", "partition", "segmentBaseOffset"},
    "partition_files": {"topic", "partition"},
    # the state views: their topic and partition columns are not the partition dirs read
    "consumer_offsets": set(), "group_metadata": set(), "transactions": set(), "cluster_metadata": set(),
    "topic_catalog": set(), "metadata_configs": set(), "remote_log_segments": set(),
}

_OPS = {
    "EqualTo": operator.eq,
    "GreaterThan": operator.gt,
    "GreaterThanOrEqual": operator.ge,
    "LessThan": operator.lt,
    "LessThanOrEqual": operator.le,
}


@dataclass(frozen=True)
class Predicate:
    """A picklable ``column <op> value`` (op: one of _OPS, "In" or "StartsWith")."""

    column: str
    op: str
    value: object

    def test(self, v: object) -> bool:
        """Python evaluation, for pruning on values known at planning (topic, partition)."""
        if v is None:
            return False
        if self.op == "In":
            return v in self.value
        if self.op == "StartsWith":
            return isinstance(v, str) and v.startswith(self.value)
        return _OPS[self.op](v, self.value)

    def expression(self):
        import pyarrow.compute as pc

        col = pc.field(self.column)
        value = _to_arrow_value(self.value)
        if self.op == "In":
            return pc.is_in(col, value_set=_array([_to_arrow_value(v) for v in self.value]))
        if self.op == "StartsWith":
            return pc.starts_with(col, self.value)
        return _OPS[self.op](col, value)


def _array(values: list):
    import pyarrow as pa

    return pa.array(values)


def _to_arrow_value(v: object) -> object:
    if isinstance(v, dt.datetime):
        import pyarrow as pa

        # Spark hands naive datetimes in the local zone (as it converts timestamps for Python).
        aware = v if v.tzinfo else v.astimezone()
        return pa.scalar(aware.astimezone(dt.UTC), pa.timestamp("us", tz="UTC"))
    return v


def from_spark_filter(f, view: str) -> Predicate | None:
    """Our predicate for a Spark filter we can apply exactly, else None (Spark keeps it)."""
    attr = getattr(f, "attribute", None)
    if attr is None or len(attr) != 1 or attr[0] not in PUSHABLE[view]:
        return None
    name = type(f).__name__
    value = getattr(f, "value", None)
    if name in _OPS and value is not None:
        return Predicate(attr[0], name, value)
    if name == "In" and value and all(v is not None for v in value):
        return Predicate(attr[0], "In", tuple(value))
    if name == "StringStartsWith" and attr[0] == "topic":
        return Predicate(attr[0], "StartsWith", value)
    return None


@dataclass
class Pushdown:
    """The accepted predicates, with the bounds they imply for pruning and seeking."""

    predicates: list[Predicate] = field(default_factory=list)

    def accepts(self, column: str, value: object) -> bool:
        return all(p.test(value) for p in self.predicates if p.column == column)

    def lower_bound(self, column: str) -> int | None:
        """Smallest value of an integer ``column`` that can pass (inclusive), if bounded below."""
        lows = []
        for p in self.predicates:
            if p.column != column:
                continue
            if p.op in ("EqualTo", "GreaterThanOrEqual"):
                lows.append(p.value)
            elif p.op == "GreaterThan":
                lows.append(p.value + 1 if isinstance(p.value, int) else p.value)
            elif p.op == "In":
                lows.append(min(p.value))
        return max(lows) if lows else None

    def upper_bound(self, column: str) -> int | None:
        highs = []
        for p in self.predicates:
            if p.column != column:
                continue
            if p.op in ("EqualTo", "LessThanOrEqual"):
                highs.append(p.value)
            elif p.op == "LessThan":
                highs.append(p.value - 1 if isinstance(p.value, int) else p.value)
            elif p.op == "In":
                highs.append(max(p.value))
        return min(highs) if highs else None

    def control_only(self) -> bool:
        """Whether only control records can pass (``isControl = true``): the other batches need no decoding."""
        return any(p.column == "isControl" and p.op == "EqualTo" and p.value is True for p in self.predicates)

    def apply(self, table):
        """Rows of a pyarrow Table that satisfy every accepted predicate (exactly as Spark would)."""
        if not self.predicates:
            return table
        expr = self.predicates[0].expression()
        for p in self.predicates[1:]:
            expr = expr & p.expression()
        return table.filter(expr)
