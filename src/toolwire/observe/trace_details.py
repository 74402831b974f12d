"""What the trace page shows when a bar is clicked: one record per lane.

A model request's record gives its timings, finish reason, tokens, text, reasoning,
the calls as sent and its notices; a call's its status, each of its segments' durations, attempts,
arguments, result and images (as ``data:`` URLs, the one image source the page's
policy allows); a pause's the line ``toolwire inspect`` prints for it. Records are
data: the page's script puts them in the DOM as text, never as markup.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ..messages import IMAGE_MEDIA_TYPES
from .inspect import describe_event
from .lanes import Lane
from .timescale import human_duration

__all__ = ["MAX_DETAIL_CHARS", "Details", "cut"]

MAX_DETAIL_CHARS = 100_000  # of one result, arguments or answer text inside the page


def cut(text: str) -> str:
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


class Details:
    """Collects the lanes' detail records while the page is laid out."""

    def __init__(self, images: dict[str, tuple[str, bytes]]) -> None:
        self.items: list[dict[str, Any]] = []
        self.images = images

    def item(self, lane: Lane) -> int:
        """Add a lane's record (its details when one of its bars is clicked)."""
        row = lane.row or {}
        if lane.kind == "model":
            record = _request_details(row)
        elif lane.kind == "call":
            record = _call_details(row, lane, self.images)
        else:
            record = {"title": "paused", "summary": describe_event(row), "sections": []}
        self.items.append(record)
        return len(self.items) - 1


def _request_details(q: dict[str, Any]) -> dict[str, Any]:
    tool_calls = json.loads(q["tool_calls"])
    first = (
        ""
        if q["first_event_at"] is None
        else f", first event after {human_duration(q['first_event_at'] - q['started_at'])}"
    )
    summary = (
        f"{human_duration(q['ended_at'] - q['started_at'])}{first}, finish reason "
        f"{q['finish_reason']}, {q['input_tokens']} input / {q['output_tokens']} output tokens"
        + (f" ({q['cache_read_tokens']} cached)" if q.get("cache_read_tokens") else "")
        + (f" ({q['reasoning_tokens']} reasoning)" if q.get("reasoning_tokens") else "")
        + f", {len(tool_calls)} tool call(s)"
    ) + (", refused" if q.get("refused") else "")  # not in logs from before refusals
    sections = [("text", cut(q["text"]))] if q["text"] else []
    if q.get("error"):  # a failed request (its HTTP status when the provider gave one)
        status = f" (HTTP {q['error_status']})" if q.get("error_status") else ""
        sections.insert(0, (f"error: {q.get('error_type') or 'error'}{status}", cut(q["error"])))
    if q.get("refusal"):
        sections.append(("refusal", cut(q["refusal"])))
    if q["reasoning"]:
        sections.append(("reasoning", cut(q["reasoning"])))
    if tool_calls:
        sections.append(("tool calls as sent", cut(json.dumps(tool_calls, indent=2))))
    if q.get("notices"):  # what labelled the answer or dropped a call
        sections.append(("notices", cut("\n".join(_notice_line(n) for n in q["notices"]))))
    title = f"model request {q['seq']} (round {q['round']})"
    return {"title": title, "summary": summary, "sections": sections}


def _notice_line(notice: dict[str, Any]) -> str:
    where = "" if notice["index"] is None else f" (call {notice['index']})"
    return f"{notice['kind']}{where}: {notice['message']}"


def _call_details(
    c: dict[str, Any], lane: Lane, images: dict[str, tuple[str, bytes]]
) -> dict[str, Any]:
    flags = [
        flag
        for flag, on in (
            ("early start", c["early"]),
            ("repaired", c["repaired"]),
            ("its images refused by the provider", c.get("images_refused")),
        )
        if on
    ]
    spans = [f"{s.title} {human_duration(s.end - s.start)}" for s in lane.segments]
    summary = ", ".join(
        [f"status {c['status']}", *spans, f"{c['attempts']} attempt(s)", *flags]
        + ([f"failure class {c['failure_class']}"] if c["failure_class"] else [])
        + ([f"discarded: {c['reason']}"] if c.get("reason") else [])
        + [m.title for m in lane.marks]
    )
    record: dict[str, Any] = {
        "title": f"{c['tool']} · {c['call_id']}",
        "summary": summary,
        "sections": [("arguments", cut(_pretty(c["arguments"]))), ("result", cut(c["result"]))],
    }
    found = _call_images(c, images)
    if found:
        record["images"] = found
    return record


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
