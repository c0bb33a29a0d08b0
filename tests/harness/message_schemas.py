"""Copy the internal topics' record schemas out of Kafka's JARs into the package, and write the goldens
of kafka-dump-log's decoder flags.

    python -m tests.harness.message_schemas            # schemas -> kafkalog_spark/format/message_schemas/
    python -m tests.harness.message_schemas --goldens  # decoder goldens -> data/<corpus>/decoder-goldens/

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
_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)

# The decoder flags, the internal topic each is for, and the Kafka versions whose tool has the flag
DECODER_FLAGS = {
    "--offsets-decoder": "__consumer_offsets",
    "--transaction-log-decoder": "__transaction_state",
    "--cluster-metadata-decoder": "__cluster_metadata",
    "--share-group-state-decoder": "__share_group_state",
}
CORPORA = ("samples", "samples-kafka4")
GOLDEN_DIR = "decoder-goldens"
TOOL_VERSIONS = (OLDER, NEWEST)


def _schemas(version: str) -> dict[str, dict]:
    dist = KafkaDistribution(version).ensure()
    out: dict[str, dict] = {}
    for artifact, pattern in {**ARTIFACTS, METADATA_ARTIFACT: ""}.items():
        jar = dist.libs / f"{artifact}-{version}.jar"
        if not jar.exists():  # kafka-share-coordinator is new in 4.x
            continue
        with zipfile.ZipFile(jar) as z:
            for name in z.namelist():
                m = re.fullmatch(r"common/(message|metadata)/(\w+)\.json", name)
                if m and (re.fullmatch(pattern, m[2]) if m[1] == "message" else artifact == METADATA_ARTIFACT):
                    out[m[2]] = json.loads(_COMMENT.sub("", z.read(name).decode()))
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
    the 3.9 corpus's, the segments are not: :func:`write_crafted` makes them where they are dumped)."""
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


def write_goldens() -> int:
    cases = golden_cases()
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
    args = p.parse_args()
    if args.goldens:
        print(f"wrote {write_goldens()} decoder goldens")
    else:
        print(f"copied {write_schemas()} schemas into {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
