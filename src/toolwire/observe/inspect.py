"""The inspector's analysis of one logged run: what ``toolwire inspect`` shows.

Debugging an agent starts from the tool system, not the model: which tools ran, with
which arguments, how long they took, what failed and how, and whether the model went
round in circles (the same call signature again and again).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..policies.loops import call_signature
from .query import format_time

__all__ = ["FAILURE_HINTS", "TIMELINE_KINDS", "describe_event", "inspect_run", "timeline"]

PREVIEW_CHARS = 200

FAILURE_HINTS = {
    "tool_error": "the tool raised: suspect the tool first (run it alone with these arguments)",
    "timeout": "the tool ran past its timeout: raise Tool.timeout or make it faster",
    "invalid_json": "the model's arguments were not JSON: check the tool's schema is simple, "
    "or use a model/format with constrained decoding",
    "schema_violation": "arguments of the wrong type: make the parameter's type and "
    "description unambiguous",
    "missing_required": "a required argument was left out: describe it, or give it a default",
    "unexpected_parameter": "the model invented a parameter: rename parameters to what "
    "the model expects, or describe them",
    "unknown_tool": "the model called a tool that does not exist: check the tool names "
    "offered and the system prompt",
    "empty_call": "a call without a name or arguments: the provider or format parser "
    "may be at fault",
    "denied": "the permission gate refused the call: check the Permissions rules and "
    "the approver, or tell the model which tools it may not use",
}
"""What to look at first, per failure class."""


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def _signature(tool: str, arguments: str) -> str:
    try:
        value: Any = json.loads(arguments)
    except ValueError:
        value = arguments
    return call_signature(tool, value)


def _usage(row: dict[str, Any], prices: tuple[float, float] | None) -> dict[str, Any]:
    usage = {
        "input_tokens": row["input_tokens"],
        "output_tokens": row["output_tokens"],
        "cache_read_tokens": row.get("cache_read_tokens") or 0,
        "reasoning_tokens": row.get("reasoning_tokens") or 0,
    }
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    usage["cost"] = (
        None
        if prices is None
        else round(
            (usage["input_tokens"] * prices[0] + usage["output_tokens"] * prices[1]) / 1e6, 6
        )
    )
    return usage


def inspect_run(
    run: dict[str, Any],
    *,
    loop_threshold: int = 2,
    prices: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The JSON-ready analysis of a run loaded by :func:`~toolwire.observe.query.load_run`.

    Args:
        run: The run, its requests and its calls.
        loop_threshold: A call signature seen more than this many times is a
            suspicious loop.
        prices: USD per million input and output tokens, for the cost per round
            (``None``: costs are ``null``).
    """
    calls = [
        {
            "round": c["round"],
            "index": c["idx"],
            "call_id": c["call_id"],
            "tool": c["tool"],
            "arguments": c["arguments"],
            "status": c["status"],
            # A call that never ran (invalid, not executed) took no time: 0, attempts 0.
            "latency_ms": round(c["latency_ms"] or 0.0, 3),
            "result_preview": _preview(c["result"]),
            "result_chars": len(c["result"]),
            "early": bool(c["early"]),
            "repaired": bool(c["repaired"]),
            "attempts": c["attempts"],
            "retries": max(0, c["attempts"] - 1),
            "failure_class": c["failure_class"],
            "reason": c.get("reason"),
            # A provider's 400 refused its images: the row is the error result that
            # replaced the tool's (a log written before schema 12 has no such column).
            "images_refused": bool(c.get("images_refused")),
            "started_at": c["started_at"],
            "ended_at": c["ended_at"],
        }
        for c in run["calls"]
    ]
    counted = [c for c in calls if c["status"] != "discarded"]
    signatures = Counter(_signature(c["tool"], c["arguments"]) for c in counted)
    loops = []
    for signature, count in signatures.most_common():
        if count <= loop_threshold:
            break
        matching = [c for c in counted if _signature(c["tool"], c["arguments"]) == signature]
        loops.append(
            {
                "signature": signature,
                "tool": matching[0]["tool"],
                "count": count,
                "rounds": sorted({c["round"] for c in matching}),
            }
        )
    failures = Counter(c["failure_class"] for c in counted if c["failure_class"])
    requests = [
        {
            "seq": q["seq"],
            "round": q["round"],
            "latency_ms": round(q["latency_ms"], 3),
            "first_event_ms": None
            if q["first_event_at"] is None
            else round((q["first_event_at"] - q["started_at"]) * 1000.0, 3),
            "finish_reason": q["finish_reason"],
            "tool_calls": len(json.loads(q["tool_calls"])),
            "text_preview": _preview(q["text"]),
            # A log written before refusals were kept has neither column.
            "refused": bool(q.get("refused")),
            "refusal_preview": _preview(q.get("refusal") or ""),
            "usage": _usage(q, prices),
            "started_at": q["started_at"],
            "ended_at": q["ended_at"],
            # A failed request (a log written before schema 10 has none).
            "error": q.get("error"),
            "error_type": q.get("error_type"),
            "error_status": q.get("error_status"),
            # What labelled its answer or dropped a call (kind, message, index).
            "notices": q.get("notices", []),
        }
        for q in run["requests"]
    ]
    tool_rounds = sum(1 for q in requests if q["tool_calls"])
    return {
        "run_id": run["run_id"],
        "model": run["model"],
        "time": format_time(run["started_at"]),
        "started_at": run["started_at"],
        "ended_at": run["ended_at"],
        "outcome": run["outcome"],
        "error": run["error"],
        "error_type": run["error_type"],
        "prompt": run["prompt"],
        "output": run["output"],
        "rounds": max(run["rounds"], tool_rounds),
        "requests": requests,
        "calls": calls,
        "tool_distribution": dict(Counter(c["tool"] for c in counted).most_common()),
        "suspicious_loops": loops,
        "failures_by_class": dict(failures.most_common()),
        "failure_hints": {kind: FAILURE_HINTS.get(kind, "") for kind in failures},
        "usage": _usage(_run_usage(run, requests), prices),
        "usage_by_round": _by_round(requests, prices),
        "timeline": timeline(run),
    }


TIMELINE_KINDS = ("paused", "approval", "resumed")
"""The timeline rows a report shows (call start rows only mark calls as started)."""


def timeline(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The run's pauses, approvals (who answered what, when) and resumes, in order."""
    entries = []
    for row in run.get("timeline", ()):
        if row["kind"] not in TIMELINE_KINDS:
            continue
        detail = json.loads(row["detail"])
        entry = {"kind": row["kind"], "at": row["at"], "time": format_time(row["at"])}
        if row["round"] is not None:
            entry["round"] = row["round"]
        if row["call_id"] is not None:
            entry["call_id"] = row["call_id"]
        entries.append(entry | detail)
    return entries


def _run_usage(run: dict[str, Any], requests: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's totals; summed from its requests when it never finished."""
    if run["ended_at"] is not None:
        return run
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens")
    return {k: sum(q["usage"][k] for q in requests) for k in keys}


def _by_round(
    requests: list[dict[str, Any]], prices: tuple[float, float] | None
) -> list[dict[str, Any]]:
    rounds: dict[int, dict[str, int]] = {}
    for q in requests:
        totals = rounds.setdefault(q["round"], {"input_tokens": 0, "output_tokens": 0})
        totals["input_tokens"] += q["usage"]["input_tokens"]
        totals["output_tokens"] += q["usage"]["output_tokens"]
    return [{"round": n, **_usage(t, prices)} for n, t in sorted(rounds.items())]


def describe_event(entry: dict[str, Any]) -> str:
    """One pause, approval or resume of :func:`timeline`, as a line of text."""
    when = entry["time"]
    if entry["kind"] == "paused":
        waiting = ", ".join(f"{c['tool']} ({c['call_id']})" for c in entry.get("calls", ()))
        return f"paused {when} after round {entry.get('round')}: waiting for {waiting}"
    if entry["kind"] == "approval":
        answer = "approved" if entry["approved"] else f"denied ({entry.get('reason')})"
        return f"  {entry['tool']} ({entry['call_id']}) {answer} by {entry['by']} {when}"
    return f"resumed {when} by {entry['by']} (from {entry['from']}; owner {entry['owner']})"
