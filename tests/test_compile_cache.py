"""The compiled decoders' cache on a read-only install: numba's own places (next to the source, the user's cache
directory) are not writable there when the user has no writable home, as a cluster's executors often run; the
package then picks one (:mod:`kafkalog_spark.format.compile_cache`), and the second process loads what the first
compiled."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kafkalog_spark.format import compile_cache
from tests.helpers.corpus import BROKER, ROOT

DECODE = """
import glob, sys
from kafkalog_spark.log.reader import read_log
segment = sorted(glob.glob(sys.argv[1] + "/*/*.log"))[0]
print(read_log(segment).num_rows)
"""


def _cache_files(directory: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in directory.rglob("*") if p.suffix in (".nbi", ".nbc")}


def test_a_read_only_install_without_a_writable_home_compiles_once(tmp_path: Path) -> None:
    install, mount = tmp_path / "install", tmp_path / "read-only"
    shutil.copytree(ROOT / "kafkalog_spark", install / "kafkalog_spark",
                    ignore=shutil.ignore_patterns("__pycache__"))
    mount.mkdir()
    bound = subprocess.run(["mount", "--bind", str(install), str(mount)], capture_output=True, text=True)
    if bound.returncode != 0:
        pytest.skip(f"a read-only bind mount needs privileges this run lacks: {bound.stderr.strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mount)], check=True)
        temp = tmp_path / "temp"
        temp.mkdir()
        # a home that cannot be written, the package's own directory neither; the temp dir can
        env = {k: v for k, v in os.environ.items() if k not in (compile_cache.ENV, "XDG_CACHE_HOME")} | {
            "HOME": str(mount), "PYTHONPATH": str(mount), "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(temp)}
        runs = []
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", DECODE, str(BROKER)], env=env, capture_output=True,
                                  text=True, cwd=tmp_path, timeout=600)
            assert done.returncode == 0, done.stderr[-3000:]
            cache = temp / f"kafkalog-spark-numba-{os.getuid()}"
            runs.append((done.stdout.strip(), _cache_files(cache)))
        (first_out, first_cache), (second_out, second_cache) = runs
        assert int(first_out) > 0 and first_out == second_out
        # the first process compiled into the cache; the second loaded it and compiled (wrote) nothing
        assert first_cache and second_cache == first_cache
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_the_cache_goes_where_it_can_be_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", config.CACHE_DIR)  # numba is imported here: choose() sets it too
    monkeypatch.delenv(compile_cache.ENV, raising=False)
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    # the environment's own choice is kept
    monkeypatch.setenv(compile_cache.ENV, str(tmp_path / "mine"))
    assert compile_cache.choose(tmp_path / "nowhere") is None
    monkeypatch.delenv(compile_cache.ENV)
    # a writable package directory: numba's own place, next to the source
    assert compile_cache.choose(tmp_path) is None and compile_cache.ENV not in os.environ
    # read-only package, a writable user cache directory
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    read_only = tmp_path / "absent"  # os.access says not writable, whoever runs the test
    assert compile_cache.choose(read_only) == str(tmp_path / "cache" / "kafkalog-spark" / "numba")
    monkeypatch.delenv(compile_cache.ENV)
    # neither: the temporary directory
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temp"))
    chosen = str(tmp_path / "temp" / f"kafkalog-spark-numba-{os.getuid()}")
    assert compile_cache.choose(read_only) == chosen and config.CACHE_DIR == chosen
