"""The nightly job's configuration: the TOML file (``conf/nightly.toml``) and its overrides, checked before any work.

A mistake in the file (bad TOML, an unknown section or key, a value of the wrong type or range) is a
:class:`~kafkalog_spark.config.ConfigError` naming the section and key; a bad snapshot id or table name is refused
however the configuration was made (the file, the CLI, the Python API, the notebook's widgets).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..config import ConfigError, TopicConfigs
from ..delta import IDENTIFIER, MANIFEST, RUNS, TableLocation, check_name, check_snapshot_id
from ..kafka_versions import LATEST, KafkaVersion, parse_kafka_version
from ..log.object_stores import StoreOptions
from ..source.options import parse_size
from .fleet import INPUT_TABLES, MEMBERS
from .incremental import CACHE_TABLES
from .pipeline import TABLES

SNAPSHOT_ID = "snapshot_id"  # the field, and the key of the ConfigError a bad one raises
FLEET_MAX_AGE = "[output] fleet_max_age_hours"


@dataclass(frozen=True)
class NightlyConfig:
    log_dirs: tuple[str, ...]
    location: TableLocation
    include_internal: bool = True
    snapshot_id: str | None = None  # default: the run's UTC time, e.g. 2026-11-21T02:00:00Z
    table_names: dict[str, str] = field(default_factory=lambda: {t: t for t in TABLES})
    broker_config: str | None = None  # a broker's server.properties
    topic_config: str | None = None  # per-topic overrides (see kafkalog_spark.config)
    max_split_bytes: str = "128m"
    kafka_version: KafkaVersion = LATEST  # whose config keys, defaults and ranges (and cleaner) apply
    metadata_configs: bool = True  # the dynamic configs the log dirs' KRaft metadata log records apply
    what_if: tuple[str, ...] = ()  # key=value configs the retention forecast also runs under, side by side
    report: str | None = None  # where to write the HTML report of the snapshot (None: no report)
    store: StoreOptions = field(default_factory=StoreOptions)  # log dirs in object stores: endpoint, region, ...
    full: bool = False  # decode every segment, even those the previous snapshot of their log dir decoded
    polite: bool = False  # on a broker's host: the page cache left as found (and, from the CLI, low priorities)
    # a tiered storage's remote store (LocalTieredStorage's layout): the segment statistics and the validation cover
    # the tiered partitions' remote segments too (kafkalog_spark.source.remote_tier)
    remote_storage: str | None = None
    fleet: bool = False  # one broker's run into a fleet's warehouse: also stores what the fleet step reads
    # the fleet step leaves out a broker whose latest snapshot is older (it stopped reporting: decommissioned, or its
    # job failing), and names it
    fleet_max_age_hours: float = 168.0

    def __post_init__(self) -> None:
        """Refuse a bad snapshot id or table name however the configuration was made (TOML, CLI, the Python API,
        the notebook's widgets), before any work: both reach Delta."""
        if self.snapshot_id is not None:  # the one check of a configured snapshot id, however it was given
            try:
                check_snapshot_id(self.snapshot_id)
            except ValueError as e:
                raise ConfigError(str(e), key=SNAPSHOT_ID) from None
        if not self.fleet_max_age_hours > 0:  # NaN too
            raise ConfigError(f"{FLEET_MAX_AGE} = {self.fleet_max_age_hours!r}: expected a number of hours above 0",
                              key=FLEET_MAX_AGE)
        if self.fleet and not self.location.by_path:
            raise ConfigError("[output] fleet: each broker's run writes into a warehouse of its own inside the fleet's "
                              "warehouse path: give [output] warehouse (--warehouse), not a catalog schema",
                              key="[output] fleet")
        names = [check_name(self.table_names.get(t, t), f"table name for {t}") for t in TABLES]
        if len(set(names)) < len(names) or {MANIFEST, RUNS, *CACHE_TABLES, *INPUT_TABLES, MEMBERS} & set(names):
            raise ValueError(f"table names {names}: each table needs its own name, and {MANIFEST!r} (the manifest), "
                             f"{RUNS!r} (every run started), {', '.join(CACHE_TABLES)} (what the next run reads "
                             f"back) and {', '.join([*INPUT_TABLES, MEMBERS])} (the fleet's) are the job's own tables")

    @classmethod
    def load(cls, path: str | None = None, **overrides) -> NightlyConfig:
        """From a TOML file (sections [input], [output], [snapshot], [configs], [tables]), then overrides. A
        mistake in the file (bad TOML, an unknown section or key, a value of the wrong type or range) raises
        :class:`~kafkalog_spark.config.ConfigError` naming the section and key."""
        doc = _read_toml(path) if path else {}
        base = Path(path).parent if path else Path.cwd()  # relative paths are relative to the file

        def rel(p: str | None) -> str | None:
            if p is None or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", p) or Path(p).is_absolute():
                return p  # a URI (s3://, file:, dbfs:/Volumes/...) or an absolute path: as given
            return os.path.normpath(base / p)

        inp, out, cfg, snap, tables, report = (_section(doc, name) for name in _FILE_KEYS)
        warehouse = _value(out, "output", "warehouse", str)
        # an overriding location (--warehouse, --schema) replaces the file's, which then may name none
        location = overrides.pop("location", None)
        if location is None:
            catalog, schema = (_value(out, "output", key, str) for key in ("catalog", "schema"))
            for key, name in (("catalog", catalog), ("schema", schema)):
                if name is not None:
                    check_identifier(name, f"[output] {key}")
            try:
                location = TableLocation(warehouse=rel(warehouse) if warehouse else None, catalog=catalog,
                                         schema=schema)
            except ValueError as e:
                raise ConfigError(f"[output]: {e}", key="[output]") from None
        # an overriding snapshot id (--snapshot-id) replaces the file's, and is checked as itself (NightlyConfig)
        snapshot_id = overrides.pop(SNAPSHOT_ID, None)
        from_file = snapshot_id is None
        if from_file:
            snapshot_id = _value(snap, "snapshot", "id", str) or None
        max_split_bytes = str(_value(inp, "input", "max_split_bytes", (str, int), "128m"))
        _checked("[input] max_split_bytes", parse_size, max_split_bytes, "[input] max_split_bytes")
        config = _labelled(from_file, lambda: cls(
            log_dirs=tuple(rel(p) for p in _paths(inp, "input", "log_dirs")),
            location=location,
            include_internal=_value(inp, "input", "include_internal", bool, True),
            polite=_value(inp, "input", "polite", bool, False),
            remote_storage=rel(_value(inp, "input", "remote_storage", str) or None),
            fleet=_value(out, "output", "fleet", bool, False),
            fleet_max_age_hours=float(_value(out, "output", "fleet_max_age_hours", (int, float), 168.0)),
            snapshot_id=snapshot_id,
            table_names={t: _table_name(tables, t) for t in TABLES},
            broker_config=rel(_value(cfg, "configs", "broker_properties", str)),
            topic_config=rel(_value(cfg, "configs", "topic_overrides", str)),
            max_split_bytes=max_split_bytes,
            kafka_version=_kafka_version(cfg.get("kafka_version")),
            metadata_configs=_value(cfg, "configs", "metadata_configs", bool, True),
            what_if=tuple(_strings(cfg, "configs", "what_if")),
            report=rel(_value(report, "report", "path", str) or None),
            store=StoreOptions(_value(inp, "input", "store_endpoint", str), _value(inp, "input", "store_region", str),
                               _value(inp, "input", "store_anonymous", bool, False)),
        ))
        return replace(config, **{k: v for k, v in overrides.items() if v is not None})


# The TOML file's sections and their keys: anything else is a typo, which would otherwise be ignored in silence.
_FILE_KEYS = {
    "input": ("log_dirs", "include_internal", "max_split_bytes", "store_endpoint", "store_region", "store_anonymous",
              "polite", "remote_storage"),
    "output": ("warehouse", "catalog", "schema", "fleet", "fleet_max_age_hours"),
    "configs": ("kafka_version", "broker_properties", "topic_overrides", "what_if", "metadata_configs"),
    "snapshot": ("id",),
    "tables": TABLES,
    "report": ("path",),
}
_IDENTIFIER = IDENTIFIER  # the delta layer's rule for table, schema and catalog names
_TYPE_NAMES = {str: "a string", bool: "true or false", int: "a whole number", list: "a list"}


def _read_toml(path: str) -> dict:
    """The file's TOML; an unknown top-level key or section is an error. A FIFO is never opened (it would
    block), a missing file raises FileNotFoundError."""
    file = Path(path)
    if file.exists() and not file.is_file():
        raise ConfigError(f"{path}: not a regular file")
    try:
        doc = tomllib.loads(file.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    unknown = sorted(set(doc) - set(_FILE_KEYS))
    if unknown:
        raise ConfigError(f"unknown section or key {unknown[0]!r}: expected the sections "
                          f"{', '.join(f'[{s}]' for s in _FILE_KEYS)}", key=unknown[0])
    return doc


def _section(doc: dict, name: str) -> dict:
    section = doc.get(name, {})
    if not isinstance(section, dict):
        raise ConfigError(f"[{name}]: expected a section ([{name}] on a line of its own), not {section!r}", key=name)
    unknown = sorted(set(section) - set(_FILE_KEYS[name]))
    if unknown:
        raise ConfigError(f"[{name}] {unknown[0]}: unknown key; expected one of {', '.join(_FILE_KEYS[name])}",
                          key=unknown[0])
    return section


def _value(section: dict, name: str, key: str, types: type | tuple[type, ...], default: object = None) -> object:
    """``section[key]`` if it has one of ``types`` (bool is no int here), else ConfigError naming it."""
    value = section.get(key, default)
    types = types if isinstance(types, tuple) else (types,)
    if value is None or (type(value) in types):
        return value
    expected = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
    raise ConfigError(f"[{name}] {key} = {value!r}: expected {expected}", key=key, value=str(value))


def _strings(section: dict, name: str, key: str, example: str = '"retention.ms=86400000"') -> list[str]:
    """A list of non-empty strings; a single string would otherwise be read as one item per character."""
    items = _value(section, name, key, list, [])
    if not all(isinstance(p, str) and p.strip() for p in items):
        raise ConfigError(f"[{name}] {key} = {items!r}: expected a list of strings, e.g. [{example}]", key=key)
    return items


def _paths(section: dict, name: str, key: str) -> list[str]:
    return _strings(section, name, key, '"/var/lib/kafka/data"')


def check_identifier(name: str, key: str) -> str:
    """``name`` if it is a plain identifier (a table name, a catalog, a schema: a path component and an unquoted
    SQL name alike), else ConfigError naming ``key``."""
    if not _IDENTIFIER.fullmatch(name):
        raise ConfigError(f"{key} {name!r}: expected 1 to 128 letters, digits and _ (not starting with a digit)",
                          key=key, value=name)
    return name


def _table_name(tables: dict, table: str) -> str:
    return check_identifier(_value(tables, "tables", table, str, table), f"[tables] {table}")


def _checked(key: str, check: Callable[..., object], *args: object) -> None:
    """``check(*args)``, its ValueError made a ConfigError naming ``key``."""
    try:
        check(*args)
    except ValueError as e:
        message = str(e)
        raise ConfigError(message if message.startswith(key) else f"{key}: {message}", key=key) from None


def _labelled(from_file: bool, make: Callable[[], NightlyConfig]) -> NightlyConfig:
    """``make()``; a bad snapshot id it refuses named as the file's key when it came from the file."""
    try:
        return make()
    except ConfigError as e:
        if from_file and e.key == SNAPSHOT_ID:
            raise ConfigError(f"[snapshot] id: {e}", key="[snapshot] id") from None
        raise


def _kafka_version(value: object) -> KafkaVersion:
    """[configs] kafka_version: "3.9" or "4.x" (3.9.2, 4, 4.4.0 ... too); absent: the newest."""
    if value is None:
        return LATEST
    try:
        return parse_kafka_version(str(value))
    except ValueError as e:
        raise ConfigError(f"[configs] kafka_version: {e}", key="kafka_version") from None


def topic_configs(config: NightlyConfig) -> TopicConfigs:
    """The effective configs of every topic, resolved once: Kafka's defaults < server.properties < topic overrides,
    by the rules of ``config.kafka_version``. Every analysis takes this one object."""
    return TopicConfigs(config.broker_config, config.topic_config, kafka_version=config.kafka_version)


def what_if_configs(config: NightlyConfig, configs: TopicConfigs) -> TopicConfigs | None:
    """``configs`` with the configuration's what-if on top (None without one); a bad key or value raises
    ConfigError naming it, before any work."""
    if not config.what_if:
        return None
    try:
        return configs.with_what_if(config.what_if)
    except ValueError as e:
        raise ConfigError(f"[configs] what_if: {e}", key="what_if") from None


def table_location(warehouse: str | None, schema: str | None) -> TableLocation | None:
    """``--warehouse`` or ``--schema [catalog.]schema`` as a location (None: neither given), the names checked
    (:func:`check_identifier`) before Spark would fail to parse them; both given is a ValueError."""
    if not (warehouse or schema):
        return None
    catalog, _, name = (schema or "").rpartition(".")
    if schema:
        for part in (catalog, name) if catalog else (name,):
            check_identifier(part, "--schema")
    return TableLocation(warehouse=warehouse, catalog=catalog or None, schema=name or None)
