"""Typed findings: what a reader reports instead of crashing on bad input.

Every problem found while reading a broker's files becomes a :class:`Finding` naming the file and the
byte position, so a person can open the file at that position, and a Delta table can hold it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .finding_kinds import Severity, finding_kind


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem in one file. ``position`` is a byte offset into ``file`` (-1 when not positional).

    ``kind`` is a name from the catalogue (:mod:`kafkalog_spark.finding_kinds`); ``severity`` defaults to
    the catalogue's for that kind."""

    file: str
    position: int
    kind: str
    detail: str
    severity: Severity | None = None

    def __post_init__(self) -> None:
        default = finding_kind(self.kind).severity  # an unknown kind is a bug: fail where it is made
        if self.severity is None:
            object.__setattr__(self, "severity", default)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["severity"] = str(self.severity)
        return d

    def __str__(self) -> str:
        return f"{self.severity}: {self.kind} in {self.file} at byte {self.position}: {self.detail}"


class KafkaLogError(Exception):
    """Raised in FAILFAST mode: carries the finding so the message names the file and byte position."""

    def __init__(self, finding: Finding):
        super().__init__(str(finding))
        self.finding = finding


def joined_text(*parts: object) -> str | None:
    """Parts joined as text; None when any is None (as Spark's concat, in which the checks' wording was first
    written): the text of a finding row built in Python."""
    return None if any(p is None for p in parts) else "".join(str(p) for p in parts)


def finding_row(topic: str | None, partition: int | None, severity: str, check: str, file: str | None, *,
                position: int = -1, base_offset: int | None = None, expected: str | None = None,
                found: str | None = None, detail: str | None = None, log_dir: str | None = None) -> dict:
    """One INDEX_FINDINGS row as a dict, for checks that run in Python (driver or workers); ``check`` and
    ``severity`` are checked against the catalogue."""
    finding_kind(check)
    return {"logDir": log_dir, "topic": topic, "partition": partition, "baseOffset": base_offset,
            "severity": str(Severity(severity)), "check": check, "file": file, "position": position,
            "expected": expected, "found": found, "detail": detail}
