"""Each offset and time index entry checked against the batches of its segment, in a Spark cogroup of the index
view's entries with the batches view's headers (the rules: :mod:`kafkalog_spark.log.index_entry_checks`, which
lists every check; the nightly job and validate have the task that reads each segment run them instead, as the
decoded view's ``index_entry_findings`` part).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from ..log.index_entry_checks import BATCH_COLUMNS, IndexEntries, segment_entry_findings
from .finding_columns import INDEX_FINDINGS, KEYS, ok

ENTRY_COLUMNS = ["file", "indexType", "slot", "offset", "position", "timestamp", "logSize"]


def check_segment(key: tuple, entries: pa.Table, batches: pa.Table) -> pa.Table:
    """The findings of one segment's index entries (the cogroup function)."""
    from ..schemas import arrow_schema

    schema = arrow_schema(INDEX_FINDINGS)
    if entries.num_rows == 0:
        return schema.empty_table()
    log_dir, topic, partition, base = (k.as_py() for k in key)
    k = {"logDir": log_dir, "topic": topic, "partition": partition, "baseOffset": base}
    indexes = []
    for file, kind in sorted(set(zip(entries.column("file").to_pylist(), entries.column("indexType").to_pylist(),
                                     strict=True))):
        t = entries.filter(pc.equal(entries.column("file"), file)).sort_by("slot")
        slots, offsets = (t.column(c).to_numpy().astype(np.int64) for c in ("slot", "offset"))
        if kind == "offset":
            indexes.append(IndexEntries(file, kind, slots, offsets,
                                        positions=t.column("position").to_numpy().astype(np.int64)))
        else:
            indexes.append(IndexEntries(file, kind, slots, offsets,
                                        timestamps=t.column("timestamp").to_numpy().astype(np.int64)))
    rows = segment_entry_findings(k, batches, indexes, entries.column("logSize")[0].as_py())
    return pa.Table.from_pylist(rows, schema=schema)


def findings(views: Mapping[str, DataFrame], live: DataFrame) -> DataFrame:
    entries = ok(views["index"]).join(live.select(*KEYS, "logSize"), KEYS, "left").select(*KEYS, *ENTRY_COLUMNS)
    # only the segments whose entries are read (an incremental run reads those of the segments it decodes)
    batches = ok(views["batches"]).select(*KEYS, *BATCH_COLUMNS).join(entries.select(*KEYS).distinct(), KEYS,
                                                                       "left_semi")
    return entries.groupBy(*KEYS).cogroup(batches.groupBy(*KEYS)).applyInArrow(check_segment, INDEX_FINDINGS)
