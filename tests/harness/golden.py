"""Golden DumpLogSegments output (the oracle) for every dumpable file of a corpus.

Modes: deep (--deep-iteration --print-data-log, every file), verify (--verify-index-only) and sanity
(--index-sanity-check) for .index/.timeindex, head (--print-data-log --skip-record-metadata
--max-bytes 1024) for .log/.checkpoint, decoded (deep + the record decoder) for the .log files of
__consumer_offsets, __transaction_state and __cluster_metadata.
Layout: `<root>/<golden_dir>/<relative path>.<mode>.txt` holds stdout and, only when stderr was not empty,
`<root>/<golden_dir>/<relative path>.<mode>.stderr.txt` holds stderr. `<golden_dir>` is `golden` for the
corpus's own Kafka version and `golden-<version>` for another version's tool on the same files. Paths in
the text are relative to `<root>` (dump-log runs from `<root>` on relative paths; absolute ones it prints
are rewritten).
"""

from __future__ import annotations

import tempfile
from collections.abc import Collection
from pathlib import Path

from tests.harness.broker import KafkaDistribution

GOLDEN_DIR = "golden"
MODES: dict[str, tuple[str, ...]] = {
    "deep": ("--deep-iteration", "--print-data-log"),
    "verify": ("--verify-index-only",),
    "sanity": ("--index-sanity-check",),
    # the record-level flags on the first KiB only: partial batches at the cut, small goldens
    "head": ("--print-data-log", "--skip-record-metadata", "--max-bytes", "1024"),
}
# Internal topics get one more mode, "decoded", with dump-log's decoder for their record schemas.
DECODERS = {
    "__consumer_offsets": "--offsets-decoder",
    "__transaction_state": "--transaction-log-decoder",
    "__cluster_metadata": "--cluster-metadata-decoder",
}
INDEX_SUFFIXES = (".index", ".timeindex")
LOG_SUFFIXES = (".log", ".checkpoint")
# What kafka-dump-log accepts; .checkpoint = KRaft snapshots (bootstrap.checkpoint, __cluster_metadata).
DUMPABLE_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".checkpoint")


def dumpable_files(root: Path) -> list[Path]:
    """Relative paths of the files kafka-dump-log accepts, every golden*/ dir excluded, sorted."""
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not rel.parts[0].startswith(GOLDEN_DIR) and path.suffix in DUMPABLE_SUFFIXES:
            out.append(rel)
    return out


def _decoder(rel: Path) -> str | None:
    topic = rel.parent.name.rpartition("-")[0]
    return DECODERS.get(topic) if rel.suffix == ".log" else None


def modes_for(rel: Path) -> list[str]:
    if rel.suffix in INDEX_SUFFIXES:
        return ["deep", "verify", "sanity"]
    modes = ["deep", "head"] if rel.suffix in LOG_SUFFIXES else ["deep"]
    return [*modes, "decoded"] if _decoder(rel) else modes


def mode_flags(rel: Path, mode: str) -> tuple[str, ...]:
    if mode == "decoded":
        return (*MODES["deep"], str(_decoder(rel)))
    return MODES[mode]


def golden_path(root: Path, rel: Path, mode: str, stream: str = "stdout", golden_dir: str = GOLDEN_DIR) -> Path:
    tail = ".stderr.txt" if stream == "stderr" else ".txt"
    return root / golden_dir / f"{rel}.{mode}{tail}"


def write_golden(root: Path, dist: KafkaDistribution, golden_dir: str = GOLDEN_DIR,
                 modes: Collection[str] | None = None) -> int:
    """Dump every file of `root` in each of its modes (or only those in `modes`) with `dist`'s
    DumpLogSegments into `<root>/<golden_dir>/`; return the number of dump-log runs."""
    root = root.resolve()
    jobs = []
    for rel in dumpable_files(root):
        for mode in modes_for(rel):
            if modes is not None and mode not in modes:
                continue
            out, err = (golden_path(root, rel, mode, stream, golden_dir) for stream in ("stdout", "stderr"))
            out.parent.mkdir(parents=True, exist_ok=True)
            jobs.append((out, err, ("--files", str(rel), *mode_flags(rel, mode))))
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False, encoding="utf-8") as f:
        for out, err, args in jobs:
            f.write("\t".join((str(out), str(err), *args)) + "\n")
    try:
        dist.run_java("DumpMany.java", dist.dump_log_segments, f.name, cwd=root)
    finally:
        Path(f.name).unlink()
    # Bytes, not text: read_text() would turn a \r printed inside a payload into \n.
    prefix = f"{root}/".encode()
    for out, err, _ in jobs:
        for path in (out, err):
            data = path.read_bytes().replace(prefix, b"")
            if path == err and not data:
                path.unlink()
            else:
                path.write_bytes(data)
    return len(jobs)
