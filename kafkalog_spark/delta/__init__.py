"""Writing analysis results into Delta tables, one snapshot at a time."""

from .tables import TableLocation, read_snapshot, write_snapshot

__all__ = ["TableLocation", "read_snapshot", "write_snapshot"]
