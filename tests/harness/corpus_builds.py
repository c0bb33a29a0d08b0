"""What the corpus builders (`make samples-replicas`, `make samples-incremental`) share: their command line, one
build per Kafka version, and a README written whole (never half) from what the builds recorded."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

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
