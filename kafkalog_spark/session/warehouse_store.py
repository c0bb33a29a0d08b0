"""The Delta warehouse in S3 (``s3a://``, and ``s3://`` mapped to the same filesystem): the settings a session
of ours starts with so that Delta writes and reads its tables there.

Delta reaches a store through Hadoop's filesystems, not through the readers' (:mod:`kafkalog_spark.log.
object_stores`): for S3 that is hadoop-aws's S3A, whose JAR (and the AWS SDK bundle it depends on) must be the
version of the Hadoop the installed pyspark ships, or it fails at run time. They come from Maven Central through
``spark.jars.packages`` on first use, then from the local Ivy cache. S3A takes the keys and the session token from
the standard AWS variables by default; the endpoint and the region are read from them here (``AWS_ENDPOINT_URL_S3``
or ``AWS_ENDPOINT_URL``, ``AWS_REGION`` or ``AWS_DEFAULT_REGION``), or from the options the log dirs are read with
(:class:`~kafkalog_spark.log.object_stores.StoreOptions`).

Delta commits to S3 are safe from one driver (S3's single-driver log store, the default): the nightly job
writes each table from one driver. Jobs on several clusters writing the same warehouse at once need Delta's
multi-cluster log store (DynamoDB), which is the platform's configuration, not ours. On a cluster (spark-submit,
Databricks) the cluster's own settings apply: give it hadoop-aws there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from ..log.object_stores import StoreOptions, configured
from . import PACKAGES

S3A_SCHEMES = ("s3a", "s3")  # s3:// is S3A too here (Hadoop's own s3:// filesystem is long gone)
S3A = "org.apache.hadoop.fs.s3a.S3AFileSystem"


class NoHadoopVersion(ValueError):
    """The installed pyspark does not say which Hadoop it ships."""


def is_s3a_warehouse(warehouse: str | None) -> bool:
    """Whether ``warehouse`` is a URI Delta reaches through S3A."""
    return bool(warehouse) and urlsplit(warehouse).scheme.lower() in S3A_SCHEMES


def hadoop_version(jars: Path | None = None) -> str:
    """The version of the Hadoop client the installed pyspark ships (its ``hadoop-client-api`` JAR)."""
    if jars is None:
        import pyspark

        jars = Path(pyspark.__file__).parent / "jars"
    for jar in sorted(jars.glob("hadoop-client-api-*.jar")):
        match = re.fullmatch(r"hadoop-client-api-(\d+\.\d+\.\d+)\.jar", jar.name)
        if match:
            return match[1]
    raise NoHadoopVersion(f"no hadoop-client-api JAR in {jars}: cannot choose hadoop-aws for an s3a:// warehouse")


def warehouse_confs(warehouse: str | None, store: StoreOptions | None = None,
                    env: Mapping[str, str] | None = None, hadoop: str | None = None) -> dict[str, str]:
    """The settings a new session needs to keep Delta tables at ``warehouse``: none for a local path or another
    filesystem; for ``s3a://`` and ``s3://``, hadoop-aws (``spark.jars.packages``: join it to Delta's) and S3A's
    endpoint and region (``store``'s, by default the ones the log dirs are read with, else the AWS variables in
    ``env``). Never the keys: S3A reads them from the environment itself, so they are in no setting a log or a
    plan could print."""
    if not is_s3a_warehouse(warehouse):
        return {}
    env = os.environ if env is None else env
    store = store or configured()
    confs = {
        PACKAGES: f"org.apache.hadoop:hadoop-aws:{hadoop or hadoop_version()}",
        "spark.hadoop.fs.s3.impl": S3A,
        "spark.hadoop.fs.s3a.impl": S3A,
    }
    endpoint = store.endpoint or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if endpoint:
        # an S3-compatible server: its buckets by path (no per-bucket DNS names on loopback or in a data centre)
        confs["spark.hadoop.fs.s3a.endpoint"] = endpoint
        confs["spark.hadoop.fs.s3a.path.style.access"] = "true"
        confs["spark.hadoop.fs.s3a.connection.ssl.enabled"] = str(endpoint.startswith("https:")).lower()
    region = store.region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if region:
        confs["spark.hadoop.fs.s3a.endpoint.region"] = region
    if store.anonymous:
        confs["spark.hadoop.fs.s3a.aws.credentials.provider"] = (
            "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider")
    return confs
