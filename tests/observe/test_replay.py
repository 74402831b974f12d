"""Record and replay: a logged run played back offline, as a regression test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, AuditLog, RunNotFoundError, tool
from toolwire.errors import ReplayMismatchError
from toolwire.messages import ToolResult
from toolwire.testing import ReplayModel, ScriptedModel, assert_replays, text_turn, tool_call_turn

from .helpers import search, write


@pytest.fixture
def logged(tmp_path: Path) -> tuple[str, Any]:
    """A logged run: reasoning-free text, parallel calls, a failing call, two rounds."""
    path = str(tmp_path / "runs.db")
    model = ScriptedModel(
        [
            tool_call_turn(
                ("search", {"q": "a"}),
                ("search", {"q": "b"}),
                ("write", {"path": "p"}),
                text="Looking.",
                fragment=4,
                usage={"prompt_tokens": 11, "completion_tokens": 3},
            ),
            tool_call_turn(
                ("search", {"q": "c"}), usage={"prompt_tokens": 20, "completion_tokens": 4}
            ),
            text_turn("All found.", usage={"prompt_tokens": 30, "completion_tokens": 5}),
        ]
    )
    result = Agent(model, [search, write], log=path, system="Be brief.").run_sync("find a, b, c")
    return path, result


def _results(messages: list[Any]) -> list[tuple[str, str, str]]:
    return [(m.name, m.content, m.status.value) for m in messages if isinstance(m, ToolResult)]


def test_replay_with_live_tools_gives_the_same_run(logged: tuple[str, Any]) -> None:
    path, original = logged
    model = ReplayModel.from_log(path, original.run_id)
    assert model.name == "replay:scripted" and model.remaining == 3
    history = model.history()
    assert [m.role for m in history] == ["system", "user"]
    replayed = Agent(model, [search, write]).run_sync(history=history)
    assert replayed.messages == original.messages
    assert replayed.usage == original.usage and replayed.output == "All found."
    assert model.remaining == 0


def test_replay_with_logged_tools_needs_no_tool_code(logged: tuple[str, Any]) -> None:
    path, original = logged
    model = ReplayModel.from_log(path, "last")
    replayed = Agent(model, model.tools()).run_sync(history=model.history())
    assert _results(replayed.messages) == _results(original.messages)
    assert replayed.output == original.output


def strip(calls: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(c["tool"], c["arguments"], c["status"], c["result_preview"]) for c in calls]


def test_replay_twice_is_deterministic_and_logs_again(
    logged: tuple[str, Any], tmp_path: Path
) -> None:
    path, original = logged
    again = AuditLog(tmp_path / "again.db")
    outputs = []
    for _ in range(2):
        model = ReplayModel.from_log(path, original.run_id[:10])
        outputs.append(Agent(model, model.tools(), log=again).run_sync(history=model.history()))
    assert outputs[0].messages == outputs[1].messages
    first, second = (again.inspect(r.run_id) for r in outputs)
    assert (
        strip(first["calls"])
        == strip(second["calls"])
        == strip(AuditLog(path).inspect("last")["calls"])
    )


def test_assert_replays_passes_and_catches_a_regression(logged: tuple[str, Any]) -> None:
    path, original = logged
    assert assert_replays(path, original.run_id).output == "All found."
    assert assert_replays(path, "last", tools=[search, write]).output == "All found."

    @tool(name="search", concurrency_safe=True)
    async def broken_search(q: str) -> str:
        """Search, now failing for one query."""
        if q == "a":
            raise RuntimeError("index missing")
        return f"found {q}"

    with pytest.raises(AssertionError, match=r"call 1 \(search\): status was 'ok', now 'error'"):
        assert_replays(path, "last", tools=[broken_search, write])


def test_replay_reports_a_diverging_agent(logged: tuple[str, Any]) -> None:
    path, _ = logged
    model = ReplayModel.from_log(path, "last")
    agent = Agent(model, model.tools(), max_rounds=5)
    agent.run_sync(history=model.history())
    with pytest.raises(ReplayMismatchError, match="logged 3 model turn"):
        agent.run_sync("one more question")


def test_from_log_with_an_unknown_run(logged: tuple[str, Any]) -> None:
    path, original = logged
    with pytest.raises(RunNotFoundError, match=original.run_id):
        ReplayModel.from_log(path, "deadbeef")


# -- free-form (custom) tool calls -------------------------------------------------------

written: list[str] = []


@tool(freeform=True)
def note(text: str) -> str:
    """Keep a note (raw text)."""
    written.append(text)
    return f"kept {len(text)} characters"


def _custom_turn(*inputs: str) -> list[dict[str, Any]]:
    """A Chat stream whose calls are custom (free-form) calls to ``note``."""
    calls = [
        {"index": i, "id": f"c{i}", "type": "custom", "custom": {"name": "note", "input": text}}
        for i, text in enumerate(inputs)
    ]
    return [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": calls}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]


# A raw input that happens to be valid JSON must still match its own logged result, and
# one that does not parse must too.
INPUTS = ('{"a": 1}', "42", "plain words", '  {"a":1}  ')


def test_replayed_custom_calls_match_their_logged_results(tmp_path: Path) -> None:
    path = str(tmp_path / "runs.db")
    written.clear()
    model = ScriptedModel([_custom_turn(*INPUTS), text_turn("Noted.")])
    original = Agent(model, [note], log=path).run_sync("take notes")
    assert written == list(INPUTS)
    calls = [
        p for m in original.messages for p in getattr(m, "parts", []) if hasattr(p, "freeform")
    ]
    assert [c.freeform for c in calls] == [True] * len(INPUTS)

    replay = ReplayModel.from_log(path, original.run_id)
    tools = replay.tools()  # the logged results, no tool code
    assert [t.freeform for t in tools] == [True]
    replayed = Agent(replay, tools).run_sync(history=replay.history())
    assert replayed.messages == original.messages
    assert _results(replayed.messages) == [
        ("note", f"kept {len(text)} characters", "ok") for text in INPUTS
    ]
    written.clear()
    assert assert_replays(path, original.run_id, tools=[note]).output == "Noted."
    assert written == list(INPUTS)  # live, the tool got each raw input unchanged
    assert assert_replays(path, original.run_id).output == "Noted."  # from the log
