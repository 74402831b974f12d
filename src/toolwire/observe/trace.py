"""The trace viewer: one logged run as one self-contained HTML page.

The whole run is drawn on one time axis, from its start (ticks in human units:
:mod:`.timescale`), so that rounds, pauses and calls line up with each other: a parallel
batch shows as overlapping bars, an early-started call begins before its stream's bar
ends, an approval wait sits between a call's start and its run. What is drawn comes from
:mod:`.lanes` (one lane per model request, call and pause); every kind of bar and mark
has an entry in the page's legend, each model request says its tokens, and the run's
answer is on the page. Everything — styles, script, data — is inline: the page fetches
nothing. Every logged value enters the page escaped (:func:`_text`: HTML text or an
attribute, numbers included, since a crafted log may hold markup where a round number
belongs; or JSON with ``<`` escaped inside the data block), never as markup. The
page's Content-Security-Policy allows one script, the page's own, by its SHA-256
hash: even markup that got in could run nothing. The script only shows a lane's details
(arguments, result, timings) when one of its bars is clicked. A call's images (logged
once by hash) are shown in its details as ``data:`` URLs, the one image source the
policy allows.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from typing import Any

from .inspect import describe_event, timeline
from .lanes import STATUSES, Lane, lanes, run_span
from .timescale import Scale, human_duration
from .trace_details import Details, cut

__all__ = ["CSP", "LEGEND", "SCRIPT_HASH", "render_html"]

_STYLE = """
:root { --ok:#2e9d5b; --error:#d64545; --timeout:#e08a1e; --cancelled:#8a8a8a;
  --not_executed:#b9b9b9; --discarded:#9b6cd1; --model:#3b7dd8; --denied:#7a4b2a;
  --interrupted:#c2185b; --label:270px; }
* { box-sizing: border-box; }
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px 28px 16px 20px; color: #222; }
h1 { font-size: 17px; margin: 0 0 4px; } h2 { font-size: 14px; margin: 18px 0 6px; }
.meta { color: #555; margin-bottom: 6px; } .meta b { color: #222; }
#answer pre, #details pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0 10px;
  max-height: 360px; overflow: auto; background: #fff; padding: 6px; border: 1px solid #e4e4e4; }
#answer pre { border-left: 4px solid var(--ok); font: 13px/1.45 system-ui, sans-serif; }
#answer.none pre { border-left-color: var(--error); color: #555; }
.lanes { position: relative; }
.grid { position: absolute; left: var(--label); right: 0; top: 0; bottom: 0;
  pointer-events: none; z-index: 2; }
.gridline { position: absolute; top: 0; bottom: 0; width: 1px; background: rgba(0,0,0,.09); }
.round h2, .pause h2 { margin: 10px 0 2px; font-size: 13px; }
.row { display: flex; align-items: center; min-height: 26px; }
.label { width: var(--label); flex: none; overflow: hidden; white-space: nowrap;
  text-overflow: ellipsis; padding-right: 8px; font-family: ui-monospace, monospace; }
.label small { display: block; color: #777; font: 11px system-ui, sans-serif; }
.track { position: relative; flex: 1; height: 20px; background: #f6f6f6; }
.bar { position: absolute; top: 3px; height: 14px; min-width: 3px; border-radius: 3px;
  cursor: pointer; z-index: 1; }
.bar:hover, .bar.selected { outline: 2px solid #222; }
.model { background: var(--model); }
.waiting { background: repeating-linear-gradient(45deg, #9a9a9a 0 2px, #e2e2e2 2px 6px); }
.approval { background: repeating-linear-gradient(45deg, #d9a400 0 3px, #fff1bf 3px 7px); }
.paused { background: repeating-linear-gradient(-45deg, #7d8fa8 0 3px, #e3e8ef 3px 7px); }
.retried { background: repeating-linear-gradient(90deg, var(--error) 0 5px, #f4c7c7 5px 7px); }
.backoff { background: #fff; border: 1px dashed var(--error); }
.axis-break { position: absolute; top: 0; bottom: 0; z-index: 2; }
.axis-break, .swatch.break { background:
  repeating-linear-gradient(-45deg, rgba(125,143,168,.25) 0 3px, rgba(255,255,255,.6) 3px 7px);
  border-left: 2px dotted #7d8fa8; border-right: 2px dotted #7d8fa8; }
.axis-break b { position: absolute; top: -2px; left: 2px; font: 10px system-ui, sans-serif;
  color: #42536b; white-space: nowrap; }
.mark { position: absolute; z-index: 3; pointer-events: none; }
.mark.first-event { top: 0; width: 2px; height: 20px; margin-left: -1px; background: #111; }
.mark.approved, .mark.denied { top: 4px; width: 12px; height: 12px; margin-left: -6px;
  border-radius: 50%; border: 2px solid #fff; }
.mark.approved { background: var(--ok); } .mark.denied { background: var(--error); }
.axis { position: relative; height: 16px; margin-left: var(--label); color: #666;
  font-size: 11px; }
.axis span { position: absolute; transform: translateX(-50%); white-space: nowrap; }
.axis span:first-child { transform: none; }
#legend { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr));
  gap: 4px 16px; }
#legend .key { display: flex; align-items: flex-start; gap: 6px; }
#legend .swatch { position: relative; flex: none; width: 26px; height: 14px; margin-top: 2px;
  border-radius: 3px; }
#legend .swatch.at { background: #f6f6f6; }
#legend .swatch .mark { top: -3px; left: 13px; }
.event { margin: 4px 0; padding: 4px 8px; border-left: 4px solid #c2185b;
  background: #fdf3f7; font-family: ui-monospace, monospace; white-space: pre-wrap; }
#details { margin-top: 16px; padding: 10px; border: 1px solid #ccc; background: #fafafa;
  min-height: 40px; }
#details img.result-image { display: block; max-width: 100%; max-height: 480px;
  margin: 4px 0 10px; border: 1px solid #e4e4e4; }
"""

_SCRIPT = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("trace-data").textContent);
  var details = document.getElementById("details");
  function add(tag, text) {
    var node = document.createElement(tag);
    node.textContent = text;
    details.appendChild(node);
    return node;
  }
  function show(bar) {
    var item = data.items[bar.getAttribute("data-item")];
    var selected = document.querySelectorAll(".bar.selected");
    for (var s = 0; s < selected.length; s++) { selected[s].classList.remove("selected"); }
    bar.classList.add("selected");
    details.textContent = "";
    add("h2", item.title);
    add("div", item.summary);
    for (var i = 0; i < item.sections.length; i++) {
      add("b", item.sections[i][0]);
      add("pre", item.sections[i][1]);
    }
    var images = item.images || [];
    for (var j = 0; j < images.length; j++) {
      var image = add("img", "");
      image.src = images[j][1];
      image.alt = images[j][0];
      image.className = "result-image";
    }
  }
  var bars = document.querySelectorAll(".bar");
  for (var i = 0; i < bars.length; i++) {
    bars[i].addEventListener("click", function (event) { show(event.currentTarget); });
  }
}());
"""

SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
"""The page's own script, the only one its Content-Security-Policy lets run."""

CSP = (
    f"default-src 'none'; style-src 'unsafe-inline'; script-src '{SCRIPT_HASH}'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)

LEGEND: tuple[tuple[str, str, str], ...] = (
    ("model", "bar", "model request: from sending it to the end of its streamed turn"),
    ("first-event", "mark", "first event: the first token, reasoning or call the model "
     "streamed (time to first token)"),
    ("waiting", "bar", "waiting to start: the permission check or your approval at the "
     "terminal, then its start written to the log"),
    ("approval", "bar", "held for approval while the run was paused, until answered"),
    ("approved", "mark", "approved (by whom: hover, or click the call)"),
    ("denied", "mark", "denied at approval"),
    ("paused", "bar", "the run paused (waiting for approvals) until it was resumed"),
    ("break", "bar", "a long pause, not to scale: the axis counts again from the resume (+0)"),
    ("retried", "bar", "an attempt that failed and was retried (the tool raised)"),
    ("backoff", "bar", "the backoff before the next attempt"),
    *((f"s-{s}", "bar", f"call ran, status {s}") for s in STATUSES),
)  # fmt: skip
"""Every kind of bar and mark the page draws: ``(kind, bar or mark, what it means)``."""


def _text(value: object) -> str:
    """A logged value as HTML text or an attribute value (quotes escaped too)."""
    return html.escape(str(value), quote=True)


class _Axis:
    """The run's :class:`~.timescale.Scale` as left offsets on the page (per cent of a
    track), its ticks, grid lines and breaks (collapsed pauses)."""

    def __init__(self, scale: Scale) -> None:
        self.scale = scale

    def at(self, when: float) -> float:
        return self.scale.at(when) * 100.0

    def width(self, start: float, end: float) -> float:
        return max(0.0, self.at(end) - self.at(start))

    def ticks(self) -> str:
        return "".join(
            f'<span style="left:{x * 100.0:.3f}%">{_text(label)}</span>'
            for x, label in self.scale.ticks()
        )

    def grid(self) -> str:
        lines = [
            f'<div class="gridline" style="left:{x * 100.0:.3f}%"></div>'
            for x, _ in self.scale.ticks()
        ]
        lines += [
            f'<div class="axis-break" data-kind="break" title="paused {human_duration(end - start)}"'
            f' style="left:{self.at(start):.3f}%;width:{self.width(start, end):.3f}%">'
            f"<b>paused {human_duration(end - start)}</b></div>"
            for start, end in self.scale.breaks
        ]
        return f'<div class="grid">{"".join(lines)}</div>'


def _lane_html(lane: Lane, item: int, axis: _Axis) -> str:
    parts = []
    for s in lane.segments:
        attributes = ""
        if lane.kind == "model" and lane.row is not None:
            attributes = f' data-request="{_text(lane.row["seq"])}"'
        elif s.kind.startswith("s-") and lane.row is not None:
            attributes = f' data-call-id="{_text(lane.row["call_id"])}" data-status="{s.kind[2:]}"'
        extra = " call" if s.kind.startswith("s-") else ""
        left, width = axis.at(s.start), axis.width(s.start, s.end)
        title = f"{s.title}: {human_duration(s.end - s.start)}"
        parts.append(
            f'<div class="bar {s.kind}{extra}" data-kind="{s.kind}" data-item="{item}"'
            f'{attributes} title="{_text(title)}"'
            f' style="left:{left:.3f}%;width:{width:.3f}%"></div>'
        )
    for m in lane.marks:
        parts.append(
            f'<div class="mark {m.kind}" data-kind="{m.kind}" title="{_text(m.title)}"'
            f' style="left:{axis.at(m.at):.3f}%"></div>'
        )
    note = f"<small>{_text(lane.note)}</small>" if lane.note else ""
    label = _text(lane.label)
    return (
        f'<div class="row lane-{lane.kind}"><div class="label" title="{label}">{label}{note}</div>'
        f'<div class="track">{"".join(parts)}</div></div>'
    )


def _sections(run: dict[str, Any], page: Details) -> tuple[str, _Axis]:
    """The lanes, a section per round (and per pause), on one axis."""
    found = lanes(run)
    pauses = [(s.start, s.end) for lane in found if lane.kind == "pause" for s in lane.segments]
    axis = _Axis(Scale(*run_span(run, found), pauses))
    groups: list[tuple[str, Any, list[str]]] = []
    for lane in found:
        key = "pause" if lane.kind == "pause" else "round"
        if lane.kind == "pause" or not groups or groups[-1][:2] != (key, lane.round):
            groups.append((key, lane.round, []))
        groups[-1][2].append(_lane_html(lane, page.item(lane), axis))
    html_groups = []
    for key, number, rows in groups:
        heading = f"Round {_text(number)}" if key == "round" else "Paused"
        html_groups.append(
            f'<section class="{key}" data-round="{_text(number)}"><h2>{heading}</h2>'
            f"{''.join(rows)}</section>"
        )
    return "".join(html_groups), axis


def _answer(run: dict[str, Any]) -> str:
    """The run's final answer, or why there is none."""
    if run["output"] is not None:
        return (
            f'<section id="answer"><h2>Answer</h2><pre>{_text(cut(run["output"]))}</pre></section>'
        )
    why = f"no answer: the run's outcome is {run['outcome']}"
    if run["error"]:
        why += f" ({run['error']})"
    return f'<section id="answer" class="none"><h2>Answer</h2><pre>{_text(why)}</pre></section>'


def _legend() -> str:
    entries = []
    for kind, shape, meaning in LEGEND:
        swatch = (
            f'<i class="swatch {kind}"></i>'
            if shape == "bar"
            else f'<i class="swatch at"><i class="mark {kind}"></i></i>'
        )
        entries.append(f'<div class="key" data-key="{kind}">{swatch}<span>{meaning}</span></div>')
    tokens = (
        '<div class="key" data-key="tokens"><i class="swatch at"></i><span>under each model '
        "request: its input and output tokens, as the provider reported them</span></div>"
    )
    return f'<section><h2>Legend</h2><div id="legend">{"".join(entries)}{tokens}</div></section>'


def render_html(run: dict[str, Any]) -> str:
    """The page for a run loaded by :func:`~toolwire.observe.query.load_run`."""
    page = Details(run.get("images") or {})
    lanes_html, axis = _sections(run, page)
    events = "".join(f'<div class="event">{_text(describe_event(e))}</div>' for e in timeline(run))
    duration = (
        human_duration(run["ended_at"] - run["started_at"])
        if run["ended_at"] is not None
        else "unfinished"
    )
    status_css = "".join(f".s-{s} {{ background: var(--{s}); }}\n" for s in STATUSES)
    data = json.dumps({"items": page.items}, ensure_ascii=False).replace("<", "\\u003c")
    title = _text(f"toolwire trace {run['run_id']}")
    timeline_html = (
        f'<div class="axis">{axis.ticks()}</div><div class="lanes">{axis.grid()}{lanes_html}</div>'
        f'<div class="axis">{axis.ticks()}</div>'
        if lanes_html
        else "<p>No model request was logged.</p>"
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>{title}</title><style>{_STYLE}{status_css}</style></head>
<body>
<h1>{title}</h1>
<div class="meta"><b>{_text(run["model"])}</b> · {_text(run["outcome"])} ·
{duration} · {len(run["requests"])} model request(s) · {len(run["calls"])} call(s) ·
{_text(run["input_tokens"])} input / {_text(run["output_tokens"])} output tokens
{"· " + _text(run["error"]) if run["error"] else ""}</div>
<div class="meta">prompt: {_text(str(run["prompt"] or "")[:500])}</div>
{_answer(run)}
<h2>Timeline</h2>
{timeline_html}
{events}
<div id="details">Click a bar for its arguments, result and timings.</div>
{_legend()}
<script type="application/json" id="trace-data">{data}</script>
<script>{_SCRIPT}</script>
</body></html>
"""
