"""The internal topics' analyses as tables with their findings: one composition, used by the CLI commands
(`kafkalog consumer-positions`, `open-transactions`, `catalog-checks`) and the nightly job alike.

Each table is a function of the internal topic's view (or table) and the data partitions' facts: ``log_offsets``
(:func:`.log_offsets.log_offsets` of any number of log dirs of one cluster) and the partition dirs
(:func:`.catalog_checks.partition_dirs`).
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from .catalog_checks import CATALOG_CHECKS, catalog_checks, catalog_findings
from .consumer_positions import CONSUMER_POSITIONS, consumer_positions, position_findings
from .open_transactions import OPEN_TRANSACTIONS, open_transaction_starts, open_transactions, transaction_findings

# table -> the internal topic's view it reads
STATE_VIEWS = {"consumer_positions": "consumer_offsets", "open_transactions": "transactions",
               "catalog_checks": "topic_catalog"}
STATE_TABLES = tuple(STATE_VIEWS)
SCHEMAS = {"consumer_positions": CONSUMER_POSITIONS, "open_transactions": OPEN_TRANSACTIONS,
           "catalog_checks": CATALOG_CHECKS}
# Each table's order when printed: replicas and other clusters' partitions of the same name (the files say whose) last,
# so that the order never depends on how Spark ran the query.
ORDER = {"consumer_positions": ("group", "topic", "partition", "offsetsFile", "recordOffset"),
         "open_transactions": ("topic", "partition", "firstOffset", "logFile", "producerId"),
         "catalog_checks": ("topic", "partition", "dir", "logDir")}
FINDINGS_ORDER = ("logDir", "topic", "partition", "baseOffset", "file", "position", "check")


def state_table(name: str, view: DataFrame, log_offsets: DataFrame | None, partition_dirs: DataFrame | None,
                as_of_ms: int) -> tuple[DataFrame, DataFrame]:
    """The table ``name`` (one of :data:`STATE_TABLES`) and its findings (schema ``INDEX_FINDINGS``). ``view``:
    the internal topic's view :data:`STATE_VIEWS` names; ``log_offsets`` is read by the positions and the
    transactions, ``partition_dirs`` by the catalog checks; ``as_of_ms``: when a transaction counts as hanging."""
    if name == "consumer_positions":
        rows = consumer_positions(view, log_offsets)
        return rows, position_findings(rows)
    if name == "open_transactions":
        rows = open_transactions(open_transaction_starts(log_offsets), view, as_of_ms)
        return rows, transaction_findings(rows)
    if name == "catalog_checks":
        rows = catalog_checks(partition_dirs, view)
        return rows, catalog_findings(rows)
    raise ValueError(f"unknown state table {name!r}: expected one of {', '.join(STATE_TABLES)}")
