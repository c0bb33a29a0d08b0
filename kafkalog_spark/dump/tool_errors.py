"""What kafka-dump-log prints on stderr after the last file: index mismatches, time index errors and
non-consecutive offsets, in the tool's order and text, and its exceptions.

DumpLogSegments collects these per file (keyed by the file's absolute path) in hash maps and prints them
once all files are dumped: 4.x (tools/.../DumpLogSegments.java) in java.util.HashMap order, 3.9
(core/.../kafka/tools/DumpLogSegments.scala) in scala.collection.mutable.HashMap order. With several
files the order of the files' blocks is that hash order, so both are reproduced here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..kafka_versions import KafkaVersion


class ToolCrash(Exception):
    """An exception that ends a kafka-dump-log run: it prints nothing more on stdout, no summary on stderr,
    and the JVM prints `Exception in thread "main" <class>: <message>` plus the Java stack frames
    (which we leave out)."""

    def __init__(self, java_class: str, message: str | None = None) -> None:
        super().__init__(java_class if message is None else f"{java_class}: {message}")
        self.java_class, self.message = java_class, message

    @property
    def line(self) -> str:
        return f'Exception in thread "main" {self}'


def java_string_hash(s: str) -> int:
    """java.lang.String.hashCode over UTF-16 code units, as a signed 32-bit int."""
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _spread(h: int) -> int:
    """HashMap.hash / scala HashMap.improveHash: h ^ (h >>> 16), 32-bit."""
    u = h & 0xFFFFFFFF
    return u ^ (u >> 16)


def _signed(u: int) -> int:
    """A 32-bit value as Java's (and Scala's) signed int."""
    return u - (1 << 32) if u >= 1 << 31 else u


def hash_map_order(calls: Iterable[str], version: KafkaVersion) -> list[str]:
    """The iteration order of the tool's map after these insert-or-update calls (one per recorded pair).

    4.x, java.util.HashMap.computeIfAbsent: the table (16 slots at the first call) doubles at the START of
    a call when the size is above 0.75 x capacity, and a new key goes to the HEAD of its bucket; buckets
    iterate in slot order. 3.9, scala.collection.mutable.HashMap (2.13) put: doubles at the start of a put
    when size + 1 reaches 0.75 x capacity; each bucket is kept sorted by hash (a signed Int: put0 walks the
    bucket while ``n.hash <= hash``), then insertion order.
    """
    cap, seen = 0, {}
    for key in calls:
        if version == KafkaVersion.V4:
            if cap == 0 or len(seen) > 0.75 * cap:
                cap = 16 if cap == 0 else cap * 2
        else:
            cap = cap or 16
            if len(seen) + 1 >= int(0.75 * cap):
                cap *= 2
        seen.setdefault(key, len(seen))
    hashes = {k: _spread(java_string_hash(k)) for k in seen}
    if version == KafkaVersion.V4:
        return sorted(seen, key=lambda k: (hashes[k] & (cap - 1), -seen[k]))
    return sorted(seen, key=lambda k: (hashes[k] & (cap - 1), _signed(hashes[k]), seen[k]))


@dataclass
class ToolErrors:
    """The per-file error maps of one kafka-dump-log run."""

    version: KafkaVersion
    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_out_of_order: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_not_found: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # per map: the keys of the map calls the tool made, in order (they decide the table's growth)
    calls: dict[int, list[str]] = field(default_factory=dict)

    def add(self, m: dict[str, list[tuple[int, int]]], path: str, pair: tuple[int, int]) -> None:
        # 3.9's time index maps are put only when a file's first pair arrives; every other map is
        # written once per pair (put in 3.9, computeIfAbsent in 4.x)
        once = self.version == KafkaVersion.V3_9 and m in (
            self.time_mismatches, self.time_out_of_order, self.time_not_found)
        if not (once and path in m):
            self.calls.setdefault(id(m), []).append(path)
        m.setdefault(path, []).append(pair)

    def _order(self, m: dict[str, list[tuple[int, int]]]) -> list[str]:
        return hash_map_order(self.calls.get(id(m), []), self.version)

    def _pairs(self, pairs: list[tuple[int, int]], sort: int) -> list[tuple[int, int]]:
        """4.x keeps index mismatches and offset gaps in a TreeMap (by key: `sort` = -1 descending, 1
        ascending; a repeated key keeps its last value); 3.9 prepends to a List (newest first)."""
        if self.version == KafkaVersion.V3_9:
            return pairs[::-1]
        last = dict(pairs)
        return sorted(last.items(), key=lambda kv: sort * kv[0])

    def lines(self) -> Iterator[str]:
        for path in self._order(self.index_mismatches):
            yield f"Mismatches in :{path}"
            for a, b in self._pairs(self.index_mismatches[path], -1):
                yield f"  Index offset: {a}, log offset: {b}"
        for path in self._order(self.time_mismatches):
            yield f"Found timestamp mismatch in :{path}"
            yield from (f"  Index timestamp: {a}, log timestamp: {b}" for a, b in self.time_mismatches[path])
        for path in self._order(self.time_out_of_order):
            yield f"Found out of order timestamp in :{path}"
            yield from (f"  Index timestamp: {a}, Previously indexed timestamp: {b}"
                        for a, b in self.time_out_of_order[path])
        for path in self._order(self.time_not_found):
            # 3.9 did not name the file; 4.x does, in the style of the other two headings
            yield ("The following indexed offsets are not found in the log." if self.version == KafkaVersion.V3_9
                   else f"The following indexed offsets are not found in :{path}")
            yield from (f"Indexed offset: {a}, found log offset: {b}" for a, b in self.time_not_found[path])
        for path in self._order(self.non_consecutive):
            yield f"Non-consecutive offsets in {path}"
            for a, b in self._pairs(self.non_consecutive[path], 1):
                yield f"  {a} is followed by {b}"


__all__ = ["ToolCrash", "ToolErrors", "hash_map_order", "java_string_hash"]
