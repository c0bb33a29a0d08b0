"""A real Spark Connect server on loopback, started from the installed pyspark, for the Connect tests.

    with ConnectServer(warehouse=tmp) as server:
        spark = SparkSession.builder.remote(server.url).getOrCreate()   # in another process

The server is its own JVM (``spark-submit --class ...SparkConnectServer``), as on a shared or serverless
cluster: its Python workers run this interpreter, so they import kafkalog_spark like executors do. Delta's
JARs and SQL extensions are configured on the server, where the tables are written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyspark

from kafkalog_spark.delta.packages import delta_spark_confs
from kafkalog_spark.session import LOCAL_ENGINE_CONFS

from .processes import free_port, start_until_ready, stop_group

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
STARTED = "Spark Connect server started"


class ConnectServer:
    def __init__(self, warehouse: Path, log: Path | None = None, timeout_s: float = 240):
        self.warehouse = warehouse
        self.log = log or warehouse.parent / "connect-server.log"
        self.timeout_s = timeout_s
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def start(self) -> ConnectServer:
        confs = {
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.sql.warehouse.dir": str(self.warehouse),
            **LOCAL_ENGINE_CONFS,
            **delta_spark_confs(),
        }
        packages = confs.pop("spark.jars.packages")
        submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
        cmd = [str(submit), "--master", "local[2]", "--class", SERVER_CLASS, "--packages", packages]
        for k, v in confs.items():
            cmd += ["--conf", f"{k}={v}"]
        cmd.append("spark-internal")
        env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
        env.pop("SPARK_REMOTE", None)
        self.process = start_until_ready("Spark Connect server", cmd, self.log, env, STARTED, self.timeout_s)
        return self

    def stop(self) -> None:
        if self.process is not None:
            stop_group(self.process)
        self.process = None

    def __enter__(self) -> ConnectServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
