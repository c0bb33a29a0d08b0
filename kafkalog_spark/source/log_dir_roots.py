"""What a log dir's root holds for the checks across its partitions: the partition directories present (live or
renamed: ``-delete``, ``-future``, ``-stray``) and its offset checkpoint files, read on the driver (a listing and
four small files per log dir) by the same reader as the ``partition_files`` view's checkpoint rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..log.checkpoints import OffsetCheckpointFile, read_root_checkpoints
from ..log.log_dir import TopicPartition


@dataclass(frozen=True)
class LogDirRoot:
    path: str  # without a trailing slash
    partition_dirs: list[tuple[str, TopicPartition]]  # (directory name, what it names), sorted as listed
    checkpoints: dict[str, OffsetCheckpointFile]  # the offset checkpoint files present, by file name


def read_log_dir_roots(log_dirs: Sequence[str]) -> list[LogDirRoot]:
    """Each log dir's root (a log dir that cannot be listed raises, as a path that is no log dir)."""
    import pyarrow.fs as pafs

    from ..log.files import resolve

    out = []
    for log_dir in log_dirs:
        fs, inner = resolve(log_dir)
        dirs = [(info.base_name, tp) for info in fs.get_file_info(pafs.FileSelector(inner))
                if info.type == pafs.FileType.Directory and (tp := TopicPartition.parse(info.base_name)) is not None]
        out.append(LogDirRoot(log_dir.rstrip("/"), dirs, read_root_checkpoints(log_dir)))
    return out
