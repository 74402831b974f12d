"""A logged run as lanes on one time axis: what the trace page draws, before any HTML.

Each model request and each tool call is a lane; a lane is a row of segments (a span of
time of one kind) and marks (an instant). Everything is placed from the log's own
times, on the run's clock, so that every lane of every round shares one axis:

* a model request: its stream (``model``), with a mark at its first event — the first
  token, reasoning or call the model streamed (time to first token);
* a call: the time it waited before its tool began (``waiting``: the permission gate,
  an approval asked at the terminal, its start row written — from the call's start to
  its ``call_started`` timeline row, which a call that may not run twice gets), then
  the time it ran, in its status (``s-ok``, ``s-error``, ...);
* a call held by a paused run: ``approval``, from the pause to its answer (the
  ``approval`` timeline row: who answered, and what), with a mark at the answer;
* a retried call: each attempt that failed (``retried``) and the backoff after it
  (``backoff``), from the call's ``retried`` column, before its last attempt;
* a pause: ``paused``, from the run's pause to its resume.

What the log does not time is not placed: a log written before retries were timed
gives only the count of attempts, shown beside the call's name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .inspect import timeline
from .timescale import human_duration

__all__ = ["STATUSES", "Lane", "Mark", "Segment", "lanes", "run_span"]

STATUSES = (
    "ok",
    "error",
    "timeout",
    "cancelled",
    "denied",
    "not_executed",
    "interrupted",
    "discarded",
)
"""A call's statuses, each with its colour (anything else is drawn as ``error``)."""


@dataclass
class Segment:
    """A span of one kind (``model``, ``waiting``, ``approval``, ``paused``, ``s-<status>``)."""

    kind: str
    start: float
    end: float
    title: str


@dataclass
class Mark:
    """An instant: ``first-event``, ``approved`` or ``denied``."""

    kind: str
    at: float
    title: str


@dataclass
class Lane:
    """One row of the timeline: a model request, a call or a pause.

    Attributes:
        kind: ``model``, ``call`` or ``pause``.
        round: The round it belongs to (``None``: between rounds).
        label: Its name on the left (plain text: escaped when drawn).
        note: A second, quieter label (tokens, attempts).
        row: The logged row it was made from (its details), or ``None``.
    """

    kind: str
    round: Any
    label: str
    note: str = ""
    row: dict[str, Any] | None = None
    segments: list[Segment] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)

    @property
    def start(self) -> float:
        """When its first segment or mark begins (orders the page)."""
        return min([s.start for s in self.segments] + [m.at for m in self.marks])


def run_span(run: dict[str, Any], found: list[Lane]) -> tuple[float, float]:
    """The axis's origin (the run's start) and its length in seconds (at least 1 ms)."""
    origin = run["started_at"]
    ends = [s.end for lane in found for s in lane.segments]
    ends += [m.at for lane in found for m in lane.marks]
    if run["ended_at"] is not None:
        ends.append(run["ended_at"])
    return origin, max(max(ends, default=origin) - origin, 1e-3)


def lanes(run: dict[str, Any]) -> list[Lane]:
    """The run's lanes in the order the page shows them: by round, a round's model
    requests before its calls (in call order), pauses where they happened in time."""
    events = timeline(run)
    starts = {
        (row["round"], row["call_id"]): row["at"]
        for row in run.get("timeline", ())
        if row["kind"] == "call_started"
    }
    found = [_request_lane(q) for q in run["requests"]]
    found += [_call_lane(c, starts.get((c["round"], c["call_id"])), events) for c in run["calls"]]
    found += _pause_lanes(events)
    first: dict[Any, float] = {}
    for lane in found:
        if lane.kind != "pause":
            first[lane.round] = min(first.get(lane.round, lane.start), lane.start)
    order = {"model": 0, "call": 1, "pause": 2}

    def key(lane: Lane) -> tuple[float, int, float]:
        when = lane.start if lane.kind == "pause" else first[lane.round]
        return (when, order[lane.kind], lane.start if lane.kind == "model" else 0.0)

    return sorted(found, key=key)  # stable: calls keep the log's call order


def _request_lane(q: dict[str, Any]) -> Lane:
    tokens = f"{q['input_tokens']} in · {q['output_tokens']} out"
    lane = Lane("model", q["round"], f"model request #{q['seq']}", f"{tokens} tokens", q)
    lane.segments.append(Segment("model", q["started_at"], q["ended_at"], "model request"))
    if q["first_event_at"] is not None:
        waited = human_duration(q["first_event_at"] - q["started_at"])
        lane.marks.append(Mark("first-event", q["first_event_at"], f"first event after {waited}"))
    return lane


def _call_lane(c: dict[str, Any], began: float | None, events: list[dict[str, Any]]) -> Lane:
    status = c["status"] if c["status"] in STATUSES else "error"
    note = f"{c['attempts']} attempts" if c["attempts"] > 1 else ""
    lane = Lane("call", c["round"], f"[{c['idx']}] {c['tool']}", note, c)
    started = c["started_at"] if c["started_at"] is not None else c["ended_at"]
    lane.segments += _held(c["call_id"], events)
    if began is not None and started < began <= c["ended_at"]:
        lane.segments.append(Segment("waiting", started, began, "waiting to start"))
        started = began
    tries = _attempts(c.get("retried"), started, c["ended_at"])
    lane.segments += tries
    started = tries[-1].end if tries else started
    title = c["status"] + (f" (attempt {len(tries) // 2 + 1})" if tries else "")
    lane.segments.append(Segment(f"s-{status}", started, c["ended_at"], title))
    for event in events:
        if event["kind"] == "approval" and event.get("call_id") == c["call_id"]:
            kind = "approved" if event["approved"] else "denied"
            lane.marks.append(Mark(kind, event["at"], f"{kind} by {event.get('by')}"))
    return lane


def _attempts(logged: Any, start: float, end: float) -> list[Segment]:
    """A retried call's failed attempts and backoffs, from its ``retried`` column
    (``[[failed_at, next_at], ...]``). Anything else — an older log's NULL, or times
    that are not in order within the call (a crafted log) — places nothing."""
    try:
        pairs = [(float(a), float(b)) for a, b in json.loads(logged)] if logged else []
    except (TypeError, ValueError):
        return []
    found: list[Segment] = []
    for number, (failed_at, next_at) in enumerate(pairs, 1):
        if not start <= failed_at <= next_at <= end:
            return []
        found.append(Segment("retried", start, failed_at, f"attempt {number} failed"))
        found.append(Segment("backoff", failed_at, next_at, f"backoff after attempt {number}"))
        start = next_at
    return found


def _held(call_id: str, events: list[dict[str, Any]]) -> list[Segment]:
    """The call's wait for an answer while its run was paused (pause → approval)."""
    held: list[Segment] = []
    paused_at: float | None = None
    for event in events:
        if event["kind"] == "paused" and call_id in _pending(event):
            paused_at = event["at"]
        elif event["kind"] == "approval" and event.get("call_id") == call_id:
            if paused_at is not None:
                answer = "approved" if event["approved"] else "denied"
                title = f"waiting for approval ({answer} by {event.get('by')})"
                held.append(Segment("approval", paused_at, event["at"], title))
            paused_at = None
    return held


def _pending(event: dict[str, Any]) -> list[str]:
    calls = event.get("calls")
    return [str(c.get("call_id")) for c in calls] if isinstance(calls, list) else []


def _pause_lanes(events: list[dict[str, Any]]) -> list[Lane]:
    """One lane per pause: from the pause to the resume that followed (none yet: a
    mark-less lane of zero length at the pause)."""
    found = []
    for position, event in enumerate(events):
        if event["kind"] != "paused":
            continue
        resumed = next((e for e in events[position:] if e["kind"] == "resumed"), None)
        end = resumed["at"] if resumed is not None else event["at"]
        title = "paused" + (
            f" until resumed by {resumed.get('by')}" if resumed else ", not resumed"
        )
        lane = Lane("pause", event.get("round"), "paused", ", ".join(_pending(event)), event)
        lane.segments.append(Segment("paused", event["at"], end, title))
        found.append(lane)
    return found
