"""The nightly job's configuration from `kafkalog nightly`'s options, checked before Spark starts.

Without ``--config`` the options are the whole configuration (``--log-dir`` and ``--warehouse`` or
``--schema`` are then required); with it they override the file. Every path the configuration names
(log dirs, the broker and topic config files) must exist, and the topic configs must be valid, before
the first Spark job: otherwise a typo costs a JVM start and ends in a stack trace.
"""

from __future__ import annotations

import argparse
import os

from ..log.object_stores import StoreOptions, configure
from .arguments import UsageError, check_log_dirs, check_path, local_path, topic_configs


def _location(args: argparse.Namespace):
    from ..nightly import table_location

    if args.warehouse and args.schema:
        raise UsageError("--warehouse and --schema: give one of them, not both")
    return table_location(args.warehouse, args.schema)


def load_config_file(path: str, overrides: dict):
    """The configuration in ``path`` with ``overrides``; a mistake in it is a UsageError naming the key."""
    from ..config import ConfigError
    from ..nightly import NightlyConfig
    from ..nightly.config import SNAPSHOT_ID

    check_path(path, "--config")
    try:
        return NightlyConfig.load(path, **overrides)
    except ConfigError as e:  # names the section and key (the file's own name is said once, here)
        if e.key == SNAPSHOT_ID:
            raise  # --snapshot-id's, not the file's
        message = str(e).removeprefix(f"{path}: ")
        hint = "; or give --warehouse or --schema" if e.key == "[output]" else ""
        raise UsageError(f"--config {path}: {message}{hint}") from e


def _store_options(args: argparse.Namespace) -> StoreOptions | None:
    """The --store-* options, when one is given: they replace the file's [input] store_* keys."""
    given = StoreOptions(getattr(args, "store_endpoint", None), getattr(args, "store_region", None),
                         getattr(args, "store_anonymous", False))
    return None if given == StoreOptions() else given


def load_config(args: argparse.Namespace, *, log_dirs: bool = True):
    """The :class:`~kafkalog_spark.nightly.NightlyConfig` that ``args`` describe, every part of it checked;
    ``log_dirs``: whether it must name log dirs (the fleet step reads none)."""
    from ..config import ConfigError
    from ..nightly import NightlyConfig
    from ..nightly.config import FLEET_MAX_AGE, SNAPSHOT_ID

    location = _location(args)
    overrides = {"snapshot_id": args.snapshot_id, "location": location,
                 "log_dirs": tuple(args.log_dirs) if args.log_dirs else None,
                 "kafka_version": getattr(args, "kafka_version", None),  # None: the file's, else the newest
                 "report": getattr(args, "report", None),
                 "what_if": tuple(args.what_if) if getattr(args, "what_if", None) else None,
                 "store": _store_options(args),
                 "full": True if getattr(args, "full", False) else None,
                 "polite": True if getattr(args, "polite", False) else None,
                 "remote_storage": getattr(args, "remote_storage", None),
                 "fleet": True if getattr(args, "fleet", False) else None,
                 "fleet_max_age_hours": getattr(args, "max_age_hours", None)}
    if not args.config and location is None:
        raise UsageError("--warehouse or --schema is required (or give --config FILE)")
    try:
        config = load_config_file(args.config, overrides) if args.config else NightlyConfig.load(None, **overrides)
    except ConfigError as e:  # the options' own mistakes (the file's are usage errors naming it)
        if e.key == SNAPSHOT_ID:
            raise UsageError(f"--snapshot-id: {e}") from e
        if e.key == FLEET_MAX_AGE and getattr(args, "max_age_hours", None) is not None:
            raise UsageError(f"--max-age-hours {args.max_age_hours:g}: expected a number of hours above 0") from e
        raise
    if log_dirs and not config.log_dirs:
        raise UsageError("--log-dir is required" + (f" ({args.config} has no [input] log_dirs)" if args.config else ""))
    configure(config.store)  # before the log dirs in a store are checked
    remote = getattr(args, "remote", None)
    check_log_dirs(config.log_dirs, "--log-dir", remote)
    if config.remote_storage is not None:
        check_path(config.remote_storage, "--remote-storage" if getattr(args, "remote_storage", None)
                   else "[input] remote_storage", "dir")
    on_server = (remote or "").startswith("sc://")  # then the server writes the tables, on its file system
    warehouse = local_path(config.location.warehouse) if config.location.warehouse and not on_server else None
    if warehouse is not None and os.path.exists(warehouse) and not os.path.isdir(warehouse):
        raise UsageError(f"--warehouse {config.location.warehouse}: not a directory")
    topic_configs(config.broker_config, config.topic_config, list(config.what_if),
                  names=("[configs] broker_properties", "[configs] topic_overrides"),
                  what_if_name="--set" if getattr(args, "what_if", None) else "[configs] what_if",
                  kafka_version=config.kafka_version)
    if config.report and os.path.isdir(local_path(config.report)):
        raise UsageError(f"--report {config.report}: a directory; expected the HTML file to write")
    return config
