"""Where the compiled decoders' code is cached (numba's ``cache=True``): compiled once per machine, Python and
source, then loaded by every process after it, every Spark worker among them.

numba keeps the code next to the source (``__pycache__``) when the install is writable, else in the user's cache
directory. On a read-only install whose user has no writable home (a cluster's executors often run so) it finds no
place, and every decorated function raises at import. :func:`choose` picks a place before numba is imported: numba's
own when the package directory is writable; else ``kafkalog-spark/numba`` in the user's cache directory
(``$XDG_CACHE_HOME`` or ``~/.cache``) when it can be made; else ``kafkalog-spark-numba-<uid>`` in the temporary
directory. A ``NUMBA_CACHE_DIR`` the environment sets is left alone.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ENV = "NUMBA_CACHE_DIR"


def _writable(directory: Path) -> bool:
    """Whether a file can be made in ``directory`` (made first if missing)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError:
        return False


def choose(package_dir: Path) -> str | None:
    """Set ``NUMBA_CACHE_DIR`` where numba's own places would fail; returns the directory set (None: numba's own, or
    the environment's, is used)."""
    if os.environ.get(ENV) or os.access(package_dir, os.W_OK):
        return None
    home_cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    for candidate in (Path(home_cache) / "kafkalog-spark" / "numba",
                      Path(tempfile.gettempdir()) / f"kafkalog-spark-numba-{uid}"):
        if _writable(candidate):
            os.environ[ENV] = str(candidate)
            if "numba" in sys.modules:  # imported before us: its configuration was read already
                from numba.core import config

                config.CACHE_DIR = str(candidate)
            return str(candidate)
    return None  # nowhere writable: numba says so itself
