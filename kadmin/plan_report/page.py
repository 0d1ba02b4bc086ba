"""One self-contained HTML page of plans' figures (:mod:`kadmin.plan_report.figures`), drawn
with Plotly. The adapter between the figures and the file: no number is computed here.

Why Plotly: ``plotly.offline.get_plotlyjs()`` hands over the whole of plotly.js as one string,
so the page inlines it and opens offline with no request leaving it (no CDN, no web font, no
MathJax); its bar charts, heat maps and hover labels cover every chart of the report; and its
traces are plain JSON a few kilobytes each for the aggregated figures. Vega-Lite via Altair would
need vega, vega-lite and vega-embed inlined by hand from separate packages. The price is the size
of plotly.js (about 4.8 MB, once per page whatever the plan).

Every chart has its numbers in an HTML table beside it (in a ``<details>`` element), for those
who would rather read and for screen readers; the broker table sorts by any column (a click on
its header). Summary figures carry ids (``summary-moves``, ...) and every table row carries its
values as text, so a test (or a reader's script) can check the page against the plan.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from kadmin.plan_report.figures import BrokerRow, Execution, Matrix, PlanFigures
from kadmin.units import human_bytes, human_duration

_CONFIG = {"displaylogo": False, "responsive": True,
           "modeBarButtonsToRemove": ["sendDataToCloud"]}
_BEFORE, _AFTER, _OVER, _BOUND = "#9aa5b1", "#2f6fb0", "#c0392b", "#333333"

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;
color:#1d2733;background:#fff}
header{background:#1d2733;color:#fff;padding:12px 24px}
header h1{font-size:20px;margin:0}
main{padding:8px 24px 40px}
section.plan{border-top:2px solid #d5dbe1;margin-top:16px}
h2{font-size:18px;margin:16px 0 4px}h3{font-size:15px;margin:18px 0 4px}
dl.summary{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:6px 18px;
margin:8px 0}
dl.summary div{background:#f3f5f7;padding:6px 10px;border-radius:4px}
dt{font-size:12px;color:#52606d}dd{margin:0;font-size:16px;font-weight:600}
.valid{color:#1e7d32}.invalid{color:#c0392b}.warn{color:#a35c00}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{border:1px solid #d5dbe1;padding:2px 6px;text-align:right}
th{background:#eef1f4;cursor:pointer}td.name,th.name{text-align:left}
tr.over td{background:#fde8e6}
details{margin:4px 0 12px}summary{cursor:pointer;color:#2f6fb0}
.note{color:#52606d;font-size:13px}
ul.problems{font-size:13px;margin:4px 0}
"""

_SORT = """
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,i){
    th.addEventListener('click',function(){
      var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
      var up=th.getAttribute('aria-sort')!=='ascending';
      t.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',up?'ascending':'descending');
      rows.sort(function(a,b){
        var x=a.cells[i].getAttribute('data-v'),y=b.cells[i].getAttribute('data-v');
        var nx=parseFloat(x),ny=parseFloat(y);
        var c=(isNaN(nx)||isNaN(ny))?String(x).localeCompare(String(y)):nx-ny;
        return up?c:-c;});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
"""


def render(reports: Sequence[PlanFigures], title: str) -> str:
    """The page of ``reports`` (one section each), plotly.js and everything else inline."""
    sections = "\n".join(_section(i, r) for i, r in enumerate(reports))
    data = json.dumps([r.to_json() for r in reports], separators=(",", ":"), allow_nan=False)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
        # nothing may leave the page: the policy refuses every fetch, font and frame
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:"
        "\">"
        f"<title>{_e(title)}</title><style>{_STYLE}</style>"
        f"<script>{get_plotlyjs()}</script></head><body>"
        f"<header><h1>{_e(title)}</h1></header><main>{sections}</main>"
        f"<script type=\"application/json\" id=\"kadmin-report-data\">"
        f"{_script_safe(data)}</script><script>{_SORT}</script></body></html>\n")


def _section(n: int, r: PlanFigures) -> str:
    parts = [f"<section class=\"plan\" id=\"plan-{n}\"><h2>{_e(r.name)} "
             f"<span class=\"note\">({_e(r.kind)} plan)</span></h2>", _summary(n, r)]
    parts += [f"<p class=\"note\">{_e(note)}</p>" for note in r.notes]
    if r.brokers:
        parts.append(_brokers(n, r))
    if r.flows is not None:
        parts.append(_heat(f"flows-{n}", "Where the data goes",
                           f"{r.flows.unit} sent (rows: the partition's leader) to each broker "
                           f"that gains a replica (columns), {r.flows.grouping}", r.flows,
                           "sender", "receiver"))
    if r.topics:
        parts.append(_topics(n, r))
    if r.execution is not None:
        parts.append(_execution(n, r.execution))
    parts.append("</section>")
    return "\n".join(parts)


# --- summary ------------------------------------------------------------------------------------

def _summary(n: int, r: PlanFigures) -> str:
    v = r.verdict
    items: list[tuple[str, str, str]] = [
        ("kind", "kind", r.kind),
        ("verdict", "validation", "valid" if v.valid else "invalid"),
        ("errors", "errors", f"{v.error_count:,}"),
        ("warnings", "warnings", f"{v.warning_count:,}"),
        ("partitions", "topics" if r.kind == "deletion" else "partitions",
         f"{r.partitions:,}")]
    if r.kind == "reassign" and v.valid:
        items += [("moves", "replica moves", f"{r.moves:,}"),
                  ("bound", "lower bound of moves",
                   "-" if r.lower_bound is None else f"{r.lower_bound:,}"),
                  ("unchanged", "entries that change nothing", f"{r.unchanged:,}")]
        if r.bytes_moved is not None:
            items.append(("bytes", "bytes copied", f"{r.bytes_moved:,}"))
    if v.valid:
        items.append(("leader-changes", "leader changes", f"{r.leader_changes:,}"))
    if r.worst_topic_spread_after is not None:
        items.append(("topic-spread", "worst topic spread before -> after",
                      f"{r.worst_topic_spread_before} -> {r.worst_topic_spread_after}"
                      + (f" ({r.worst_topic})" if r.worst_topic else "")))
    e = r.execution
    if e is not None:
        items += [("batches", "batches", f"{e.batch_count:,}")]
        if e.seconds is not None and e.bound_seconds is not None and e.rate is not None:
            items += [("duration", f"predicted duration at {human_bytes(e.rate)}/s",
                       human_duration(e.seconds)),
                      ("duration-bound", "lower bound of the duration",
                       human_duration(e.bound_seconds))]
        else:
            items += [("load", f"load in {_unit(e)} (sum of the batches')", f"{e.load:,}"),
                      ("load-bound", "lower bound of the load", f"{e.bound:,}")]
    cells = "".join(
        f"<div><dt>{_e(label)}</dt><dd id=\"summary-{key}-{n}\""
        f"{_verdict_class(key, v.valid)}>{_e(value)}</dd></div>" for key, label, value in items)
    problems = "".join(
        _problems(what, shown, count)
        for what, shown, count in (("error", v.errors, v.error_count),
                                   ("warning", v.warnings, v.warning_count)) if count)
    return f"<dl class=\"summary\">{cells}</dl>{problems}"


def _verdict_class(key: str, valid: bool) -> str:
    if key != "verdict":
        return ""
    return " class=\"valid\"" if valid else " class=\"invalid\""


def _problems(what: str, shown: Sequence[str], count: int) -> str:
    rest = count - len(shown)
    more = f"<li>(and {rest:,} more)</li>" if rest > 0 else ""
    kind = "invalid" if what == "error" else "warn"
    return (f"<details open><summary class=\"{kind}\">{count:,} {what}(s)</summary>"
            f"<ul class=\"problems\">{''.join(f'<li>{_e(p)}</li>' for p in shown)}{more}"
            "</ul></details>")


# --- brokers ------------------------------------------------------------------------------------

def _brokers(n: int, r: PlanFigures) -> str:
    rows = r.brokers
    labels = [_broker_label(b) for b in rows]
    sized = any(b.bytes_after is not None for b in rows)
    shares = any(b.share_after is not None for b in rows)
    figures = [_chart(f"brokers-replicas-{n}", _bars(
        labels, [b.replicas_before for b in rows], [b.replicas_after for b in rows],
        "replicas per broker, before and after", "replicas")),
        _chart(f"brokers-leaders-{n}", _bars(
            labels, [b.leaders_before for b in rows], [b.leaders_after for b in rows],
            "preferred leaders per broker, before and after", "leaders"))]
    if shares:
        fig = _bars(labels, [100 * (b.share_before or 0) for b in rows],
                    [100 * (b.share_after or 0) for b in rows],
                    "share of capacity per broker (red: over capacity after the plan)",
                    "% of capacity", over=[b.over_capacity for b in rows])
        fig.add_hline(y=100, line_dash="dash", line_color=_OVER)
        figures.append(_chart(f"brokers-share-{n}", fig))
    elif sized:
        figures.append(_chart(f"brokers-bytes-{n}", _bars(
            labels, [b.bytes_before or 0 for b in rows], [b.bytes_after or 0 for b in rows],
            "bytes per broker, before and after", "bytes")))
    columns = ["broker", "rack", "replicas before", "replicas after", "leaders before",
               "leaders after", *(("bytes before", "bytes after") if sized else ()),
               *(("capacity", "share before %", "share after %") if shares else ())]
    body = []
    for b in rows:
        values: list[object] = [b.broker, b.rack or "", b.replicas_before, b.replicas_after,
                                b.leaders_before, b.leaders_after]
        if sized:
            values += [b.bytes_before, b.bytes_after]
        if shares:
            values += [b.capacity, _percent(b.share_before), _percent(b.share_after)]
        body.append((values, b.over_capacity))
    over = sum(b.over_capacity for b in rows)
    note = (f"<p class=\"invalid\" id=\"over-capacity-{n}\">{over} broker(s) over capacity "
            "after the plan (marked red)</p>" if over else "")
    return ("<h3>Per broker</h3>" + note + "".join(figures)
            + _table(f"brokers-table-{n}", "per-broker numbers (click a column to sort)",
                     columns, body, sortable=True, open_=False))


def _broker_label(b: BrokerRow) -> str:
    return f"{b.broker}" + (f" ({b.rack})" if b.rack else "")


def _percent(share: float | None) -> str:
    return "" if share is None else f"{100 * share:.1f}"


MAX_BARS = 100
"""Brokers drawn as bars; more are drawn as two step lines (one SVG path each, where a
thousand brokers would make two thousand bars a pixel wide), over-capacity brokers marked."""


def _bars(labels: list[str], before: list[float], after: list[float], title: str, unit: str,
          over: list[bool] | None = None) -> go.Figure:
    hover = "broker %{x}<br>%{fullData.name}: %{y:,}<extra></extra>"
    if len(labels) > MAX_BARS:
        traces: list[Any] = [
            go.Scatter(name=name, x=labels, y=values, mode="lines", line_shape="hvh",
                       line={"color": colour, "width": 1.5}, hovertemplate=hover)
            for name, values, colour in (("before", before, _BEFORE), ("after", after, _AFTER))]
        if over is not None and any(over):
            marked = [i for i, o in enumerate(over) if o]
            traces.append(go.Scatter(
                name="over capacity after", x=[labels[i] for i in marked],
                y=[after[i] for i in marked], mode="markers",
                marker={"color": _OVER, "size": 7, "symbol": "x"}, hovertemplate=hover))
        fig = go.Figure(traces)
        fig.update_layout(title=title, yaxis_title=unit, height=360, hovermode="x",
                          xaxis={"type": "category", "title": "broker (rack)"},
                          legend={"orientation": "h", "y": 1.12})
        return fig
    colours: Any = _AFTER if over is None else [_OVER if o else _AFTER for o in over]
    fig = go.Figure([
        go.Bar(name="before", x=labels, y=before, marker_color=_BEFORE, hovertemplate=hover),
        go.Bar(name="after", x=labels, y=after, marker_color=colours, hovertemplate=hover)])
    fig.update_layout(title=title, barmode="group", yaxis_title=unit, height=360,
                      xaxis={"type": "category", "title": "broker (rack)"},
                      legend={"orientation": "h", "y": 1.12},
                      updatemenus=[{"type": "dropdown", "x": 1.0, "y": 1.22, "buttons": [
                          {"label": "by broker id", "method": "relayout",
                           "args": [{"xaxis.categoryorder": "trace"}]},
                          {"label": "most after first", "method": "relayout",
                           "args": [{"xaxis.categoryorder": "array",
                                     "xaxis.categoryarray": [
                                         x for _, x in sorted(zip(after, labels, strict=True),
                                                              key=lambda p: -p[0])]}]}]}])
    return fig


# --- topics ---------------------------------------------------------------------------------------

def _topics(n: int, r: PlanFigures) -> str:
    rows = r.topics
    fig = go.Figure([
        go.Bar(name="before", y=[t.topic for t in rows], x=[t.spread_before for t in rows],
               orientation="h", marker_color=_BEFORE),
        go.Bar(name="after", y=[t.topic for t in rows], x=[t.spread_after for t in rows],
               orientation="h", marker_color=_AFTER)])
    fig.update_layout(title=f"the {len(rows)} topics spread least evenly after the plan "
                            f"(of {r.topics_total:,}): most minus fewest replicas on one broker",
                      barmode="group", height=max(300, 22 * len(rows) + 140),
                      yaxis={"autorange": "reversed", "type": "category"},
                      xaxis_title="topic spread",
                      legend={"orientation": "h", "yanchor": "top", "y": -0.08})
    table = _table(f"topics-table-{n}", "per-topic spreads", [
        "topic", "partitions", "spread before", "spread after"],
        [([t.topic, t.partitions, t.spread_before, t.spread_after], False) for t in rows],
        sortable=True, open_=False)
    out = "<h3>Topics</h3>" + _chart(f"topics-{n}", fig) + table
    if r.heat is not None:
        out += _heat(f"heat-{n}", "The worst topics per broker after the plan",
                     f"{r.heat.unit}, {r.heat.grouping}", r.heat, "topic", "broker")
    return out


# --- matrices -------------------------------------------------------------------------------------

def _heat(div: str, heading: str, title: str, m: Matrix, row_name: str, column_name: str) -> str:
    fig = go.Figure(go.Heatmap(
        z=[list(v) for v in m.values], x=list(m.columns), y=list(m.rows), colorscale="Blues",
        colorbar={"title": {"text": m.unit}, "tickformat": ".3~s"},
        hovertemplate=f"{row_name} %{{y}}<br>{column_name} %{{x}}<br>%{{z:,}} {m.unit}"
                      "<extra></extra>"))
    fig.update_layout(title=title, height=max(320, 18 * len(m.rows) + 160),
                      xaxis={"type": "category"}, yaxis={"type": "category",
                                                         "autorange": "reversed"})
    body = [([label, *row], False) for label, row in zip(m.rows, m.values, strict=True)]
    return (f"<h3>{_e(heading)}</h3>" + _chart(div, fig)
            + _table(f"{div}-table", f"the matrix as a table ({m.unit})",
                     [f"{row_name} \\ {column_name}", *m.columns], body, sortable=False,
                     open_=False))


# --- execution ------------------------------------------------------------------------------------

def _unit(e: Execution) -> str:
    return "bytes" if e.sized else "replicas"


def _execution(n: int, e: Execution) -> str:
    timed = e.seconds is not None and e.bound_seconds is not None
    spans = [b.seconds or 0.0 for b in e.batches] if timed else [float(b.load) for b in e.batches]
    starts, at = [], 0.0
    for span in spans:
        starts.append(at)
        at += span
    names = [str(b.first) if b.first == b.last else f"{b.first}-{b.last}" for b in e.batches]
    unit = "seconds" if timed else f"load ({_unit(e)})"
    fig = go.Figure(go.Bar(
        x=spans, base=starts, y=names, orientation="h", marker_color=_AFTER,
        customdata=[[b.partitions, b.busiest_broker if b.busiest_broker is not None else "-",
                     b.work] for b in e.batches],
        hovertemplate=("batch %{y}<br>%{x:,.1f} " + unit + "<br>%{customdata[0]:,} partitions, "
                       "%{customdata[2]:,} " + _unit(e) + "<br>busiest broker %{customdata[1]}"
                       "<extra></extra>")))
    bound = e.bound_seconds if timed else float(e.bound)
    if bound is not None:
        fig.add_vline(x=bound, line_dash="dash", line_color=_BOUND,
                      annotation_text="lower bound", annotation_position="top right")
    fig.update_layout(
        title=f"{e.batch_count:,} batch(es) in the order they run ({e.limits}); each bar its "
              f"modelled {unit}, the dashed line the plan's lower bound",
        height=min(900, max(300, 14 * len(names) + 140)), xaxis_title=unit,
        yaxis={"type": "category", "autorange": "reversed", "title": "batch"})
    columns = ["batch", "partitions", _unit(e), "busiest broker", f"load ({_unit(e)})",
               *(("predicted seconds",) if timed else ())]
    body = [([name, b.partitions, b.work, "" if b.busiest_broker is None else b.busiest_broker,
              b.load, *((f"{b.seconds:.1f}",) if timed else ())], False)
            for name, b in zip(names, e.batches, strict=True)]
    return ("<h3>Execution</h3>" + _chart(f"batches-{n}", fig)
            + _table(f"batches-table-{n}", "the batches as a table", columns, body,
                     sortable=True, open_=False))


# --- pieces ---------------------------------------------------------------------------------------

def _chart(div: str, fig: go.Figure) -> str:
    fig.update_layout(template="plotly_white", margin={"t": 70, "b": 60, "l": 70, "r": 30})
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div,
                       config=_CONFIG, default_width="100%", default_height=f"{fig.layout.height}px")


def _table(table_id: str, caption: str, columns: Sequence[str],
           rows: Sequence[tuple[Sequence[object], bool]], *, sortable: bool, open_: bool) -> str:
    name, over_row = ' class="name"', ' class="over"'
    head = "".join(f'<th scope="col"{name if i == 0 else ""}>{_e(c)}</th>'
                   for i, c in enumerate(columns))
    lines = []
    for values, over in rows:
        cells = "".join(f'<td{name if i == 0 else ""} data-v="{_e(_plain(v))}">{_e(_shown(v))}'
                        "</td>" for i, v in enumerate(values))
        lines.append(f"<tr{over_row if over else ''}>{cells}</tr>")
    return (f"<details{' open' if open_ else ''}><summary>{_e(caption)}</summary>"
            f'<table id="{table_id}" class="{"sortable" if sortable else "plain"}">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table></details>")


def _plain(v: object) -> str:
    return "" if v is None else str(v)


def _shown(v: object) -> str:
    if isinstance(v, bool) or v is None:
        return _plain(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.0f}" if v == int(v) else f"{v:,.2f}"
    return str(v)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _script_safe(data: str) -> str:
    """JSON inside a <script> element: no ``</script>`` (or ``<!--``) can close it early."""
    return data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
