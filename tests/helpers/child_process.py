"""Python in a child process of its own, from the project root.

A process holds either a classic Spark session or Spark Connect ones (pyspark switches its functions to Connect for
the whole process): the local engine (Sail, over Connect) runs in a child beside the suite's classic session.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers.corpus import ROOT


def run_python(*args: str) -> subprocess.CompletedProcess:
    """``python *args`` in the project root, with its package importable; output captured as text."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
