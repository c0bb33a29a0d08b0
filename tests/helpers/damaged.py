"""Damaged copies of the real-broker corpus's partition dirs, one damage each (a flipped bit, a cut batch, a zeroed or
corrupted index, a deleted segment, a stray .deleted file, a checkpoint naming a missing partition, a partition in
two log dirs): the index validation's tests (tests/test_index_validation.py) and the local engine's
(tests/test_local_engine.py) read the same ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from .framing import batches


def seg(directory: Path, base: int, suffix: str = ".log") -> str:
    return f"{directory}/{base:020d}{suffix}"


def damaged_log_dirs(samples: Path, tmp: Path) -> tuple[Path, dict, list[Path]]:
    """One log dir of damaged copies (each dir named after its damage; ``facts`` holds what each test expects)
    and a second one holding a replica of one of them: the root, the facts and both log dirs (the local
    engine's test compares the engines on them too)."""
    root = tmp / "logs"
    broker = samples / "broker"
    facts: dict = {}

    def copy(src: str, name: str) -> Path:
        return Path(shutil.copytree(broker / src, root / name))

    d = copy("tutorial-segments-0", "crc-flip-0")  # a bit flipped in the last byte of a batch
    victim = batches(d / f"{12:020d}.log")[3]
    with open(d / f"{12:020d}.log", "r+b") as f:
        f.seek(victim.position + victim.size - 1)
        byte = f.read(1)[0]
        f.seek(-1, 1)
        f.write(bytes([byte ^ 0x10]))
    facts["crc"] = (seg(d, 12), victim.position)

    d = copy("codec-none-0", "truncated-0")  # a closed segment cut in the middle of its last batch
    last = batches(d / f"{11:020d}.log")[-1]
    with open(d / f"{11:020d}.log", "r+b") as f:
        f.truncate(last.position + 100)
    facts["truncated"] = (seg(d, 11), last.position)

    d = copy("tiny-index-interval-0", "zeroed-index-0")  # a closed segment's offset index zero-filled
    index = d / f"{0:020d}.index"
    index.write_bytes(bytes(index.stat().st_size))
    facts["zeroed"] = str(index)

    d = copy("tiny-index-interval-0", "mid-batch-0")  # entry 5 moved 7 bytes into its batch
    index = d / f"{44:020d}.index"
    entries = np.frombuffer(index.read_bytes(), ">i4").reshape(-1, 2).copy()
    entries[5, 1] += 7
    index.write_bytes(entries.astype(">i4").tobytes())
    facts["mid_batch"] = (str(index), 5 * 8)

    d = copy("live-copy-0", "multi-batch-0")  # entry 1 (6 at 666) rewritten as a two-batch append: (8 at 666)
    index = d / f"{0:020d}.index"
    entries = np.frombuffer(index.read_bytes(), ">i4").reshape(-1, 2).copy()
    assert tuple(entries[1]) == (6, 666)
    entries[1, 0] = 8
    index.write_bytes(entries.astype(">i4").tobytes())
    facts["multi_batch"] = (str(index), 8)

    d = copy("tutorial-segments-0", "missing-segment-0")  # the middle segment 36 deleted, every file of it
    for f in d.glob(f"{36:020d}.*"):
        f.unlink()
    facts["missing"] = (seg(d, 24), (d / f"{24:020d}.log").stat().st_size)

    d = copy("hello-round-robin-0", "stray-deleted-0")  # a segment file left behind as .deleted
    shutil.copy(d / f"{3:020d}.log", d / f"{3:020d}.log.deleted")
    facts["stray"] = seg(d, 3, ".log.deleted")

    names = sorted(p.name for p in root.iterdir()) + ["replica-0"]
    lines = [f"{n.rsplit('-', 1)[0]} 0 0" for n in names] + ["ghost 3 42"]
    text = f"0\n{len(lines)}\n" + "".join(line + "\n" for line in lines)
    (root / "recovery-point-offset-checkpoint").write_text(text)
    facts["checkpoint"] = (str(root / "recovery-point-offset-checkpoint"), text.index("ghost 3 42"))
    for log_dir in (root, tmp / "replica"):  # the same partition in two log dirs, damaged in the second only
        shutil.copytree(broker / "idempotent-only-0", log_dir / "replica-0")
    log = tmp / "replica" / "replica-0" / f"{0:020d}.log"
    victim = batches(log)[-1]
    with open(log, "r+b") as f:
        f.seek(victim.position + victim.size - 1)
        byte = f.read(1)[0]
        f.seek(-1, 1)
        f.write(bytes([byte ^ 0x10]))
    facts["replica"] = {"dirs": [str(root), str(tmp / "replica")], "crc": (str(log), victim.position)}
    return root, facts, [root, tmp / "replica"]
