"""Result truncation: head and tail, a marker, the full text by a handle unique in the run."""

from __future__ import annotations

import asyncio
import sys

import pytest

from toolwire import (
    Agent,
    CallerError,
    ContextPolicy,
    ExecutionOptions,
    ToolDefinitionError,
    ToolRequest,
    tool,
)
from toolwire.context.session import RunContext
from toolwire.context.tokens import MAX_TOKENS_PER_CHAR, estimate_text_tokens
from toolwire.context.truncate import READ_RESULT, ResultStore, page, truncate_middle
from toolwire.run import Executor
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import Toolset

LOG = "".join(f"line {i:05d}: status ok, nothing to report\n" for i in range(3000))


def test_a_short_result_is_not_cut() -> None:
    assert truncate_middle("short", 100, "c1", estimate_text_tokens) is None


def test_head_and_tail_are_kept_with_a_marker() -> None:
    cut = truncate_middle(LOG, 400, "c1", estimate_text_tokens)
    assert cut is not None
    assert cut.startswith("line 00000:") and cut.endswith(
        "line 02999: status ok, nothing to report\n"
    )
    assert 'read_result(call_id="c1", offset=' in cut and "cut from the middle" in cut
    assert 350 <= estimate_text_tokens(cut) <= 520
    head, _, _ = cut.partition("\n\n[... ")
    assert head.endswith("\n") or head.endswith("report")  # cut at a line break


def test_pages_read_the_whole_text_back() -> None:
    store = ResultStore()
    store.put("c1", LOG, "call_1")
    offset, pieces = 0, []
    while True:
        text = page(store, "c1", offset, 500, estimate_text_tokens)
        body, marker, rest = text.partition("\n\n[... characters ")
        pieces.append(body)
        if not marker:
            break
        offset = int(rest.split("offset=")[1].split(")")[0])
    assert "".join(pieces) == LOG
    assert "no truncated result" in page(store, "zz", 0, 10, estimate_text_tokens)
    assert "outside" in page(store, "c1", len(LOG), 10, estimate_text_tokens)


@tool
def read_log() -> str:
    """Read the service log."""
    return LOG


@tool(max_result_tokens=False)
def read_log_whole() -> str:
    """Read the service log, never cut."""
    return LOG


@tool(max_result_tokens=50)
def read_log_short() -> str:
    """Read the service log, cut short."""
    return LOG


def test_an_agent_run_cuts_keeps_and_serves_the_full_output() -> None:
    model = ScriptedModel(
        [
            tool_call_turn(("read_log", {}, "log1")),
            tool_call_turn((READ_RESULT, {"call_id": "log1", "offset": 100}, "more1")),
            text_turn("done"),
        ]
    )
    result = Agent(model, [read_log], context=ContextPolicy(max_result_tokens=300)).run_sync("go")
    first = result.messages[2]
    assert first.content != LOG and "cut from the middle" in first.content
    assert result.context is not None and result.context.full_result("log1") == LOG
    # read_result is offered from the first request (the tools never change), and it
    # reads the stored text
    assert model.requests[0]["tools"] == model.requests[1]["tools"]
    assert READ_RESULT in [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert result.messages[4].content.startswith(LOG[100:140])


def test_a_tool_may_opt_out_or_set_its_own_cap() -> None:
    model = ScriptedModel(
        [
            tool_call_turn(("read_log_whole", {}), ("read_log_short", {}), ("read_log", {})),
            text_turn("done"),
        ]
    )
    agent = Agent(model, [read_log_whole, read_log_short, read_log])
    result = agent.run_sync("go")
    whole, short, default = result.messages[2:5]
    assert whole.content == LOG
    assert estimate_text_tokens(short.content) < 200
    assert 3000 < estimate_text_tokens(default.content) < 4600  # the 4,000-token default


def test_a_bad_tool_cap_is_a_definition_error() -> None:
    with pytest.raises(ToolDefinitionError, match="max_result_tokens"):

        @tool(max_result_tokens=0)
        def nothing() -> str:
            return ""


def test_the_context_policy_is_the_one_place_results_are_cut() -> None:
    # An executor on its own leaves a result whole; ExecutionOptions has no cap of its own.
    [whole] = asyncio.run(Executor([read_log]).execute([ToolRequest("c1", "read_log", "{}", {})]))
    assert whole.content == LOG
    assert "max_result_chars" not in ExecutionOptions.__dataclass_fields__


LOGS = {n: "".join(f"{n} line {i:05d}: status ok\n" for i in range(3000)) for n in ("a", "b")}


@tool
def read_named(name: str) -> str:
    """Read one of two logs."""
    return LOGS[name]


def test_repeated_call_ids_keep_each_cut_result_under_its_own_handle() -> None:
    # Some servers number calls per turn: both turns' calls have the id "call_0".
    model = ScriptedModel(
        [
            tool_call_turn(("read_named", {"name": "a"}, "call_0")),
            tool_call_turn(("read_named", {"name": "b"}, "call_0")),
            tool_call_turn((READ_RESULT, {"call_id": "r1c0", "offset": 0}, "call_0")),
            text_turn("done"),
        ]
    )
    agent = Agent(model, [read_named], context=ContextPolicy(max_result_tokens=300))
    result = agent.run_sync("go")
    first, second = result.messages[2].content, result.messages[4].content
    assert 'read_result(call_id="r1c0", offset=' in first
    assert 'read_result(call_id="r2c0", offset=' in second
    # The first marker still reads the first result, not the second one's text.
    assert result.messages[6].content.startswith("a line 00000")
    context = result.context
    assert context is not None
    assert context.full_result("r1c0") == LOGS["a"]
    assert context.full_result("r2c0") == LOGS["b"]
    with pytest.raises(CallerError, match="not unique") as caught:
        context.full_result("call_0")
    assert "r1c0" in str(caught.value) and "r2c0" in str(caught.value)
    assert context.full_result("never") is None


def test_read_result_with_an_ambiguous_id_lists_the_handles() -> None:
    store = ResultStore()
    store.put("r1c0", LOG, "call_0")
    store.put("r2c0", LOG, "call_0")
    text = page(store, "call_0", 0, 100, estimate_text_tokens)
    assert "not unique" in text and "r1c0" in text and "r2c0" in text
    store.put("r3c1", "x" * 10, "unique")
    assert page(store, "unique", 0, 100, estimate_text_tokens) == "x" * 10


@pytest.mark.parametrize("cap", [None, 300, 301, 303])
def test_a_results_length_decides_only_what_its_count_would(cap: int | None) -> None:
    """Each tool's result is left whole by its length alone up to its cap's worth of
    characters at the most tokens a character; at those lengths and past them the
    result is what the count-and-cut path makes of it."""
    tools = [read_log, read_log_whole, read_log_short]
    context = RunContext(ContextPolicy(max_result_tokens=cap), Toolset(tools))
    counted = RunContext(ContextPolicy(max_result_tokens=cap), Toolset(tools))
    counted.uncut_lengths = {}  # every result through the count
    assert set(context.uncut_lengths) == set(tools)
    dense = "\U0001f600" * 2000  # the most tokens a character: where the bound is tight
    for t in tools:
        limit = context._limits[t]
        edge = 10**6 if limit is None else limit // MAX_TOKENS_PER_CHAR
        assert context.uncut_lengths[t] == (sys.maxsize if limit is None else edge)
        for length in {0, 1, min(edge, 2000) - 1, min(edge, 2000), min(edge + 1, 2000)}:
            for text in (dense[:length], LOG[:length]):
                request = ToolRequest("c1", t.name, "{}", {})
                shaped = context.shape_result(request, t, text)
                assert shaped == counted.shape_result(request, t, text)
                if len(text) <= edge:
                    assert shaped is text
