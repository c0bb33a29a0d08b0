"""The sample-corpus scenarios: topics, their configs and the produce plans that fill them.

Everything here is deterministic (fixed seeds) except timestamps, producer ids and what the broker
decides at run time (batching, cleaner timing), which the README records as observed.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from tests.harness.plan import Header, Plan

# Broker settings for the main broker (data/samples/broker). The rest are the 3.9.2 defaults.
BROKER_PROPS: dict[str, Any] = {
    "offsets.topic.num.partitions": 1,  # keep __consumer_offsets to one small partition
    "transaction.state.log.num.partitions": 1,
    "log.cleaner.backoff.ms": 1000,  # cleaner re-checks every second instead of every 15
    # Checkpoints every 5 s (default 60 s) so the live copy already has them.
    "log.flush.offset.checkpoint.interval.ms": 5000,
    "log.flush.start.offset.checkpoint.interval.ms": 5000,
}

JAVA, LIBRDKAFKA = "java", "librdkafka"
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
COMPACT_DELETE_RETENTION_MS = 5000  # tombstones from cleaner pass 1 expire before pass 2
TIME_ROLL_BURSTS, TIME_ROLL_SLEEP_MS = 5, 1500


@dataclass(frozen=True)
class Topic:
    name: str
    config: dict[str, Any]
    client: str
    what: str
    partitions: int = 1
    producer: dict[str, Any] = field(default_factory=dict)


def _java(**extra: Any) -> dict[str, Any]:
    # Explicit although they are the 3.x defaults, so the README states them.
    return {"acks": "all", "enable.idempotence": "true", **extra}


CODEC_SEGMENT_BYTES = 32768
TOPICS: list[Topic] = [
    Topic("tutorial-segments", {"segment.bytes": 1000}, JAVA,
          '100 single-record sends of {"number": n}, n=0..99, each sent and flushed on its own.',
          producer=_java(**{"linger.ms": 0})),
    Topic("hello-round-robin", {"segment.bytes": 250}, LIBRDKAFKA,
          'Keyless "hello world" / empty value alternately, message i to partition i % 3, one send at a time '
          "(27 messages, 9 per partition); 250 bytes hold three of these one-record batches.",
          partitions=3, producer={"linger.ms": 0}),
    *[Topic(f"codec-{c}", {"segment.bytes": CODEC_SEGMENT_BYTES}, JAVA,
            f"300 records (codec_records()) in multi-record batches, compression.type={c}.",
            producer=_java(**{"compression.type": c, "linger.ms": 100, "batch.size": 16384}))
      for c in CODECS if c != "snappy"],
    Topic("codec-snappy-java", {"segment.bytes": CODEC_SEGMENT_BYTES}, JAVA,
          "300 records (codec_records()), compression.type=snappy: the Java client writes xerial framing.",
          producer=_java(**{"compression.type": "snappy", "linger.ms": 100, "batch.size": 16384})),
    Topic("codec-snappy-librdkafka", {"segment.bytes": CODEC_SEGMENT_BYTES}, LIBRDKAFKA,
          "300 records (codec_records()), compression.type=snappy: librdkafka writes raw snappy.",
          producer={"compression.type": "snappy", "linger.ms": 100, "batch.size": 16384}),
    Topic("txn-mixed", {"segment.bytes": 1024}, JAVA,
          "8 transactions of 5 records (transactional.id samples-txn-mixed; #1, #4, #6 aborted, others "
          "committed); during each open transaction a second, idempotent non-transactional producer "
          "writes 3 records; 6 more idempotent records at the end.",
          producer=_java(**{"linger.ms": 5, "transactional.id": "samples-txn-mixed"})),
    Topic("idempotent-only", {"segment.bytes": 1024}, JAVA,
          "Two idempotent producers one after the other (two producer ids), 40 records each in batches of 5.",
          producer=_java(**{"linger.ms": 5})),
    Topic("compacted-cleaned",
          {"cleanup.policy": "compact", "segment.bytes": 2048, "min.cleanable.dirty.ratio": 0.01,
           "delete.retention.ms": COMPACT_DELETE_RETENTION_MS}, JAVA,
          "Round 1: 300 records over 20 skewed keys with tombstones; wait for the cleaner; wait past "
          "delete.retention.ms; round 2: 200 more over the 10 hottest keys; wait for the cleaner again.",
          producer=_java(**{"linger.ms": 5, "batch.size": 512})),
    Topic("compacted-dirty",
          {"cleanup.policy": "compact", "segment.bytes": 2048, "min.cleanable.dirty.ratio": 0.99,
           "min.compaction.lag.ms": 3600000}, JAVA,
          "Round 1 of compacted-cleaned only; the lag keeps the cleaner away, so all of it is still dirty.",
          producer=_java(**{"linger.ms": 5, "batch.size": 512})),
    Topic("time-rolls", {"segment.ms": 1000}, JAVA,
          f"{TIME_ROLL_BURSTS} bursts of 8 records, {TIME_ROLL_SLEEP_MS} ms apart; segments roll by time "
          "(checked on append).",
          producer=_java(**{"linger.ms": 0})),
    Topic("tiny-index-interval", {"index.interval.bytes": 64, "segment.bytes": 4096}, JAVA,
          "100 single-record sends, then 60 records in multi-record batches.",
          producer=_java(**{"linger.ms": 20})),
    Topic("log-append-time", {"message.timestamp.type": "LogAppendTime"}, JAVA,
          "40 records in batches of 10 with explicit CreateTime 1600000000000+i, overwritten by the broker.",
          producer=_java(**{"linger.ms": 20})),
    Topic("live-copy", {"segment.bytes": 2048, "index.interval.bytes": 256}, JAVA,
          "80 single-record sends; the partition dir is copied while the broker runs (data/samples/live-copy).",
          producer=_java(**{"linger.ms": 0})),
]
TOPIC = {t.name: t for t in TOPICS}


def _words(rng: random.Random, n: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(n)]


def codec_records(count: int = 300, seed: int = 2024) -> list[tuple[bytes | None, bytes | None, list[Header]]]:
    """(key, value, headers) shared by all codec topics: keys and null keys, tombstones, empty values,
    headers incl. a null-valued and a repeated one, values of 1 B .. 20 KiB, a few binary values."""
    rng = random.Random(seed)
    vocab = _words(rng, 500)
    out: list[tuple[bytes | None, bytes | None, list[Header]]] = []
    for i in range(count):
        key = None if i % 6 == 0 else f"user-{i % 23:02d}".encode()
        if i % 50 == 10:
            size = 20480
        elif i % 17 == 0:
            size = rng.randint(2000, 6000)
        elif i % 7 == 1:
            size = 1
        else:
            size = rng.randint(2, 300)
        value: bytes | None
        if i % 29 == 3:
            value = None  # tombstone
        elif i % 31 == 4:
            value = b""
        elif i % 41 == 7 and size <= 300:
            value = rng.randbytes(size)
        else:
            text = " ".join(rng.choice(vocab) for _ in range(size // 3 + 1))
            value = f"{i:05d} {text}".encode()[:size]
        headers: list[Header] = []
        if i % 5 == 0:
            headers = [("trace-id", f"{i:08x}".encode()), ("nullable", None)]
        elif i % 5 == 1:
            headers = [("empty", b"")]
        elif i % 5 == 2:
            headers = [("dup", b"1"), ("dup", b"2")]
        out.append((key, value, headers))
    return out


def _codec_plan(topic: Topic) -> Plan:
    plan = Plan().open(topic.name, topic.producer)
    for i, (key, value, headers) in enumerate(codec_records()):
        plan.send(topic.name, topic.name, value, key, headers=headers)
        if i % 40 == 39:
            plan.do("flush", topic.name)
    return plan.do("close", topic.name)


def _compacted_round(plan: Plan, p: str, topic: str, round_no: int) -> None:
    """Round 1: 300 records over key-00..key-19, skewed (low keys hot, high keys rare, so their last
    values sit at scattered offsets), a tombstone every 23rd. Round 2: 200 records over key-00..key-09
    only, a tombstone every 13th, so round 1's last values of key-10..key-19 survive cleaning."""
    rng = random.Random(round_no)
    start, count, keys, tombstone_every = (0, 300, 20, 23) if round_no == 1 else (300, 200, 10, 13)
    for i in range(start, start + count):
        key = f"key-{min(int(rng.expovariate(4 / keys)), keys - 1):02d}".encode()
        value = None if i % tombstone_every == tombstone_every - 1 else json.dumps({"seq": i}).encode()
        plan.send(p, topic, value, key)
        if i % 7 == 6:
            plan.do("flush", p)


def compacted_plan(round_no: int, topics: tuple[str, ...]) -> Plan:
    plan = Plan()
    for name in topics:
        plan.open(name, TOPIC[name].producer)
        _compacted_round(plan, name, name, round_no)
        plan.do("close", name)
    return plan


def _txn_plan(topic: str) -> Plan:
    t = TOPIC[topic]
    plan = Plan().open("tx", t.producer).open("idem", _java(**{"linger.ms": 5})).do("init", "tx")
    for n in range(8):
        plan.do("begin", "tx")
        for j in range(5):
            plan.send("tx", topic, f"txn {n} record {j}".encode(), f"tx-{n}".encode())
        plan.do("flush", "tx")
        for j in range(3):
            plan.send("idem", topic, f"idempotent during txn {n} #{j}".encode(), b"idem")
        plan.do("flush", "idem")
        plan.do("abort" if n in (1, 4, 6) else "commit", "tx")
    for j in range(6):
        plan.send("idem", topic, f"idempotent tail #{j}".encode(), b"idem")
    return plan.do("close", "idem").do("close", "tx")


def main_java_plan() -> Plan:
    """Everything the Java producer writes before the cleaner waits (compaction round 1 first, so the
    cleaner works while the rest is produced)."""
    plan = compacted_plan(1, ("compacted-cleaned", "compacted-dirty"))

    t = TOPIC["tutorial-segments"]
    plan.open(t.name, t.producer)
    for n in range(100):
        plan.send(t.name, t.name, json.dumps({"number": n}).encode(), sync=True)
    plan.do("close", t.name)

    for name in ("codec-none", "codec-gzip", "codec-snappy-java", "codec-lz4", "codec-zstd"):
        plan.extend(_codec_plan(TOPIC[name]))
    plan.extend(_txn_plan("txn-mixed"))

    t = TOPIC["idempotent-only"]
    for run in range(2):
        plan.open(t.name, t.producer)
        for i in range(40):
            plan.send(t.name, t.name, f"run {run} record {i}".encode(), f"k{i % 4}".encode())
            if i % 5 == 4:
                plan.do("flush", t.name)
        plan.do("close", t.name)

    t = TOPIC["tiny-index-interval"]
    plan.open(t.name, t.producer)
    for i in range(160):
        plan.send(t.name, t.name, f"tiny index record {i:04d}".encode(), f"k{i % 10}".encode(), sync=i < 100)
    plan.do("close", t.name)

    t = TOPIC["log-append-time"]
    plan.open(t.name, t.producer)
    for i in range(40):
        plan.send(t.name, t.name, f"append-time {i}".encode(), timestamp=1600000000000 + i)
        if i % 10 == 9:
            plan.do("flush", t.name)
    plan.do("close", t.name)

    t = TOPIC["live-copy"]
    plan.open(t.name, t.producer)
    for i in range(80):
        plan.send(t.name, t.name, f"live copy record {i:03d} " .encode() + b"x" * 20, f"k{i % 5}".encode(),
                  sync=True)
    plan.do("close", t.name)

    t = TOPIC["time-rolls"]
    plan.open(t.name, t.producer)
    for burst in range(TIME_ROLL_BURSTS):
        if burst:
            plan.sleep(TIME_ROLL_SLEEP_MS)
        for i in range(8):
            plan.send(t.name, t.name, f"burst {burst} record {i}".encode())
        plan.do("flush", t.name)
    return plan.do("close", t.name)


def librdkafka_plan() -> Plan:
    t = TOPIC["hello-round-robin"]
    plan = Plan().open(t.name, t.producer)
    for i in range(27):
        plan.send(t.name, t.name, b"hello world" if i % 2 == 0 else b"", partition=i % 3, sync=True)
    plan.do("close", t.name)
    t = TOPIC["codec-snappy-librdkafka"]
    plan.open(t.name, t.producer)
    for i, (key, value, headers) in enumerate(codec_records()):
        plan.send(t.name, t.name, value, key, headers=headers)
        if i % 40 == 39:
            plan.do("flush", t.name)
    return plan.do("close", t.name)


CONSUMER_GROUP = "samples-group"
CONSUMED_TOPICS = ("tutorial-segments", "hello-round-robin")


# ---- The Kafka 4.x corpus (data/samples-kafka4): every scenario above, plus what only 4.x brokers do. ----

KAFKA4_BROKER_PROPS: dict[str, Any] = {
    **BROKER_PROPS,
    # __share_group_state (KIP-932) on a single node, in one partition like the other internal topics.
    "share.coordinator.state.topic.num.partitions": 1,
    "share.coordinator.state.topic.replication.factor": 1,
    "share.coordinator.state.topic.min.isr": 1,
    # A KRaft snapshot (`__cluster_metadata-0/*.checkpoint`) whenever the metadata changed in the last 10 s
    # (default one hour), so the corpus has several.
    "metadata.log.max.snapshot.interval.ms": 10000,
}
# 4.x refuses segment.bytes below 1 MiB (KIP-1030); the topic config internal.segment.bytes takes over.
KAFKA4_MIN_SEGMENT_BYTES = 1024 * 1024


def topic_config(topic: Topic, kafka_major: str) -> dict[str, Any]:
    """The topic's config as the broker of that major version takes it."""
    small = topic.config.get("segment.bytes", KAFKA4_MIN_SEGMENT_BYTES)
    if kafka_major == "3" or small >= KAFKA4_MIN_SEGMENT_BYTES:
        return dict(topic.config)
    out = {k: v for k, v in topic.config.items() if k != "segment.bytes"}
    return {**out, "internal.segment.bytes": small}


COMPACTED_TXN_ABORTED = (1, 3, 4, 8)
KAFKA4_TOPICS: list[Topic] = [
    Topic("compacted-txn", {"cleanup.policy": "compact", "segment.bytes": 1024, "min.cleanable.dirty.ratio": 0.01},
          JAVA,
          "Round 1: 6 transactions of 5 records over keys ck-0..ck-4 (transactional.id samples-compacted-txn; "
          "#1, #3, #4 aborted); wait for the cleaner (it removes the aborted batches, keeps the markers); "
          "round 2: 4 more (#8 aborted); wait for the cleaner again (it recopies the ABORT markers whose "
          "data is gone, without `.txnindex` entries: nothing is left for read_committed to skip).",
          producer=_java(**{"linger.ms": 5, "transactional.id": "samples-compacted-txn"})),
    Topic("txn-open", {"segment.bytes": 1024}, JAVA,
          "One committed transaction of 5 records, then a second one of 5 records flushed but never ended: "
          "the producer's JVM halts (a crash). transaction.timeout.ms=900000 keeps it open past the "
          "shutdown, so the partition's last stable offset stays at the open transaction's first offset.",
          producer=_java(**{"linger.ms": 5, "transactional.id": "samples-txn-open",
                            "transaction.timeout.ms": 900000})),
    Topic("deleted-topic", {"segment.bytes": 1024}, JAVA,
          "40 records in batches of 5, then the topic is deleted: the broker renames the partition dir to "
          "`deleted-topic-0.<uuid>-delete` and removes it only after file.delete.delay.ms (60 s), after the "
          "shutdown.",
          producer=_java(**{"linger.ms": 5})),
]
KAFKA4_TOPIC = {t.name: t for t in KAFKA4_TOPICS}
GROUP_CONSUMER_848 = "samples-group-consumer"  # group.protocol=consumer (KIP-848)
SHARE_GROUP = "samples-share-group"  # KIP-932
SHARE_GROUP_TOPIC = "hello-round-robin"


def compacted_txn_plan(round_no: int) -> Plan:
    t = KAFKA4_TOPIC["compacted-txn"]
    plan = Plan().open("ctx", t.producer).do("init", "ctx")
    for n in range(0, 6) if round_no == 1 else range(6, 10):
        plan.do("begin", "ctx")
        for j in range(5):
            plan.send("ctx", t.name, json.dumps({"txn": n, "record": j}).encode(), f"ck-{j}".encode())
        plan.do("flush", "ctx")
        plan.do("abort" if n in COMPACTED_TXN_ABORTED else "commit", "ctx")
    return plan.do("close", "ctx")


def deleted_topic_plan() -> Plan:
    t = KAFKA4_TOPIC["deleted-topic"]
    plan = Plan().open(t.name, t.producer)
    for i in range(40):
        plan.send(t.name, t.name, f"soon deleted {i}".encode(), f"d{i % 4}".encode())
        if i % 5 == 4:
            plan.do("flush", t.name)
    return plan.do("close", t.name)


def open_txn_plan() -> Plan:
    """Ends with `halt`: run it last in its own JVM."""
    t = KAFKA4_TOPIC["txn-open"]
    plan = Plan().open("open", t.producer).do("init", "open")
    for n, end in ((0, "commit"), (1, None)):
        plan.do("begin", "open")
        for j in range(5):
            plan.send("open", t.name, f"txn {n} record {j}".encode(), f"o{j}".encode())
        plan.do("flush", "open")
        if end:
            plan.do(end, "open")
    return plan.do("halt")
