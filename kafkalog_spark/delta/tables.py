"""Where the snapshot tables live and the names that reach Delta: every name and id is checked against a strict
pattern before it is used, so none can change what a path, a table name or a predicate means.

Writing and reading snapshots (all-or-nothing, through the ``snapshots`` manifest) is :mod:`.snapshots`.
Tables live under a warehouse path (local, s3://, abfss://...) or in a catalog (``catalog.schema.table`` on
Databricks / Unity Catalog).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SNAPSHOT_COLUMNS = ("snapshotId", "snapshotTime")
# A snapshot id is user text (a flag, the TOML, a notebook widget) kept as a partition value: only ids of this
# shape are accepted, with no quote, backslash or space (the default id is the run's UTC time).
SNAPSHOT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,127}")
# A table, schema or catalog name: a path component and an unquoted SQL name alike.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def check_snapshot_id(snapshot_id: str) -> str:
    """``snapshot_id`` if it is a valid snapshot id, else ValueError naming it."""
    if not isinstance(snapshot_id, str) or not SNAPSHOT_ID.fullmatch(snapshot_id):
        raise ValueError(f"snapshot id {snapshot_id!r}: use 1 to 128 letters, digits and . _ : + - "
                         "(starting with a letter or digit)")
    return snapshot_id


def check_name(name: str, what: str) -> str:
    """``name`` if it is a plain identifier (:data:`IDENTIFIER`), else ValueError naming ``what``."""
    if not isinstance(name, str) or not IDENTIFIER.fullmatch(name):
        raise ValueError(f"{what} {name!r}: expected 1 to 128 letters, digits and _ (not starting with a digit)")
    return name


@dataclass(frozen=True)
class TableLocation:
    """Where the tables go: a warehouse directory, or a catalog and schema."""

    warehouse: str | None = None
    catalog: str | None = None
    schema: str | None = None

    def __post_init__(self) -> None:
        if (self.warehouse is None) == (self.schema is None):
            raise ValueError("give either a warehouse path or a catalog schema for the tables, not both")
        for what, name in (("catalog", self.catalog), ("schema", self.schema)):
            if name is not None:
                check_name(name, what)

    def name(self, table: str) -> str:
        check_name(table, "table name")
        if self.warehouse is not None:
            return f"{self.warehouse.rstrip('/')}/{table}"
        return ".".join(p for p in (self.catalog, self.schema, table) if p)

    @property
    def description(self) -> str:
        """Where the tables are, as a person names it: the warehouse path, or [catalog.]schema."""
        return self.warehouse or ".".join(p for p in (self.catalog, self.schema) if p)

    @property
    def by_path(self) -> bool:
        return self.warehouse is not None
