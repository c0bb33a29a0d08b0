"""`kafkalog dump`: what kafka-dump-log prints for a broker's files, as text or JSON Lines.

A consumer of the log layer, like the Spark source: :mod:`.log_file` for `.log` segments, :mod:`.other_files`
for the indexes, transaction indexes and producer snapshots next to them.
"""

from .log_file import DumpOptions, dump_log_file
from .other_files import dump_other_file

__all__ = ["DumpOptions", "dump_log_file", "dump_other_file"]
