"""Quiet Spark sessions: the settings that keep a local driver from printing thousands of log lines.

A local session's driver JVM is started by PySpark's launcher (``spark-submit pyspark-shell``), which
passes every builder setting on as ``--conf`` and puts ``spark.driver.extraJavaOptions`` on that JVM's
command line. So JVM options given here reach log4j2 and Ivy before either prints anything, with no need
for ``PYSPARK_SUBMIT_ARGS``. They do nothing for a JVM that is already running (``getOrCreate`` reusing
a session) or for a cluster's driver.
"""

from __future__ import annotations

import logging
from pathlib import Path

LOG4J2_FILE = Path(__file__).resolve().parent / "resources" / "log4j2.properties"

# Ivy reads its variables from the JVM's system properties. These turn off the per-module lines of a
# resolution ("found ... in central", "modules in use", conflict resolution); Spark's own lines and
# Ivy's summary table are printed whatever the settings (Spark quiets Ivy only in its own tests).
IVY_QUIET = {
    "ivy.log.modules.in.use": "false",
    "ivy.log.module.when.found": "false",
    "ivy.log.resolved.revision": "false",
    "ivy.log.conflict.resolution": "false",
}


def driver_java_options(verbose: bool = False) -> str:
    """The driver JVM options: log4j2 reads the shipped file at ERROR (WARN when ``verbose``), Ivy is quiet."""
    # A file: URI, so a path with spaces needs no quoting in the launcher's option parsing.
    options = [f"-Dlog4j2.configurationFile={LOG4J2_FILE.as_uri()}"]
    if verbose:
        options.append("-Dkafkalog.log.level=warn")  # the shipped file's level (see its header)
    else:
        options += [f"-D{k}={v}" for k, v in IVY_QUIET.items()]
    return " ".join(options)


def quiet_spark_confs(verbose: bool = False) -> dict[str, str]:
    """Spark settings for a quiet local session: log4j2 at ERROR (``verbose``: WARN, and Ivy as usual),
    Ivy's per-module lines off and no console progress bar.

    ``spark.driver.extraJavaOptions`` replaces any value set before: append the user's own options to it."""
    return {
        "spark.driver.extraJavaOptions": driver_java_options(verbose),
        "spark.ui.showConsoleProgress": "true" if verbose else "false",
    }


def quiet_python_logging(verbose: bool = False) -> None:
    """py4j logs every gateway connection at INFO and DEBUG; keep it to warnings and errors (its handlers
    stay as the application set them)."""
    logging.getLogger("py4j").setLevel(logging.WARNING if verbose else logging.ERROR)
