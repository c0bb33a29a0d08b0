"""`kafkalog dump --offsets-decoder | --transaction-log-decoder | --cluster-metadata-decoder |
--remote-log-metadata-decoder | --share-group-state-decoder` equals kafka-dump-log with the same flag, 3.9.2's and
4.4.0's, byte for byte.

Oracle: `data/<corpus>/decoder-goldens/` (written by `python -m tests.harness.message_schemas --goldens`
with the real tools): every internal-topic segment and KRaft snapshot of both corpora, every file of the tiered
corpora's `__remote_log_metadata` partitions (data/samples-internal/<version>/tiered), an ordinary topic's
keyless record, and
crafted segments with records a broker never writes (unknown types and versions, cut keys and values, an
unknown transaction state, many partitions, remote log metadata its objects refuse), which the harness builds
again here, byte for byte. The older `decoded` goldens of tests/harness/golden.py (deep iteration plus the
decoder flag) are checked too.

Where the tool dies of an exception it has printed the record's metadata without a newline; we end that
line, then print the exception's first line (the Java stack frames are not ours).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from kafkalog_spark import read_log
from kafkalog_spark.cli import main
from kafkalog_spark.dump import DumpOptions
from kafkalog_spark.dump.log_file import record_fields
from kafkalog_spark.dump.tool_errors import ToolCrash
from kafkalog_spark.format.internal_topics import (
    CLUSTER_METADATA,
    CONSUMER_OFFSETS,
    REMOTE_LOG_METADATA,
    SHARE_GROUP_STATE,
    TRANSACTION_STATE,
)
from kafkalog_spark.kafka_versions import KafkaVersion
from tests.harness.golden import DECODERS
from tests.harness.message_schemas import ROOT, golden_cases, golden_path, is_crafted, write_crafted

CASES = golden_cases()


def ours(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[str, str, int]:
    """stdout, stderr and exit code of `kafkalog dump <args>` run from `root` (the goldens' paths are relative)."""
    cwd = os.getcwd()
    os.chdir(root)
    try:
        capsys.readouterr()
        code = main(["dump", *args])
    finally:
        os.chdir(cwd)
    captured = capsys.readouterr()
    return captured.out, captured.err, code


JAVA_CRASH = 'Exception in thread "main" '


def expected(stdout: Path, stderr: Path) -> tuple[str, str]:
    out = stdout.read_bytes().decode()
    err = stderr.read_bytes().decode() if stderr.exists() else ""
    if err.startswith(JAVA_CRASH):
        err = err.split("\n", 1)[0] + "\n"
        if out and not out.endswith("\n"):
            out += "\n"  # the record line the exception cut short
    return out, err


PARAMS = [pytest.param(c, r, f, v, id=f"{c}/{r.parent.name}/{r.name}/{f[2:]}/{v}")
          for c, r, f, v in CASES if not (f == "--share-group-state-decoder" and v.startswith("3."))]


@pytest.mark.parametrize(("corpus", "rel", "flag", "version"), PARAMS)
def test_decoder_equals_kafka_dump_log(capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus: str, rel: Path,
                                      flag: str, version: str) -> None:
    root = ROOT / "data" / corpus
    if is_crafted(rel):  # made here as the harness made them for the tool
        write_crafted(tmp_path)
        root = tmp_path
    out, err, code = ours(capsys, root, str(rel), flag, "--kafka-version", version)
    want_out, want_err = expected(golden_path(corpus, rel, flag, version),
                                  golden_path(corpus, rel, flag, version, "stderr"))
    assert out == want_out
    assert err == want_err
    assert code == (1 if want_err.startswith(JAVA_CRASH) else 0)  # `Ignoring unknown file` is no crash


def test_the_goldens_cover_every_flag_version_and_problem() -> None:
    got = {(f, v) for _, _, f, v in CASES}
    flags = ("--offsets-decoder", "--transaction-log-decoder", "--cluster-metadata-decoder",
             "--remote-log-metadata-decoder", "--share-group-state-decoder")
    assert got == {(f, v) for f in flags for v in ("3.9.2", "4.4.0")}
    texts = "".join(golden_path(c, r, f, v).read_text() for c, r, f, v in CASES)
    for printed in ("Unknown record type 99", "Found an unknown record version 99", "<DELETE>",
                    "unknown::version=5", "Error reading byte array of 300 byte(s)", '"transactionStatus":"42"',
                    "Unknown metadata id 28", "byte(s) of garbage after 2", '"value":1.0E-4',
                    # remote log metadata: each record type and state, and what the objects refuse
                    "customMetadata=Optional[CustomMetadata{5 bytes}]", "txnIdxEmpty=true", "Unknown metadata id 4",
                    "RemoteLogSegmentMetadataSnapshot{", "state can not be null", "skipping. null\n",
                    "segmentLeaderEpochs can not be null or empty", "Failed to deserialize record with type 3",
                    '"org.apache.kafka.common.record.Record.value()" is null',
                    '"org.apache.kafka.common.record.internal.Record.value()" is null'):
        assert printed in texts
    tiered = "".join(golden_path(c, r, f, v).read_text() for c, r, f, v in CASES if c.endswith("/tiered"))
    for state in ("COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED", "DELETE_SEGMENT_FINISHED",
                  "DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED"):
        assert f"state={state}" in tiered  # written by the brokers (the partition deletes by Kafka's RLMM)


OLD_GOLDENS = [pytest.param(corpus, gdir, rel, id=f"{corpus}/{gdir}/{rel}")
               for corpus in ("samples", "samples-kafka4")
               for gdir in sorted(p.name for p in (ROOT / "data" / corpus).glob("golden*"))
               for rel in ("broker/__consumer_offsets-0/00000000000000000000.log",
                           "broker/__transaction_state-0/00000000000000000000.log",
                           "broker/__cluster_metadata-0/00000000000000000000.log")]


@pytest.mark.parametrize(("corpus", "gdir", "rel"), OLD_GOLDENS)
def test_decoded_mode_of_the_corpus_goldens(capsys: pytest.CaptureFixture[str], corpus: str, gdir: str,
                                            rel: str) -> None:
    root = ROOT / "data" / corpus
    own = {"samples": "3.9.2", "samples-kafka4": "4.4.0"}[corpus]
    version = own if gdir == "golden" else gdir.removeprefix("golden-")
    flag = DECODERS[Path(rel).parent.name.rpartition("-")[0]]
    out, err, code = ours(capsys, root, rel, "--deep-iteration", "--print-data-log", flag, "--kafka-version", version)
    want_out, want_err = expected(root / gdir / f"{rel}.decoded.txt", root / gdir / f"{rel}.decoded.stderr.txt")
    assert (out, err, code) == (want_out, want_err, 0)


def test_cli_flags_and_share_group_flag_is_4x_only(capsys: pytest.CaptureFixture[str]) -> None:
    log = str(ROOT / "data" / "samples-kafka4" / "broker" / "__share_group_state-0" / f"{'0' * 20}.log")
    assert main(["dump", log, "--share-group-state-decoder", "--kafka-version", "4.x"]) == 0
    out = capsys.readouterr().out
    assert '"type":"0","data":{"groupId":' in out
    # what kafka-dump-log 4.4.0 printed for it, after its "Dumping <path>" line
    golden = (ROOT / "data" / "samples-kafka4" / "decoder-goldens" / "__share_group_state-0" /
              f"{'0' * 20}.log.share-group-state-decoder.4.4.0.txt").read_bytes().decode()
    assert out.split("\n", 1) == [f"Dumping {log}", golden.split("\n", 1)[1]]
    # 3.9's tool has no such option (it dies of joptsimple's UnrecognizedOptionException): a usage error
    assert main(["dump", log, "--share-group-state-decoder", "--kafka-version", "3.9"]) == 2
    assert "no such option" in capsys.readouterr().err
    assert main(["dump", log, "--offsets-decoder", "--json"]) == 2
    assert "leave out --json" in capsys.readouterr().err


def test_the_tools_order_picks_one_of_several_decoder_flags(capsys: pytest.CaptureFixture[str]) -> None:
    log = str(ROOT / "data" / "samples" / "broker" / "__transaction_state-0" / f"{'0' * 20}.log")
    assert main(["dump", log, "--transaction-log-decoder", "--offsets-decoder", "--kafka-version", "4.x"]) == 0
    # the offsets decoder reads a transaction key (type 0) as a legacy offset commit key and fails on it, as
    # kafka-dump-log 4.4.0 does given both flags
    assert ("key: Error at offset 0, skipping. Could not read record with version 0 from key's buffer due to: "
            "null.\n") in capsys.readouterr().out


def _real_records(topic: str) -> list[tuple[bytes | None, bytes | None]]:
    out = []
    logs = [*(ROOT / "data").glob(f"samples*/broker/{topic}-0/*.log"),
            *(ROOT / "data").glob(f"samples-internal/*/tiered/broker/{topic}-*/*.log")]
    for log in sorted(logs):
        out += [(r["key"], r["value"]) for r in read_log(str(log), "records").to_pylist() if not r["isControl"]]
    return out


def _mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    if b and rng.random() < 0.5:
        b[rng.randrange(len(b))] = rng.randrange(256)
    if rng.random() < 0.5:
        del b[rng.randrange(len(b) + 1):]
    return bytes(b)


@pytest.mark.parametrize("topic", [CONSUMER_OFFSETS, TRANSACTION_STATE, CLUSTER_METADATA, REMOTE_LOG_METADATA,
                                   SHARE_GROUP_STATE])
def test_damaged_records_never_raise_anything_else(topic: str) -> None:
    """Real records with a byte changed or cut short print as the decoder prints them, or end the run as the
    tool dies (ToolCrash: 3.9's transaction log formatter); never another exception (a traceback)."""
    rng = random.Random(7)
    records = _real_records(topic)
    outcomes = {"decoded": 0, "skipped": 0, "crashed": 0}
    for _ in range(2000):
        key, value = rng.choice(records)
        key, value = (None if b is None else _mutate(rng, b) for b in (key, value))
        row = {"offset": 5, "timestampType": "CreateTime", "timestamp": 0, "keySize": -1 if key is None else len(key),
               "valueSize": -1 if value is None else len(value), "sequence": -1, "headers": [], "isControl": False,
               "key": key, "value": value}
        for version in KafkaVersion:
            if topic == SHARE_GROUP_STATE and version == KafkaVersion.V3_9:
                continue
            try:
                f = record_fields(row, 2, DumpOptions(kafka_version=version, decoder=topic))
                text = f["key"] if "key" in f else f["payload"]  # a metadata record has no key
                outcomes["skipped" if "skipping" in text or "unknown::" in text else "decoded"] += 1
            except ToolCrash:
                outcomes["crashed"] += 1
    assert outcomes["decoded"] and outcomes["skipped"] + outcomes["crashed"]
    # every draw, in each version that has the decoder, ended one of the three ways
    versions = [v for v in KafkaVersion if not (topic == SHARE_GROUP_STATE and v == KafkaVersion.V3_9)]
    assert sum(outcomes.values()) == 2000 * len(versions)
