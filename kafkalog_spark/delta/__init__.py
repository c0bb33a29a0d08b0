"""Writing analysis results into Delta tables, one snapshot at a time."""

from .tables import TableLocation, check_snapshot_id, read_snapshot, write_snapshot

__all__ = ["TableLocation", "check_snapshot_id", "read_snapshot", "write_snapshot"]
