"""`kafkalog validate --junit`: a JUnit XML report in which every check that ran is a test case.

One ``<testcase>`` per (check, topic-partition): each validation check of the catalogue
(:data:`~kafkalog_spark.finding_kinds.KINDS`, source ``validate``) on each partition that was read, so a clean
run shows what passed instead of ``tests="0"``, plus one per (kind, partition) of any other finding. Findings at
or above the gate make their test case fail; the others are its output.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from xml.etree import ElementTree as ET

from ..finding_kinds import KINDS

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


def partitions_read(spark, paths: Sequence[str], include_internal: bool) -> set[tuple[str, int]]:
    """The topic-partitions validate reads under ``paths``, as the source lists them (by whoever reads the
    files: over Spark Connect that is the server). The segments view reads listings only."""
    from ..source import read_views

    segments = read_views(spark, paths, ["segments"], includeInternal=str(include_internal).lower())["segments"]
    rows = (segments.where("topic is not null")  # a log dir's own problem row (it cannot be listed, say): no partition
            .select("topic", "partition").distinct().collect())
    return {(r.topic, r.partition) for r in rows}


def _case_name(row: dict) -> str:
    if row["topic"] is None:  # a finding about the log dir itself (a root checkpoint, say)
        return str(row["file"]).rsplit("/", 1)[0]
    return f"{row['topic']}-{row['partition']}"


def junit_xml(rows: Sequence[dict], partitions: Iterable[tuple[str, int]], gate: str = "error") -> bytes:
    """The report for findings ``rows`` over ``partitions``; a finding of severity ``gate`` or above fails."""
    cases: dict[tuple[str, str], list[dict]] = {}
    checks = [k.name for k in KINDS.values() if k.source == "validate"]
    for topic, partition in sorted(partitions):
        for check in checks:
            cases[(f"{topic}-{partition}", check)] = []
    for r in rows:
        cases.setdefault((_case_name(r), r["check"]), []).append(r)
    failing = {key for key, found in cases.items()
               if any(SEVERITY_RANK[r["severity"]] >= SEVERITY_RANK[gate] for r in found)}
    suite = ET.Element("testsuite", name="kafkalog validate", tests=str(len(cases)), failures=str(len(failing)),
                       errors="0", skipped="0")
    for (classname, check), found in sorted(cases.items()):
        case = ET.SubElement(suite, "testcase", classname=classname, name=check)
        if not found:
            continue
        lines = "\n".join(f"{r['severity']}: {r['file']} at byte {r['position']}: {r['detail']}" for r in found)
        if (classname, check) in failing:
            worst = max(found, key=lambda r: SEVERITY_RANK[r["severity"]])
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            ET.SubElement(case, "failure", message=(worst["detail"] or check) + more,
                          type=worst["severity"]).text = lines
        else:
            ET.SubElement(case, "system-out").text = lines
    return ET.tostring(suite, encoding="utf-8", xml_declaration=True)
