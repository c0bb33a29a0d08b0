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


def _capacity(n: int, scala: bool) -> int:
    cap = 16
    while (n >= int(0.75 * cap)) if scala else (n > 0.75 * cap):
        cap *= 2
    return cap


def hash_map_order(keys: Iterable[str], version: KafkaVersion) -> list[str]:
    """The iteration order of a hash map into which `keys` were inserted in this order (all distinct).

    java.util.HashMap: table of 16 slots doubled when the size passes 0.75 x capacity; buckets in slot
    order, each in insertion order. scala.collection.mutable.HashMap (2.13): doubled before an insert that
    brings the size to 0.75 x capacity; each bucket kept sorted by hash, then insertion order.
    """
    keys = list(keys)
    hashes = [_spread(java_string_hash(k)) for k in keys]
    if version == KafkaVersion.V4:
        cap = _capacity(len(keys), scala=False)
        order = sorted(range(len(keys)), key=lambda i: (hashes[i] & (cap - 1), i))
    else:
        cap = _capacity(len(keys), scala=True)
        order = sorted(range(len(keys)), key=lambda i: (hashes[i] & (cap - 1), hashes[i], i))
    return [keys[i] for i in order]


@dataclass
class ToolErrors:
    """The per-file error maps of one kafka-dump-log run."""

    version: KafkaVersion
    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_out_of_order: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_not_found: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    @staticmethod
    def add(m: dict[str, list[tuple[int, int]]], path: str, pair: tuple[int, int]) -> None:
        m.setdefault(path, []).append(pair)

    def _pairs(self, pairs: list[tuple[int, int]], sort: int) -> list[tuple[int, int]]:
        """4.x keeps index mismatches and offset gaps in a TreeMap (by key: `sort` = -1 descending, 1
        ascending; a repeated key keeps its last value); 3.9 prepends to a List (newest first)."""
        if self.version == KafkaVersion.V3_9:
            return pairs[::-1]
        last = dict(pairs)
        return sorted(last.items(), key=lambda kv: sort * kv[0])

    def lines(self) -> Iterator[str]:
        v = self.version
        for path in hash_map_order(self.index_mismatches, v):
            yield f"Mismatches in :{path}"
            for a, b in self._pairs(self.index_mismatches[path], -1):
                yield f"  Index offset: {a}, log offset: {b}"
        for path in hash_map_order(self.time_mismatches, v):
            yield f"Found timestamp mismatch in :{path}"
            yield from (f"  Index timestamp: {a}, log timestamp: {b}" for a, b in self.time_mismatches[path])
        for path in hash_map_order(self.time_out_of_order, v):
            yield f"Found out of order timestamp in :{path}"
            yield from (f"  Index timestamp: {a}, Previously indexed timestamp: {b}"
                        for a, b in self.time_out_of_order[path])
        for path in hash_map_order(self.time_not_found, v):
            # 3.9 did not name the file; 4.x does, in the style of the other two headings
            yield ("The following indexed offsets are not found in the log." if v == KafkaVersion.V3_9
                   else f"The following indexed offsets are not found in :{path}")
            yield from (f"Indexed offset: {a}, found log offset: {b}" for a, b in self.time_not_found[path])
        for path in hash_map_order(self.non_consecutive, v):
            yield f"Non-consecutive offsets in {path}"
            for a, b in self._pairs(self.non_consecutive[path], 1):
                yield f"  {a} is followed by {b}"


__all__ = ["ToolCrash", "ToolErrors", "hash_map_order", "java_string_hash"]
