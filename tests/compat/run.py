"""`make compat`: the Spark tests against every supported pyspark minor, each in its own venv, as a matrix.

For each Python and each pyspark minor it creates (or updates) ``.compat/pyspark-X.Y`` (``-pyA.B`` added for
a Python other than the one running this script), installs the package with ``[spark,test]`` and that
pyspark (pip picks the delta-spark that pairs with it), runs a Spark subset of the tests, and counts the
stderr lines of a quiet local Delta session. The matrix is printed and written to tests/compat/matrix.md,
which docs/support-matrix.md quotes; rows of earlier runs for other pairs are kept (each row has its date).

Standard library only: it runs under the interpreter that creates the venvs.
Usage: python tests/compat/run.py [--pythons python3.11 python3.13] [--pysparks 4.0 4.2] [--tests FILE ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYSPARKS = ("4.0", "4.1", "4.2")
TESTS = ("tests/test_source.py", "tests/test_nightly.py", "tests/test_retention_plan.py")
MATRIX = ROOT / "tests" / "compat" / "matrix.md"
RESULTS = ROOT / ".compat" / "results.json"  # every pair's last result, to rebuild the matrix from

# Run inside each venv: the versions installed, and the stderr lines of a quiet local session with Delta.
PROBE = """
import json, os, subprocess, sys
from importlib.metadata import version
code = '''
from pyspark.sql import SparkSession
from kafkalog_spark.delta.packages import delta_spark_confs
from kafkalog_spark.logging_config import quiet_spark_confs
b = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
for k, v in {**delta_spark_confs(), **quiet_spark_confs()}.items():
    b = b.config(k, v)
s = b.getOrCreate()
s.range(3).write.format("delta").mode("overwrite").save(sys.argv[1])
assert s.read.format("delta").load(sys.argv[1]).count() == 3
s.stop()
'''
import tempfile
with tempfile.TemporaryDirectory() as tmp:
    run = subprocess.run([sys.executable, "-c", "import sys\\n" + code, tmp + "/t"], capture_output=True, text=True,
                         env={**os.environ, "PYSPARK_PYTHON": sys.executable})
print(json.dumps({"python": sys.version.split()[0], "pyspark": version("pyspark"), "delta": version("delta-spark"),
                  "probe_ok": run.returncode == 0, "stderr_lines": len(run.stderr.splitlines()),
                  "stderr_tail": run.stderr[-2000:]}))
"""


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    print("+", " ".join("<script>" if "\n" in c else c for c in cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, **kw)


def venv_for(python: str, minor: str) -> Path:
    """Create or update the venv; reinstall only when pyproject.toml changed."""
    version = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    tag = "" if version == "{}.{}".format(*sys.version_info[:2]) else f"-py{version}"
    venv = ROOT / ".compat" / f"pyspark-{minor}{tag}"
    py = venv / "bin" / "python"
    venv.parent.mkdir(exist_ok=True)
    (venv.parent / ".gitignore").write_text("*\n")  # the venvs are local state, never committed
    if not py.exists():
        sh([python, "-m", "venv", str(venv)], check=True)
    stamp = venv / ".installed"
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text() != want:
        sh([str(py), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        sh([str(py), "-m", "pip", "install", "-q", "-e", ".[spark,test]", f"pyspark[connect]=={minor}.*"], check=True)
        stamp.write_text(want)
    return venv


def run_tests(venv: Path, tests: list[str]) -> dict:
    junit = venv / "junit.xml"
    junit.unlink(missing_ok=True)
    started = time.monotonic()
    sh([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *tests])
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if junit.exists():
        for suite in ET.parse(junit).getroot().iter("testsuite"):
            for k in counts:
                counts[k] += int(suite.get(k, 0))
    counts["passed"] = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    counts["seconds"] = round(time.monotonic() - started)
    return counts


def row(r: dict) -> str:
    failed = r["failures"] + r["errors"]
    result = "passed" if r["tests"] and not failed else "FAILED"
    probe = f"{r['stderr_lines']} lines" if r["probe_ok"] else "FAILED"
    return (f"| {r['pyspark']} | {r['delta']} | {r['python']} | {result}: {r['passed']} passed, {failed} failed, "
            f"{r['skipped']} skipped ({r['seconds']} s) | {probe} | {r['date']} |")


def write_matrix(results: list[dict], tests: list[str]) -> str:
    """Merge ``results`` into every pair's last result and write the matrix; returns its table."""
    known = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    known.update({f"{r['pyspark']} {r['python']}": r for r in results})
    RESULTS.write_text(json.dumps(known, indent=1))
    ordered = sorted(known.values(), key=lambda r: (r["pyspark"].split("."), r["python"].split(".")))
    lines = ["| pyspark | delta-spark | Python | Spark tests | quiet Delta session: stderr lines | run on |",
             "|---|---|---|---|---|---|", *map(row, ordered)]
    table = "\n".join(lines)
    MATRIX.write_text(f"Tests: {' '.join(tests)}\n\n{table}\n")
    return table


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pythons", nargs="+", default=[os.environ.get("PYTHON", "python3.11")])
    p.add_argument("--pysparks", nargs="+", default=list(PYSPARKS))
    p.add_argument("--tests", nargs="+", default=list(TESTS))
    args = p.parse_args(argv)
    results = []
    for python in args.pythons:
        for minor in args.pysparks:
            venv = venv_for(python, minor)
            probe = json.loads(sh([str(venv / "bin" / "python"), "-c", PROBE], capture_output=True, text=True,
                                  check=True).stdout.splitlines()[-1])
            if not probe["probe_ok"]:
                print(probe["stderr_tail"], file=sys.stderr)
            results.append({**probe, **run_tests(venv, args.tests), "date": time.strftime("%Y-%m-%d")})
            print(write_matrix(results[-1:], args.tests))  # after each pair: an interrupted run keeps its rows
    return 0 if all(r["probe_ok"] and r["tests"] and not r["failures"] + r["errors"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
