"""The wheel as a user gets it: what it holds, what it requires, and `kafkalog demo` run from it.

The slow test (marked ``packaging``) installs the wheel with its ``[spark]`` extra into a fresh venv (no
system site-packages; pip may reuse its wheel cache) and runs the demo from an empty directory.
"""

from __future__ import annotations

import email
import os
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from tests.helpers.corpus import BROKER, PACKAGE, ROOT

DEMO = PACKAGE / "demo"
TABLES = ("segment_stats", "partition_stats", "log_dir_stats", "index_findings", "retention_plan",
          "compaction_preview", "compaction_preview_segments", "topic_configs")
# Root checkpoints that list every partition of the log dir: the demo keeps only its partitions' lines.
FILTERED_CHECKPOINTS = ("recovery-point-offset-checkpoint", "replication-offset-checkpoint")


@pytest.mark.parametrize(("spark", "artifact"), [("4.0.0", "delta-spark_4.0_2.13"), ("4.0.5", "delta-spark_4.0_2.13"),
                                                  ("4.1.4", "delta-spark_4.1_2.13"), ("4.2.0", "delta-spark_4.2_2.13"),
                                                  ("4.2.1.dev0", "delta-spark_4.2_2.13")])
def test_the_delta_jar_follows_the_spark_version(spark: str, artifact: str) -> None:
    from kafkalog_spark.delta.packages import delta_maven_coordinates, delta_spark_confs

    assert delta_maven_coordinates(spark) == f"io.delta:{artifact}:4.4.0"
    confs = delta_spark_confs(spark)
    assert confs["spark.jars.packages"] == f"io.delta:{artifact}:4.4.0"
    assert confs["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"


@pytest.mark.parametrize("spark", ["3.5.3", "4.3.0", "5.0.0", "unknown"])
def test_a_spark_without_a_delta_pair_is_named(spark: str) -> None:
    from kafkalog_spark.delta.packages import NoDeltaForSpark, delta_maven_coordinates

    with pytest.raises(NoDeltaForSpark, match=spark):
        delta_maven_coordinates(spark)


def test_the_quiet_settings_point_at_the_shipped_log4j2_file() -> None:
    from kafkalog_spark.logging_config import LOG4J2_FILE, quiet_spark_confs

    quiet, verbose = quiet_spark_confs(), quiet_spark_confs(verbose=True)
    assert LOG4J2_FILE.is_file()
    assert f"-Dlog4j2.configurationFile={LOG4J2_FILE.as_uri()}" in quiet["spark.driver.extraJavaOptions"].split()
    assert "-Divy.log.module.when.found=false" in quiet["spark.driver.extraJavaOptions"].split()
    assert quiet["spark.ui.showConsoleProgress"] == "false"
    assert "-Dkafkalog.log.level=warn" in verbose["spark.driver.extraJavaOptions"].split()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built the way `make wheel` builds it (sdist first, so the sdist is checked too)."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], check=True,
                   capture_output=True, text=True, timeout=600)
    (found,) = out.glob("kafkalog_spark-*.whl")
    return found


def test_the_demo_corpus_is_a_subset_of_the_samples() -> None:
    broker = DEMO / "broker"
    files = [p for p in broker.rglob("*") if p.is_file()]
    assert {p.name for p in broker.iterdir() if p.is_dir()} >= {"tutorial-segments-0", "compacted-cleaned-0",
                                                                 "txn-mixed-0"}
    for path in files:
        rel = path.relative_to(broker)
        original = (BROKER / rel).read_bytes()
        if rel.name in FILTERED_CHECKPOINTS:
            version, _count, *entries = original.decode().splitlines()
            kept = [e for e in entries if (broker / "{}-{}".format(*e.split()[:2])).is_dir()]
            original = "\n".join([version, str(len(kept)), *kept, ""]).encode()
        assert path.read_bytes() == original, f"{rel} differs from data/samples/broker: copy it again"
    assert sum(p.stat().st_size for p in files) < 2_000_000
    assert (DEMO / "topics.ini").read_text() == (ROOT / "conf" / "samples-topics.ini").read_text()


def test_the_wheel_holds_the_demo_and_no_tests(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("tests/") or "/tests/" in n or n.split("/")[-1].startswith("test_")]
    assert "kafkalog_spark/resources/log4j2.properties" in names
    assert "kafkalog_spark/demo/nightly.toml" in names and "kafkalog_spark/demo/topics.ini" in names
    demo_files = {p.relative_to(ROOT).as_posix() for p in (DEMO / "broker").rglob("*") if p.is_file()}
    firsts = {f"kafkalog_spark/demo/broker/{p}/00000000000000000000.log"
              for p in ("tutorial-segments-0", "compacted-cleaned-0", "txn-mixed-0")}
    assert firsts <= demo_files <= set(names)
    assert wheel.stat().st_size < 2_000_000


def test_the_core_requirements_pin_no_spark(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(z.read(meta))
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    def named(reqs) -> list[tuple[str, list[str], str]]:
        return sorted((canonicalize_name(r.name), sorted(r.extras), str(r.specifier)) for r in map(Requirement, reqs))

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requires = metadata.get_all("Requires-Dist")
    core = [r for r in requires if "extra ==" not in r]
    # exactly the dependencies pyproject.toml declares, none of them Spark's
    assert named(core) == named(project["dependencies"])
    assert not [r for r in core if r.split()[0].lower().startswith(("pyspark", "delta-spark", "delta_spark"))]
    assert not [r for r in requires if "==" in r.split(";")[0]]  # ranges only
    spark = [r.split(";")[0] for r in requires if 'extra == "spark"' in r]
    assert named(spark) == named(project["optional-dependencies"]["spark"])
    assert {n for n, _, _ in named(spark)} >= {"pyspark", "delta-spark"}
    assert metadata["Requires-Python"] == ">=3.11"


@pytest.mark.packaging
def test_the_demo_runs_from_a_fresh_install(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    bin_dir = env_dir / "bin"
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", f"{wheel}[spark]"], check=True,
                   timeout=900)
    work = tmp_path / "empty"
    work.mkdir()
    # as a user's shell has it: none of the suite's settings (its Spark defaults: tests/spark-conf)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON",
                                                             "PYSPARK_DRIVER_PYTHON", "SPARK_CONF_DIR")}
    version = subprocess.run([str(bin_dir / "kafkalog"), "--version"], cwd=work, env=env, capture_output=True,
                             text=True, check=True)
    assert version.stdout == f"kafkalog {tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']['version']}\n"
    demo = subprocess.run([str(bin_dir / "kafkalog"), "demo"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=900)
    assert demo.returncode == 0, demo.stderr[-4000:]
    for table in TABLES:
        assert (work / "warehouse" / table / "_delta_log").is_dir(), table
    for topic in ("tutorial-segments", "compacted-cleaned", "txn-mixed", "hello-round-robin"):
        assert topic in demo.stdout
    # and its report, with plotly from the wheel's own requirements
    report = work / "warehouse" / "report.html"
    assert f"report: {report}" in demo.stdout and "Plotly.newPlot" in report.read_text()
    # The installed package, not this checkout, ran: the demo's corpus came from site-packages.
    assert str(ROOT) not in demo.stdout
