"""What the user names on the command line, checked before any Spark work: paths, times, topic configs.

A mistake raises :class:`UsageError` (or the config layer's ``ConfigError``) with a message that names the
option or the path, so the command can end in one line and exit 2 instead of a traceback from deep inside
Spark twenty seconds later.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
from collections.abc import Callable, Iterable
from typing import TypeVar

from ..kafka_versions import CHOICES, LATEST, KafkaVersion, parse_kafka_version

T = TypeVar("T")


class UsageError(ValueError):
    """A mistake in what the user gave; the message names the option or path."""


# The times a command takes: from the epoch to the last millisecond ISO 8601 can write (year 9999). Kafka's clock
# is a Java long of milliseconds, and the analyses add retention and lag durations to it.
TIME_RANGE_MS = (0, 253402300799999)


def parse_time(text: str | None, flag: str) -> int:
    """Epoch milliseconds from a command-line time: epoch milliseconds, or ISO 8601 (no zone: UTC);
    None means now. A time outside :data:`TIME_RANGE_MS` is a UsageError naming ``flag``."""
    if text is None:
        return int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    text = text.strip()
    if text.lstrip("-").isdigit():
        ms = int(text)
    else:
        try:
            when = dt.datetime.fromisoformat(text)
        except ValueError:
            raise UsageError(f"{flag} {text!r}: expected ISO 8601 (e.g. 2024-05-01T12:00:00Z) or epoch "
                             "milliseconds") from None
        ms = int((when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp() * 1000)
    low, high = TIME_RANGE_MS
    if not low <= ms <= high:
        raise UsageError(f"{flag} {text!r}: expected a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z "
                         f"(epoch milliseconds {low} to {high})")
    return ms


def local_path(path: str) -> str | None:
    """The local path ``path`` names (``file:`` URIs and ``dbfs:/Volumes`` as the readers take them), or None
    for a URI of another file system (checked by whoever opens it)."""
    from ..log.files import normalize_path

    local = normalize_path(path)
    return None if "://" in local else local


def check_path(path: str, what: str, kind: str = "file") -> str:
    """``path`` if it exists locally as a ``kind`` this process may read: "dir", "file" (a regular file: a
    configuration read whole, where a FIFO would block the read) or "entry" (any file but a directory: what
    ``dump`` is given, which reports a FIFO or socket as a finding). URIs of other file systems pass unchecked."""
    local = local_path(path)
    if local is None:
        return _check_store_path(path, what, kind)
    if kind == "dir" and not os.path.isdir(local):
        why = "not a directory" if os.path.exists(local) else "not a directory (no such file or directory)"
        raise UsageError(f"{what} {path}: {why}")
    if not os.path.exists(local):
        raise UsageError(f"{what} {path}: no such file or directory")
    if kind != "dir" and os.path.isdir(local):
        raise UsageError(f"{what} {path}: is a directory, expected a file")
    if kind == "file" and not os.path.isfile(local):
        raise UsageError(f"{what} {path}: not a regular file (a FIFO, socket or device), expected a file")
    if not os.access(local, os.R_OK | (os.X_OK if kind == "dir" else 0)):
        raise UsageError(f"{what} {path}: permission denied")
    return path


def _check_store_path(path: str, what: str, kind: str) -> str:
    """``path`` if it names a ``kind`` in an object store that these credentials may list or read (one or two
    requests); other URIs pass unchecked. The message names the URI and the store's reason, never a credential."""
    import pyarrow.fs as pafs

    from ..log import object_stores

    if not object_stores.is_object_store(path):
        return path
    fs, inner = object_stores.resolve(path)
    try:
        found = fs.get_file_info(inner).type
    except PermissionError as e:  # made one line, as every usage error, by runtime.usage_message
        raise UsageError(f"{what} {path}: access denied ({e})") from None
    except OSError as e:  # the store's errors, as object_stores translates them (no credentials, a timeout)
        raise UsageError(f"{what} {path}: cannot read it ({e})") from None
    if found == pafs.FileType.NotFound:
        raise UsageError(f"{what} {path}: no such bucket, file or directory")
    if kind == "dir" and found != pafs.FileType.Directory:
        raise UsageError(f"{what} {path}: not a directory")
    if kind != "dir" and found == pafs.FileType.Directory:
        raise UsageError(f"{what} {path}: is a directory, expected a file")
    return path


def check_paths(paths: Iterable[str], what: str, kind: str = "file") -> list[str]:
    return [check_path(p, what, kind) for p in paths]


def check_log_dirs(paths: Iterable[str], what: str, remote: str | None = None) -> list[str]:
    """:func:`check_paths` for the log dirs Spark reads, globs expanded as the readers expand them (each match
    checked). A Spark Connect server (``--remote sc://...``) reads them from its own file system, which this
    machine cannot see: then they are left to the server."""
    from ..log.files import expand_paths, has_glob

    paths = list(paths)
    if remote is not None and remote.startswith("sc://"):
        return paths
    for path in paths:
        if not has_glob(path):
            check_path(path, what, "dir")
            continue
        try:
            matches = expand_paths([path])
        except FileNotFoundError as e:
            raise UsageError(f"{what} {path}: no file or directory matches it") from e
        check_paths(matches, what, "dir")
    return paths


def check_output_file(path: str, what: str) -> str:
    """``path`` if a file can be written there: its directory exists and is writable, and it is no directory."""
    local = local_path(path)
    if local is None:
        return path
    parent = os.path.dirname(os.path.abspath(local))
    if not os.path.isdir(parent):
        raise UsageError(f"{what} {path}: directory {parent} does not exist")
    if os.path.isdir(local):
        raise UsageError(f"{what} {path}: is a directory, expected a file")
    if os.path.exists(local) and not os.path.isfile(local):  # writing to a FIFO blocks until a reader comes
        raise UsageError(f"{what} {path}: not a regular file (a FIFO, socket or device), expected a file")
    if not os.access(parent, os.W_OK | os.X_OK) or (os.path.exists(local) and not os.access(local, os.W_OK)):
        raise UsageError(f"{what} {path}: permission denied")
    return path


def _named(option: str, path: str | None, load: Callable[[], T]) -> T:
    """``load()``, with a ConfigError's message prefixed by the option (and file) it came from."""
    from ..config import ConfigError

    try:
        return load()
    except ConfigError as e:
        message = str(e)
        prefix = option if path is None or path in message else f"{option} {path}:"
        raise UsageError(f"{prefix} {message}") from e


def topic_configs(broker: str | None, overrides: str | None, what_if: list[str] | None = None, *,
                  names: tuple[str, str] = ("--broker-config", "--topic-config"), what_if_name: str = "--set",
                  kafka_version: KafkaVersion = LATEST):
    """The topics' configs from ``--broker-config``, ``--topic-config`` and ``--set`` (merged on top) by
    ``kafka_version``'s rules, each layer checked on its own so that a bad value is blamed on the option (of
    ``names``) that gave it."""
    from ..config import TopicConfigs, parse_assignments

    broker_name, overrides_name = names
    if broker is not None:
        check_path(broker, broker_name)
    if overrides is not None:
        check_path(overrides, overrides_name)
    configs = _named(broker_name, broker, lambda: TopicConfigs(broker, kafka_version=kafka_version))
    if overrides is not None:
        configs = _named(overrides_name, overrides,
                         lambda: TopicConfigs(configs.broker, overrides, kafka_version=kafka_version))
    if what_if:
        assignments = _named(what_if_name, None, lambda: parse_assignments(what_if))
        configs = _named(what_if_name, None, lambda: configs.with_what_if(assignments))
    return configs


def configs_of(args: argparse.Namespace, what_if: list[str] | None = None):
    """:func:`topic_configs` of a command's ``--broker-config``, ``--topic-config`` and ``--kafka-version``."""
    return topic_configs(getattr(args, "broker_config", None), getattr(args, "topic_config", None), what_if,
                         kafka_version=getattr(args, "kafka_version", LATEST))


def with_metadata_configs(spark, args: argparse.Namespace, *configs):
    """Each of ``configs`` (TopicConfigs, or None) with the dynamic configs of the KRaft metadata log in
    ``args.log_dirs`` layered in, unless ``--no-metadata-configs``; one configs given, one returned."""
    from ..source.cluster_configs import read_cluster_configs

    first = configs[0]
    if first is not None and getattr(args, "metadata_configs", True):
        cluster = read_cluster_configs(spark, args.log_dirs, first).cluster
        configs = tuple(c if c is None else c.with_cluster(cluster) for c in configs)
    return configs if len(configs) > 1 else configs[0]


def kafka_version_arg(text: str) -> KafkaVersion:
    """argparse type for --kafka-version: a bad spelling is a usage error naming the choices."""
    try:
        return parse_kafka_version(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_kafka_version(parser: argparse.ArgumentParser,
                      default_help: str = f"{LATEST.value}, the newest") -> None:
    """--kafka-version: whose rules (dump text, config keys and defaults, cleaner) to apply."""
    parser.add_argument("--kafka-version", type=kafka_version_arg, default=LATEST, metavar="|".join(CHOICES),
                        help=f"the Kafka version whose rules to apply (default: {default_help})")
