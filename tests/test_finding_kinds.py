"""The catalogue of finding kinds is the one vocabulary: every kind the code reports is in it, every entry is
reported somewhere, a Finding refuses any other name, and the README prints the catalogue as it is."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from kafkalog_spark.finding_kinds import KINDS, Severity, finding_kind, markdown_table
from kafkalog_spark.findings import Finding
from tests.helpers.corpus import PACKAGE, ROOT

# Calls that name a kind, and the position of the kind among their arguments.
KIND_ARGUMENT = {"Finding": 2, "candidate": 2, "finding": 1, "finding_row": 3, "_row": 2, "_malformed": 3}
KIND_KEYWORDS = {"kind", "too_large_kind", "check"}


def _code_files() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if p.name != "finding_kinds.py"]


def _named_kinds() -> list[tuple[str, str]]:
    """(kind, where) for every literal kind passed to a finding-making call in the package."""
    out = []
    for path in _code_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name in ("sort", "argsort"):
                continue  # numpy's kind="stable"
            args = [a for i, a in enumerate(node.args) if KIND_ARGUMENT.get(name) == i]
            args += [k.value for k in node.keywords if k.arg in KIND_KEYWORDS]
            for a in args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    out.append((a.value, f"{path.relative_to(ROOT)}:{node.lineno}"))
    return out


def test_every_kind_the_code_names_is_catalogued() -> None:
    named = _named_kinds()
    assert len(named) > 60  # the walk found the call sites
    assert [(k, where) for k, where in named if k not in KINDS] == []


def test_every_catalogued_kind_is_reported_somewhere() -> None:
    text = "\n".join(p.read_text() for p in _code_files())
    # the two index kinds build some names from their prefix (IndexFile.KIND): f"{KIND}_zero_tail"
    prefixed = {f"{prefix}{suffix}" for prefix in ("index", "timeindex")
                for suffix in ("_zero_tail", "_nonzero_tail", "_too_large", "_bad_file_name", "_length_not_multiple")
                if f'_{suffix.lstrip("_")}"' in text}
    unused = [k for k in KINDS if f'"{k}"' not in text and k not in prefixed]
    assert unused == []


def test_a_finding_takes_its_default_severity_from_the_catalogue() -> None:
    assert Finding("f.log", 0, "truncated_tail", "x").severity == Severity.WARNING
    assert Finding("f.log", 0, "batch_crc_invalid", "x").severity == Severity.ERROR
    assert Finding("f.log", 0, "truncated_tail", "x", Severity.ERROR).severity == Severity.ERROR


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="crc_mismatch"):
        Finding("f.log", 0, "crc_mismatch", "the old name of batch_crc_invalid")
    with pytest.raises(ValueError):
        finding_kind("no_such_kind")


# What reports findings: the files Kafka writes (and the file listing, the internal topics' records), and the
# commands and analyses (README: Command line)
SOURCES = {"files", ".log", ".index", ".timeindex", ".txnindex", ".snapshot", "checkpoint", "leader-epoch-checkpoint",
           "partition.metadata", "meta.properties", "quorum-state", "internal topics", "dump", "validate",
           "consumer_positions", "open_transactions", "catalog_checks", "replica_comparison", "tiered_storage",
           "remote_storage"}
# a kind named after a file kind is that reader's, unless the cross-file validation reports it
PREFIXES = {"index_": ".index", "timeindex_": ".timeindex", "txnindex_": ".txnindex", "snapshot_": ".snapshot",
            "meta_properties_": "meta.properties", "checkpoint_": "checkpoint"}


def test_the_catalogue_entries_are_complete() -> None:
    readme = (ROOT / "docs" / "finding-kinds.md").read_text()
    documented = {name: (severity, source, meaning) for name, severity, source, meaning in re.findall(
        r"(?m)^\| `([a-z0-9_]+)` \| (error|warning|info) \| ([^|]+?) \| (.+) \|$", readme)}
    # the README's table (what users read) gives every entry's severity, source and meaning, and no other entry
    assert documented == {k.name: (k.severity.value, k.source, k.meaning) for k in KINDS.values()}
    for k in KINDS.values():
        assert k.name.islower() and " " not in k.name
        assert k.severity in (Severity.ERROR, Severity.WARNING, Severity.INFO) and k.meaning.strip()
        assert k.source in SOURCES, k.name
        assert [src for prefix, src in PREFIXES.items() if k.name.startswith(prefix)] in (
            [], [k.source]) or k.source == "validate", k.name


def test_the_readme_prints_the_catalogue() -> None:
    assert markdown_table() in (ROOT / "docs" / "finding-kinds.md").read_text()


def test_readme_prints_which_kinds_fail_the_gate_at_each_level() -> None:
    from kafkalog_spark.finding_kinds import gate_table

    table = gate_table()
    assert table in (ROOT / "docs" / "finding-kinds.md").read_text()
    rows = table.splitlines()[2:]
    assert len(rows) == 3
    for row, level in zip(rows, (Severity.ERROR, Severity.WARNING, Severity.INFO), strict=True):
        assert {n for n in KINDS if f"`{n}`" in row} == {n for n, k in KINDS.items() if k.severity is level}
