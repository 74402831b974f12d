"""The trace viewer: one logged run as one self-contained HTML page.

Each round is a timeline: the model's stream is one bar (a tick marks its first
event), each tool call another, placed on the same time axis, so that a parallel batch
shows as overlapping bars and an early-started call begins before the stream's bar
ends. Bars are coloured by status and laid out here, in Python, as plain positioned
elements; the page's only script shows a bar's details (arguments, result, timings)
when it is clicked. Everything — styles, script, data — is inline: the page fetches
nothing. Every logged value enters the page escaped (:func:`_text`: HTML text or an
attribute, numbers included, since a crafted log may hold markup where a round number
belongs; or JSON with ``<`` escaped inside the data block), never as markup. The
page's Content-Security-Policy allows one script, the page's own, by its SHA-256
hash: even markup that got in could run nothing. A call's images (logged once by
hash) are shown in its details as ``data:`` URLs, the one image source the policy
allows.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from typing import Any

from ..messages import IMAGE_MEDIA_TYPES
from .inspect import describe_event, timeline

__all__ = ["render_html"]

MAX_DETAIL_CHARS = 100_000  # of one result or arguments text inside the page

_STYLE = """
:root { --ok:#2e9d5b; --error:#d64545; --timeout:#e08a1e; --cancelled:#8a8a8a;
  --not_executed:#b9b9b9; --discarded:#9b6cd1; --model:#3b7dd8; --denied:#7a4b2a;
  --interrupted:#c2185b; }
.event { margin: 8px 0; padding: 4px 8px; border-left: 4px solid #c2185b;
  background: #fdf3f7; font-family: ui-monospace, monospace; white-space: pre-wrap; }
* { box-sizing: border-box; }
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px 20px; color: #222; }
h1 { font-size: 17px; margin: 0 0 4px; } h2 { font-size: 14px; margin: 18px 0 6px; }
.meta { color: #555; margin-bottom: 10px; } .meta b { color: #222; }
.legend span { display: inline-block; margin-right: 12px; }
.legend i { display: inline-block; width: 11px; height: 11px; margin-right: 4px;
  vertical-align: -1px; border-radius: 2px; }
.round { border-top: 1px solid #ddd; }
.row { display: flex; align-items: center; height: 24px; }
.label { width: 240px; flex: none; overflow: hidden; white-space: nowrap;
  text-overflow: ellipsis; padding-right: 8px; font-family: ui-monospace, monospace; }
.track { position: relative; flex: 1; height: 18px; background: #f6f6f6; }
.bar { position: absolute; top: 2px; height: 14px; min-width: 3px; border-radius: 3px;
  cursor: pointer; }
.bar:hover, .bar.selected { outline: 2px solid #222; }
.bar.model { background: var(--model); }
.tick { position: absolute; top: 0; width: 2px; height: 18px; background: #123d73; }
.axis { display: flex; justify-content: space-between; margin-left: 240px; color: #777;
  font-size: 11px; }
#details { margin-top: 16px; padding: 10px; border: 1px solid #ccc; background: #fafafa;
  min-height: 40px; }
#details img.result-image { display: block; max-width: 100%; max-height: 480px;
  margin: 4px 0 10px; border: 1px solid #e4e4e4; }
#details pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0 10px;
  max-height: 360px; overflow: auto; background: #fff; padding: 6px; border: 1px solid #e4e4e4; }
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
    var selected = document.querySelector(".bar.selected");
    if (selected) { selected.classList.remove("selected"); }
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

_STATUSES = (
    "ok",
    "error",
    "timeout",
    "cancelled",
    "denied",
    "not_executed",
    "interrupted",
    "discarded",
)

SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
"""The page's own script, the only one its Content-Security-Policy lets run."""

CSP = (
    f"default-src 'none'; style-src 'unsafe-inline'; script-src '{SCRIPT_HASH}'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


def _text(value: object) -> str:
    """A logged value as HTML text or an attribute value (quotes escaped too)."""
    return html.escape(str(value), quote=True)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000.0:.1f} ms"


def _cut(text: str) -> str:
    if len(text) <= MAX_DETAIL_CHARS:
        return text
    return (
        f"{text[:MAX_DETAIL_CHARS]}\n…[{len(text) - MAX_DETAIL_CHARS} more characters in the log]"
    )


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


class _Page:
    """Collects the bars' detail records while the rounds are laid out."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def item(
        self,
        title: str,
        summary: str,
        sections: list[tuple[str, str]],
        images: list[tuple[str, str]] | None = None,
    ) -> int:
        """Add a bar's record (``images``: ``(alt text, data: URL)`` of a result's images)."""
        record: dict[str, Any] = {"title": title, "summary": summary, "sections": sections}
        if images:
            record["images"] = images
        self.items.append(record)
        return len(self.items) - 1


def _bar(css: str, item: int, start: float, end: float, *, origin: float, span: float,
         attributes: str = "") -> str:  # fmt: skip
    left = (start - origin) / span * 100.0
    width = max(0.0, (end - start) / span * 100.0)
    return (
        f'<div class="bar {css}" data-item="{item}" {attributes}'
        f' style="left:{left:.3f}%;width:{width:.3f}%"></div>'
    )


def _call_images(
    call: dict[str, Any], images: dict[str, tuple[str, bytes]]
) -> list[tuple[str, str]]:
    """A call's images as ``(alt text, data: URL)``, from its logged parts (an image
    whose bytes the log lacks is left out). A ``data:`` URL is all the page's CSP lets
    an image be: the page fetches nothing."""
    if not call.get("parts"):
        return []
    found = []
    for part in json.loads(call["parts"]):
        stored = images.get(part.get("sha256", "")) if part.get("kind") == "image" else None
        if stored is not None and stored[0] in IMAGE_MEDIA_TYPES:
            alt = f"{stored[0]}, {len(stored[1])} bytes, sha256 {part['sha256'][:12]}"
            found.append((alt, f"data:{stored[0]};base64,{base64.b64encode(stored[1]).decode()}"))
    return found


def _round(page: _Page, number: int, requests: list[dict[str, Any]],
           calls: list[dict[str, Any]], images: dict[str, tuple[str, bytes]]) -> str:  # fmt: skip
    starts = [q["started_at"] for q in requests] + [
        c["started_at"] if c["started_at"] is not None else c["ended_at"] for c in calls
    ]
    ends = [q["ended_at"] for q in requests] + [c["ended_at"] for c in calls]
    origin = min(starts)
    span = max(max(ends) - origin, 1e-6)
    rows = []
    for q in requests:
        tool_calls = json.loads(q["tool_calls"])
        summary = (
            f"{_ms(q['ended_at'] - q['started_at'])}, finish reason {q['finish_reason']}, "
            f"{q['input_tokens']} input / {q['output_tokens']} output tokens, "
            f"{len(tool_calls)} tool call(s)"
        ) + (", refused" if q.get("refused") else "")  # not in logs from before refusals
        sections = [("text", _cut(q["text"]))] if q["text"] else []
        if q.get("refusal"):
            sections.append(("refusal", _cut(q["refusal"])))
        if q["reasoning"]:
            sections.append(("reasoning", _cut(q["reasoning"])))
        if tool_calls:
            sections.append(("tool calls as sent", _cut(json.dumps(tool_calls, indent=2))))
        item = page.item(f"model request {q['seq']} (round {number})", summary, sections)
        seq = _text(q["seq"])
        bar = _bar("model", item, q["started_at"], q["ended_at"], origin=origin, span=span,
                   attributes=f'data-request="{seq}"')  # fmt: skip
        if q["first_event_at"] is not None:
            left = (q["first_event_at"] - origin) / span * 100.0
            bar += f'<div class="tick" title="first event" style="left:{left:.3f}%"></div>'
        rows.append(
            f'<div class="row"><div class="label">model stream #{seq}</div>'
            f'<div class="track">{bar}</div></div>'
        )
    for c in calls:
        status = c["status"] if c["status"] in _STATUSES else "error"
        started = c["started_at"] if c["started_at"] is not None else c["ended_at"]
        flags = [
            flag for flag, on in (("early start", c["early"]), ("repaired", c["repaired"])) if on
        ]
        latency = "never ran" if c["latency_ms"] is None else f"{c['latency_ms']:.1f} ms"
        summary = ", ".join(
            [f"status {c['status']}", latency, f"{c['attempts']} attempt(s)", *flags]
            + ([f"failure class {c['failure_class']}"] if c["failure_class"] else [])
            + ([f"discarded: {c['reason']}"] if c.get("reason") else [])
        )
        item = page.item(
            f"{c['tool']} · {c['call_id']}",
            summary,
            [("arguments", _cut(_pretty(c["arguments"]))), ("result", _cut(c["result"]))],
            _call_images(c, images),
        )
        call_id = _text(c["call_id"])
        bar = _bar(f"call s-{status}", item, started, c["ended_at"], origin=origin, span=span,
                   attributes=f'data-call-id="{call_id}" data-status="{status}" title="{call_id}"')  # fmt: skip
        label = _text(f"[{c['idx']}] {c['tool']}")
        rows.append(
            f'<div class="row"><div class="label" title="{label}">{label}</div>'
            f'<div class="track">{bar}</div></div>'
        )
    axis = "".join(f"<span>{_ms(span * k / 4)}</span>" for k in range(5))
    return (
        f'<section class="round" data-round="{_text(number)}"><h2>Round {_text(number)}</h2>'
        f'{"".join(rows)}<div class="axis">{axis}</div></section>'
    )


def _first_time(run: dict[str, Any], number: int) -> float:
    """When round ``number`` began (its first request or call), to order the page."""
    times = [q["started_at"] for q in run["requests"] if q["round"] == number]
    times += [c["started_at"] or c["ended_at"] for c in run["calls"] if c["round"] == number]
    return min(times, default=0.0)


def render_html(run: dict[str, Any]) -> str:
    """The page for a run loaded by :func:`~toolwire.observe.query.load_run`."""
    page = _Page()
    numbers = sorted({q["round"] for q in run["requests"]} | {c["round"] for c in run["calls"]})
    sections = [
        (
            _first_time(run, n),
            _round(
                page,
                n,
                [q for q in run["requests"] if q["round"] == n],
                [c for c in run["calls"] if c["round"] == n],
                run.get("images") or {},
            ),
        )
        for n in numbers
    ]
    # Pauses, approvals and resumes, between the rounds, in the order they happened.
    sections += [
        (e["at"], f'<div class="event">{_text(describe_event(e))}</div>') for e in timeline(run)
    ]
    sections.sort(key=lambda item: item[0])
    duration = (
        _ms(run["ended_at"] - run["started_at"]) if run["ended_at"] is not None else "unfinished"
    )
    legend = "".join(
        f'<span><i style="background:var(--{s})"></i>{s}</span>' for s in ("model", *_STATUSES)
    )
    status_css = "".join(f".bar.s-{s} {{ background: var(--{s}); }}\n" for s in _STATUSES)
    data = json.dumps({"items": page.items}, ensure_ascii=False).replace("<", "\\u003c")
    title = _text(f"toolwire trace {run['run_id']}")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>{title}</title><style>{_STYLE}{status_css}</style></head>
<body>
<h1>{title}</h1>
<div class="meta"><b>{_text(run["model"])}</b> · {_text(run["outcome"])} ·
{duration} · {len(run["requests"])} model request(s) · {len(run["calls"])} call(s)
{"· " + _text(run["error"]) if run["error"] else ""}</div>
<div class="meta">prompt: {_text(str(run["prompt"] or "")[:500])}</div>
<div class="legend">{legend}</div>
{"".join(part for _, part in sections) or "<p>No model request was logged.</p>"}
<div id="details">Click a bar for its arguments, result and timings.</div>
<script type="application/json" id="trace-data">{data}</script>
<script>{_SCRIPT}</script>
</body></html>
"""
