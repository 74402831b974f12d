"""Result truncation: head and tail, a marker, the full text by call id."""

from __future__ import annotations

import asyncio

import pytest

from toolwire import Agent, ContextPolicy, ExecutionOptions, ToolDefinitionError, ToolRequest, tool
from toolwire.context.tokens import estimate_text_tokens
from toolwire.context.truncate import READ_RESULT, ResultStore, page, truncate_middle
from toolwire.run import Executor
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

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
    store.put("c1", LOG)
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
    # read_result is offered only once something was cut, and it reads the stored text
    assert READ_RESULT not in [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert READ_RESULT in [t["function"]["name"] for t in model.requests[1]["tools"]]
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
