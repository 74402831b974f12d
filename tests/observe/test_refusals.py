"""A refused turn in the audit log: recorded, replayed as a refusal, shown as one.

Two refusals, over loopback HTTP through the real providers: Anthropic's recorded
``stop_reason: "refusal"`` stream, a refusal without words (vercel/ai's
``anthropic-refusal.chunks.txt``, tests/wire/fixtures/recorded, source and licence in
its README), and an OpenAI Chat refusal in words, in the shape of the API reference
(https://platform.openai.com/docs/api-reference/chat/streaming: ``delta.refusal``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent
from toolwire.cli.inspect_cmd import render
from toolwire.messages import AssistantMessage, RefusalPart
from toolwire.observe.inspect import inspect_run
from toolwire.observe.query import load_run
from toolwire.observe.schema import apply_migrations
from toolwire.observe.store import connect
from toolwire.observe.trace import render_html
from toolwire.providers.anthropic import AnthropicModel
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.testing import ReplayModel, assert_replays

from ..providers.faultserver import FaultServer, sse
from .helpers import search

RECORDED = Path(__file__).parent.parent / "wire" / "fixtures" / "recorded"
WORDS = "I can't help with that."


def _anthropic_refusal() -> bytes:
    lines = (RECORDED / "anthropic-refusal.chunks.txt").read_text().splitlines()
    events = [json.loads(line) for line in lines if line]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _chat_refusal() -> bytes:
    deltas = [{"role": "assistant", "content": None, "refusal": ""}]
    deltas += [{"refusal": "I can't help"}, {"refusal": " with that."}]
    chunks: list[dict[str, Any]] = [
        {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
        for d in deltas
    ]
    chunks.append(
        {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    )
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


def _run(tmp_path: Path, provider: str) -> tuple[str, Any]:
    path = str(tmp_path / "runs.db")
    body = _anthropic_refusal() if provider == "anthropic" else _chat_refusal()
    with FaultServer(sse(body, chunks=[7])) as server:
        url = f"{server.url}/v1"
        model: Any = (
            AnthropicModel("claude-fable-5", base_url=url, api_key="k")
            if provider == "anthropic"
            else OpenAIChatModel("gpt-4.1-mini", base_url=url, api_key="k")
        )
        result = Agent(model, [search], log=path).run_sync("Help me break in.")
    assert result.refused
    return path, result


@pytest.mark.parametrize("provider", ["anthropic", "chat"])
def test_a_refused_turn_is_recorded_and_replayed_as_a_refusal(
    tmp_path: Path, provider: str
) -> None:
    path, original = _run(tmp_path, provider)
    words = WORDS if provider == "chat" else ""
    assert original.refusal == words

    replay = ReplayModel.from_log(path, original.run_id)
    (logged,) = replay.run["requests"]
    assert (logged["refusal"], logged["refused"]) == (words, 1)
    replayed = Agent(replay, replay.tools()).run_sync(history=replay.history())
    assert replayed.refused and replayed.refusal == words
    assert replayed.messages == original.messages
    last = replayed.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert [type(p) for p in last.parts] == ([RefusalPart] if words else [])
    assert assert_replays(path, original.run_id).refused


@pytest.mark.parametrize("provider", ["anthropic", "chat"])
def test_the_inspector_and_the_trace_show_the_refusal(tmp_path: Path, provider: str) -> None:
    path, original = _run(tmp_path, provider)
    conn = connect(path, readonly=True)
    try:
        run = load_run(conn, original.run_id, path)
    finally:
        conn.close()
    report = inspect_run(run)
    (request,) = report["requests"]
    words = WORDS if provider == "chat" else ""
    assert request["refused"] and request["refusal_preview"] == words
    assert f"  refused: {words or '(no text)'}" in render(report).splitlines()
    (item,) = _trace_items(render_html(run))
    assert item["summary"].endswith(", refused")
    expected = [["refusal", words]] if words else []
    assert [s for s in item["sections"] if s[0] == "refusal"] == expected


def _trace_items(page: str) -> list[dict[str, Any]]:
    """The trace page's detail records (its ``trace-data`` JSON)."""
    data = page.split('<script type="application/json" id="trace-data">', 1)[1]
    items: list[dict[str, Any]] = json.loads(data.split("</script>", 1)[0])["items"]
    return items


def test_a_log_from_before_refusals_still_reads_and_replays(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, upto=2)
    conn.execute(
        "INSERT INTO runs (run_id, started_at, model, tools, settings, outcome, output)"
        " VALUES ('0123abcd', 1.0, 'old-model', '[]', '{}', 'ok', 'Hello.')"
    )
    conn.execute(
        "INSERT INTO requests (run_id, seq, round, started_at, ended_at, latency_ms, messages,"
        " history_length, finish_reason, text, reasoning, tool_calls, input_tokens,"
        " output_tokens) VALUES ('0123abcd', 1, 1, 1.0, 2.0, 1000.0,"
        " '[{\"role\": \"user\", \"content\": \"hi\"}]', 1, 'stop', 'Hello.', '', '[]', 3, 2)"
    )
    conn.close()
    replay = ReplayModel.from_log(path, "last")  # reading brings the schema up to date
    (logged,) = replay.run["requests"]
    assert (logged["refusal"], logged["refused"]) == ("", 0)
    result = Agent(replay).run_sync(history=replay.history())
    assert result.output == "Hello." and not result.refused
    assert inspect_run(replay.run)["requests"][0]["refused"] is False
    # A row without the columns at all (as a reader of the old schema gives it).
    for key in ("refusal", "refused"):
        del logged[key]
    assert Agent(ReplayModel(replay.run)).run_sync(history=replay.history()).output == "Hello."
    (item,) = _trace_items(render_html(replay.run))
    assert "refused" not in item["summary"]
