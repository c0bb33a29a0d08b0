"""The report as one self-contained HTML page: plotly.js inlined (no network needed to open it), the charts of
:mod:`.figures`, and sortable tables.

Every number a table shows carries its exact value in ``data-value`` (what the table sorts by), and each
summary figure has an ``id``: a reader, or a test, can check the page against the Delta tables.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import figures
from .data import SEVERITIES, ReportData, Rows
from .formatting import format_bytes, format_count, format_ratio, format_time, format_time_ms, short_dir


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str = "text"  # text | count | bytes | ratio | time_ms | bool | dir


_FORMAT: dict[str, Callable[[Any], str]] = {
    "text": lambda v: "" if v is None else str(v), "count": format_count, "bytes": format_bytes,
    "ratio": format_ratio, "time_ms": format_time_ms, "bool": lambda v: "" if v is None else ("yes" if v else "no"),
    "dir": short_dir,
}
_NUMERIC = {"count", "bytes", "ratio", "time_ms"}

# Click a column's header to sort by it (again: the other way). Numbers sort by their exact data-value.
SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], numeric = th.dataset.kind === "num";
      var up = th.dataset.order !== "asc";
      table.querySelectorAll("th").forEach(function (h) { delete h.dataset.order; });
      th.dataset.order = up ? "asc" : "desc";
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.value, y = b.cells[col].dataset.value;
        if (numeric) { x = x === "" ? -Infinity : Number(x); y = y === "" ? -Infinity : Number(y); }
        return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 0 2em 3em; color: #2c3e50; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
nav a { margin-right: 1em; }
.cards { display: flex; flex-wrap: wrap; gap: 1em; margin: 1em 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 0.6em 1em; min-width: 8em; }
.card .value { font-size: 1.5em; font-weight: 600; } .card .label { color: #7f8c8d; }
.error { color: #c0392b; } .warning { color: #e67e22; } .info { color: #2980b9; }
table.sortable { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
table.sortable th { cursor: pointer; background: #f4f6f7; position: sticky; top: 0; }
table.sortable th[data-order="asc"]::after { content: " \\25B2"; }
table.sortable th[data-order="desc"]::after { content: " \\25BC"; }
table.sortable td, table.sortable th { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; }
table.sortable td.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { max-height: 32em; overflow: auto; display: inline-block; max-width: 100%; }
.note { color: #7f8c8d; }
"""


def _cell(value: Any, kind: str) -> str:
    shown = html.escape(_FORMAT[kind](value))
    raw = "" if value is None else (str(int(value)) if isinstance(value, bool) else str(value))
    css = ' class="num"' if kind in _NUMERIC else ""
    return f'<td{css} data-value="{html.escape(raw)}">{shown}</td>'


def table(rows: Rows, columns: Sequence[Column], table_id: str) -> str:
    """A sortable table: one <tr> per row, the exact value of each cell in its data-value."""
    if not rows:
        return '<p class="note">None.</p>'
    head = "".join(f'<th data-key="{c.key}" data-kind="{"num" if c.kind in _NUMERIC else "text"}">'
                   f"{html.escape(c.label)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_cell(r.get(c.key), c.kind) for c in columns) + "</tr>" for r in rows)
    return (f'<div class="scroll"><table class="sortable" id="{table_id}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _figure(fig, div_id: str) -> str:
    if fig is None:
        return '<p class="note">Nothing to draw.</p>'
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                       config={"displaylogo": False, "responsive": True})


def _card(key: str, label: str, value: Any, shown: str, css: str = "") -> str:
    return (f'<div class="card"><div class="value {css}" id="summary-{key}" data-value="{value}">'
            f'{html.escape(shown)}</div><div class="label">{html.escape(label)}</div></div>')


def _summary(data: ReportData) -> str:
    s = data.summary
    cards = [_card("logDirs", "log dirs", s["logDirs"], format_count(s["logDirs"])),
             _card("topics", "topics", s["topics"], format_count(s["topics"])),
             _card("partitions", "partitions", s["partitions"], format_count(s["partitions"])),
             _card("segments", "segments", s["segments"], format_count(s["segments"])),
             _card("bytes", "bytes on disk (.log)", s["bytes"], format_bytes(s["bytes"])),
             _card("records", "records", s["records"], format_count(s["records"]))]
    cards += [_card(sev, f"{sev} findings", s[sev], format_count(s[sev]), sev) for sev in SEVERITIES]
    if "groupsResetting" in s:
        cards.append(_card("groupsResetting", "groups that will reset", s["groupsResetting"],
                           format_count(s["groupsResetting"]), "warning" if s["groupsResetting"] else ""))
    if "hangingTransactions" in s:
        cards.append(_card("hangingTransactions", "hanging transactions", s["hangingTransactions"],
                           format_count(s["hangingTransactions"]), "error" if s["hangingTransactions"] else ""))
    if "divergentReplicas" in s:
        cards.append(_card("divergentReplicas", "divergent replicas", s["divergentReplicas"],
                           format_count(s["divergentReplicas"]), "error" if s["divergentReplicas"] else ""))
    return f'<div class="cards">{"".join(cards)}</div>'


def _shown(n: int, total: int, what: str) -> str:
    return "" if n >= total else f'<p class="note">The first {n} of {total} {what}.</p>'


TOPIC_COLUMNS = [Column("logDir", "log dir", "dir"), Column("topic", "topic"),
                 Column("partitions", "partitions", "count"), Column("segments", "segments", "count"),
                 Column("bytes", "bytes", "bytes"), Column("records", "records", "count"),
                 Column("minTimestamp", "oldest record", "time_ms"), Column("maxTimestamp", "newest record", "time_ms"),
                 *(Column(s, f"{s}s", "count") for s in SEVERITIES)]
PARTITION_COLUMNS = [Column("logDir", "log dir", "dir"), Column("topic", "topic"), Column("partition", "partition"),
                     Column("segments", "segments", "count"), Column("bytes", "bytes", "bytes"),
                     Column("records", "records", "count"), Column("logStartOffset", "log start offset", "count"),
                     Column("logEndOffset", "log end offset", "count"),
                     Column("minTimestamp", "oldest record", "time_ms"),
                     Column("maxTimestamp", "newest record", "time_ms")]
GROWTH_COLUMNS = [Column("logDir", "log dir", "dir"), Column("topic", "topic"), Column("partition", "partition"),
                  Column("bytes", "bytes", "bytes"), Column("bytesPerDay", "bytes per day", "bytes"),
                  Column("minTimestamp", "oldest record", "time_ms"),
                  Column("maxTimestamp", "newest record", "time_ms")]
SINCE_COLUMNS = [Column("previousBytes", "bytes at the previous snapshot", "bytes"),
                 Column("bytesSincePrevious", "gained since", "bytes")]
COMPACTION_COLUMNS = [Column("logDir", "log dir", "dir"), Column("topic", "topic"), Column("partition", "partition"),
                      Column("cleanupPolicy", "cleanup.policy"), Column("dirtyRatio", "dirty ratio", "ratio"),
                      Column("minCleanableDirtyRatio", "min.cleanable.dirty.ratio", "ratio"),
                      Column("wouldClean", "would clean", "bool"), Column("cleanReason", "why"),
                      Column("uncleanableReason", "why not"), Column("cleanableBytes", "cleanable", "bytes"),
                      Column("totalBytes", "total", "bytes"), Column("bytesRemoved", "bytes removed", "bytes"),
                      Column("recordsRemoved", "records removed", "count"),
                      Column("tombstonesRemoved", "tombstones removed", "count")]
FINDING_COLUMNS = [Column("severity", "severity"), Column("check", "check"), Column("logDir", "log dir", "dir"),
                   Column("topic", "topic"), Column("partition", "partition"), Column("file", "file"),
                   Column("position", "byte position", "count"), Column("expected", "expected"),
                   Column("found", "found"), Column("detail", "detail")]


GROUP_COLUMNS = [Column("clusterId", "cluster"), Column("group", "group"), Column("topic", "topic"),
                 Column("partition", "partition"), Column("committedOffset", "committed offset", "count"),
                 Column("logStartOffset", "log start offset", "count"),
                 Column("logEndOffset", "log end offset", "count"), Column("lag", "lag", "count"),
                 Column("position", "position"), Column("commitTimestamp", "committed at", "time_ms")]
TRANSACTION_COLUMNS = [Column("clusterId", "cluster"), Column("topic", "topic"), Column("partition", "partition"),
                       Column("transactionalId", "transactional id"), Column("producerId", "producer id"),
                       Column("firstOffset", "first offset", "count"), Column("startTimestamp", "started", "time_ms"),
                       Column("openMs", "open for (ms)", "count"), Column("timeoutMs", "timeout (ms)", "count"),
                       Column("status", "status"), Column("reason", "why hanging"),
                       Column("lastStableOffset", "last stable offset", "count"),
                       Column("blockedOffsets", "offsets read_committed cannot see", "count")]


def _internal_topics(data: ReportData) -> str:
    """Groups' positions and open transactions (the nightly job's consumer_positions and open_transactions)."""
    return ("<h3>Consumer groups: committed positions</h3>"
            + (table(data.groups, GROUP_COLUMNS, "table-groups")
               + _shown(len(data.groups), data.group_position_count, "committed positions")
               + '<p class="note">Positions below the log start or beyond the log end make the group reset when it '
                 "resumes (auto.offset.reset); they come first, then the largest lag.</p>"
               if data.group_position_count else '<p class="note">No committed offsets.</p>')
            + "<h3>Open transactions</h3>"
            + (table(data.transactions, TRANSACTION_COLUMNS, "table-transactions")
               + _shown(len(data.transactions), data.transaction_count, "open transactions")
               + '<p class="note">Hanging: open past its timeout at the snapshot time, or no longer ongoing at its '
                 "coordinator; it holds the last stable offset back.</p>"
               if data.transaction_count else '<p class="note">No open transactions.</p>'))


REPLICA_COLUMNS = [Column("clusterId", "cluster"), Column("topic", "topic"), Column("partition", "partition"),
                   Column("brokerId", "broker"), Column("logDir", "log dir", "dir"), Column("status", "status"),
                   Column("leaderBrokerId", "compared with broker"),
                   Column("logEndOffset", "log end offset", "count"),
                   Column("highWatermark", "high watermark", "count"),
                   Column("truncationOffset", "truncates to", "count"),
                   Column("droppedRecords", "records dropped", "count"),
                   Column("acknowledgedRecordsLost", "acknowledged records lost", "count"),
                   Column("mismatches", "differing below the truncation", "count")]


def _replicas(data: ReportData) -> str:
    """Each follower against its leader (the nightly job's replica_comparison)."""
    if not data.replica_count:
        return '<p class="note">Every partition was read on one broker only: no replicas to compare.</p>'
    return (table(data.replicas, REPLICA_COLUMNS, "table-replicas")
            + _shown(len(data.replicas), data.replica_count, "replicas")
            + '<p class="note">Where each replica truncates when it fetches from its leader again (the leader the '
              "cluster metadata names, else the replica with the highest leader epoch), the records that drops and "
              "how many were below its own high watermark: acknowledged, then lost. Divergent replicas come first."
              "</p>")


TIERED_COLUMNS = [Column("logDir", "log dir", "dir"), Column("topic", "topic"),
                  Column("partitions", "partitions", "count"), Column("localBytes", "local", "bytes"),
                  Column("remoteBytes", "remote", "bytes"), Column("copyLagBytes", "not uploaded yet", "bytes"),
                  Column("copyLagSegments", "segments not uploaded", "count"),
                  Column("copyLagMs", "oldest not uploaded for (ms)", "count"),
                  Column("missingOffsets", "offsets in neither tier", "count"),
                  Column("localDeletableNow", "local deletable now", "bytes"),
                  Column("localDeletableAtHorizon", "local deletable by the horizon", "bytes"),
                  Column("remoteDeletableNow", "remote deletable now", "bytes"),
                  Column("remoteDeletableAtHorizon", "remote deletable by the horizon", "bytes")]


def _tiered(data: ReportData) -> str:
    """The tiered topics (the nightly job's tiered_storage and the forecast's remote tier)."""
    return (table(data.tiered, TIERED_COLUMNS, "table-tiered")
            + '<p class="note">Local and remote bytes of each tiered topic as __remote_log_metadata says; what is '
              "not uploaded yet (local retention cannot delete it: the disk does not shrink) and since when; offsets "
              "in neither tier; what local retention (local.retention.*) and remote retention (retention.* over "
              f"the whole log) delete now and by day {data.limits.get('horizon_days')}, on the segments as they are."
              "</p>")


def _forecast_columns(data: ReportData) -> list[Column]:
    days = sorted(int(k[3:]) for k in (data.forecast_table[0] if data.forecast_table else {}) if k.startswith("day"))
    cols = [Column("topic", "topic"), Column("segments", "segments", "count"), Column("bytes", "bytes now", "bytes")]
    for d in days:
        cols.append(Column(f"day{d}", "deletable now" if d == 0 else f"by day {d}", "bytes"))
        if data.has_what_if:
            cols.append(Column(f"whatIfDay{d}", "what-if" + (" now" if d == 0 else f" by day {d}"), "bytes"))
    horizon = days[-1] if days else 0
    cols.append(Column("segmentsAtHorizon", f"segments deletable by day {horizon}", "count"))
    if data.has_what_if:
        cols.append(Column("whatIfSegmentsAtHorizon", f"what-if segments by day {horizon}", "count"))
    return cols


def _roll_rows(data: ReportData) -> tuple[Rows, list[Column]]:
    reasons = sorted({k for r in data.roll_reasons for k in (r["reasons"] or {})})
    rows = [{"topic": r["topic"], "segments": r["segments"], **(r["reasons"] or {})} for r in data.roll_reasons]
    return rows, [Column("topic", "topic"), Column("segments", "segments", "count"),
                  *(Column(reason, reason, "count") for reason in reasons)]


def render_html(data: ReportData, title: str = "kafkalog report") -> str:
    """The whole page, self-contained."""
    from plotly.offline import get_plotlyjs

    s, lim = data.summary, data.limits
    roll_rows, roll_cols = _roll_rows(data)
    sections = [
        ("summary", "Summary", _summary(data)),
        ("topics", "Topics", _figure(figures.size_histogram(data), "fig-size-histogram")
         + _figure(figures.top_partitions(data), "fig-top-partitions")
         + table(data.topics, TOPIC_COLUMNS, "table-topics") + _shown(len(data.topics), data.topic_count, "topics")
         + "<h3>The largest partitions</h3>" + table(data.top_partitions, PARTITION_COLUMNS, "table-partitions")),
        ("growth", "Growth", _figure(figures.growth(data), "fig-growth")
         + table(data.growth, GROWTH_COLUMNS + (SINCE_COLUMNS if data.previous_snapshot else []), "table-growth")
         + '<p class="note">Bytes per day: the partition\'s bytes on disk over the time its records span. '
         + (f"Gained since: against snapshot {html.escape(data.previous_snapshot)}.</p>" if data.previous_snapshot
            else "With an earlier snapshot in the tables, the bytes gained since then too.</p>")),
        ("segments", "Segments", _figure(figures.segment_timeline(data), "fig-timeline")
         + f'<p class="note">The {lim.get("timeline_partitions")} largest partitions, at most the '
           f'{lim.get("timeline_segments")} newest segments each; segments without timestamps are not drawn.</p>'
         + "<h3>Why segments rolled, per topic</h3>" + table(roll_rows, roll_cols, "table-roll-reasons")),
        ("retention", "Retention forecast", _figure(figures.retention_forecast(data), "fig-retention")
         + table(data.forecast_table, _forecast_columns(data), "table-retention")
         + f'<p class="note">The broker\'s retention rules run at the snapshot time and each of the next '
           f'{lim.get("horizon_days")} days on the segments as they are (bytes deletable by then, cumulative); '
           f'the {lim.get("top")} topics that free the most.</p>'),
        ("compaction", "Compaction", _figure(figures.compaction(data), "fig-compaction")
         + table(data.compaction, COMPACTION_COLUMNS, "table-compaction")
         + _shown(len(data.compaction), data.compaction_count, "compacted partitions")),
        ("findings", "Findings", _figure(figures.findings_by_check(data), "fig-findings")
         + table(data.findings, FINDING_COLUMNS, "table-findings")
         + _shown(len(data.findings), data.finding_count, "findings")),
    ]
    if "groupsResetting" in s or "hangingTransactions" in s:  # a snapshot with the internal topics' tables
        sections.insert(-1, ("internal", "Groups and transactions", _internal_topics(data)))
    if "divergentReplicas" in s:  # a snapshot with the replica comparison
        sections.insert(-1, ("replicas", "Replicas", _replicas(data)))
    if data.tiered:  # tiered topics
        sections.insert(-1, ("tiered", "Tiered storage", _tiered(data)))
    nav = "".join(f'<a href="#{key}">{html.escape(name)}</a>' for key, name, _ in sections)
    body = "".join(f'<section id="{key}"><h2>{html.escape(name)}</h2>{content}</section>'
                   for key, name, content in sections)
    subtitle = f"snapshot {s.get('snapshotId') or ''}, taken {format_time(s.get('snapshotTime'))}"
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{STYLE}</style><script>{get_plotlyjs()}</script></head><body>"
            f"<h1>{html.escape(title)}</h1><p class=\"note\">{html.escape(subtitle)}</p><nav>{nav}</nav>{body}"
            f"<script>{SORT_SCRIPT}</script></body></html>")
