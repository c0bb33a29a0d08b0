"""`kafkalog dump`: what kafka-dump-log (3.9 or 4.x) prints for the given files, or JSON Lines.

A consumer of the log layer, like the Spark source: :mod:`.log_file` for `.log` segments and KRaft
`.checkpoint` snapshots, :mod:`.other_files` for the indexes, transaction indexes and producer snapshots,
:mod:`.tool_errors` for what the tool prints on stderr, :mod:`.run` for a whole run over many files.
"""

from .log_file import DumpOptions, dump_log_file
from .other_files import dump_other_file
from .run import run_dump

__all__ = ["DumpOptions", "dump_log_file", "dump_other_file", "run_dump"]
