"""`kafkalog dump`: what kafka-dump-log (of the chosen Kafka version) prints for the given files, or JSON Lines."""

from __future__ import annotations

import argparse
import sys

from ..format.internal_topics import (
    CLUSTER_METADATA,
    CONSUMER_OFFSETS,
    REMOTE_LOG_METADATA,
    SHARE_GROUP_STATE,
    TRANSACTION_STATE,
)
from ..kafka_versions import KafkaVersion
from .arguments import UsageError, add_kafka_version, check_paths
from .runtime import usage_errors

INT_MAX = 2**31 - 1  # dump-log's --max-bytes and --max-message-size are Java ints


def _java_int(flag: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{flag} {text!r}: expected a whole number of bytes") from None
    if not 0 <= value <= INT_MAX:
        raise UsageError(f"{flag} {value}: expected 0 to {INT_MAX}")
    return value


# kafka-dump-log's decoder flags in the order it tries them (given several, the first here wins), and their topics
DECODERS = {"offsets_decoder": CONSUMER_OFFSETS, "transaction_log_decoder": TRANSACTION_STATE,
            "cluster_metadata_decoder": CLUSTER_METADATA, "remote_log_metadata_decoder": REMOTE_LOG_METADATA,
            "share_group_state_decoder": SHARE_GROUP_STATE}


def _decoder(args: argparse.Namespace) -> str | None:
    if args.share_group_state_decoder and args.kafka_version == KafkaVersion.V3_9:
        raise UsageError("--share-group-state-decoder: Kafka 3.9's kafka-dump-log has no such option")
    return next((topic for flag, topic in DECODERS.items() if getattr(args, flag)), None)


@usage_errors("kafkalog dump")
def run(args: argparse.Namespace) -> int:
    # the decoder (its compiled scanners) imported here, not by the CLI: a command on Spark decodes in its workers
    from ..dump import DumpOptions, run_dump

    check_paths(args.files, "FILE", "entry")  # all before the first line: no half dump, then an error
    decoder = _decoder(args)
    if decoder is not None and args.json:
        raise UsageError("the decoder flags print kafka-dump-log's text; leave out --json")
    opts = DumpOptions(
        deep_iteration=args.deep_iteration, print_data_log=args.print_data_log, as_json=args.json,
        kafka_version=args.kafka_version, skip_record_metadata=args.skip_record_metadata,
        max_bytes=_java_int("--max-bytes", args.max_bytes),
        max_message_size=_java_int("--max-message-size", args.max_message_size),
        verify_index_only=args.verify_index_only, index_sanity_check=args.index_sanity_check, decoder=decoder)
    return run_dump(args.files, opts, print, lambda line: print(line, file=sys.stderr))


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dump", help="print what kafka-dump-log prints for the given files")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--deep-iteration", action="store_true", help="print every record, not only batches")
    p.add_argument("--print-data-log", action="store_true", help="print keys and values (implies deep)")
    p.add_argument("--skip-record-metadata", action="store_true",
                   help="print only keys and values of records (control records become empty lines)")
    p.add_argument("--max-bytes", default=str(INT_MAX), metavar="N",
                   help="read only the first N bytes of each .log/.checkpoint (no trailing-bytes line then)")
    p.add_argument("--max-message-size", default=str(5 * 1024 * 1024), metavar="N",
                   help="largest batch an .index entry may point at (default 5242880)")
    p.add_argument("--verify-index-only", action="store_true",
                   help="check .index/.timeindex entries against the .log without printing them")
    p.add_argument("--index-sanity-check", action="store_true",
                   help="run the broker's startup sanity check on .index/.timeindex files")
    p.add_argument("--offsets-decoder", action="store_true",
                   help="decode __consumer_offsets records (implies --print-data-log)")
    p.add_argument("--transaction-log-decoder", action="store_true",
                   help="decode __transaction_state records (implies --print-data-log)")
    p.add_argument("--cluster-metadata-decoder", action="store_true",
                   help="decode __cluster_metadata records and KRaft snapshots (implies --print-data-log)")
    p.add_argument("--remote-log-metadata-decoder", action="store_true",
                   help="decode __remote_log_metadata records of tiered storage (implies --print-data-log)")
    p.add_argument("--share-group-state-decoder", action="store_true",
                   help="decode __share_group_state records (4.x only; implies --print-data-log)")
    p.add_argument("--json", action="store_true", help="JSON Lines: one object per batch and per record")
    add_kafka_version(p)
    p.set_defaults(func=run)
