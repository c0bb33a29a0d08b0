"""`kafkalog dump` for `.log` segments and KRaft `.checkpoint` snapshots (both are v2 record batches).

Text output is DumpLogSegments' own, line for line, for the chosen Kafka version: 3.9
(core/src/main/scala/kafka/tools/DumpLogSegments.scala) or 4.x (tools/src/main/java/org/apache/kafka/
tools/DumpLogSegments.java). JSON output gives one object per batch (``"kind": "batch"``) and per
record (``"kind": "record"``) under the same names; null keys and values have size -1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ..findings import Finding
from ..format.batches import SegmentContext, batches_view
from ..format.control_records import decode_control_message
from ..format.java_text import java_utf8
from ..format.message_json import UnsupportedVersionError, message_json
from ..format.messages import MessageError
from ..format.records import control_type, records_view
from ..kafka_versions import LATEST, KafkaVersion
from ..log.file_records import FileRecords
from ..log.log_dir import segment_of_file
from .internal_topic_text import RecordCrash, decoded
from .log_walk import INT_MAX, record_timestamps
from .tool_errors import ToolCrash, ToolErrors

BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"  # BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME
# Snapshots.parse: <20-digit end offset>-<10-digit epoch>.checkpoint (raft/.../snapshot/Snapshots.java)
_SNAPSHOT_NAME = re.compile(r"(\d{20})-(\d{10})\.checkpoint")
# How each version prints a control record's message (3.9 knew no LeaderChange printer)
_CONTROL_LABELS = {
    KafkaVersion.V3_9: {"SNAPSHOT_HEADER": "SnapshotHeader ", "SNAPSHOT_FOOTER": "SnapshotFooter ",
                        "KRAFT_VERSION": "KRaftVersion ", "KRAFT_VOTERS": "KRaftVoters "},
    KafkaVersion.V4: {"LEADER_CHANGE": "LeaderChange: ", "SNAPSHOT_HEADER": "SnapshotHeader ",
                      "SNAPSHOT_FOOTER": "SnapshotFooter ", "KRAFT_VERSION": "KRaftVersion ",
                      "KRAFT_VOTERS": "KRaftVoters "},
}


@dataclass(frozen=True)
class DumpOptions:
    """kafka-dump-log's flags (same names) plus our --json and --kafka-version."""

    deep_iteration: bool = False
    print_data_log: bool = False
    as_json: bool = False
    kafka_version: KafkaVersion = LATEST
    skip_record_metadata: bool = False
    max_bytes: int = INT_MAX
    max_message_size: int = 5 * 1024 * 1024
    verify_index_only: bool = False
    index_sanity_check: bool = False
    # the internal topic whose record schemas decode keys and values (--offsets-decoder: __consumer_offsets, ...)
    decoder: str | None = None

    @property
    def data_log(self) -> bool:
        # dump-log: a decoder flag implies --print-data-log
        return self.print_data_log or self.decoder is not None

    @property
    def records(self) -> bool:
        # dump-log: --print-data-log implies deep iteration
        return self.deep_iteration or self.data_log


def java_long(text: str) -> int:
    """Long.parseLong, failing as it does."""
    if re.fullmatch(r"[+-]?\d+", text) and -(2**63) <= int(text) < 2**63:
        return int(text)
    raise ToolCrash("java.lang.NumberFormatException", f'For input string: "{text}"')


def _text(b: bytes | None) -> str | None:
    # kafka-dump-log's default StringDecoder: Java's UTF-8 decoding, replacement characters and all
    return None if b is None else java_utf8(b)


def _bool(v: bool) -> str:
    return "true" if v else "false"


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


def _control_message(r: dict, version: KafkaVersion) -> tuple[str, str] | None:
    """(label, JSON text) of a KRaft control record this version prints as a message, else None."""
    label = _CONTROL_LABELS[version].get(r["controlType"])
    if label is None:
        return None
    try:
        m = decode_control_message(r["controlType"], r["value"])
        return label, message_json(m.schema, m.message, m.version)
    except MessageError as e:
        raise ToolCrash("java.lang.RuntimeException", f"{r['controlType']} at offset {r['offset']}: {e}") from e
    except UnsupportedVersionError as e:
        raise ToolCrash("org.apache.kafka.common.errors.UnsupportedVersionException", str(e)) from e


def record_fields(r: dict, magic: int, opts: DumpOptions) -> dict:
    """A record row under dump-log's names (JSON form); `controlMessage` is the decoded KRaft control
    message as the tool prints it (4.x names a LeaderChange too)."""
    out = {"kind": "record", "offset": r["offset"], "timestampType": r["timestampType"], "timestamp": r["timestamp"],
           "keySize": r["keySize"], "valueSize": r["valueSize"]}
    if magic >= 2:
        out["sequence"] = r["sequence"]
        out["headerKeys"] = [h["key"] for h in r["headers"]]
    else:
        out["isValid"] = r["isValid"]
    if r["isControl"]:
        # the tool decodes control messages only to print the metadata that --skip-record-metadata drops
        skip = opts.skip_record_metadata and not opts.as_json
        message = None if skip else _control_message(r, opts.kafka_version)
        if r["controlType"] in ("COMMIT", "ABORT"):
            out["endTxnMarker"] = r["controlType"]
            out["coordinatorEpoch"] = r["coordinatorEpoch"]
        elif message is not None:
            out["controlLabel"], out["controlMessage"] = message
        else:
            out["controlType"] = r["controlType"]
            out["controlTypeId"] = control_type(r["key"])[1]
    elif opts.decoder is not None:
        try:
            key, payload = decoded(r, opts.decoder, opts.kafka_version)
        except ToolCrash as crash:
            raise RecordCrash(crash) from crash
        if key is not None:
            out["key"] = key
        if payload is not None:
            out["payload"] = payload
    elif opts.print_data_log:
        if r["key"] is not None:
            out["key"] = _text(r["key"])
        if r["value"] is not None:
            out["payload"] = _text(r["value"])
    return out


def record_text(f: dict, crc: int | None, opts: DumpOptions) -> str:
    """One record line: metadata (unless --skip-record-metadata), then key and payload.

    3.9 prints `payload:` always after a space, so with --skip-record-metadata a keyless record's line
    starts ` payload:`; 4.x starts it `| payload:`. 3.9 also closes a legacy record's crc with a stray `}`.
    """
    v3 = opts.kafka_version == KafkaVersion.V3_9
    s = ""
    if not opts.skip_record_metadata:
        s = (f"| offset: {f['offset']} {f['timestampType']}: {f['timestamp']} keySize: {f['keySize']} "
             f"valueSize: {f['valueSize']}")
        if "sequence" in f:
            s += f" sequence: {f['sequence']} headerKeys: [{','.join(f['headerKeys'])}]"
        else:
            s += f" isValid: {_bool(f['isValid'])} crc: {crc}" + ("}" if v3 else "")
        if "endTxnMarker" in f:
            s += f" endTxnMarker: {f['endTxnMarker']} coordinatorEpoch: {f['coordinatorEpoch']}"
        elif "controlMessage" in f:
            s += f" {f['controlLabel']}{f['controlMessage']}"
        elif "controlType" in f:
            s += f" controlType: {f['controlType']}({f['controlTypeId']})"
    prefix = " " if not opts.skip_record_metadata else "| "
    if "key" in f:
        s += f"{prefix}key: {f['key']}"
        prefix = " "
    if "payload" in f:
        s += f"{' ' if v3 else prefix}payload: {f['payload']}"
    return s


def _json_record(f: dict) -> str:
    if "controlMessage" in f:
        f = dict(f, controlMessage=json.loads(f["controlMessage"]))
        del f["controlLabel"]
    return json.dumps(f)


def header_line(name: str) -> str | None:
    """The line after `Dumping <file>`: the segment's base offset, or the snapshot's id."""
    if name.endswith(".log"):
        return f"Log starting offset: {java_long(name.split('.')[0])}"
    if name == BOOTSTRAP_CHECKPOINT:
        return "KRaft bootstrap snapshot"
    m = _SNAPSHOT_NAME.fullmatch(name)
    if m is None:  # Snapshots.parse(...) is empty and the tool calls Optional.get() on it
        raise ToolCrash("java.util.NoSuchElementException", "No value present")
    return f"Snapshot end offset: {int(m[1])}, epoch: {int(m[2])}"


def dump_log_file(path: str, opts: DumpOptions, findings: list[Finding] | None = None,
                  errors: ToolErrors | None = None, absolute_path: str | None = None) -> Iterator[str]:
    """Lines (text) or JSON documents for one `.log` or `.checkpoint` file, after the ``Dumping`` header.
    Offset gaps go to `errors` (keyed by `absolute_path`), as the tool reports them after all files."""
    findings = [] if findings is None else findings
    errors = ToolErrors(opts.kafka_version) if errors is None else errors
    absolute_path = absolute_path or path
    name = path.rsplit("/", 1)[-1]
    head = header_line(name)
    if not opts.as_json:
        yield head
    tp, base = segment_of_file(path)
    ctx = SegmentContext(path, tp.topic if tp else "", tp.partition if tp else -1, base if base is not None else -1)
    limited = opts.max_bytes != INT_MAX
    records = FileRecords(path, limit=opts.max_bytes if limited else None)
    # DumpLogSegments' record-offset check: 4.x starts from -1 (so a segment not starting at 0 reports
    # "-1 is followed by <base>"), 3.9 starts at the first record
    last_offset = -1 if opts.kafka_version == KafkaVersion.V4 else None
    valid_bytes = 0
    mine: list[Finding] = []
    for chunk in records.chunks(mine):
        batches = batches_view(chunk, ctx, mine).to_pylist()
        # legacy compressed wrappers only reveal their base offset once decompressed
        need_rows = opts.records or any(b["baseOffset"] is None for b in batches)
        rows = record_timestamps(records_view(chunk, ctx, mine)) if need_rows else []
        by_position: dict[int, list[dict]] = {}
        for r in rows:
            by_position.setdefault(r["position"], []).append(r)
        for b in batches:
            if b["baseOffset"] is None and by_position.get(b["position"]):
                b["baseOffset"] = by_position[b["position"]][0]["offset"]
            yield json.dumps(batch_json(b)) if opts.as_json else batch_text(b, valid_bytes)
            for r in by_position.get(b["position"], []) if opts.records else []:
                if last_offset is not None and r["offset"] != last_offset + 1:
                    errors.add(errors.non_consecutive, absolute_path, (last_offset, r["offset"]))
                last_offset = r["offset"]
                try:
                    f = record_fields(r, b["magic"], opts)
                except RecordCrash as crash:
                    if not opts.as_json and not opts.skip_record_metadata:
                        yield record_text(record_fields(r, b["magic"], replace(opts, decoder=None,
                                                                               print_data_log=False)), r["crc"], opts)
                    raise crash
                yield _json_record(f) if opts.as_json else record_text(f, r["crc"], opts)
            valid_bytes += b["size"]
    for f in mine:
        if f.kind == "truncated_tail":
            if limited:  # the tool prints no trailing bytes under --max-bytes; a cut is no finding
                if records.limit is not None and f.position + int(f.detail.split()[1]) >= records.limit:
                    continue
                findings.append(f)
                continue
            yield json.dumps({"kind": "finding"} | f.as_dict()) if opts.as_json else f.detail
        else:
            findings.append(f)
