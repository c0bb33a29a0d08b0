"""Topic configuration as a Kafka broker resolves it: defaults, server.properties, per-topic overrides."""

from .broker import load_broker_properties
from .config_defs import BROKER_DEFAULTS, KAFKA_DEFAULTS
from .overrides import load_topic_overrides, parse_assignments, parse_topic_overrides
from .topic_config import TopicConfig, effective_config
from .topic_configs import TopicConfigs
from .values import ConfigError

__all__ = [
    "BROKER_DEFAULTS",
    "KAFKA_DEFAULTS",
    "ConfigError",
    "TopicConfig",
    "TopicConfigs",
    "effective_config",
    "load_broker_properties",
    "load_topic_overrides",
    "parse_assignments",
    "parse_topic_overrides",
]
