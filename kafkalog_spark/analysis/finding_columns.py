"""The columns of a validation finding, and the helpers every check builds them with.

One home for the ``index_findings`` schema and the way a check turns a condition on a view's rows into
finding rows, so the checks (:mod:`.segment_checks`, :mod:`.index_entries`, :mod:`.partition_checks`) and
:mod:`.index_validation`, which runs them, all depend on this module and not on each other.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..finding_kinds import Severity, finding_kind
from ..log.local_log_checks import SEGMENT_FILE
from ..schemas import INDEX_FINDINGS
from .grouping_keys import LOG_DIR, SEGMENT

KEYS = SEGMENT


def _value(v: object, data_type: str) -> Column:
    return (v if isinstance(v, Column) else F.lit(v)).cast(data_type)


# each column's type by name: a cast to a name is one call into the JVM, to a DataType several (the analyses build
# thousands of these columns, and building them was seconds of every job)
_TYPE_NAMES = {f.name: f.dataType.simpleString() for f in INDEX_FINDINGS}


def finding(severity: str | Column, check: str | Column, *, file: Column | str | None,
            position: Column | int = -1, base_offset: Column | int | None = None,
            expected: Column | str | None = None, found: Column | str | None = None,
            detail: Column | str | None = None, log_dir: Column | None = None) -> list[Column]:
    """The INDEX_FINDINGS columns for a select: plain values are literals, Columns are expressions;
    ``topic`` and ``partition`` come from the DataFrame's own columns, ``logDir`` too unless ``log_dir`` says
    where it is. A literal ``check`` must be a kind of the catalogue (:mod:`kafkalog_spark.finding_kinds`), a
    literal ``severity`` one of its severities."""
    if isinstance(check, str):
        finding_kind(check)
    if isinstance(severity, str):
        Severity(severity)
    values = {"logDir": F.col(LOG_DIR) if log_dir is None else log_dir, "topic": F.col("topic"),
              "partition": F.col("partition"), "baseOffset": base_offset, "severity": severity, "check": check,
              "file": file,
              "position": F.coalesce(_value(position, "long"), F.lit(-1).cast("long")),
              "expected": expected, "found": found, "detail": detail}
    return [_value(values[name], type_name).alias(name) for name, type_name in _TYPE_NAMES.items()]



def candidate(condition: Column, severity: str | Column, check: str | Column, **where) -> Column:
    """A finding struct when ``condition`` holds, else null (``where``: the keyword arguments of :func:`finding`)."""
    return F.when(condition, F.struct(*finding(severity, check, **where)))


def emit(df: DataFrame, *candidates: Column) -> DataFrame:
    """The findings of several checks on the same rows, in one pass: one output row per candidate that holds."""
    found = F.filter(F.array(*candidates), lambda c: c.isNotNull())
    return df.select(F.explode(found).alias("f")).select("f.*")


def text(*parts: object) -> Column:
    """A string column from literals and Columns (``text("offset ", F.col("offset"))``)."""
    return F.concat(*[p.cast("string") if isinstance(p, Column) else F.lit(str(p)) for p in parts])


def log_dir_of_segment_file(file: Column) -> Column:
    """The log dir a segment file's path is in (``<logDir>/<topic>-<partition>/<file>``)."""
    return F.regexp_extract(file, r"^(.*)/[^/]+/[^/]+$", 1)


def base_offset_from_file(file: Column) -> Column:
    """The base offset in a segment file's name (``.log``/``.index``/``.timeindex``/``.txnindex``), else null."""
    digits = F.regexp_extract(file, SEGMENT_FILE.pattern, 1)
    return F.when(digits != "", digits.try_cast("long"))


def sibling_file(log_file: Column, suffix: str) -> Column:
    """The path of a segment's other file (``.index``, ``.timeindex``, ``.txnindex``) from its ``.log`` path."""
    return F.regexp_replace(log_file, r"\.log$", suffix)


def ok(df: DataFrame) -> DataFrame:
    return df.where(F.col("problem").isNull())


def problems(df: DataFrame) -> DataFrame:
    return df.where(F.col("problem").isNotNull())
