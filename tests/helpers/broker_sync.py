"""A log dir changed as its broker changes it, from two copies of it taken at two moments.

The corpus (data/samples-incremental) holds whole copies of a broker's log dirs at several stages; a checkout gives
every file the same fresh time, so the stages cannot simply be copied over each other. :func:`sync_like_a_broker`
brings a working copy from one stage to the next as the broker did: a file whose bytes did not change is not
touched (its size and time stay), a changed or new file is written anew (a new time, as the broker's appends,
rolls, cleaner swaps and log dir moves give it), and a file the next stage lacks is deleted."""

from __future__ import annotations

import filecmp
import os
import shutil
from pathlib import Path


def sync_like_a_broker(stage: Path, work: Path) -> set[str]:
    """Make ``work`` hold ``stage``'s files; returns the paths (relative to ``work``) of the files written."""
    written: set[str] = set()
    wanted = {p.relative_to(stage) for p in stage.rglob("*") if p.is_file()}
    for rel in sorted(wanted):
        src, dst = stage / rel, work / rel
        if dst.is_file() and filecmp.cmp(src, dst, shallow=False):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.exists():
            dst.unlink()  # the broker writes a new file (a roll, a swap) or appends: either way a new time
        shutil.copyfile(src, dst)
        written.add(str(rel))
    for path in sorted(work.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        rel = path.relative_to(work)
        if path.is_file() and rel not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()) and not (stage / rel).is_dir():
            os.rmdir(path)
    return written
