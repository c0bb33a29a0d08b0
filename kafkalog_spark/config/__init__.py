"""Topic configuration as a Kafka broker resolves it: defaults, server.properties, per-topic overrides."""

from .topic_config import (
    BROKER_DEFAULTS,
    KAFKA_DEFAULTS,
    ConfigError,
    TopicConfig,
    effective_config,
    load_broker_properties,
    load_topic_overrides,
    parse_assignments,
    parse_topic_overrides,
)

__all__ = [
    "BROKER_DEFAULTS",
    "KAFKA_DEFAULTS",
    "ConfigError",
    "TopicConfig",
    "effective_config",
    "load_broker_properties",
    "load_topic_overrides",
    "parse_assignments",
    "parse_topic_overrides",
]
