"""data/samples/README.md: what each scenario is, the exact settings, and what Kafka actually produced.

Observed numbers are computed from the generated corpus itself (file names, sizes, the golden
DumpLogSegments text), so the README always describes the committed files.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.harness.broker import KafkaBroker, KafkaDistribution
from tests.harness.golden import GOLDEN_DIR, golden_path
from tests.harness.scenarios import (
    BROKER_PROPS,
    COMPACTED_TXN_ABORTED,
    GROUP_CONSUMER_848,
    KAFKA4_BROKER_PROPS,
    KAFKA4_TOPICS,
    SHARE_GROUP,
    SHARE_GROUP_TOPIC,
    TOPICS,
    Topic,
    topic_config,
)

XERIAL_MAGIC = bytes.fromhex("82534E4150505900")
_BATCH = re.compile(
    r"^(?:baseOffset: (?P<base>\d+) lastOffset: (?P<last>\d+) count: (?P<count>\d+) .*?"
    r"isControl: (?P<control>\w+) deleteHorizonMs: (?P<horizon>\S+)|offset: (?P<last0>\d+)) "
    r"position: (?P<pos>\d+) (?P<tstype>\w+): -?\d+ size: (?P<size>\d+) magic: (?P<magic>\d) "
    r"compresscodec: (?P<codec>\w+)")
_RECORD = re.compile(r"^\| offset: (\d+) ")
_MARKER = re.compile(r"endTxnMarker: (\w+)")


@dataclass
class LogFacts:
    """What the golden deep dump of one .log says."""
    batches: int = 0
    records: list[int] = field(default_factory=list)
    codecs: set[str] = field(default_factory=set)
    magics: set[int] = field(default_factory=set)
    ts_types: set[str] = field(default_factory=set)
    markers: list[str] = field(default_factory=list)
    horizons: int = 0
    empty_batches: int = 0
    batch_counts: list[int] = field(default_factory=list)
    kinds: list[tuple[int, int, str]] = field(default_factory=list)  # (position, magic, codec) per batch


def read_lines(path: Path) -> list[str]:
    # Split on \n only, and read bytes: payload text may hold \r, \x0b, \x1c, ... that read_text()'s
    # newline translation or str.splitlines() would treat as line ends.
    return path.read_bytes().decode("utf-8").split("\n")


def log_facts(root: Path, rel: Path) -> LogFacts:
    facts = LogFacts()
    for line in read_lines(golden_path(root, rel, "deep")):
        if m := _BATCH.match(line):
            facts.batches += 1
            facts.codecs.add(m["codec"])
            facts.magics.add(int(m["magic"]))
            facts.ts_types.add(m["tstype"])
            facts.kinds.append((int(m["pos"]), int(m["magic"]), m["codec"]))
            facts.horizons += bool(m["horizon"] and m["horizon"] != "OptionalLong.empty")
            if m["count"] is not None:
                facts.batch_counts.append(int(m["count"]))
                facts.empty_batches += m["count"] == "0"
        elif m := _RECORD.match(line):
            facts.records.append(int(m[1]))
            if mk := _MARKER.search(line):
                facts.markers.append(mk[1])
    return facts


def _segments(pdir: Path) -> list[int]:
    return sorted(int(p.stem) for p in pdir.glob("*.log"))


# Where the compressed payload starts: after the v2 header, or in a legacy wrapper after the entry
# header, crc, magic, attributes, [timestamp,] null key and value length.
PAYLOAD_START = {2: 61, 1: 34, 0: 26}


def _snappy_framing(log: Path, facts: LogFacts) -> tuple[int, int]:
    """(snappy batches, those whose payload starts with the xerial magic)."""
    data = log.read_bytes()
    starts = [pos + PAYLOAD_START[magic] for pos, magic, codec in facts.kinds if codec == "snappy"]
    return len(starts), sum(data[s:s + 8] == XERIAL_MAGIC for s in starts)


def index_entries(path: Path) -> int:
    """Valid offset-index entries; like DumpLogSegments, a zero relative offset after slot 0 ends them."""
    data = path.read_bytes()
    n = len(data) // 8
    for i in range(1, n):
        if data[i * 8:i * 8 + 4] == b"\0\0\0\0":
            return i
    return n


def partition_summary(root: Path, pdir: Path) -> str:
    segs = _segments(pdir)
    per = [log_facts(root, (pdir / f"{b:020d}.log").relative_to(root)) for b in segs]
    records = [len(f.records) for f in per]
    parts = [f"{len(segs)} segment(s) at base offsets {', '.join(map(str, segs))}",
             f"records per segment {records} (total {sum(records)})",
             f"{sum(f.batches for f in per)} batches"]
    counts = [c for f in per for c in f.batch_counts if c]
    if counts and max(counts) > 1:
        parts.append(f"records per batch {min(counts)}..{max(counts)}")
    parts.append("codecs " + "/".join(sorted(set().union(*(f.codecs for f in per)))))
    parts.append("magic " + "/".join(map(str, sorted(set().union(*(f.magics for f in per))))))
    parts.append("timestamps " + "/".join(sorted(set().union(*(f.ts_types for f in per)))))
    markers = [m for f in per for m in f.markers]
    if markers:
        parts.append(f"control markers: {markers.count('COMMIT')} COMMIT, {markers.count('ABORT')} ABORT")
    if horizons := sum(f.horizons for f in per):
        parts.append(f"{horizons} batch(es) with deleteHorizonMs set")
    if empty := sum(f.empty_batches for f in per):
        parts.append(f"{empty} empty batch(es) (count 0)")
    offsets = [o for f in per for o in f.records]
    gaps = sum(b - a > 1 for a, b in zip(offsets, offsets[1:], strict=False))
    if gaps:
        parts.append(f"{gaps} gap(s) between consecutive record offsets")
    if "snappy" in set().union(*(f.codecs for f in per)):
        framing = [_snappy_framing(pdir / f"{b:020d}.log", f) for b, f in zip(segs, per, strict=True)]
        snappy, xerial = sum(n for n, _ in framing), sum(x for _, x in framing)
        parts.append(f"{xerial} of {snappy} snappy batches have xerial framing (magic `82 53 4E 41 50 50 59 00` "
                     "at the payload start)")
    txn = sum(p.stat().st_size // 34 for p in pdir.glob("*.txnindex"))
    if txn:
        parts.append(f"{txn} aborted-txn entries in {len(list(pdir.glob('*.txnindex')))} .txnindex file(s)")
    parts.append(f"{sum(index_entries(p) for p in pdir.glob('*.index'))} offset-index entries")
    parts.append(f"{len(list(pdir.glob('*.snapshot')))} producer snapshot(s)")
    if deleted := sorted(p.name for p in pdir.iterdir() if p.name.endswith(".deleted")):
        parts.append(f"{len(deleted)} `*.deleted` files still pending deletion")
    return "; ".join(parts) + "."


def _index_notes(root: Path) -> list[str]:
    verify = sorted((root / GOLDEN_DIR).rglob("*.index.verify.txt"))
    mismatched = [p for p in verify if "Mismatches in" in _stderr(p)]
    time_verify = sorted((root / GOLDEN_DIR).rglob("*.timeindex.verify.txt"))
    time_bad = [p for p in time_verify if _stderr(p)]
    return [
        f"- `--verify-index-only` reported `Mismatches` for {len(mismatched)} of {len(verify)} `.index` files: "
        "Kafka 3.9.2's `LogSegment.append` already adds entries per batch (the batch's last offset and the "
        "batch's position), so multi-batch appends do not produce the older append-level entries.",
        f"- `.timeindex` verification complained about {len(time_bad)} of {len(time_verify)} files"
        + (": " + ", ".join(f"`{p.relative_to(root / GOLDEN_DIR)}`" for p in time_bad) if time_bad else "")
        + ".",
    ]


def _stderr(stdout_golden: Path) -> str:
    err = stdout_golden.with_name(stdout_golden.name[: -len(".txt")] + ".stderr.txt")
    return err.read_bytes().decode("utf-8") if err.exists() else ""


def _golden_notes(root: Path) -> list[str]:
    notes = []
    for err in sorted((root / GOLDEN_DIR).rglob("*.stderr.txt")):
        first = read_lines(err)[0]
        notes.append(f"`{err.relative_to(root / GOLDEN_DIR)}`: {first[:240]}")
    return notes


def _versions(dist: KafkaDistribution) -> dict[str, str]:
    import confluent_kafka

    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.split("\n")[0]
    ck = confluent_kafka.version()
    return {"kafka": dist.version, "confluent_kafka": ck[0] if isinstance(ck, tuple) else ck,
            "librdkafka": confluent_kafka.libversion()[0], "java": java}


def _topic_section(root: Path, topic: Topic, kafka_major: str = "3") -> list[str]:
    client = ("Java producer (kafka-clients)" if topic.client == "java" else "librdkafka (confluent-kafka)")
    lines = [f"### `{topic.name}`", "", topic.what, "",
             f"- topic config: {_kv(topic_config(topic, kafka_major))}; partitions: {topic.partitions}",
             f"- client: {client}, producer config: {_kv(topic.producer) or 'defaults'}"]
    for p in range(topic.partitions):
        # a deleted topic's partition dir is <topic>-<partition>.<uuid>-delete until the broker removes it
        for pdir in sorted((root / "broker").glob(f"{topic.name}-{p}")) + sorted(
                (root / "broker").glob(f"{topic.name}-{p}.*-delete")):
            lines.append(f"- observed `broker/{pdir.name}`: {partition_summary(root, pdir)}")
    return lines


def _kv(d: dict[str, Any]) -> str:
    return ", ".join(f"`{k}={v}`" for k, v in d.items())


def render(root: Path, dist: KafkaDistribution, facts: dict[str, Any]) -> str:
    v = _versions(dist)
    base = {k: val for k, val in KafkaBroker(dist, BROKER_PROPS, work_dir=root).properties().items()
            if k not in ("log.dirs", "listeners", "advertised.listeners", "controller.quorum.voters")}
    live = root / "live-copy" / "live-copy-0"
    active = _segments(live)[-1]
    sizes = {s: (live / f"{active:020d}{s}").stat().st_size for s in (".index", ".timeindex")}
    out = [
        f"# Sample corpus: real Apache Kafka {v['kafka']} log directories",
        "",
        "Regenerate with `make samples` (runs `tests/harness/make_samples.py`; needs `java` 17+, `mvn` and "
        "network access to Maven Central; it wipes and rewrites `data/samples/` only). Do not edit by hand: "
        f"everything below, including the observations, is written by the generator. Last run "
        f"{dt.date.today().isoformat()}, {facts['seconds']} s.",
        "",
        "## Versions",
        "",
        f"- Broker (single-node KRaft, `process.roles=broker,controller`), Java producer, the legacy writer "
        f"and `DumpLogSegments`: Apache Kafka {v['kafka']} JARs from Maven Central (`kafka_2.13`, "
        "`kafka-clients`, `kafka-storage`, `kafka-server`, `kafka-tools`; `slf4j-reload4j` 1.7.36).",
        f"- librdkafka {v['librdkafka']} through confluent-kafka {v['confluent_kafka']} (Python).",
        f"- JVM: {v['java']}.",
        "",
        "## Layout",
        "",
        "- `broker/`: the log dir of the main broker after a clean shutdown (SIGTERM), copied as the broker "
        "left it (`meta.properties`, `bootstrap.checkpoint`, the offset checkpoints, `.kafka_cleanshutdown`, "
        "all partition dirs incl. `__cluster_metadata-0`, `__consumer_offsets-0`, `__transaction_state-0`); "
        "the broker removed its `.lock` itself. Segments the cleaner replaced are still there as `*.deleted` "
        "files (`compacted-cleaned-0`): `log.segment.delete.delay.ms` (60 s) had not passed at shutdown.",
        "- `live-copy/`: `live-copy-0` and the four offset-checkpoint files copied while the broker was "
        "running (after its first recovery-point checkpoint), before the shutdown. The same partition, "
        "cleanly shut down, is `broker/live-copy-0`.",
        "- `legacy/`: `legacy-v0-0`, `legacy-v1-0`, written without a broker by "
        "`tests/harness/java/LegacyRecords.java` (see below).",
        "- `golden/<path>.<mode>.txt`: Kafka's own `kafka.tools.DumpLogSegments` stdout for every `.log`, "
        "`.index`, `.timeindex`, `.txnindex`, `.snapshot` and KRaft `.checkpoint` file; `<path>` is relative "
        "to `data/samples`. Modes: `deep` = `--deep-iteration --print-data-log` (all files); `verify` = "
        "`--verify-index-only` and `sanity` = `--index-sanity-check` (`.index`, `.timeindex`); `decoded` = "
        "deep plus `--offsets-decoder` / `--transaction-log-decoder` / `--cluster-metadata-decoder` for the "
        "internal topics' `.log` files; `head` = `--print-data-log --skip-record-metadata --max-bytes 1024` "
        "(`.log`, `.checkpoint`). `<path>.<mode>.stderr.txt` holds stderr and exists only when stderr "
        "was not empty. Each run is one `DumpLogSegments.main` call (in one JVM, "
        f"`tests/harness/java/DumpMany.java`; {facts['dump_runs']} runs; an exception is printed as the JVM "
        "would print it for the CLI, trimmed to the tool's frames); absolute paths the tool prints "
        "(`getAbsolutePath` in its error reports) were made relative. Payload bytes are printed by the tool "
        "as UTF-8 text (invalid sequences become U+FFFD) and may contain `\\r` and other control characters: "
        "read golden files as bytes (or `open(newline='')`) and split on `\\n` only.",
        *(f"- `{o.name}/`: the same runs by Kafka {o.name.removeprefix(GOLDEN_DIR + '-')}'s kafka-dump-log "
          f"(`{KafkaDistribution(o.name.removeprefix(GOLDEN_DIR + '-')).dump_log_segments}`)."
          for o in sorted(root.glob(f"{GOLDEN_DIR}-*"))),
        "",
        "## Broker settings (`broker/`)",
        "",
        "Everything else is the 3.9.2 default (notably `segment.index.bytes=10485760`, "
        "`index.interval.bytes=4096`, `log.segment.delete.delay.ms=60000`). Ports were free loopback ports "
        "picked at run time.",
        "",
        "```properties",
        *(f"{k}={val}" for k, val in base.items()),
        "```",
        "",
        f"`{', '.join(f'{k}={v}' for k, v in BROKER_PROPS.items())}` are the harness's choices on top of "
        "the single-node basics: one partition for the internal topics, a cleaner that re-checks every "
        "second, and checkpoints every 5 s.",
        "",
        "## Scenarios (topics in `broker/`)",
        "",
        "Java-producer topics were written by `tests/harness/java/ProducePlan.java`, librdkafka ones by "
        "`tests/harness/plan.py`; both follow the same plans from `tests/harness/scenarios.py` (fixed "
        "seeds; timestamps, producer ids and the broker's batching/cleaning are whatever happened). "
        "Observed lines count what the golden deep dumps show.",
        "",
    ]
    for topic in TOPICS:
        out += _topic_section(root, topic)
        if topic.name == "compacted-cleaned":
            out += [f"- cleaner: {facts['cleaner_passes']} cleaning pass(es) of `compacted-cleaned-0` in the "
                    f"broker log; cleaner-offset-checkpoint reached {facts['cleaner_round1']} after round 1 and "
                    f"{facts['cleaner_round2']} after round 2 (the base offset of the active segment each "
                    f"time); `compacted-dirty-0` was cleaned {facts['cleaner_dirty_passes']} time(s)."]
        out.append("")
    out += ["### Internal topics", "",
            f"`__consumer_offsets` got data from consumer group `samples-group` (librdkafka consumer, "
            f"subscribed to `tutorial-segments` and `hello-round-robin`, read {facts['consumed']} messages, "
            "committing synchronously every 25 and at the end). `__transaction_state` holds the "
            "`txn-mixed` transactional id. `__cluster_metadata` is as the controller left it.", ""]
    for name in ("__consumer_offsets-0", "__transaction_state-0", "__cluster_metadata-0"):
        out.append(f"- `broker/{name}`: {partition_summary(root, root / 'broker' / name)}")
    out += ["", "## `live-copy/`", "",
            f"Active segment {active}: `.index` is {sizes['.index']} bytes and `.timeindex` "
            f"{sizes['.timeindex']} bytes (10 MiB preallocation rounded down to whole entries), valid entries "
            "followed by zeros. DumpLogSegments on them (see golden): `deep` lists the valid entries and stops "
            "at the first zero slot; `sanity` passes the `.index` but throws `CorruptIndexException` for the "
            "`.timeindex` (the last slot's timestamp 0 is below the first); `verify` prints nothing else.",
            f"- `live-copy/live-copy-0`: {partition_summary(root, live)}",
            "", "## `legacy/`", "",
            "Kafka 3.9 brokers only write magic 2, so these were made with Kafka's own code: "
            "`MemoryRecords.builder(buffer, magic, compression, timestampType, baseOffset, logAppendTime)` "
            "builds each batch; `LogSegment.append` (the broker's append path, writing through `FileRecords`) "
            "writes the `.log` and adds `.index`/`.timeindex` entries with `index.interval.bytes=128`; each "
            "segment is finished like a broker roll (`onBecomeInactiveSegment`: final time-index entry, indexes "
            "trimmed). Keys are null every third offset, values null every fifth; no headers (not in v0/v1). "
            "v0 lz4 wrappers carry Kafka's broken frame-header checksum. Batches (dir, segment, first, last "
            "offset, kind):", "", "```", facts["legacy_batches"].strip(), "```", ""]
    for name in ("legacy-v0-0", "legacy-v1-0"):
        out.append(f"- `legacy/{name}`: {partition_summary(root, root / 'legacy' / name)}")
    out += ["", "## Index verification", "", *_index_notes(root)]
    out += ["", "## Non-empty stderr in the golden output", ""]
    out += [f"- {n}" for n in _golden_notes(root)] or ["- none"]
    return "\n".join(out) + "\n"


def _golden_layout(root: Path, dist: KafkaDistribution, facts: dict[str, Any]) -> list[str]:
    others = sorted(p.name for p in root.glob(f"{GOLDEN_DIR}-*"))
    return [
        f"- `golden/<path>.<mode>.txt`: Kafka {dist.version}'s own `{dist.dump_log_segments}` (kafka-dump-log) "
        "stdout for every `.log`, `.index`, `.timeindex`, `.txnindex`, `.snapshot` and KRaft `.checkpoint` "
        f"file ({facts['dump_runs']} runs); "
        + "".join(f"`{o}/` holds the same runs of Kafka {o.removeprefix(GOLDEN_DIR + '-')}'s tool. " for o in others)
        + "Modes, stderr files and path rewriting as described in `data/samples/README.md`.",
    ]


def render_kafka4(root: Path, dist: KafkaDistribution, facts: dict[str, Any]) -> str:
    v = _versions(dist)
    base = {k: val for k, val in KafkaBroker(dist, KAFKA4_BROKER_PROPS, work_dir=root).properties().items()
            if k not in ("log.dirs", "listeners", "advertised.listeners", "controller.quorum.voters")}
    metadata = root / "broker" / "__cluster_metadata-0"
    snapshots = sorted(p.name for p in metadata.glob("*.checkpoint"))
    deleted_dirs = sorted(p.name for p in (root / "broker").glob("*-delete"))
    out = [
        f"# Sample corpus: real Apache Kafka {v['kafka']} log directories",
        "",
        "Regenerate with `make samples` (runs `tests/harness/make_samples.py`, which writes this corpus and the "
        "3.9.2 one in `data/samples/`; `--kafka 4.4.0` for this one only). Do not edit by hand: everything "
        f"below is written by the generator. Last run {dt.date.today().isoformat()}, {facts['seconds']} s.",
        "",
        "## Versions",
        "",
        f"- Broker (single-node KRaft), Java producer and consumers, and kafka-dump-log: Apache Kafka "
        f"{v['kafka']} JARs from Maven Central (`kafka_2.13`, `kafka-clients`, `kafka-storage`, `kafka-server`, "
        "`kafka-tools`; `log4j-slf4j-impl` 2.25.5). kafka-tools 4.4.0's POM names `jetty-ee10-servlets` "
        "12.0.39, which Maven Central does not serve; the harness excludes that group (the dump tool never "
        "loads it).",
        f"- librdkafka {v['librdkafka']} through confluent-kafka {v['confluent_kafka']} (Python).",
        f"- JVM: {v['java']}.",
        "",
        "## Layout",
        "",
        "- `broker/`: the log dir after a clean shutdown, as the broker left it (also `__share_group_state-0`, "
        "KRaft snapshots, a deleted topic's `-delete` dir and `*.deleted` files the cleaner replaced).",
        "- `live-copy/`: `live-copy-0` and the offset checkpoints copied while the broker ran (before the "
        "restart).",
        "- No `legacy/`: 4.x brokers and clients no longer write message format v0/v1 (KIP-724); the 3.9.2 "
        "corpus has those.",
        *_golden_layout(root, dist, facts),
        "",
        "## Broker settings (`broker/`)",
        "",
        f"Everything else is the {v['kafka']} default. The broker was stopped cleanly and started again on the "
        "same log dir halfway (after cleaner round 1 and the live copy).",
        "",
        "```properties",
        *(f"{k}={val}" for k, val in base.items()),
        "```",
        "",
        "## Scenarios (topics in `broker/`)",
        "",
        "The 3.9.2 corpus's scenarios, written by the same plans (`tests/harness/scenarios.py`). Topic configs "
        "with `segment.bytes` below 1 MiB, which 4.x refuses (KIP-1030), use `internal.segment.bytes` instead.",
        "",
    ]
    for topic in TOPICS + KAFKA4_TOPICS:
        out += _topic_section(root, topic, dist.major)
        if topic.name == "compacted-txn":
            out.append(f"- aborted transactions: {', '.join(f'#{n}' for n in COMPACTED_TXN_ABORTED)}; cleaner-offset-"
                       f"checkpoint reached {facts['txn_cleaner_round1']} after round 1 and "
                       f"{facts['txn_cleaner_round2']} after round 2; {facts['passes compacted-txn']} cleaning "
                       "pass(es) in the broker log.")
        if topic.name == "compacted-cleaned":
            out.append(f"- cleaner: {facts['passes compacted-cleaned']} cleaning pass(es); cleaner-offset-"
                       f"checkpoint reached {facts['cleaner_round1']} after round 1 and {facts['cleaner_round2']} "
                       "after round 2.")
        out.append("")
    out += ["### Internal topics", "",
            f"`__consumer_offsets`: the classic group `samples-group` (librdkafka, {facts['consumed']} records), "
            f"the consumer-protocol group `{GROUP_CONSUMER_848}` (KIP-848, Java `group.protocol=consumer`, "
            f"{facts['consumed_848']} records from the same topics) and the share group `{SHARE_GROUP}` "
            f"(KIP-932, Java `KafkaShareConsumer` on `{SHARE_GROUP_TOPIC}`, {facts['consumed_share']} records "
            "acknowledged; its group config `share.auto.offset.reset=earliest` set with the Admin client). "
            "`__share_group_state` holds that share group's state. `__transaction_state` holds the transactional "
            "ids, one of them (`samples-txn-open`) still in an open transaction.", ""]
    for name in ("__consumer_offsets-0", "__share_group_state-0", "__transaction_state-0", "__cluster_metadata-0"):
        if (root / "broker" / name).exists():
            out.append(f"- `broker/{name}`: {partition_summary(root, root / 'broker' / name)}")
    out += ["", f"KRaft snapshots in `__cluster_metadata-0` ({len(snapshots)}): "
            + ", ".join(f"`{n}`" for n in snapshots) + ".",
            "", f"Deleted-topic dirs: {', '.join(f'`{d}`' for d in deleted_dirs) or 'none'}."]
    out += ["", "## Non-empty stderr in the golden output", ""]
    out += [f"- {n}" for n in _golden_notes(root)] or ["- none"]
    return "\n".join(out) + "\n"


def write_readme(root: Path, dist: KafkaDistribution, facts: dict[str, Any]) -> None:
    text = render(root, dist, facts) if dist.major == "3" else render_kafka4(root, dist, facts)
    (root / "README.md").write_text(text, encoding="utf-8")
