"""Per-topic config overrides, from a file in any of these formats (detected from the text):

1. ``kafka-configs.sh --describe --entity-type topics [--entity-name T] [--all]`` output::

       Dynamic configs for topic orders are:
         retention.ms=86400000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=86400000}

   (``All configs for topic ...`` blocks too: entries whose source is ``DEFAULT_CONFIG`` and sensitive entries
   are skipped), or the older one-line form ``Configs for topic 'orders' are retention.ms=1,segment.bytes=2``.
2. INI sections (:mod:`configparser`), ``#``/``;`` comments, ``key = value`` or ``key: value``::

       [orders]
       retention.ms = 86400000
       cleanup.policy = compact,delete

3. YAML (PyYAML): a mapping of topic -> {key: scalar or list}; a list is joined with commas::

       orders:
         retention.ms: 86400000
         cleanup.policy: [compact, delete]

4. JSON: ``{"orders": {"retention.ms": 86400000}}``.

Values are returned as strings, unvalidated; :func:`load_topic_overrides` validates them.
"""

from __future__ import annotations

import configparser
import json
import logging
import re
from collections.abc import Iterable, Mapping
from os import PathLike
from typing import Any

import yaml

from ..kafka_versions import LATEST, KafkaVersion, parse_kafka_version
from .config_defs import known_in, not_in_version, topic_defaults
from .values import ConfigError, parse_value, read_config_text

log = logging.getLogger(__name__)

Overrides = dict[str, dict[str, str]]

# kafka-configs is a tool's output, not a standard format: no library reads it.
_DESCRIBE_HEADER = re.compile(
    r"^\s*(?P<kind>Dynamic|All|Static)?\s*[Cc]onfigs for topic\s+(?P<topic>\S+?)\s+are:?\s*(?P<rest>.*)$")
_DESCRIBE_ENTRY = re.compile(
    r"^\s+(?P<key>[^=\s]+)=(?P<value>.*?)\s+sensitive=(?P<sensitive>true|false)(?:\s+synonyms=\{(?P<syn>.*)\})?\s*$")


def _strip_quotes(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _parse_describe(text: str, where: str) -> Overrides:
    out: Overrides = {}
    current: dict[str, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        header = _DESCRIBE_HEADER.match(line)
        if header:
            current = out.setdefault(_strip_quotes(header["topic"]), {})
            rest = header["rest"].strip()
            if rest:  # the one-line form: k=v,k=v (a value may itself hold commas: cleanup.policy=compact,delete)
                key = None
                for piece in rest.split(","):
                    if "=" in piece and re.match(r"^\s*[a-z][a-z0-9._-]*=", piece):
                        key, value = piece.split("=", 1)
                        key = key.strip()
                        current[key] = value.strip()
                    elif key is not None:
                        current[key] += "," + piece.strip()
                    else:
                        raise ConfigError(f"{where}:{number}: cannot read {piece!r} as key=value")
            continue
        entry = _DESCRIBE_ENTRY.match(line)
        if entry and current is not None:
            if entry["sensitive"] == "true":
                continue
            source = (entry["syn"] or "").split(":", 1)[0].strip()
            if source == "DEFAULT_CONFIG":
                continue  # Kafka's default: the same as ours, and it must not shadow the broker layer
            current[entry["key"]] = entry["value"]
            continue
        raise ConfigError(f"{where}:{number}: unexpected line in kafka-configs output: {line.strip()!r}")
    return out


def _parse_ini(text: str, where: str) -> Overrides:
    # strict=False: a repeated section merges and a repeated key's last value wins. No interpolation: '%' is
    # data. The default section is named "", which no header can spell, so [DEFAULT] stays an ordinary topic.
    parser = configparser.ConfigParser(interpolation=None, strict=False, default_section="",
                                       empty_lines_in_values=False)
    parser.optionxform = str  # Kafka's keys are case-sensitive; configparser lowercases by default
    try:
        parser.read_string(text, source=where)
    except configparser.ParsingError as e:  # also MissingSectionHeaderError: a line before any valid [topic]
        number = e.lineno if isinstance(e, configparser.MissingSectionHeaderError) else e.errors[0][0]
        line = text.split("\n")[number - 1].strip()  # read_string splits at "\n" only
        raise ConfigError(f"{where}:{number}: expected [topic] or key=value, got {line!r}") from None
    out: Overrides = {}
    for section in parser.sections():
        values = out.setdefault(section.strip(), {})
        values.update((key, _strip_quotes(value)) for key, value in parser.items(section, raw=True))
    return out


def _yaml_text(node: yaml.Node, where: str, what: str) -> str:
    """A scalar as written: no YAML 1.1 typing, so ``010``, ``1:30`` or ``on`` reach Kafka's rules unchanged."""
    if not isinstance(node, yaml.ScalarNode):
        raise ConfigError(f"{where}:{node.start_mark.line + 1}: expected {what}, got a YAML {node.id}")
    return node.value


def _parse_yaml(text: str, where: str) -> Overrides:
    out: Overrides = {}
    try:
        # Composed but not constructed (safe_load's first half): the nodes keep each scalar's text and line, so
        # values reach Kafka's rules as written and errors can name the line; nothing is instantiated.
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as e:
        line = f":{e.problem_mark.line + 1}" if e.problem_mark else ""
        raise ConfigError(f"{where}{line}: invalid YAML: {e.problem or e.context}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{where}: invalid YAML: {e}") from None
    for root in filter(None, documents):
        if not isinstance(root, yaml.MappingNode):
            raise ConfigError(f"{where}:{root.start_mark.line + 1}: expected a YAML mapping of topic -> "
                              f"{{key: value}}, got a {root.id}")
        for topic_node, body in root.value:
            topic = _yaml_text(topic_node, where, "a topic name")
            values = out.setdefault(topic, {})
            if isinstance(body, yaml.ScalarNode) and body.tag == "tag:yaml.org,2002:null":
                continue  # "orders:" with nothing under it
            if not isinstance(body, yaml.MappingNode):
                got = repr(body.value) if isinstance(body, yaml.ScalarNode) else f"a YAML {body.id}"
                raise ConfigError(f"{where}:{body.start_mark.line + 1}: expected an indented 'key: value' mapping "
                                  f"under topic {topic!r}, got {got}")
            for key_node, value_node in body.value:
                key = _yaml_text(key_node, where, "a config key")
                items = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                values[key] = ",".join(_yaml_text(item, where, "a scalar or a list of scalars") for item in items)
    return out


def _json_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_json_str(v) for v in value)
    return str(value)


def parse_topic_overrides(text: str, where: str = "<text>") -> dict[str, dict[str, str]]:
    """Per-topic overrides from text in any of the formats of the module docstring (detected)."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{where}: invalid JSON: {e}") from e
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise ConfigError(f"{where}: expected a JSON object of topic -> {{key: value}}")
        return {t: {k: _json_str(v) for k, v in kv.items()} for t, kv in data.items()}
    if any(_DESCRIBE_HEADER.match(line) for line in text.splitlines()):
        return _parse_describe(text, where)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip()[0] not in "#;"), "")
    if first.startswith("["):
        return _parse_ini(text, where)
    return _parse_yaml(text, where)


def load_topic_overrides(path: str | PathLike[str], kafka_version: KafkaVersion | str = LATEST
                         ) -> dict[str, dict[str, str]]:
    """Per-topic overrides from a file: kafka-configs output, INI sections, YAML or JSON; values validated by
    ``kafka_version``'s rules. A key only an older version knows (under 4.x: ``message.format.version``) is
    dropped with a warning: a cluster upgraded to 4.x may still store it, and its broker ignores it when it
    builds the topic's LogConfig. A key ``kafka_version`` does not know yet, or no version knows, is an error."""
    kafka_version = parse_kafka_version(kafka_version)
    overrides = parse_topic_overrides(read_config_text(path), str(path))
    keys = topic_defaults(kafka_version)
    for topic, values in overrides.items():
        for key, value in list(values.items()):
            if key not in keys:
                if is_removed(key, kafka_version):
                    log.warning("%s: ignoring %s=%s of topic %s: %s", path, key, value, topic,
                                not_in_version(key, kafka_version))
                    del values[key]
                    continue
                why = not_in_version(key, kafka_version)
                what = "unknown topic config key" if why == "unknown" else why
                raise ConfigError(f"{key}={value}: {what} (topic {topic} in {path})", key, value)
            parse_value(key, value, kafka_version)
    return overrides


def is_removed(key: str, kafka_version: KafkaVersion) -> bool:
    """``key`` was a topic config of an older version only (StrEnum order: "3.9" < "4.x")."""
    versions = known_in(key)
    return bool(versions) and all(v < kafka_version for v in versions)


def parse_assignments(items: Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``["key=value", ...]`` (the CLI's ``--set``) or a mapping, as a dict of strings."""
    if items is None:
        return {}
    if isinstance(items, Mapping):
        return {str(k): _json_str(v) for k, v in items.items()}
    out = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"{item}: expected key=value", item, None)
        key, value = item.split("=", 1)
        out[key.strip()] = value.strip()
    return out
