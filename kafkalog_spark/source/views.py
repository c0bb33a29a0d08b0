"""The views that never read `.log` files: segments, index entries, partition-level files."""

from __future__ import annotations

from pyspark.sql.types import StructType

from .. import schemas

SCHEMAS = {
    "records": schemas.RECORDS,
    "batches": schemas.BATCHES,
    "segments": schemas.SEGMENTS,
    "index": schemas.INDEX,
    "partition_files": schemas.PARTITION_FILES,
}


def view_schema(view: str) -> StructType:
    return SCHEMAS[view]
