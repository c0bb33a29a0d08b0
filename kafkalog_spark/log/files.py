"""Read-only access to broker files on any filesystem pyarrow can open.

Input log directories belong to the broker: everything here opens files for reading only, never
creates, renames or locks anything next to them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow.fs as pafs


def resolve(path: str, filesystem: pafs.FileSystem | None = None) -> tuple[pafs.FileSystem, str]:
    """Return (filesystem, path inside it) for a local path or a URI such as ``s3://bucket/dir``."""
    if filesystem is not None:
        return filesystem, path
    if "://" in path:
        return pafs.FileSystem.from_uri(path)
    return pafs.LocalFileSystem(), path


@contextmanager
def open_read(path: str, filesystem: pafs.FileSystem | None = None) -> Iterator[pafs.NativeFile]:
    """Open a file for random-access reading (``read_at``, ``size``)."""
    fs, inner = resolve(path, filesystem)
    f = fs.open_input_file(inner)
    try:
        yield f
    finally:
        f.close()


def read_bytes(path: str, filesystem: pafs.FileSystem | None = None, limit: int | None = None) -> bytes:
    """Read a small file whole (indexes, checkpoints); ``limit`` caps what is read."""
    with open_read(path, filesystem) as f:
        size = f.size()
        return f.read_at(size if limit is None else min(size, limit), 0)


def file_size(path: str, filesystem: pafs.FileSystem | None = None) -> int:
    fs, inner = resolve(path, filesystem)
    return fs.get_file_info(inner).size
