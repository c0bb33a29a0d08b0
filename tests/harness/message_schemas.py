"""Copy the internal topics' record schemas out of Kafka's JARs into the package, and write the goldens
of kafka-dump-log's decoder flags.

    python -m tests.harness.message_schemas            # schemas -> kafkalog_spark/format/message_schemas/
    python -m tests.harness.message_schemas --goldens  # decoder goldens -> data/<corpus>/decoder-goldens/
    python -m tests.harness.message_schemas --goldens --flag remote-log-metadata-decoder   # only that flag's

Kafka ships each schema as a resource `common/message/<Name>.json` (with `//` comment lines) in the JAR
of the component that owns it. The 4.4.0 files go to `message_schemas/`; a 3.9.2 file goes to
`message_schemas/3.9/` where it differs from 4.4.0's (ignoring "about" texts), because the 3.9 tool reads
and prints with its own schema (it knows no tagged field added since, so it prints none), and so does
every 3.9.2 metadata record (the set of them is what 3.9 knows).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import struct
import tempfile
import zipfile
from pathlib import Path

import crc32c

from tests.harness.broker import KafkaDistribution, dump_log

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "kafkalog_spark" / "format" / "message_schemas"
NEWEST, OLDER = "4.4.0", "3.9.2"
OLDER_DIR = "3.9"
# artifact -> which of its schemas we need (a name pattern)
ARTIFACTS = {
    "kafka-group-coordinator": r"(OffsetCommit|LegacyOffsetCommit|GroupMetadata|ConsumerGroup|ShareGroup|StreamsGroup)"
                               r"\w*(Key|Value)",
    "kafka-transaction-coordinator": r"TransactionLog(Key|Value)",
    "kafka-share-coordinator": r"Share(Snapshot|Update)(Key|Value)",
    "kafka-clients": r"ConsumerProtocol(Subscription|Assignment)",
}
# __cluster_metadata's records (common/metadata/*.json; their "type" is "metadata")
METADATA_ARTIFACT = "kafka-metadata"
# __remote_log_metadata's records (KIP-405): resources message/<Name>.json of kafka-storage, "type" "metadata" too
# (apiKeys 0 to 3, which the loader keeps apart from the cluster metadata records by their names' prefixes)
REMOTE_ARTIFACT = "kafka-storage"
REMOTE_PATTERN = r"Remote(LogSegmentMetadata|PartitionDeleteMetadata)\w*Record"
_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)

# The decoder flags, the internal topic each is for, and the Kafka versions whose tool has the flag
DECODER_FLAGS = {
    "--offsets-decoder": "__consumer_offsets",
    "--transaction-log-decoder": "__transaction_state",
    "--cluster-metadata-decoder": "__cluster_metadata",
    "--remote-log-metadata-decoder": "__remote_log_metadata",
    "--share-group-state-decoder": "__share_group_state",
}
CORPORA = ("samples", "samples-kafka4")
# The tiered-storage corpora (tests/harness/tiered_corpus.py): only their __remote_log_metadata is dumped, with
# --remote-log-metadata-decoder; their goldens are kept beside them (data/samples-internal/<version>/tiered/)
TIERED_CORPORA = ("samples-internal/3.9.2/tiered", "samples-internal/4.4.0/tiered")
REMOTE_FLAG = "--remote-log-metadata-decoder"
GOLDEN_DIR = "decoder-goldens"
TOOL_VERSIONS = (OLDER, NEWEST)


def _schemas(version: str) -> dict[str, dict]:
    dist = KafkaDistribution(version).ensure()
    out: dict[str, dict] = {}
    for artifact, pattern in {**ARTIFACTS, METADATA_ARTIFACT: "", REMOTE_ARTIFACT: ""}.items():
        jar = dist.libs / f"{artifact}-{version}.jar"
        if not jar.exists():  # kafka-share-coordinator is new in 4.x
            continue
        with zipfile.ZipFile(jar) as z:
            for name in z.namelist():
                m = re.fullmatch(r"common/(message|metadata)/(\w+)\.json", name)
                if m and (re.fullmatch(pattern, m[2]) if m[1] == "message" else artifact == METADATA_ARTIFACT):
                    out[m[2]] = json.loads(_COMMENT.sub("", z.read(name).decode()))
                remote = re.fullmatch(r"message/(\w+)\.json", name)
                if artifact == REMOTE_ARTIFACT and remote and re.fullmatch(REMOTE_PATTERN, remote[1]):
                    out[remote[1]] = json.loads(_COMMENT.sub("", z.read(name).decode()))
    return out


def _without_about(spec: object) -> object:
    if isinstance(spec, dict):
        return {k: _without_about(v) for k, v in spec.items() if k != "about"}
    if isinstance(spec, list):
        return [_without_about(v) for v in spec]
    return spec


def write_schemas() -> int:
    newest, older = _schemas(NEWEST), _schemas(OLDER)
    (TARGET / OLDER_DIR).mkdir(parents=True, exist_ok=True)
    for old in [*TARGET.glob("*.json"), *(TARGET / OLDER_DIR).glob("*.json")]:
        old.unlink()
    for name, spec in newest.items():
        (TARGET / f"{name}.json").write_text(json.dumps(spec, indent=1) + "\n")
    for name, spec in older.items():
        # 3.9's group coordinator reads no share-group record (its serde knows types 0 to 8 only)
        if name.startswith("ShareGroup"):
            continue
        # every 3.9 metadata record: which ones 3.9 knows is the point (ClearElrRecord is 4.x's)
        if spec.get("type") == "metadata" or name not in newest or _without_about(spec) != _without_about(
                newest[name]):
            (TARGET / OLDER_DIR / f"{name}.json").write_text(json.dumps(spec, indent=1) + "\n")
    return len(newest) + len(older)


def golden_path(corpus: str, rel: Path, flag: str, version: str, stream: str = "stdout") -> Path:
    tail = ".stderr.txt" if stream == "stderr" else ".txt"
    return ROOT / "data" / corpus / GOLDEN_DIR / rel.parent.name / f"{rel.name}.{flag[2:]}.{version}{tail}"


def golden_cases() -> list[tuple[str, Path, str, str]]:
    """(corpus, log file relative to where the tool runs, flag, tool version) for every decoder golden: the
    internal topics' segments of both corpora, an ordinary topic's first segment (a keyless record: the
    decoders refuse it) and the crafted segments (their flag is in their name; their goldens are kept with
    the 3.9 corpus's, the segments are not: :func:`write_crafted` makes them where they are dumped); and every
    file of the tiered corpora's `__remote_log_metadata` partitions with --remote-log-metadata-decoder."""
    cases = []
    for corpus in CORPORA:
        root = ROOT / "data" / corpus
        for flag, topic in DECODER_FLAGS.items():
            logs = [log.relative_to(root) for log in (root / "broker").glob(f"{topic}-*/*.log")]
            if topic == "__cluster_metadata":  # KRaft snapshots hold metadata records too
                logs += [p.relative_to(root) for p in (root / "broker").glob("**/*.checkpoint")]
            if corpus == CORPORA[0]:
                logs += [Path("broker") / ORDINARY, *(Path(n) / CRAFTED_LOG for n in CRAFTED_SEGMENTS
                                                     if n.startswith(flag[2:]))]
            for log in sorted(logs):
                for version in TOOL_VERSIONS:
                    cases.append((corpus, log, flag, version))
    for corpus in TIERED_CORPORA:  # every file of the partition dirs: indexes, producer snapshots, checkpoints too
        root = ROOT / "data" / corpus
        files = sorted(p.relative_to(root) for p in (root / "broker").glob(f"{DECODER_FLAGS[REMOTE_FLAG]}-*/*"))
        cases += [(corpus, f, REMOTE_FLAG, version) for f in files for version in TOOL_VERSIONS]
    return cases


def is_crafted(rel: Path) -> bool:
    return rel.parent.name in CRAFTED_SEGMENTS


ORDINARY = "hello-round-robin-0/00000000000000000000.log"
# Crafted segments: records a healthy broker never writes, to see what each tool prints for them.
CRAFTED_LOG = "00000000000000000000.log"


def _varint(n: int) -> bytes:
    z, out = (n << 1) ^ (n >> 63), b""
    while True:
        if z < 0x80:
            return out + bytes([z])
        out += bytes([z & 0x7F | 0x80])
        z >>= 7


def _record(delta: int, key: bytes | None, value: bytes | None) -> bytes:
    def field(b: bytes | None) -> bytes:
        return _varint(-1) if b is None else _varint(len(b)) + b
    body = b"\0" + _varint(0) + _varint(delta) + field(key) + field(value) + _varint(0)
    return _varint(len(body)) + body


def v2_batch(records: list[tuple[bytes | None, bytes | None]], timestamp: int = 1795254447350) -> bytes:
    """One uncompressed magic-2 batch at offset 0 (no producer, no sequence)."""
    body = b"".join(_record(i, k, v) for i, (k, v) in enumerate(records))
    after_crc = struct.pack(">hiqqqhii", 0, len(records) - 1, timestamp, timestamp, -1, -1, -1, len(records)) + body
    head = struct.pack(">ib", 0, 2) + struct.pack(">I", crc32c.crc32c(after_crc))
    return struct.pack(">qi", 0, len(head) + len(after_crc)) + head + after_crc


def _str(s: str | None) -> bytes:
    return struct.pack(">h", -1) if s is None else struct.pack(">h", len(s.encode())) + s.encode()


def _offset_key(group: str, topic: str, partition: int, record_type: int = 1) -> bytes:
    return struct.pack(">h", record_type) + _str(group) + _str(topic) + struct.pack(">i", partition)


def _offset_value(version: int = 3, offset: int = 7) -> bytes:
    return struct.pack(">hqi", version, offset, 0) + _str("") + struct.pack(">q", 1795254447346)


def _group_value(subscription: bytes, assignment: bytes) -> bytes:
    """GroupMetadataValue v3, protocol type consumer, one member."""
    member = (_str("m-1") + _str(None) + _str("c") + _str("/127.0.0.1") + struct.pack(">ii", 300000, 45000)
              + struct.pack(">i", len(subscription)) + subscription + struct.pack(">i", len(assignment)) + assignment)
    return (struct.pack(">h", 3) + _str("consumer") + struct.pack(">i", 1) + _str("range") + _str("m-1")
            + struct.pack(">qi", 1795254447191, 1) + member)


def _txn_key(tid: str, version: int = 0) -> bytes:
    return struct.pack(">h", version) + _str(tid)


def _txn_value(status: int, partitions: list[tuple[str, list[int]]], version: int = 0) -> bytes:
    parts = struct.pack(">i", len(partitions)) + b"".join(
        _str(t) + struct.pack(">i", len(ps)) + b"".join(struct.pack(">i", p) for p in ps) for t, ps in partitions)
    stamps = struct.pack(">qq", 1795254437234, 1795254437234)
    return struct.pack(">hqhib", version, 9, 0, 60000, status) + parts + stamps


def _uvarint(n: int) -> bytes:
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def _compact(s: str | None) -> bytes:
    return _uvarint(0) if s is None else _uvarint(len(s.encode()) + 1) + s.encode()


def _metadata(api_key: int, body: bytes, version: int = 0, frame: int = 1) -> bytes:
    return _uvarint(frame) + _uvarint(api_key) + _uvarint(version) + body


_TOPIC = _compact("orders") + bytes(range(16)) + b"\0"  # TopicRecord v0: name, topic id, no tagged fields


def _quota(value: float) -> bytes:
    """ClientQuotaRecord v0 for user alice with `value`."""
    entity = _uvarint(2) + _compact("user") + _compact("alice") + b"\0"
    return _metadata(14, entity + _compact("producer_byte_rate") + struct.pack(">d", value) + b"\0\0")


# __remote_log_metadata's records (RemoteLogMetadataSerde: the metadata framing, flexible version 0 messages)
_TOPIC_ID, _SEGMENT_ID = bytes(range(16)), bytes(range(100, 116))


def _topic_id_partition(name: str | None = "orders", partition: int = 3) -> bytes:
    return _compact(name) + _TOPIC_ID + struct.pack(">i", partition) + b"\0"


def _compact_bytes(b: bytes | None) -> bytes:
    return _uvarint(0) if b is None else _uvarint(len(b) + 1) + b


def _tags(tags: dict[int, bytes] | None = None) -> bytes:
    tags = tags or {}
    return _uvarint(len(tags)) + b"".join(_uvarint(t) + _uvarint(len(v)) + v for t, v in sorted(tags.items()))


def _epochs(pairs: list[tuple[int, int]]) -> bytes:
    return _uvarint(len(pairs) + 1) + b"".join(struct.pack(">iq", e, o) + b"\0" for e, o in pairs)


def _segment(start: int = 0, end: int = 10, epochs: list[tuple[int, int]] | None = None, custom: bytes | None = None,
             state: int = 0, tags: dict[int, bytes] | None = None, version: int = 0, name: str | None = "orders",
             snapshot: bool = False) -> bytes:
    """RemoteLogSegmentMetadataRecord (api key 0), or with `snapshot` RemoteLogSegmentMetadataSnapshotRecord (3):
    the same fields but a bare segment id for the segment's full id."""
    head = _SEGMENT_ID if snapshot else _topic_id_partition(name) + _SEGMENT_ID + b"\0"
    body = (head + struct.pack(">qqiqq", start, end, 1, 1795254447000, 1795254448000)
            + _epochs([(0, start)] if epochs is None else epochs) + struct.pack(">i", 1892) + _compact_bytes(custom)
            + struct.pack(">b", state) + _tags(tags))
    return _metadata(3 if snapshot else 0, body, version)


def _segment_update(state: int = 1, custom: bytes | None = None) -> bytes:
    """RemoteLogSegmentMetadataUpdateRecord (api key 1)."""
    body = (_topic_id_partition() + _SEGMENT_ID + b"\0" + struct.pack(">iq", 1, 1795254449000) + _compact_bytes(custom)
            + struct.pack(">b", state) + b"\0")
    return _metadata(1, body)


def _partition_delete(state: int = 0) -> bytes:
    """RemotePartitionDeleteMetadataRecord (api key 2)."""
    return _metadata(2, _topic_id_partition() + struct.pack(">iqb", 1, 1795254450000, state) + b"\0")


CRAFTED_SEGMENTS: dict[str, list[tuple[bytes | None, bytes | None]]] = {
    # every one of these is an error the coordinator parsers catch, in both versions
    "offsets-decoder-bad-0": [
        (struct.pack(">h", 99) + _str("g"), b"\0\0"),               # unknown record type
        (_offset_key("g", "t", 0), _offset_value(version=99)),         # unknown value version
        (_offset_key("g", "t", 1), _offset_value()[:9]),               # value cut inside its fields
        (b"\1", _offset_value()),                                     # key too short for its type
        (_offset_key("g", "t", 2)[:6], _offset_value()),               # key cut inside its fields
        (_offset_key("g", "t", 3), b"\0"),                            # value too short for its version
        (struct.pack(">h", 2) + _str("g"), _group_value(b"\0\0\0", b"\xff")),  # unreadable subscription
        (_offset_key("g", "t", 4), None),                              # tombstone
        (_offset_key("g", "t", 5), struct.pack(">hqih", 3, 7, 0, 300) + b"ab"),  # a string longer than the value
    ],
    # 3.9's transaction parser lets its exceptions end the run: one problem per segment
    "transaction-log-decoder-key-version-0": [(_txn_key("x", version=5), _txn_value(0, []))],
    "transaction-log-decoder-cut-value-0": [(_txn_key("x"), _txn_value(1, [("t", [0])])[:20])],
    "transaction-log-decoder-bad-state-0": [(_txn_key("x"), _txn_value(42, []))],
    "transaction-log-decoder-value-version-0": [(_txn_key("x"), _txn_value(0, [], version=7))],
    "transaction-log-decoder-many-partitions-0": [
        (_txn_key("x"), _txn_value(1, [("topic-b", [3, 0, 2, 1]), ("a", [0]), ("txn-mixed", [5, 17])])),
        (_txn_key("y"), None),
    ],
    # the metadata parser catches every error; the doubles print as Java's Double.toString
    "cluster-metadata-decoder-bad-0": [
        (None, _metadata(2, _TOPIC, frame=0)),
        (None, _metadata(2, _TOPIC, frame=2)),
        (None, b"\xff\xff\xff"),                   # a varint running off the end
        (None, _uvarint(70000)),                      # a frame version too large for a short
        (None, _metadata(99, _TOPIC)),                # unknown record type
        (None, _metadata(2, _TOPIC[:9])),             # cut inside the topic id
        (None, _metadata(2, _TOPIC + b"\1\2\3")),  # bytes after the record
        (None, _metadata(28, _compact("orders") + b"\0")),  # ClearElrRecord: 4.x's only
        (None, None),
        (b"key", _metadata(2, _TOPIC)),
        *((None, _quota(v)) for v in (1048576.0, 0.5, 1e7, 0.001, 1e-4, 123456789.0, 2 / 3, 1e21, -0.0, 100.25)),
    ],
    # RemoteLogMetadataSerde's records as kafka-dump-log prints them (their Java objects' toString)
    "remote-log-metadata-decoder-records-0": [
        (None, _segment()),
        (None, _segment(5, 90, [(7, 60), (2, 5), (-1, 3), (7, 80)], custom=b"hello", state=3)),  # epochs sorted
        (None, _segment(tags={0: b"\1"})),                     # TxnIndexEmpty true: 3.9 knows no tag 0
        (None, _segment(tags={0: b"\0", 5: b"xyz"})),           # an unknown tag
        (None, _segment(name="ü\n\"x\"")),                     # a topic name as Java prints it
        (None, _segment_update()),
        (None, _segment_update(state=2, custom=b"")),
        (None, _partition_delete()),
        (None, _partition_delete(2)),
        (None, _segment(3, 3, snapshot=True)),
        (None, _segment(3, 9, [(1, 3), (0, 0)], custom=b"abc", state=1, tags={0: b"\1"}, snapshot=True)),
        (b"key", _segment_update(3)),                            # a key: the decoder prints none
    ],
    # what RemoteLogMetadataSerde and the objects' constructors refuse; the tool's parser catches everything
    "remote-log-metadata-decoder-bad-0": [
        (None, _metadata(99, b"")),                              # unknown api key
        (None, _metadata(4, _partition_delete()[3:])),           # the next api key, unknown too
        (None, _segment(version=1)),                             # unknown version: its nested struct refuses it
        (None, _partition_delete() + b"\0"),                    # a byte of garbage after the record
        (None, _segment()[:20]),                                 # cut inside the topic id
        (None, _segment()[:-9]),                                 # cut inside the fields after the epochs
        (None, _segment_update()[:-1]),                          # cut before its tagged fields
        (None, b"\0"),                                           # frame version 0
        (None, b"\2\0\0"),                                       # frame version 2
        (None, b""),                                             # an empty value
        (None, None),                                            # a null value
        (None, b"\xff\xff\xff"),                              # a varint running off the end
        (None, _segment(name=None)),                             # a null topic name
        (None, _segment(state=9)),                               # unknown segment state
        (None, _segment(state=-1)),
        (None, _segment_update(state=4)),
        (None, _partition_delete(3)),                            # unknown partition delete state
        (None, _segment(start=-1, end=5)),                       # the objects' own checks
        (None, _segment(start=8, end=7)),
        (None, _segment(epochs=[])),
        (None, _segment(epochs=[], state=9)),                    # which check comes first
        (None, _segment(start=-2, end=-3, epochs=[], state=9)),
        (None, _segment(epochs=[], snapshot=True)),
        (None, _segment(epochs=[], state=9, snapshot=True)),
        (None, _segment(start=-1, end=-5, snapshot=True)),       # a snapshot checks no offsets
        (None, _segment(version=1, epochs=[], snapshot=True)),   # version 1, no nested struct read
        (None, _segment(version=1, snapshot=True)),
        (None, _metadata(0, _topic_id_partition()[:-1] + b"\1\0\1")),  # a nested struct's tagged field cut
    ],
    # 3.9 keeps the partitions in a hash set, whose table grows at 12 and 24 entries
    "transaction-log-decoder-grown-sets-0": [
        (_txn_key("x"), _txn_value(1, [("orders", list(range(11))), ("a", [7])])),
        (_txn_key("x"), _txn_value(1, [("orders", list(range(12))), ("a", [7])])),
        (_txn_key("x"), _txn_value(1, [("orders", list(range(23))), ("b", [1])])),
        (_txn_key("x"), _txn_value(1, [("orders", list(range(24))), ("b", [1, 1])])),
    ],
}


def write_crafted(root: Path) -> None:
    """The crafted segments as `<root>/<name>/00000000000000000000.log`."""
    for name, records in CRAFTED_SEGMENTS.items():
        path = root / name / CRAFTED_LOG
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(v2_batch(records))


def write_goldens(flags: list[str] | None = None) -> int:
    cases = [c for c in golden_cases() if not flags or c[2] in flags]
    crafted = Path(tempfile.mkdtemp(prefix="crafted-segments-"))
    write_crafted(crafted)
    for corpus, rel, flag, version in cases:
        cwd = crafted if is_crafted(rel) else ROOT / "data" / corpus
        out, err = dump_log([rel], flag, dist=KafkaDistribution(version), cwd=cwd)
        path = golden_path(corpus, rel, flag, version)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(out.encode())
        err_path = golden_path(corpus, rel, flag, version, "stderr")
        if err:
            err_path.write_bytes(err.encode())
        else:
            err_path.unlink(missing_ok=True)
    shutil.rmtree(crafted)
    return len(cases)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--goldens", action="store_true", help="write the decoder goldens instead of the schemas")
    p.add_argument("--flag", action="append", choices=sorted(f[2:] for f in DECODER_FLAGS),
                   help="with --goldens: only this decoder flag's goldens, e.g. remote-log-metadata-decoder "
                        "(repeatable)")
    args = p.parse_args()
    if args.goldens:
        flags = [f"--{f}" for f in args.flag] if args.flag else None
        print(f"wrote {write_goldens(flags)} decoder goldens")
    else:
        print(f"copied {write_schemas()} schemas into {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
