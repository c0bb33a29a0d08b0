"""The package's layering, checked on its source: no import cycle, and no layer imports a higher one.

Every import counts, also those inside functions (deferred for speed or to keep Spark out of a
worker): a deferred import still ties two modules into one concept.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from tests.helpers.corpus import PACKAGE

# Lowest first: bytes -> files on disk -> the internal topics' state -> configs -> the Spark source and the dump ->
# analyses -> Delta -> the report -> jobs.
LAYERS = [
    {"finding_kinds", "findings", "schemas", "kafka_versions"},
    {"format"},
    {"log"},
    {"state"},
    {"config"},
    {"source", "dump"},
    {"analysis"},
    {"delta"},
    {"report"},
    {"session", "nightly", "logging_config", "demo"},
    {"commands", "cli"},
]


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in its body)."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    deps.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return cycles


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package's facade re-exports from any layer
    for i, names in enumerate(LAYERS):
        if parts[1] in names:
            return i
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    graph = import_graph()
    # the walk saw the package: one module per source file, counted here by os.walk
    assert len(graph) == sum(n.endswith(".py") for _, _, names in os.walk(PACKAGE) for n in names)
    # ... and its edges: source/planning.py's imports at the top (from . and ..) and inside functions
    assert {"kafkalog_spark.findings", "kafkalog_spark.log.files", "kafkalog_spark.log.log_dir",
            "kafkalog_spark.source.filters", "kafkalog_spark.source.options", "kafkalog_spark.log.offset_index",
            "kafkalog_spark.log.time_index", "kafkalog_spark.log.transaction_index"} <= \
        graph["kafkalog_spark.source.planning"]
    assert find_cycles(graph) == []


def test_every_module_has_a_layer() -> None:
    assert [m for m in import_graph() if m != "kafkalog_spark" and layer_of(m) is None] == []


def test_lower_layers_never_import_higher_ones() -> None:
    wrong = [f"{m} -> {d}" for m, deps in import_graph().items() for d in sorted(deps)
             if layer_of(m) is not None and layer_of(d) is not None and layer_of(d) > layer_of(m)]
    assert wrong == []
