"""A local session with Delta starts without Ivy's resolution report on stderr (issue: quiet first runs), shows it
when asked (``quiet=False``, the commands' ``--verbose``), passes on what the JVM prints once it is up (but the
warning a library prints on every run), and shows the held lines when the JVM cannot start: they say why. Each case
is a fresh process, as the JVM is one per process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.helpers.corpus import ROOT

SESSION = textwrap.dedent("""
    import sys
    from kafkalog_spark.session import local_session
    extra = {"spark.jars.packages": sys.argv[2]} if len(sys.argv) > 2 else None
    spark = local_session("launch-test", master="local[1]", quiet=sys.argv[1] == "quiet", extra=extra)
    spark.sparkContext._jvm.java.lang.System.err.println("after-start-marker")  # the JVM's own stderr
    from pyspark.sql import functions as F
    # DataSketches' HLL (segment_stats' estimates): its memory library prints a warning on first use, on Java 17
    spark.range(3).select(F.hll_sketch_estimate(F.hll_sketch_agg("id"))).collect()
    print(spark.range(3).count(), spark.conf.get("spark.jars.packages"))
""")
IVY_REPORT = ":: resolution report ::"
DATASKETCHES_WARNING = "can only operate in restricted mode where no off-heap operations are allowed"


def start(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SESSION, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_a_quiet_session_starts_with_delta_and_without_ivys_report() -> None:
    done = start("quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    count, packages = done.stdout.split()
    assert count == "3" and "io.delta:delta-spark" in packages  # Delta's JARs were resolved, not skipped
    assert IVY_REPORT not in done.stderr and "Ivy Default Cache" not in done.stderr, done.stderr
    assert "after-start-marker" in done.stderr  # what the JVM prints once up still reaches stderr
    assert DATASKETCHES_WARNING not in done.stderr, done.stderr  # but not the line a library prints on every run


def test_a_verbose_session_shows_ivys_report() -> None:
    done = start("verbose")
    assert done.returncode == 0, done.stderr[-2000:]
    assert IVY_REPORT in done.stderr and "after-start-marker" in done.stderr
    assert DATASKETCHES_WARNING in done.stderr  # the query does print it: the quiet session drops it


def test_a_jvm_that_cannot_start_shows_why() -> None:
    done = start("quiet", "not-a-coordinate")
    assert done.returncode != 0
    assert "Provided Maven Coordinates must be in the form" in done.stderr  # the held lines, written out
