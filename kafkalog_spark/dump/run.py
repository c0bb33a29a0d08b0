"""One kafka-dump-log run over several files: `Dumping <file>` and each file's lines on stdout; the
tool's per-file error summary, then our findings, on stderr.

How the tool's stderr and our findings coexist: stderr first carries exactly what the tool prints
(`Ignoring unknown file`, then after the last file the index mismatches, time index errors and
non-consecutive offsets; or, where the tool dies, its exception's first line, after which nothing more
is dumped and the exit code is 1). Our own findings follow, one line each, and only ERROR ones in text
mode: damage the tool would not describe (a corrupt size field it would die on, a zero-filled region
we read past, a bad CRC). A truncated tail is printed on stdout exactly as the tool prints it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence

from ..findings import Finding, Severity
from ..kafka_versions import KafkaVersion
from ..log.files import NotRegularFileError, check_regular, resolve
from .log_file import DumpOptions, dump_log_file
from .other_files import READERS, dump_other_file
from .tool_errors import ToolCrash, ToolErrors

LOG_SUFFIXES = (".log", ".checkpoint")  # dumped by DumpLogSegments.dumpLog


def absolute(path: str) -> str:
    """java.io.File.getAbsolutePath: the path against the working directory, not normalized."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _suffix(name: str, version: KafkaVersion) -> str | None:
    """filename.substring(filename.lastIndexOf(".")); 4.x ignores a name without a dot, 3.9 dies on it."""
    dot = name.rfind(".")
    if dot < 0:
        if version == KafkaVersion.V3_9:
            raise ToolCrash("java.lang.StringIndexOutOfBoundsException",
                            f"begin -1, end {len(name)}, length {len(name)}")
        return None
    return name[dot:]


def _not_regular(path: str) -> Finding | None:
    """An ``unreadable_file`` finding for a FIFO, socket, device or directory (a missing file fails as in the
    tool, where it is read)."""
    try:
        check_regular(*resolve(path), path)
    except NotRegularFileError as e:
        return Finding(path, -1, "unreadable_file", str(e))
    except OSError:
        pass
    return None


def run_dump(paths: Sequence[str], opts: DumpOptions, out: Callable[[str], None],
             err: Callable[[str], None]) -> int:
    """Dump `paths` in order; return the exit code (1 where the tool would have died with an exception)."""
    errors = ToolErrors(opts.kafka_version)
    findings: list[Finding] = []
    code = 0
    try:
        for path in paths:
            if not opts.as_json:
                out(f"Dumping {path}")
            suffix = _suffix(os.path.basename(path), opts.kafka_version)
            if (suffix in LOG_SUFFIXES or suffix in READERS) and (special := _not_regular(path)):
                findings.append(special)  # the tool would block on a FIFO: ours is reported, never opened
                continue
            if suffix in LOG_SUFFIXES:
                lines = dump_log_file(path, opts, findings, errors, absolute(path))
            elif suffix in READERS:
                lines = dump_other_file(path, opts, findings, errors, absolute(path))
            elif opts.as_json:  # JSON mode is ours: the tool's line becomes a finding
                findings.append(Finding(path, -1, "unknown_file", f"Ignoring unknown file {path}", Severity.WARNING))
                continue
            else:
                err(f"Ignoring unknown file {path}")
                continue
            for line in lines:
                out(line)
        for line in errors.lines():
            err(line)
    except ToolCrash as crash:
        err(crash.line)
        code = 1
    for f in findings:
        if opts.as_json:
            err(json.dumps({"kind": "finding"} | f.as_dict()))
        elif f.severity == Severity.ERROR or f.kind == "truncated_tail":
            err(str(f))
    return code


__all__ = ["absolute", "run_dump"]
