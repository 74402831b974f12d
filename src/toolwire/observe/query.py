"""Reading the audit log back: the run list, run ids, one run's rows."""

from __future__ import annotations

import datetime
import json
import os
import sqlite3
from typing import Any

from ..errors import RunNotFoundError

__all__ = ["format_time", "list_runs", "load_run", "resolve_run"]

_LATEST_SHOWN = 5


def format_time(stamp: float | None) -> str | None:
    """A ``time.time()`` stamp as local ISO 8601 with milliseconds."""
    if stamp is None:
        return None
    return datetime.datetime.fromtimestamp(stamp).astimezone().isoformat(timespec="milliseconds")


def _outcome(stored: str, pid: int | None) -> str:
    """``interrupted`` for a run still marked running whose process is gone."""
    if stored != "running" or pid is None or pid == os.getpid():
        return stored
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "interrupted"
    except OSError:  # exists, but not ours
        return stored
    return stored


def list_runs(conn: sqlite3.Connection, limit: int = 20) -> list[dict[str, Any]]:
    """The latest ``limit`` runs, newest first."""
    rows = conn.execute(
        """
        SELECT r.run_id, r.started_at, r.ended_at, r.model, r.outcome, r.pid, r.rounds,
               r.input_tokens, r.output_tokens, r.prompt,
               (SELECT COUNT(*) FROM calls c WHERE c.run_id = r.run_id
                    AND c.status != 'discarded') AS calls,
               (SELECT COUNT(*) FROM calls c WHERE c.run_id = r.run_id
                    AND c.failure_class IS NOT NULL) AS failures,
               (SELECT COUNT(*) FROM requests q WHERE q.run_id = r.run_id
                    AND q.tool_calls != '[]') AS tool_rounds,
               (SELECT COUNT(*) FROM requests q WHERE q.run_id = r.run_id) AS requests,
               (SELECT COUNT(*) FROM notices n WHERE n.run_id = r.run_id) AS notices
        FROM runs r ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?
        """,
        (limit,),
    ).fetchall()
    return [
        {
            "run_id": row[0],
            "time": format_time(row[1]),
            "started_at": row[1],
            "ended_at": row[2],
            "model": row[3],
            "outcome": _outcome(row[4], row[5]),
            "rounds": max(row[6], row[12]),
            "requests": row[13],
            "calls": row[10],
            "failures": row[11],
            "notices": row[14],
            "input_tokens": row[7],
            "output_tokens": row[8],
            "prompt": row[9],
        }
        for row in rows
    ]


def resolve_run(conn: sqlite3.Connection, ref: str, path: str) -> str:
    """The full id that ``ref`` (an id, an unambiguous prefix, or ``last``) names.

    Raises:
        RunNotFoundError: No run matches, or a prefix matches several.
    """
    latest = [
        r[0]
        for r in conn.execute(
            "SELECT run_id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?",
            (_LATEST_SHOWN,),
        )
    ]
    ref = ref.strip()
    if ref == "last":
        if not latest:
            raise RunNotFoundError(path, ref, "there is no last run", latest)
        return str(latest[0])
    if not ref or any(c not in "0123456789abcdef" for c in ref.lower()):
        raise RunNotFoundError(path, ref, f"{ref!r} is not a run id", latest)
    matches = [
        r[0]
        for r in conn.execute(
            "SELECT run_id FROM runs WHERE run_id >= ? AND run_id < ? LIMIT 6",
            (ref.lower(), ref.lower() + "g"),
        )
    ]
    if len(matches) == 1:
        return str(matches[0])
    if not matches:
        raise RunNotFoundError(path, ref, f"no run {ref!r}", latest)
    raise RunNotFoundError(path, ref, f"{ref!r} is ambiguous ({', '.join(matches[:5])}...)", latest)


def load_run(conn: sqlite3.Connection, ref: str, path: str) -> dict[str, Any]:
    """One run with its requests (each with its ``notices``) and calls (call order:
    round, index, discarded first).

    Raises:
        RunNotFoundError: ``ref`` names no run.
    """
    run_id = resolve_run(conn, ref, path)
    conn.row_factory = sqlite3.Row
    try:
        run = dict(conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone())
        run["outcome_stored"] = run["outcome"]  # what a claim compares (toolwire.observe.durable)
        run["outcome"] = _outcome(run["outcome"], run.get("pid"))
        run["timeline"] = [
            dict(r)
            for r in conn.execute("SELECT * FROM timeline WHERE run_id = ? ORDER BY seq", (run_id,))
        ]
        run["requests"] = [
            dict(r)
            for r in conn.execute("SELECT * FROM requests WHERE run_id = ? ORDER BY seq", (run_id,))
        ]
        _attach_notices(conn, run_id, run["requests"])
        run["calls"] = [
            dict(r)
            for r in conn.execute(
                "SELECT * FROM calls WHERE run_id = ?"
                " ORDER BY round, idx, status = 'discarded' DESC, seq",
                (run_id,),
            )
        ]
    finally:
        conn.row_factory = None
    run["images"] = _images(conn, run)
    return run


def _attach_notices(conn: sqlite3.Connection, run_id: str, requests: list[dict[str, Any]]) -> None:
    """Give each request row its ``notices`` (``kind``, ``message``, ``index``), in the
    order the run heard them."""
    by_request: dict[int, list[dict[str, Any]]] = {}
    for request, kind, message, index in conn.execute(
        "SELECT request, kind, message, idx FROM notices WHERE run_id = ? ORDER BY request, seq",
        (run_id,),
    ):
        by_request.setdefault(request, []).append(
            {"kind": kind, "message": message, "index": index}
        )
    for row in requests:
        row["notices"] = by_request.get(row["seq"], [])


def _images(conn: sqlite3.Connection, run: dict[str, Any]) -> dict[str, tuple[str, bytes]]:
    """The run's images by SHA-256: ``(media_type, data)`` of each one its calls' and
    messages' parts name (stored once in the ``images`` table)."""
    wanted: set[str] = set()
    texts = [c.get("parts") for c in run["calls"]] + [q["messages"] for q in run["requests"]]
    for text in texts:
        if text and '"image"' in text:  # only parts JSON holding an image is read
            wanted.update(_image_hashes(json.loads(text)))
    if not wanted:
        return {}
    marks = ", ".join("?" * len(wanted))
    rows = conn.execute(
        f"SELECT sha256, media_type, data FROM images WHERE sha256 IN ({marks})",
        sorted(wanted),
    )
    return {digest: (media_type, bytes(data)) for digest, media_type, data in rows}


def _image_hashes(value: Any) -> set[str]:
    """Every ``sha256`` of an image part anywhere in logged JSON."""
    if isinstance(value, dict):
        found = {str(value["sha256"])} if value.get("kind") == "image" else set()
        for item in value.values():
            found |= _image_hashes(item)
        return found
    if isinstance(value, list):
        return set().union(*(_image_hashes(item) for item in value)) if value else set()
    return set()
