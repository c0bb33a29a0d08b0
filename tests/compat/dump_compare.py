"""Compare `kafkalog dump` with the real kafka-dump-log of each Kafka version on any log dirs.

    python -m tests.compat.dump_compare DIR [DIR...] [--kafka 3.9.2 --kafka 4.4.0] [--keep WORK]

For every file under the dirs that kafka-dump-log accepts, in each of its golden modes (deep, verify,
sanity, head; tests/harness/golden.py), it runs the tool of each version (one JVM per version and mode,
through golden.write_golden) and our dump with the same flags, as tests/test_dump_fidelity.py does for the
committed corpora. The inputs are copied into a temp dir first (sparse files stay sparse): the tool and
the golden files are never pointed at an input dir. The tool writes into the dir it dumps: asked for a
time index whose offset index is missing, it creates that `.index` (DumpLogSegments.dumpTimeIndex opens an
OffsetIndex on it), and later runs would see it. So each (version, mode) gets its own fresh copy, our
dump reads a pristine one, and the files the tool created are listed. The `decoded` mode (the internal
topics' record decoders) is not implemented by our dump and is left out here too.

Prints one table per version (per input dir: files, runs, identical stdout, identical stderr) and the first
differing line of each mismatch; exits 1 if anything differs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from kafkalog_spark.kafka_versions import parse_kafka_version
from tests.harness.broker import KAFKA_3, KAFKA_4, KafkaDistribution
from tests.harness.golden import GOLDEN_DIR, dumpable_files, golden_path, modes_for, write_golden
from tests.helpers.dump_tool import MODES, options, ours, theirs_stderr

CHUNK = 1 << 20


def copy_sparse(src: Path, dst: Path) -> None:
    """Copy a file, seeking over all-zero MiBs: a broker's preallocated 10 MiB indexes stay holes."""
    with src.open("rb") as fin, dst.open("wb") as fout:
        while chunk := fin.read(CHUNK):
            if chunk.count(0) == len(chunk):
                fout.seek(len(chunk), os.SEEK_CUR)
            else:
                fout.write(chunk)
        fout.truncate()


def copy_inputs(dirs: list[Path], work: Path) -> dict[str, Path]:
    """Copy each input dir to `work/<n>-<name>/` (regular files only, without a corpus's own golden*/
    dirs); return {that name: input dir}."""
    names = {}
    for n, src in enumerate(dirs):
        name = f"{n:02d}-{src.resolve().name}"
        names[name] = src
        for path in sorted(src.rglob("*")):
            rel = path.relative_to(src)
            if path.is_file() and not path.is_symlink() and not rel.parts[0].startswith(GOLDEN_DIR):
                target = work / name / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                copy_sparse(path, target)
    return names


def first_difference(ours_: bytes, theirs: bytes) -> str:
    a, b = ours_.split(b"\n"), theirs.split(b"\n")
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"line {i + 1}: ours {x[:160]!r} / tool {y[:160]!r}"
    i = min(len(a), len(b))
    extra, who = (a[i:], "ours") if len(a) > len(b) else (b[i:], "tool")
    return f"line {i + 1}: only {who} has {len(extra)} more line(s), first {extra[0][:160]!r}"


@dataclass
class Tally:
    files: set[str] = field(default_factory=set)
    runs: int = 0
    same_out: int = 0
    same_err: int = 0
    mismatches: list[str] = field(default_factory=list)


def run_tool(dirs: list[Path], work: Path, version: str) -> Path:
    """The tool of `version` in every mode, each on a fresh copy `work/<version>-<mode>/`; return `work`."""
    dist = KafkaDistribution(version)
    for mode in MODES:
        root = work / f"{version}-{mode}"
        copy_inputs(dirs, root)
        before = set(root.rglob("*"))
        write_golden(root, dist, golden_dir=GOLDEN_DIR, modes=(mode,))
        for path in sorted(set(root.rglob("*")) - before):
            if path.is_file() and not path.relative_to(root).parts[0].startswith(GOLDEN_DIR):
                print(f"  kafka-dump-log {version} ({mode}) created {path.relative_to(root)}")
    return work


def compare(pristine: Path, work: Path, version: str) -> dict[str, Tally]:
    """Our dump on `pristine` against the goldens `run_tool` left in `work/<version>-<mode>/`, per input dir."""
    kv = parse_kafka_version(version)
    tallies: dict[str, Tally] = defaultdict(Tally)
    for rel in dumpable_files(pristine):
        t = tallies[rel.parts[0]]
        for mode in modes_for(rel):
            if mode not in MODES:
                continue
            t.files.add(str(rel))
            t.runs += 1
            out, err, code = ours(pristine, [str(rel)], options(str(rel), mode, kv))
            tool = work / f"{version}-{mode}"
            their_out = golden_path(tool, rel, mode).read_bytes()
            their_err = theirs_stderr(golden_path(tool, rel, mode, "stderr"))
            t.same_out += out == their_out
            t.same_err += err == their_err
            if out != their_out:
                t.mismatches.append(f"{rel} {mode} stdout {first_difference(out, their_out)}")
            if err != their_err:
                t.mismatches.append(f"{rel} {mode} stderr {first_difference(err.encode(), their_err.encode())}")
            if code != (1 if their_err.startswith("Exception") else 0):
                t.mismatches.append(f"{rel} {mode} exit code {code}")
    return tallies


def report(version: str, tallies: dict[str, Tally]) -> bool:
    """Print the table for one tool version; True when everything was identical."""
    print(f"\nkafka-dump-log {version}")
    rows = [("dir", "files", "runs", "same stdout", "same stderr")]
    total = Tally()
    for name in sorted(tallies):
        t = tallies[name]
        rows.append((name, str(len(t.files)), str(t.runs), str(t.same_out), str(t.same_err)))
        total.files |= t.files
        total.runs += t.runs
        total.same_out += t.same_out
        total.same_err += t.same_err
        total.mismatches += t.mismatches
    rows.append(("total", str(len(total.files)), str(total.runs), str(total.same_out), str(total.same_err)))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    for m in total.mismatches:
        print(f"  DIFF {m}")
    return not total.mismatches


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="dump_compare", description=__doc__.split("\n\n")[0])
    p.add_argument("dirs", nargs="+", type=Path, help="Kafka log dirs (or any dirs holding Kafka files)")
    p.add_argument("--kafka", action="append", choices=(KAFKA_3, KAFKA_4),
                   help=f"tool version, repeatable (default: {KAFKA_3} and {KAFKA_4})")
    p.add_argument("--keep", type=Path, help="work in this new dir and keep it (copies and tool output)")
    args = p.parse_args(argv)
    for d in args.dirs:
        if not d.is_dir():
            p.error(f"not a directory: {d}")
    if args.keep and args.keep.exists():
        p.error(f"--keep {args.keep} already exists")
    work = (args.keep or Path(tempfile.mkdtemp(prefix="dump-compare-"))).resolve()
    try:
        work.mkdir(parents=True, exist_ok=True)
        pristine = work / "input"
        for name, src in copy_inputs(args.dirs, pristine).items():
            print(f"{name}: {src}")
        ok = True
        for version in args.kafka or [KAFKA_3, KAFKA_4]:
            ok &= report(version, compare(pristine, run_tool(args.dirs, work, version), version))
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
