"""Long-running helper processes of the test harness (a Spark Connect server, a standalone master and its
workers): each in its own process group, started until a line of its log says it is ready, stopped as a group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_answering(url: str, process: subprocess.Popen, log: Path | None = None, timeout_s: float = 60) -> None:
    """Until ``url`` answers with any HTTP status (a server that refuses an unsigned request answers all the same);
    RuntimeError if ``process`` ends first or nothing answers within ``timeout_s``."""
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                where = f"; its log: {log}" if log else ""
                raise RuntimeError(f"{url} did not answer (exit code {process.poll()}){where}") from None
            time.sleep(0.2)


def start_until_ready(name: str, cmd: list[str], log: Path, env: dict[str, str], ready: str,
                      timeout_s: float) -> subprocess.Popen:
    """``cmd`` started with its output in ``log``, once ``ready`` appears there; if it does not within ``timeout_s``
    (or the process ends first), the process is stopped and RuntimeError shows the log's end."""
    with open(log, "wb") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready in log.read_text(errors="replace"):
            return process
        if process.poll() is not None:
            break
        time.sleep(0.3)
    stop_group(process)
    tail = log.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"the {name} did not start; its log ends with:\n{tail}")


def stop_group(process: subprocess.Popen) -> None:
    """SIGTERM to the process's group, SIGKILL if it has not ended within 30 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
