"""`kafkalog dump`: what kafka-dump-log prints for a `.log` file, as text or JSON Lines.

Text output follows DumpLogSegments line for line (same field names and order), so scripts written
against kafka-dump-log keep working. JSON output gives one object per batch (``"kind": "batch"``) and
per record (``"kind": "record"``) with the same names; null keys and values have size -1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from ..findings import Finding
from ..format.batches import SegmentContext, batches_view
from ..format.java_text import java_utf8
from ..format.records import control_type, records_view
from ..log.file_records import FileRecords
from ..log.log_dir import segment_of_file


@dataclass(frozen=True)
class DumpOptions:
    deep_iteration: bool = False
    print_data_log: bool = False
    as_json: bool = False

    @property
    def records(self) -> bool:
        # dump-log: --print-data-log implies deep iteration
        return self.deep_iteration or self.print_data_log


def _text(b: bytes | None) -> str | None:
    # kafka-dump-log's default StringDecoder: Java's UTF-8 decoding, replacement characters and all
    return None if b is None else java_utf8(b)


def batch_json(b: dict) -> dict:
    """A batch row (batches view) under dump-log's names."""
    out = {"kind": "batch", "baseOffset": b["baseOffset"], "lastOffset": b["lastOffset"], "count": b["count"]}
    if b["magic"] >= 2:
        out |= {k: b[k] for k in ("baseSequence", "lastSequence", "producerId", "producerEpoch",
                                  "partitionLeaderEpoch", "isTransactional", "isControl", "deleteHorizonMs")}
    return out | {"position": b["position"], "timestampType": b["timestampType"], "maxTimestamp": b["maxTimestamp"],
                  "size": b["size"], "magic": b["magic"], "compresscodec": b["compresscodec"], "crc": b["crc"],
                  "isvalid": b["isValid"]}


def batch_text(b: dict, valid_bytes: int) -> str:
    if b["magic"] >= 2:
        horizon = "OptionalLong.empty" if b["deleteHorizonMs"] is None else f"OptionalLong[{b['deleteHorizonMs']}]"
        head = (f"baseOffset: {b['baseOffset']} lastOffset: {b['lastOffset']} count: {b['count']} "
                f"baseSequence: {b['baseSequence']} lastSequence: {b['lastSequence']} producerId: {b['producerId']} "
                f"producerEpoch: {b['producerEpoch']} partitionLeaderEpoch: {b['partitionLeaderEpoch']} "
                f"isTransactional: {_bool(b['isTransactional'])} isControl: {_bool(b['isControl'])} "
                f"deleteHorizonMs: {horizon}")
    else:
        head = f"offset: {b['lastOffset']}"
    return (f"{head} position: {valid_bytes} {b['timestampType']}: {b['maxTimestamp']} size: {b['size']} "
            f"magic: {b['magic']} compresscodec: {b['compresscodec']} crc: {b['crc']} isvalid: {_bool(b['isValid'])}")


def _bool(v: bool) -> str:
    return "true" if v else "false"


def record_fields(r: dict, magic: int, print_data: bool) -> dict:
    """A record row under dump-log's names (JSON form)."""
    ts = r["timestamp"]
    out = {"kind": "record", "offset": r["offset"], "timestampType": r["timestampType"], "timestamp": ts,
           "keySize": r["keySize"], "valueSize": r["valueSize"]}
    if magic >= 2:
        out["sequence"] = r["sequence"]
        out["headerKeys"] = [h["key"] for h in r["headers"]]
    else:
        out["isValid"] = r["isValid"]
    if r["isControl"]:
        if r["controlType"] in ("COMMIT", "ABORT"):
            out["endTxnMarker"] = r["controlType"]
            out["coordinatorEpoch"] = r["coordinatorEpoch"]
        else:
            out["controlType"] = r["controlType"]
            out["controlTypeId"] = control_type(r["key"])[1]
    elif print_data:
        if r["key"] is not None:
            out["key"] = _text(r["key"])
        if r["value"] is not None:
            out["payload"] = _text(r["value"])
    return out


def record_text(f: dict, crc: int | None) -> str:
    s = (f"| offset: {f['offset']} {f['timestampType']}: {f['timestamp']} keySize: {f['keySize']} "
         f"valueSize: {f['valueSize']}")
    if "sequence" in f:
        s += f" sequence: {f['sequence']} headerKeys: [{','.join(f['headerKeys'])}]"
    else:  # legacy records print their own validity and CRC (with dump-log's stray brace)
        s += f" isValid: {_bool(f['isValid'])} crc: {crc}}}"
    if "endTxnMarker" in f:
        s += f" endTxnMarker: {f['endTxnMarker']} coordinatorEpoch: {f['coordinatorEpoch']}"
    elif "controlType" in f:
        s += f" controlType: {f['controlType']}({f['controlTypeId']})"
    if "key" in f:
        s += f" key: {f['key']}"
    if "payload" in f:
        s += f" payload: {f['payload']}"
    return s


def _record_rows(batches: Iterator[pa.RecordBatch]) -> list[dict]:
    """Rows with Kafka's millisecond timestamps (-1 for none) instead of Spark timestamps."""
    rows = []
    for batch in batches:
        i = batch.schema.get_field_index("timestamp")
        ms = pc.fill_null(pc.divide(batch.column(i).cast(pa.int64()), 1000), -1)
        rows.extend(batch.set_column(i, "timestamp", ms).to_pylist())
    return rows


def dump_log_file(path: str, opts: DumpOptions, findings: list[Finding] | None = None) -> Iterator[str]:
    """Lines (text) or JSON documents for one `.log` file, after the ``Dumping`` header."""
    findings = [] if findings is None else findings
    tp, base = segment_of_file(path)
    ctx = SegmentContext(path, tp.topic if tp else "", tp.partition if tp else -1, base if base is not None else -1)
    if not opts.as_json:
        yield f"Log starting offset: {base if base is not None else 0}"
    records = FileRecords(path)
    valid_bytes = 0
    for chunk in records.chunks(findings):
        batches = batches_view(chunk, ctx, findings).to_pylist()
        # legacy compressed wrappers only reveal their base offset once decompressed
        need_rows = opts.records or any(b["baseOffset"] is None for b in batches)
        rows = _record_rows(records_view(chunk, ctx, findings)) if need_rows else []
        by_position: dict[int, list[dict]] = {}
        for r in rows:
            by_position.setdefault(r["position"], []).append(r)
        for b in batches:
            if b["baseOffset"] is None and by_position.get(b["position"]):
                b["baseOffset"] = by_position[b["position"]][0]["offset"]
            yield json.dumps(batch_json(b)) if opts.as_json else batch_text(b, valid_bytes)
            for r in by_position.get(b["position"], []) if opts.records else []:
                f = record_fields(r, b["magic"], opts.print_data_log)
                yield json.dumps(f) if opts.as_json else record_text(f, r["crc"])
            valid_bytes += b["size"]
    for f in findings:
        if f.kind == "truncated_tail":
            yield json.dumps({"kind": "finding"} | f.as_dict()) if opts.as_json else f.detail
