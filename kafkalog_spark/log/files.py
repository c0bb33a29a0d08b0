"""Read-only access to broker files on any filesystem pyarrow can open.

Input log directories belong to the broker: everything here opens files for reading only, never
creates, renames or locks anything next to them.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import pyarrow.fs as pafs

from ..findings import Finding, Severity
from . import object_stores

_GLOB = set("*?[")


def has_glob(path: str) -> bool:
    """Whether ``path`` is a pattern (``*``, ``?`` or ``[`` in it) that :func:`expand_paths` expands."""
    return bool(_GLOB & set(path))


def normalize_path(path: str) -> str:
    """A user's path as the readers use it: ``file:`` URIs (``file:///x``, Spark's ``file:/x``) and Databricks'
    ``dbfs:/Volumes/...`` become the local paths they name (Volumes are local paths on a cluster's nodes);
    other URIs (``s3://``, ``gs://``, ``abfss://``, ...) stay as they are for pyarrow to open."""
    for prefix in ("file://", "file:"):
        if path.startswith(prefix):
            rest = path[len(prefix):]
            return "/" + rest.lstrip("/") if rest.startswith("/") else rest
    if path.startswith("dbfs:/Volumes/"):
        return path[len("dbfs:"):]
    return path


def expand_paths(paths: Iterable[str], filesystem: pafs.FileSystem | None = None,
                 findings: list[Finding] | None = None) -> list[str]:
    """Normalised paths with their globs (``*``, ``?``, ``[...]`` in any component) expanded, sorted per pattern.
    A pattern that matches nothing raises FileNotFoundError naming it: a silent empty read would hide a typo. A
    directory on the way that cannot be listed is an ``unreadable_file`` finding appended to ``findings`` (then
    its pattern may match nothing); without that list its error is raised."""
    out: list[str] = []
    for raw in paths:
        path = normalize_path(raw)
        if not has_glob(path):
            out.append(path)
            continue
        unlisted: list[Finding] = []
        matches = _glob(path, filesystem, unlisted if findings is not None else None)
        if not matches and not unlisted:
            raise FileNotFoundError(f"no file or directory matches {raw}")
        out.extend(matches)
        if findings is not None:
            findings += unlisted
    return out


def _glob(pattern: str, filesystem: pafs.FileSystem | None, findings: list[Finding] | None) -> list[str]:
    scheme, sep, rest = pattern.partition("://")
    head, parts = (scheme + sep, rest.split("/")) if sep else ("", pattern.split("/"))
    first = next(i for i, part in enumerate(parts) if has_glob(part))
    bases = ["/".join(parts[:first]) or ("/" if pattern.startswith("/") else ".")]
    for part in parts[first:]:
        if not part:
            continue
        following = []
        for base in bases:
            if has_glob(part):
                fs, inner = resolve(head + base, filesystem)
                try:
                    names = [i.base_name for i in fs.get_file_info(pafs.FileSelector(inner))]
                except (FileNotFoundError, NotADirectoryError):
                    names = []  # a file, or gone: nothing below it matches
                except OSError as e:  # permissions, a remote error: the matches below it are unknown
                    if findings is None:
                        raise
                    findings.append(Finding(head + base, -1, "unreadable_file",
                                            f"cannot list the directory: {os_error_detail(e)}"))
                    names = []
                following += [f"{base.rstrip('/')}/{n}" for n in sorted(fnmatch.filter(names, part))]
            else:
                following.append(f"{base.rstrip('/')}/{part}")
        bases = following
    found = []
    for base in bases:
        fs, inner = resolve(head + base, filesystem)
        if fs.get_file_info(inner).type != pafs.FileType.NotFound:
            found.append(head + base)
    return found


def resolve(path: str, filesystem: pafs.FileSystem | None = None) -> tuple[pafs.FileSystem, str]:
    """Return (filesystem, path inside it) for a local path or a URI such as ``s3://bucket/dir`` (object stores:
    :mod:`.object_stores`; other schemes as pyarrow opens them). A given ``filesystem`` is used as it is, with a
    store URI's path inside it."""
    path = normalize_path(path)
    if object_stores.is_object_store(path):
        return (filesystem, object_stores.split(path)[2]) if filesystem is not None else object_stores.resolve(path)
    if filesystem is not None:
        return filesystem, path
    if "://" in path:
        return pafs.FileSystem.from_uri(path)
    return pafs.LocalFileSystem(), path


class NotRegularFileError(OSError):
    """A FIFO, socket, device or directory where a file is expected. Opening a FIFO blocks until a writer
    comes, so nothing that is not a regular file is ever opened."""

    def __str__(self) -> str:
        return str(self.strerror)


_SPECIAL = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"))


def not_regular_detail(fs: pafs.FileSystem, inner: str, info: pafs.FileInfo) -> str:
    """``not a regular file (a FIFO)``: pyarrow calls every special file Unknown; a local one is named by its mode."""
    what = "a directory" if info.type == pafs.FileType.Directory else "a special file"
    if isinstance(fs, pafs.LocalFileSystem):
        try:
            mode = os.stat(inner).st_mode
            what = next((name for test, name in _SPECIAL if test(mode)), what)
        except OSError:
            pass
    return f"not a regular file ({what}); not opened"


def check_regular(fs: pafs.FileSystem, inner: str, path: str) -> pafs.FileInfo:
    """``inner``'s FileInfo; FileNotFoundError, or NotRegularFileError, unless it is a regular file (one stat)."""
    info = fs.get_file_info(inner)
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(errno.ENOENT, "no such file", path)
    if info.type != pafs.FileType.File:
        raise NotRegularFileError(errno.EINVAL, not_regular_detail(fs, inner, info), path)
    return info


@contextmanager
def open_read(path: str, filesystem: pafs.FileSystem | None = None, *,
              size: int | None = None) -> Iterator[pafs.NativeFile]:
    """Open a regular file for random-access reading (``read_at``, ``size``); anything else raises
    (:func:`check_regular`) before it is opened. In an object store, a file whose ``size`` a listing gave opens
    without a request (a store holds no FIFOs or devices to refuse)."""
    fs, inner = resolve(path, filesystem)
    if object_stores.is_store_filesystem(fs):
        if size is None:
            size = check_regular(fs, inner, path).size  # from the listing this process keeps, if it has it
        f = object_stores.open_sized(fs, inner, size)
    else:
        check_regular(fs, inner, path)
        f = fs.open_input_file(inner)
    try:
        yield f
    finally:
        f.close()


def read_capped(path: str, filesystem: pafs.FileSystem | None, max_bytes: int, findings: list[Finding], *,
                missing_severity: Severity = Severity.WARNING, refuse_larger: bool = False,
                too_large_kind: str = "file_too_large", size: int | None = None) -> bytes | None:
    """Read ``path`` whole (at most ``max_bytes``), never raising.

    A missing file becomes a ``missing_file`` finding (its severity depends on the file kind: an index
    may legally be absent, Kafka rebuilds it), any other I/O error ``unreadable_file``. A file larger
    than ``max_bytes`` gets a ``too_large_kind`` finding; with ``refuse_larger`` nothing is returned
    (text checkpoints: a huge one is not a checkpoint), otherwise the first ``max_bytes`` are.
    Returns ``None`` when nothing could (or should) be parsed. ``size``: the file's size as listed, if known
    (:func:`open_read`).
    """
    try:
        with open_read(path, filesystem, size=size) as f:
            size = f.size()
            if size > max_bytes:
                what = "not parsed" if refuse_larger else "only the first part is read"
                findings.append(Finding(path, max_bytes, too_large_kind,
                                        f"file is {size} bytes, more than the {max_bytes}-byte cap; {what}",
                                        Severity.ERROR))
                if refuse_larger:
                    return None
            length = min(size, max_bytes)  # one request, or none when the job's file cache has the file
            return object_stores.read_whole(path, size, length, lambda: f.read_at(length, 0)) if size else b""
    except FileNotFoundError as e:
        findings.append(Finding(path, -1, "missing_file", f"file not found: {e}", missing_severity))
    except OSError as e:  # permissions, a directory or FIFO, a remote filesystem error
        findings.append(Finding(path, -1, "unreadable_file", os_error_detail(e), Severity.ERROR))
    return None


def os_error_detail(e: OSError) -> str:
    """How an I/O error reads in a finding: ours as they are, the system's with their type."""
    return str(e) if isinstance(e, NotRegularFileError) else f"{type(e).__name__}: {e}"
