"""The dynamic configs a KRaft cluster keeps in its metadata log, as two layers of a topic's effective config.

A KRaft cluster records every ``kafka-configs --alter`` (AlterConfigs, IncrementalAlterConfigs) and every topic's
creation configs as a ConfigRecord in ``__cluster_metadata``; the broker replays them into its
ConfigurationsImage and layers a topic's LogConfig as

    defaults < static server.properties < the cluster-wide dynamic broker default (resource name "")
             < the broker's own dynamic config (its node id) < the topic's dynamic config

(DynamicBrokerConfig: per-broker over cluster default over static; LogManager: the topic's overrides over the
broker's current log defaults). Broker keys are mapped to topic keys as the static ones are
(ServerTopicConfigSynonyms, :func:`~.broker.broker_properties_to_config`). Each value keeps where it came from, as
Kafka's ConfigSource names the layer: ``dynamic-topic``, ``dynamic-broker`` or ``dynamic-broker-default``, with
``@<offset>`` of the ConfigRecord, or ``@snapshot-<end offset>`` when the newest snapshot holds it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..kafka_versions import KafkaVersion
from .broker import broker_key_for, broker_properties_to_config
from .config_defs import topic_defaults
from .values import ConfigError, parse_value

log = logging.getLogger(__name__)

# a value of a layer: (value, where it came from)
Sourced = tuple[str, str]


def _origin(row: Mapping[str, Any]) -> str:
    return f"@{row['offset']}" if row.get("offset") is not None else f"@snapshot-{row.get('snapshotEndOffset')}"


@dataclass(frozen=True)
class ClusterConfigs:
    """The dynamic configs of one cluster's metadata: ``broker``, the broker layers merged (topic keys, and the
    broker-only keys the analyses read), and ``topics``, each topic's dynamic configs; every value with its
    source."""

    broker: Mapping[str, Sourced] = field(default_factory=dict)
    topics: Mapping[str, Mapping[str, Sourced]] = field(default_factory=dict)

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]], node_ids: Iterable[int],
                  kafka_version: KafkaVersion) -> ClusterConfigs:
        """From the ``metadata_configs`` view's rows (resourceType, resourceName, name, value, offset,
        snapshotEndOffset) of one cluster. ``node_ids``: the brokers whose log dirs are read; their own dynamic
        configs apply when they are one broker, or several that agree (else only the cluster-wide default, with a
        warning). A key ``kafka_version`` does not know, or a value its rules reject, is left out with a warning
        naming where it came from (a 3.9 cluster's ``segment.bytes`` below 4.x's minimum read with 4.x's rules: the
        cluster's own version is what ``--kafka-version`` should say)."""
        rows = list(rows)
        default = {r["name"]: r for r in rows if r["resourceType"] == "BROKER" and r["resourceName"] == ""}
        per_broker = {}
        for node in sorted(set(node_ids)):
            per_broker[node] = {r["name"]: r for r in rows
                                if r["resourceType"] == "BROKER" and r["resourceName"] == str(node)}
        own: dict[str, Mapping[str, Any]] = {}
        if per_broker:
            layers = list(per_broker.values())
            values = [{k: r["value"] for k, r in layer.items()} for layer in layers]
            if all(v == values[0] for v in values):
                own = layers[0]
            else:
                log.warning("brokers %s have different dynamic configs: only the cluster-wide default applies",
                            ", ".join(map(str, per_broker)))
        broker: dict[str, Sourced] = {}
        for layer, name in ((default, "dynamic-broker-default"), (own, "dynamic-broker")):
            props = {k: r["value"] for k, r in layer.items()}
            for key, value in _valid_broker_config(props, kafka_version).items():
                origin = layer.get(broker_key_for(key, props, kafka_version))
                broker[key] = (value, name + (_origin(origin) if origin else ""))
        known = topic_defaults(kafka_version)
        topics: dict[str, dict[str, Sourced]] = {}
        for r in rows:
            if r["resourceType"] != "TOPIC":
                continue
            origin = _origin(r)[1:]
            where = (f"topic {r['resourceName']}'s dynamic config {r['name']}={r['value']} (metadata "
                     f"{'offset ' + origin if origin.isdigit() else origin})")
            if r["name"] not in known:
                log.warning("ignoring %s: not a topic config of Kafka %s", where, kafka_version.value)
                continue
            try:
                parse_value(r["name"], r["value"], kafka_version)
            except ConfigError as e:
                log.warning("ignoring %s: %s", where, e)
                continue
            topics.setdefault(r["resourceName"], {})[r["name"]] = (r["value"], "dynamic-topic" + _origin(r))
        return cls(broker, topics)


def _valid_broker_config(props: dict[str, str], kafka_version: KafkaVersion) -> dict[str, str]:
    """:func:`~.broker.broker_properties_to_config` of ``props``, leaving out (with a warning) each value the
    version's rules reject."""
    props = dict(props)
    while True:
        try:
            return broker_properties_to_config(props, kafka_version)
        except ConfigError as e:
            if e.key not in props:
                raise
            log.warning("ignoring the dynamic broker config %s: %s", e.key, e)
            del props[e.key]
