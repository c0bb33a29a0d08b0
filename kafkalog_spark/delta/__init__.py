"""Writing analysis results into Delta tables, one snapshot at a time, all-or-nothing (:mod:`.snapshots`)."""

from .snapshots import (
    MANIFEST,
    RUNS,
    append_rows,
    begin,
    clean_up,
    commit,
    committed,
    committed_runs,
    drop_runs,
    new_run_id,
    other_runs,
    read_table,
    replaced_runs,
    rows_of_runs,
    run_rows,
    snapshot_tables_written,
    table_exists,
)
from .tables import IDENTIFIER, TableLocation, check_name, check_snapshot_id

__all__ = ["IDENTIFIER", "MANIFEST", "RUNS", "TableLocation", "append_rows", "begin", "check_name",
           "check_snapshot_id", "clean_up", "commit", "committed", "committed_runs", "drop_runs", "new_run_id",
           "other_runs", "read_table", "replaced_runs", "rows_of_runs", "run_rows", "snapshot_tables_written",
           "table_exists"]
