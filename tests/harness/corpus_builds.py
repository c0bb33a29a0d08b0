"""What the corpus builders (`make samples-replicas`, `make samples-incremental`, `make samples-fleet`) share: their
command line, one build per Kafka version, a README written whole (never half) from what the builds recorded, and
its lines on a cluster's settings."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.harness.broker import VERSIONS, HarnessError


def write_readme(out_dir: Path, recorded: str, readme: Callable[[dict], str]) -> None:
    """``out_dir``/README.md from ``readme`` of each version's ``recorded`` JSON file (those built so far)."""
    results = {v: json.loads((out_dir / v / recorded).read_text())
               for v in VERSIONS if (out_dir / v / recorded).exists()}
    if not results:
        return
    tmp = out_dir / "README.md.tmp"
    tmp.write_text(readme(results))
    tmp.rename(out_dir / "README.md")


def build_versions(prog: str, doc: str, build_version: Callable[[str], bool], after_each: Callable[[], None],
                   argv: list[str] | None = None) -> int:
    """The builder's main: ``build_version`` for each ``--kafka`` version (default: all), ``after_each`` after each;
    exit 1 when a build failed its checks or the harness failed (said once, on stderr)."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    parser.add_argument("--kafka", action="append", choices=VERSIONS, help="only this broker version (repeatable)")
    versions = parser.parse_args(argv).kafka or list(VERSIONS)
    ok = True
    for version in versions:
        try:
            ok = build_version(version) and ok
        except HarnessError as e:
            print(f"{prog}: {e}", file=sys.stderr)
            return 1
        after_each()
    return 0 if ok else 1


def property_lines(props: Mapping[str, Any]) -> list[str]:
    """``props`` as a README shows them: indented ``key=value`` lines."""
    return [f"    {k}={v}" for k, v in props.items()]


def cluster_settings_text(intro: str, controller: Mapping[str, Any],
                          brokers: Callable[[str], Mapping[str, Any]]) -> list[str]:
    """A README's "Cluster" section: ``intro``, the controller's own settings, then each version's brokers'
    (``brokers(version)``)."""
    lines = ["## Cluster", "", intro, ""] + property_lines(controller)
    lines += ["", "Every broker (besides listeners and log.dirs):", ""]
    for version in VERSIONS:
        lines += [f"{version}:", ""] + property_lines(brokers(version)) + [""]
    return lines
