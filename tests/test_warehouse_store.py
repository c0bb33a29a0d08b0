"""The settings a session of ours starts with for a Delta warehouse in S3 (kafkalog_spark.session.warehouse_store).
The warehouse written and read over a real S3 server, and a run killed there: tests/test_object_store_spark.py."""

from __future__ import annotations

from kafkalog_spark.log.object_stores import StoreOptions
from kafkalog_spark.session import PACKAGES, _at_run_time
from kafkalog_spark.session.warehouse_store import S3A, hadoop_version, is_s3a_warehouse, warehouse_confs

SECRET = "never-in-a-setting"
ENV = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_REGION": "eu-west-3", "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
       "AWS_SECRET_ACCESS_KEY": SECRET}
NONE = StoreOptions()  # no --store-* options (not whatever another test configured in this process)


def test_hadoop_aws_is_the_version_of_the_hadoop_in_sparks_jvm(spark) -> None:
    # the JVM's own answer, not the file name the function reads
    running = spark.sparkContext._jvm.org.apache.hadoop.util.VersionInfo.getVersion()
    assert hadoop_version() == running
    assert warehouse_confs("s3a://b/wh", env={})[PACKAGES] == f"org.apache.hadoop:hadoop-aws:{running}"


def test_only_s3_warehouses_get_settings() -> None:
    for local in (None, "", "warehouse", "/data/wh", "file:/data/wh", "dbfs:/Volumes/a/b/c", "gs://b/wh",
                  "abfss://c@a.dfs.core.windows.net/wh"):
        assert not is_s3a_warehouse(local) and warehouse_confs(local, env=ENV) == {}
    assert is_s3a_warehouse("s3a://b/wh") and is_s3a_warehouse("S3://b/wh")


def test_endpoint_and_region_from_the_aws_variables_and_never_the_keys() -> None:
    confs = warehouse_confs("s3a://b/wh", NONE, env=ENV, hadoop="3.5.0")
    assert confs == {
        PACKAGES: "org.apache.hadoop:hadoop-aws:3.5.0",
        "spark.hadoop.fs.s3.impl": S3A, "spark.hadoop.fs.s3a.impl": S3A,
        "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.endpoint.region": "eu-west-3",
    }
    assert not any(SECRET in v or "AKIAEXAMPLE" in v for v in confs.values())
    # the S3-specific endpoint wins over the general one, as in the AWS SDKs
    specific = warehouse_confs("s3://b/wh", NONE, env=ENV | {"AWS_ENDPOINT_URL_S3": "https://s3.example:443"},
                               hadoop="3.5.0")
    assert specific["spark.hadoop.fs.s3a.endpoint"] == "https://s3.example:443"
    assert specific["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "true"
    # AWS itself: no endpoint, no path-style access
    aws = warehouse_confs("s3a://b/wh", NONE, env={"AWS_DEFAULT_REGION": "us-east-2"}, hadoop="3.5.0")
    assert "spark.hadoop.fs.s3a.endpoint" not in aws and "spark.hadoop.fs.s3a.path.style.access" not in aws
    assert aws["spark.hadoop.fs.s3a.endpoint.region"] == "us-east-2"


def test_the_store_options_win_over_the_environment() -> None:
    options = StoreOptions(endpoint="http://minio:9000", region="us-west-1", anonymous=True)
    confs = warehouse_confs("s3a://b/wh", options, env=ENV, hadoop="3.5.0")
    assert confs["spark.hadoop.fs.s3a.endpoint"] == "http://minio:9000"
    assert confs["spark.hadoop.fs.s3a.endpoint.region"] == "us-west-1"
    assert confs["spark.hadoop.fs.s3a.aws.credentials.provider"].endswith("AnonymousAWSCredentialsProvider")


def test_a_running_session_takes_hadoops_settings_by_their_own_names_and_no_packages() -> None:
    confs = warehouse_confs("s3a://b/wh", NONE, env=ENV, hadoop="3.5.0")
    running = _at_run_time(confs)
    assert PACKAGES not in running and running["fs.s3a.endpoint"] == "http://127.0.0.1:9000"
    assert not any(k.startswith("spark.hadoop.") for k in running)
