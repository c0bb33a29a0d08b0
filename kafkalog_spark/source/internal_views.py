"""The state views of the internal topics: a partition dir of `__consumer_offsets`, `__transaction_state` or
`__cluster_metadata` read whole by one task, decoded and replayed (:mod:`kafkalog_spark.state`) into rows.

Also the records view's decoded form (``decodeInternal``): the same decoder, one record at a time."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from pyspark.sql.types import StructType, TimestampType

from .. import schemas
from ..findings import Finding

SCHEMAS = {
    "consumer_offsets": schemas.CONSUMER_OFFSETS,
    "group_metadata": schemas.GROUP_METADATA,
    "transactions": schemas.TRANSACTIONS,
    "cluster_metadata": schemas.CLUSTER_METADATA,
    "topic_catalog": schemas.TOPIC_CATALOG,
    "metadata_configs": schemas.METADATA_CONFIGS,
    "remote_log_segments": schemas.REMOTE_LOG_SEGMENTS,
}


def _builder(view: str) -> Callable[[list], list[dict]]:
    from ..state import groups, metadata_image, remote_log_metadata, transactions

    return {"consumer_offsets": groups.offset_commit_rows, "group_metadata": groups.group_rows,
            "transactions": transactions.transaction_rows, "cluster_metadata": metadata_image.metadata_rows,
            "topic_catalog": metadata_image.topic_catalog_rows,
            "metadata_configs": metadata_image.metadata_config_rows,
            "remote_log_segments": remote_log_metadata.remote_segment_rows}[view]


def _micros(schema: StructType) -> list[str]:
    """The top-level timestamp columns: the state rows hold Kafka's milliseconds, Arrow wants microseconds."""
    return [f.name for f in schema.fields if isinstance(f.dataType, TimestampType)]


def state_rows(view: str, log, findings: list[Finding], filesystem=None) -> list[dict]:
    """The rows of a state view for one partition dir of its internal topic."""
    from ..state.internal_records import read_internal

    records = read_internal(log, findings, snapshots=True, filesystem=filesystem)
    rows = _builder(view)(records)
    stamps = _micros(SCHEMAS[view])
    for r in rows:
        r["sourcePartition"] = log.partition
        for name in stamps:
            if r.get(name) is not None:
                r[name] *= 1000
    return rows


def decoded_columns(batch: pa.RecordBatch, topic: str) -> list[pa.Array]:
    """The decodeInternal columns for a records batch of ``topic`` (all null for a topic without schemas)."""
    from ..state.internal_records import DECODED_TOPICS, decode

    n = batch.num_rows
    fields = schemas.DECODED_INTERNAL
    if topic not in DECODED_TOPICS or n == 0:
        return [pa.nulls(n, _arrow_type(f)) for f in fields]
    keys, values = batch.column("key").to_pylist(), batch.column("value").to_pylist()
    control = batch.column("isControl").to_pylist()
    control_type = batch.column("controlType").to_pylist()
    out: dict[str, list] = {f.name: [] for f in fields}
    for i in range(n):
        d = decode(topic, keys[i], values[i], control_type[i] if control[i] else None)
        for name, v in (("keyType", d.key_type), ("keyVersion", d.key_version), ("decodedKey", d.key_json()),
                        ("valueVersion", d.value_version), ("decodedValue", d.value_json()),
                        ("decodeError", d.error)):
            out[name].append(v)
    return [pa.array(out[f.name], _arrow_type(f)) for f in fields]


def _arrow_type(field) -> pa.DataType:
    from ..schemas import arrow_schema

    return arrow_schema(StructType([field])).field(0).type
