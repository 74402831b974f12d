"""Images in the audit log: stored once by hash, named by parts, restored by replay."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

from toolwire import Agent, Image, tool
from toolwire.messages import TextPart, ToolResult, UserMessage
from toolwire.testing import ReplayModel, ScriptedModel, assert_replays, text_turn, tool_call_turn

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
OTHER = PNG + b"\0"  # other bytes, still a PNG's signature


@tool(concurrency_safe=True, side_effects=False)
def snap(page: str) -> list[Any]:
    """Screenshot a page."""
    return [f"page {page}", Image(OTHER if page == "other" else PNG)]


def _run(db: str, *pages: str) -> Any:
    calls = [("snap", {"page": p}, f"c-{i}") for i, p in enumerate(pages)]
    model = ScriptedModel([tool_call_turn(*calls), text_turn("seen")])
    return Agent(model, [snap], log=db).run_sync("look")


def test_an_image_is_stored_once_by_hash_and_named_by_the_calls(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    _run(db, "a", "b", "other")
    _run(db, "c")  # the same image again, in another run
    conn = sqlite3.connect(db)
    images = conn.execute("SELECT sha256, media_type, data FROM images ORDER BY sha256").fetchall()
    assert [row[0] for row in images] == sorted([Image(PNG).sha256, Image(OTHER).sha256])
    assert {row[0]: bytes(row[2]) for row in images}[Image(PNG).sha256] == PNG
    parts = [
        json.loads(p)
        for (p,) in conn.execute(
            "SELECT parts FROM calls ORDER BY (SELECT started_at FROM runs r"
            " WHERE r.run_id = calls.run_id), round, idx"
        )
    ]
    assert parts[0] == [
        {"kind": "text", "text": "page a"},
        {
            "kind": "image",
            "sha256": Image(PNG).sha256,
            "media_type": "image/png",
            "bytes": len(PNG),
        },
    ]
    # The request that carried the results names the images; no base64 anywhere in it.
    logged = " ".join(m for (m,) in conn.execute("SELECT messages FROM requests"))
    assert Image(PNG).sha256 in logged and base64.b64encode(PNG).decode() not in logged
    conn.close()


def test_replay_restores_the_images(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    original = _run(db, "a", "other")
    model = ReplayModel.from_log(db, original.run_id)
    replayed = Agent(model, model.tools()).run_sync(history=model.history())
    results = [m for m in replayed.messages if isinstance(m, ToolResult)]
    assert [r.images for r in results] == [[Image(PNG)], [Image(OTHER)]]
    assert replayed.messages == original.messages
    assert_replays(db, original.run_id, tools=[snap])


def test_a_user_message_with_an_image_round_trips_through_the_log(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    question = UserMessage.from_parts(["What is this?", Image(PNG)])
    Agent(ScriptedModel([text_turn("a dot")]), log=db).run_sync(history=[question])
    model = ReplayModel.from_log(db, "last")
    (restored,) = model.history()
    assert restored == question
    assert restored.parts == (TextPart("What is this?"), Image(PNG))


@tool
def leaky() -> list[Any]:
    """A screenshot whose caption holds a key."""
    return ["token sk-proj-abcdefghijklmnopqrstuvwxyz0123", Image(PNG)]


def test_a_secret_in_a_text_part_next_to_an_image_is_redacted(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    model = ScriptedModel([tool_call_turn(("leaky", {}, "c1")), text_turn("ok")])
    Agent(model, [leaky], log=db).run_sync("look")
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT parts, result FROM calls").fetchall()
    logged = " ".join(m for (m,) in conn.execute("SELECT messages FROM requests"))
    conn.close()
    text = " ".join(rows[0]) + logged
    assert "sk-proj-abcdefghijklmnop" not in text and "[REDACTED]" in text
    assert Image(PNG).sha256 in rows[0][0]  # the image's key is never redacted


def test_the_trace_page_shows_only_image_types_as_images(tmp_path: Path) -> None:
    """A crafted log whose image row claims another type gets no data: URL of it."""
    from toolwire.observe.query import load_run
    from toolwire.observe.store import connect
    from toolwire.observe.trace import render_html

    def page(db: str) -> str:
        reader = connect(db, readonly=True)
        try:
            return render_html(load_run(reader, "last", db))
        finally:
            reader.close()

    db = str(tmp_path / "runs.db")
    _run(db, "a")
    assert f"data:image/png;base64,{base64.b64encode(PNG).decode()}" in page(db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE images SET media_type = 'text/html'")
    conn.commit()
    conn.close()
    crafted = page(db)
    assert "data:text/html" not in crafted and "data:image" not in crafted


@tool
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def test_a_paused_run_resumes_with_its_logged_image(tmp_path: Path) -> None:
    from toolwire import AuditLog, Permissions

    db = tmp_path / "runs.db"
    ask = Permissions(ask=["delete"])
    turn = tool_call_turn(("snap", {"page": "a"}, "c1"), ("delete", {"path": "b"}, "c2"))
    first = Agent(ScriptedModel([turn]), [snap, delete], log=AuditLog(db), permissions=ask,
                  approve="pause").run_sync("look, then tidy")  # fmt: skip
    assert first.paused
    model = ScriptedModel([text_turn("done")])
    agent = Agent(model, [snap, delete], log=AuditLog(db), permissions=ask, approve="pause")
    result = agent.resume_sync(first.run_id, approvals={"c2": True})
    assert result.output == "done"
    (shot,) = [m for m in result.messages if isinstance(m, ToolResult) and m.call_id == "c1"]
    assert shot.images == [Image(PNG)]  # restored from the log, bytes and all
    sent = json.dumps(model.requests[0]["messages"])
    assert base64.b64encode(PNG).decode() in sent  # the resumed request carries it
