"""The report's charts, as plotly figures built from :class:`~kafkalog_spark.report.data.ReportData` rows.

Each function returns a figure or None when there is nothing to draw; the page embeds them, and a notebook can
show them one by one (``fig.show()``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .formatting import bucket_label, format_bytes, partition_label, to_datetime

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from .data import ReportData, Rows

SEVERITY_COLORS = {"error": "#c0392b", "warning": "#e67e22", "info": "#2980b9"}
REASON_COLORS = {"size": "#2980b9", "time": "#27ae60", "index_full": "#8e44ad", "offset_overflow": "#c0392b",
                 "active": "#7f8c8d", "unknown": "#bdc3c7"}
_LAYOUT = {"template": "plotly_white", "margin": {"l": 60, "r": 20, "t": 50, "b": 50}, "height": 380}


def _go():
    import plotly.graph_objects as go

    return go


def size_histogram(data: ReportData) -> go.Figure | None:
    rows = data.size_histogram
    if not rows:
        return None
    go = _go()
    fig = go.Figure(go.Bar(x=[bucket_label(r["bucket"]) for r in rows], y=[r["partitions"] for r in rows],
                           customdata=[format_bytes(r["bytes"]) for r in rows],
                           hovertemplate="%{x}: %{y} partition(s), %{customdata} in all<extra></extra>"))
    fig.update_layout(title="Partitions by size on disk", xaxis_title="partition size (.log bytes)",
                      yaxis_title="partitions", **_LAYOUT)
    return fig


def top_partitions(data: ReportData) -> go.Figure | None:
    rows = data.top_partitions
    if not rows:
        return None
    go = _go()
    rows = rows[::-1]  # the largest at the top
    fig = go.Figure(go.Bar(x=[r["bytes"] for r in rows], y=[partition_label(r) for r in rows], orientation="h",
                           customdata=[[format_bytes(r["bytes"]), r["segments"], r["records"]] for r in rows],
                           hovertemplate="%{y}<br>%{customdata[0]}, %{customdata[1]} segment(s), "
                                         "%{customdata[2]} record(s)<extra></extra>"))
    layout = _LAYOUT | {"height": max(300, 24 * len(rows) + 100), "margin": {"l": 280, "r": 20, "t": 50, "b": 50}}
    fig.update_layout(title=f"The {len(rows)} largest partitions", xaxis_title=".log bytes", **layout)
    return fig


def growth(data: ReportData) -> go.Figure | None:
    """The fastest growing partitions: bytes gained since the previous snapshot when there is one, else the write
    rate over the time their records span."""
    since = data.previous_snapshot is not None
    key = "bytesSincePrevious" if since else "bytesPerDay"
    rows = [r for r in data.growth if r.get(key) is not None][::-1]
    if not rows:
        return None
    go = _go()
    fig = go.Figure(go.Bar(x=[r[key] for r in rows], y=[partition_label(r) for r in rows], orientation="h",
                           customdata=[format_bytes(r[key]) for r in rows],
                           hovertemplate="%{y}: %{customdata}<extra></extra>"))
    title = (f"Bytes gained since snapshot {data.previous_snapshot}" if since
             else "Write rate: bytes on disk per day of the records' time span")
    layout = _LAYOUT | {"height": max(300, 24 * len(rows) + 100), "margin": {"l": 280, "r": 20, "t": 50, "b": 50}}
    fig.update_layout(title=title, xaxis_title="bytes" + ("" if since else " per day"), **layout)
    return fig


def segment_timeline(data: ReportData) -> go.Figure | None:
    """Each segment a bar over the time its records span, one row per partition, coloured by why it rolled."""
    drawn = [r for r in data.timeline if to_datetime(r["minTimestamp"]) and to_datetime(r["maxTimestamp"])]
    if not drawn:
        return None
    go = _go()
    fig = go.Figure()
    for reason in sorted({_reason(r) for r in drawn}):
        rows = [r for r in drawn if _reason(r) == reason]
        fig.add_trace(go.Bar(
            name=reason, orientation="h", base=[to_datetime(r["minTimestamp"]) for r in rows],
            x=[max(r["maxTimestamp"] - r["minTimestamp"], 1000) for r in rows],  # a 1 s sliver stays visible
            y=[partition_label(r) for r in rows], marker_color=REASON_COLORS.get(reason),
            customdata=[[r["baseOffset"], format_bytes(r["logSize"]), r["records"]] for r in rows],
            hovertemplate="base offset %{customdata[0]}: %{customdata[1]}, %{customdata[2]} record(s)<br>"
                          "%{base} to %{x}<extra>" + reason + "</extra>"))
    labels = {partition_label(r) for r in drawn}
    layout = _LAYOUT | {"height": max(300, 40 * len(labels) + 120), "margin": {"l": 280, "r": 20, "t": 50, "b": 50}}
    fig.update_layout(title="Segment timeline of the largest partitions (bar: the segment's record time span)",
                      barmode="overlay", xaxis={"type": "date", "title": "record timestamp (UTC)"},
                      legend_title="roll reason", **layout)
    return fig


def _reason(row: dict) -> str:
    return row["rollReason"] or ("active" if row["isActive"] else "unknown")


def retention_forecast(data: ReportData) -> go.Figure | None:
    """Bytes retention frees by each day of the forecast: all topics and the topics that free most; the what-if
    configuration in the right-hand panel."""
    if not data.forecast_days:
        return None
    go = _go()
    from plotly.subplots import make_subplots

    panels = [("bytesReclaimed", "deletableSegments", "current configs")] + (
        [("whatIfBytesReclaimed", "whatIfDeletableSegments", "what-if configs")] if data.has_what_if else [])
    fig = make_subplots(rows=1, cols=len(panels), shared_yaxes=True, subplot_titles=[p[2] for p in panels])
    dates = [to_datetime(r["asOfMs"]) for r in data.forecast_days]
    hover = "%{x}: %{customdata[0]} in %{customdata[1]} segment(s)<extra>"
    for col, (key, segments, _) in enumerate(panels, start=1):
        fig.add_trace(go.Scatter(x=dates, y=[r[key] for r in data.forecast_days], name="all topics",
                                 legendgroup="all", showlegend=col == 1, line={"width": 3, "color": "#2c3e50"},
                                 customdata=[[format_bytes(r[key]), r[segments]] for r in data.forecast_days],
                                 hovertemplate=hover + "all topics</extra>"), row=1, col=col)
        for topic in dict.fromkeys(r["topic"] for r in data.forecast_topics):
            rows = [r for r in data.forecast_topics if r["topic"] == topic]
            fig.add_trace(go.Scatter(x=[dates[r["day"]] for r in rows], y=[r[key] for r in rows], name=topic,
                                     legendgroup=topic, showlegend=col == 1, mode="lines",
                                     customdata=[[format_bytes(r[key]), r[segments]] for r in rows],
                                     hovertemplate=hover + topic + "</extra>"), row=1, col=col)
    fig.update_layout(title="Retention forecast: bytes deletable by each day (no new writes assumed)",
                      yaxis_title="bytes deletable", **(_LAYOUT | {"height": 420}))
    return fig


def compaction(data: ReportData) -> go.Figure | None:
    rows = [r for r in data.compaction[: data.limits.get("top", 20)] if r["dirtyRatio"] is not None]
    if not rows:
        return None
    go = _go()
    labels = [partition_label(r) for r in rows]
    fig = go.Figure([
        go.Bar(x=labels, y=[r["dirtyRatio"] for r in rows], name="dirty ratio",
               marker_color=["#c0392b" if r["wouldClean"] else "#95a5a6" for r in rows],
               customdata=[[r["cleanReason"] or r["uncleanableReason"] or "", format_bytes(r["bytesRemoved"])]
                           for r in rows],
               hovertemplate="%{x}<br>dirty ratio %{y:.3f}<br>%{customdata[0]}<br>the cleaner would remove "
                             "%{customdata[1]}<extra></extra>"),
        go.Scatter(x=labels, y=[r["minCleanableDirtyRatio"] for r in rows], mode="markers",
                   name="min.cleanable.dirty.ratio", marker={"symbol": "line-ew-open", "size": 24,
                                                             "color": "#2c3e50", "line": {"width": 3}}),
    ])
    fig.update_layout(title="Compaction: dirty ratio against min.cleanable.dirty.ratio (red: the cleaner would "
                            "clean it)", yaxis={"title": "dirty ratio", "range": [0, 1.05]},
                      xaxis={"tickangle": -30}, **(_LAYOUT | {"height": 440, "margin": {"l": 60, "r": 20, "t": 50,
                                                                                         "b": 160}}))
    return fig


def findings_by_check(data: ReportData) -> go.Figure | None:
    rows: Rows = data.findings_by_check
    if not rows:
        return None
    go = _go()
    fig = go.Figure()
    for severity in dict.fromkeys(r["severity"] for r in rows):
        mine = [r for r in rows if r["severity"] == severity]
        fig.add_trace(go.Bar(x=[r["check"] for r in mine], y=[r["count"] for r in mine], name=severity,
                             marker_color=SEVERITY_COLORS.get(severity)))
    fig.update_layout(title="Findings by check", yaxis_title="findings", xaxis={"tickangle": -30},
                      **(_LAYOUT | {"margin": {"l": 60, "r": 20, "t": 50, "b": 160}, "height": 420}))
    return fig
