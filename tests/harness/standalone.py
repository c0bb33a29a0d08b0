"""A Spark standalone cluster on loopback, started from the installed pyspark: one master and N workers, each its
own JVM, so a job's executors are separate processes with their own Python workers, as on a real cluster.

    with StandaloneCluster(workdir, workers=2) as cluster:
        subprocess.run(cluster.submit(["jobs/nightly.py", ...]))      # spark-submit --master spark://...

Executors run this interpreter (``spark.pyspark.python``), which imports kafkalog_spark from the checkout, as a
cluster's nodes import it from the package installed on them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyspark

from .processes import free_port, start_until_ready, stop_group

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
SPARK_HOME = Path(pyspark.__file__).parent


class StandaloneCluster:
    def __init__(self, workdir: Path, workers: int = 2, cores: int = 1, memory: str = "1g",
                 timeout_s: float = 120) -> None:
        self.workdir = workdir
        self.workers, self.cores, self.memory = workers, cores, memory
        self.timeout_s = timeout_s
        self.port = free_port()
        self.processes: list[subprocess.Popen] = []

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
               "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
               "SPARK_LOG_DIR": str(self.workdir / "logs")}
        env.pop("SPARK_REMOTE", None)
        return env

    def _start(self, name: str, args: list[str], ready: str) -> None:
        cmd = [str(SPARK_HOME / "bin" / "spark-class"), *args]
        try:
            self.processes.append(start_until_ready(f"standalone {name}", cmd, self.workdir / f"{name}.log",
                                                    self.env(), ready, self.timeout_s))
        except RuntimeError:
            self.stop()  # the master and workers already started
            raise

    def start(self) -> StandaloneCluster:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._start("master", [MASTER_CLASS, "--host", "127.0.0.1", "--port", str(self.port),
                               "--webui-port", str(free_port())], "I have been elected leader")
        for i in range(self.workers):
            work = self.workdir / f"worker-{i}"
            self._start(f"worker-{i}", [WORKER_CLASS, "--host", "127.0.0.1", "--cores", str(self.cores),
                                        "--memory", self.memory, "--webui-port", str(free_port()),
                                        "--work-dir", str(work), self.url], "Successfully registered with master")
        return self

    def submit(self, app: list[str], confs: dict[str, str] | None = None, packages: str | None = None) -> list[str]:
        """The spark-submit command line for ``app`` (a script and its arguments) on this cluster."""
        cmd = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", self.url, "--executor-memory", "768m",
               "--conf", f"spark.pyspark.python={sys.executable}", "--conf", "spark.ui.enabled=false"]
        if packages:
            cmd += ["--packages", packages]
        for k, v in (confs or {}).items():
            cmd += ["--conf", f"{k}={v}"]
        return cmd + app

    def stop(self) -> None:
        for process in reversed(self.processes):
            stop_group(process)
        self.processes = []

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
