"""How many bytes a record takes inside its batch, uncompressed, as Column expressions over the records view
reduced by :func:`without_payloads` (values and headers replaced by their sizes).

Kafka's own arithmetic (``DefaultRecord.sizeInBytes``, ``LegacyRecord.recordSize``): a v2 record is a varint
length then a body of attributes, timestamp delta (varlong), offset delta, key and value with their varint
lengths, and the headers; a v0/v1 entry is 12 bytes of offset and size, then a 14/22-byte header, key and
value. The compaction preview sizes the batches a clean rewrites with these, the segment statistics the
bytes a segment holds before compression.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

V2_BATCH_OVERHEAD = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD


def varint_size(c: Column) -> Column:
    """Bytes of the zig-zag varint of ``c`` (a long column): ByteUtils.sizeOfVarint / sizeOfVarlong, 7 bits a
    byte of the zig-zag value's significant bits. ``c`` appears twice: these sizes nest (a record's length is
    the varint of a body made of varints), and a branch per byte count made each level copy the one below
    ten times over, into plans of hundreds of kilobytes that Spark Connect sends and analyses again and again."""
    zigzag = F.shiftleft(c, 1).bitwiseXOR(F.shiftright(c, 63))  # Kafka's (v << 1) ^ (v >> 63): never overflows
    significant_bits = F.length(F.bin(zigzag))  # bin(0) is "0": one byte; a negative zigzag has 64 bits: ten
    return F.floor((significant_bits + 6) / 7).cast("long")


def header_bytes(headers: Column) -> Column:
    """The headers' count and each header's key and value with their varint lengths (null value: -1)."""
    def one(acc: Column, h: Column) -> Column:
        k = F.octet_length(h["key"]).cast("long")
        v = F.coalesce(F.octet_length(h["value"]).cast("long"), F.lit(-1).cast("long"))
        return acc + varint_size(k) + k + varint_size(v) + F.greatest(v, F.lit(0))

    count = F.coalesce(F.size(headers), F.lit(0)).cast("long")
    return varint_size(count) + F.coalesce(F.aggregate(headers, F.lit(0).cast("long"), one), F.lit(0))


def header_data_bytes(headers: Column) -> Column:
    """The headers' keys and values alone (a null value: 0), what a record carries besides its key and value."""
    def one(acc: Column, h: Column) -> Column:
        return acc + F.octet_length(h["key"]).cast("long") + F.coalesce(F.octet_length(h["value"]).cast("long"),
                                                                         F.lit(0).cast("long"))

    return F.coalesce(F.aggregate(headers, F.lit(0).cast("long"), one), F.lit(0).cast("long"))


def without_payloads(records: DataFrame) -> DataFrame:
    """The records view without values and headers: the headers become their sizes (``headerBytes``, as a v2
    record encodes them; ``headerDataBytes``, their keys' and values' bytes), the value its MD5 (``valueHash``);
    a null value stays visible as ``valueSize`` -1 and keys stay. What the segment statistics and the compaction
    preview need of a record, in a fraction of its bytes: the nightly job keeps this in memory, not the payloads
    (caching the records view with its headers ran a 1 GiB heap out of memory on 1 GB of log). Already reduced:
    returned as is."""
    if "headers" not in records.columns:
        return records
    return (records.withColumn("headerBytes", header_bytes(F.col("headers")))
            .withColumn("headerDataBytes", header_data_bytes(F.col("headers")))
            .withColumn("valueHash", F.md5(F.col("value")))  # replicas' records compared (null: a tombstone)
            .drop("value", "headers"))


def v2_body_without_timestamp() -> Column:
    """A v2 record's body without its timestamp delta (that depends on the batch's base timestamp)."""
    key_size, value_size = F.col("keySize").cast("long"), F.col("valueSize").cast("long")
    return (F.lit(1) + varint_size(F.col("offset") - F.col("baseOffset")) + varint_size(key_size)
            + F.greatest(key_size, F.lit(0)) + varint_size(value_size) + F.greatest(value_size, F.lit(0))
            + F.col("headerBytes"))


def v2_record_bytes(timestamp_delta: Column) -> Column:
    """A whole v2 record: its length varint and body, given its timestamp delta from the batch's base."""
    body = v2_body_without_timestamp() + varint_size(timestamp_delta)
    return varint_size(body) + body


def legacy_entry_bytes() -> Column:
    """A v0/v1 entry: offset and size (12), the message header (14 for v0, 22 for v1), key and value."""
    key_size, value_size = F.col("keySize").cast("long"), F.col("valueSize").cast("long")
    return (F.lit(12) + F.when(F.col("magic") == 0, 14).otherwise(22) + F.greatest(key_size, F.lit(0))
            + F.greatest(value_size, F.lit(0)))
