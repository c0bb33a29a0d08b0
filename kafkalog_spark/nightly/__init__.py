"""The nightly job: read broker log dirs, compute the analyses, write them as one snapshot into Delta.

- :mod:`.config`: :class:`NightlyConfig`, from the TOML file (``conf/nightly.toml``) and overrides;
- :mod:`.pipeline`: the tables, functions of the source's views (:func:`analysed`, :func:`cluster_tables`);
- :mod:`.job`: :func:`run`, which writes them as one snapshot, all-or-nothing;
- :mod:`.incremental`: what a run keeps for the next (:data:`CACHE_TABLES`), which then decodes only the segments
  that changed;
- :mod:`.fleet`: a run on every broker into one warehouse, and the fleet step (:func:`run_fleet`) that joins them.

Its command line is ``kafkalog nightly`` (:mod:`kafkalog_spark.commands.nightly`), which ``jobs/nightly.py`` runs
under spark-submit.
"""

from .config import NightlyConfig, check_identifier, table_location, topic_configs, what_if_configs
from .incremental import CACHE_TABLES
from .job import PARALLEL_WRITES, run, run_fleet
from .pipeline import (
    CLUSTER_TABLES,
    DIR_TABLES,
    TABLES,
    VIEWS,
    analysed,
    cluster_tables,
    compute,
    read_cached_views,
    state_tables_by_cluster,
    summary,
)

__all__ = ["CACHE_TABLES", "CLUSTER_TABLES", "DIR_TABLES", "PARALLEL_WRITES", "TABLES", "VIEWS", "NightlyConfig",
           "analysed", "check_identifier", "cluster_tables", "compute", "read_cached_views", "run", "run_fleet",
           "state_tables_by_cluster", "summary", "table_location", "topic_configs", "what_if_configs"]
