"""Responses API round trips: a recorded turn, then the next request's input items.

For each kind of item a turn keeps, the recorded turn is decoded, the history (with the
results toolwire adds) is encoded for the next request, and the items are checked
against the request shapes of the OpenAI API reference, "Responses > Create a model
response > input" (https://platform.openai.com/docs/api-reference/responses/create),
written out here field by field:

* reasoning: ``{"type": "reasoning", "id", "summary": [{"type": "summary_text",
  "text"}], "encrypted_content"?}``
* function call / output: ``{"type": "function_call", "call_id", "name",
  "arguments"}``, ``{"type": "function_call_output", "call_id", "output"}``
* custom tool call / output: ``{"type": "custom_tool_call", "call_id", "name",
  "input"}``, ``{"type": "custom_tool_call_output", "call_id", "output"}``
* MCP approval: the ``mcp_approval_request`` item as received, then
  ``{"type": "mcp_approval_response", "approval_request_id", "approve", "reason"?}``
* built-in tool items (web search, file search, code interpreter, image generation,
  MCP call and tool list, local shell, shell, apply patch): the output item as
  received, with the fields the reference requires for it as an input item.

Recordings: tests/wire/fixtures/recorded (sources and licences in its README).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire.history.openai_responses import to_responses_input
from toolwire.history.openai_responses_decode import from_responses_input
from toolwire.history.openai_responses_owed import (
    CLIENT_CALL_OUTPUTS,
    NOT_EXECUTED,
    UNANSWERED_APPROVAL_REASON,
    UNANSWERED_CALL_REASON,
)
from toolwire.history.responses_mcp import approval_response, mcp_approval_requests
from toolwire.messages import ProviderPart, ToolResult, ToolStatus, UserMessage
from toolwire.turn import Turn
from toolwire.wire import OpenAIResponsesStream, decode_responses_response

RECORDED = Path(__file__).parents[1] / "wire" / "fixtures" / "recorded"


def _stream(name: str) -> Turn:
    """The first stream of a recording, decoded."""
    lines = (RECORDED / f"responses-{name}.chunks.txt").read_text().splitlines()
    stream = OpenAIResponsesStream()
    created = 0
    for line in filter(None, lines):
        event = json.loads(line)
        created += event["type"] == "response.created"
        if created > 1:
            break
        stream.feed(event)
    return stream.close()


def _body(name: str) -> tuple[dict[str, Any], Turn]:
    body = json.loads((RECORDED / f"responses-{name}.json").read_text())
    return body, decode_responses_response(body)


def _next_input(turn: Turn, *results: ToolResult) -> list[dict[str, Any]]:
    instructions, items = to_responses_input([UserMessage("go"), turn.message, *results])
    assert instructions is None
    assert items[0] == {"type": "message", "role": "user", "content": "go"}
    # Whatever goes out decodes back into the same history (items -> neutral -> items).
    assert to_responses_input(from_responses_input(None, items))[1] == items
    return items[1:]


def test_encrypted_reasoning_and_a_function_call() -> None:
    turn = _stream("reasoning-encrypted-content.1")
    (call,) = turn.tool_calls
    items = _next_input(turn, ToolResult(call.id, call.name, "19"))
    reasoning, function_call, output = items
    assert set(reasoning) == {"type", "id", "summary", "encrypted_content"}
    assert reasoning["type"] == "reasoning"
    assert reasoning["id"] == "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9"
    assert reasoning["encrypted_content"].startswith("gAAAAAB")
    assert [set(s) for s in reasoning["summary"]] == [{"type", "text"}]
    assert reasoning["summary"][0]["type"] == "summary_text"
    assert function_call == {
        "type": "function_call",
        "call_id": "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
        "name": "calculator",
        "arguments": '{"a":12,"b":7,"op":"add"}',
    }
    assert output == {
        "type": "function_call_output",
        "call_id": "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
        "output": "19",
    }


def test_custom_tool_call_and_its_output() -> None:
    turn = _stream("custom-tool.1")
    items = _next_input(turn, ToolResult("call_custom_sql_001", "write_sql", "3 rows"))
    assert items == [
        {
            "type": "custom_tool_call",
            "call_id": "call_custom_sql_001",
            "name": "write_sql",
            "input": "SELECT * FROM users WHERE age > 25",
        },
        {"type": "custom_tool_call_output", "call_id": "call_custom_sql_001", "output": "3 rows"},
    ]


def test_a_custom_call_error_result_goes_back_as_a_custom_output() -> None:
    turn = _stream("custom-tool.1")
    result = ToolResult("call_custom_sql_001", "write_sql", "Tool error: bad", ToolStatus.ERROR)
    items = _next_input(turn, result)
    assert items[1]["type"] == "custom_tool_call_output"


def test_mcp_approval_request_and_response() -> None:
    turn = _stream("mcp-tool-approval.1")
    (request,) = mcp_approval_requests(turn)
    assert request.id == "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe"
    assert request.server_label == "zip1" and request.arguments.startswith("{")
    turn.message.parts.append(approval_response(request, True))
    items = _next_input(turn)
    kinds = [item["type"] for item in items]
    assert kinds == ["mcp_list_tools", "reasoning", "mcp_approval_request", "mcp_approval_response"]
    assert items[2] == request.data  # the request as received
    assert set(items[2]) >= {"type", "id", "server_label", "name", "arguments"}
    assert items[3] == {
        "type": "mcp_approval_response",
        "approval_request_id": request.id,
        "approve": True,
    }


def test_an_unanswered_approval_request_is_denied_never_left_open() -> None:
    turn = _stream("mcp-tool-approval.1")
    (request,) = mcp_approval_requests(turn, pending=True)
    _, items = to_responses_input([UserMessage("go"), turn.message])
    assert items[-2] == request.data
    assert items[-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": request.id,
        "approve": False,
        "reason": UNANSWERED_APPROVAL_REASON,
    }


def test_a_denial_carries_its_reason() -> None:
    turn = _stream("mcp-tool-approval.1")
    (request,) = mcp_approval_requests(turn)
    turn.message.parts.append(approval_response(request, False, "not on weekends"))
    items = _next_input(turn)
    assert items[-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": request.id,
        "approve": False,
        "reason": "not on weekends",
    }
    assert mcp_approval_requests(turn, pending=True) == []


# Built-in tool items: the fields the API reference requires of each as an input item.
REQUIRED = {
    "web_search_call": {"id", "status", "type"},
    "file_search_call": {"id", "queries", "status", "type"},
    "code_interpreter_call": {"id", "code", "container_id", "outputs", "status", "type"},
    "image_generation_call": {"id", "result", "status", "type"},
    "mcp_call": {"id", "arguments", "name", "server_label", "type"},
    "mcp_list_tools": {"id", "server_label", "tools", "type"},
    "local_shell_call": {"id", "action", "call_id", "status", "type"},
    "shell_call": {"action", "call_id", "type"},
    "apply_patch_call": {"call_id", "operation", "status", "type"},
}


@pytest.mark.parametrize(
    "name",
    [
        "web-search-tool.1",
        "file-search-tool.1",
        "code-interpreter-tool.1",
        "image-generation-tool.1",
        "mcp-tool.1",
        "local-shell-tool.1",
        "shell-tool.1",
        "apply-patch-tool.1",
    ],
)
def test_built_in_items_go_back_as_recorded(name: str) -> None:
    body, turn = _body(name)
    items = _next_input(turn)
    kept = [item for item in items if item["type"] in REQUIRED]
    recorded = [item for item in body["output"] if item["type"] in REQUIRED]
    assert kept and kept == recorded  # verbatim, ids exactly as recorded, in order
    for item in kept:
        assert set(item) >= REQUIRED[item["type"]], item["type"]
    # In their place among the other items: the same order as the output; a call the
    # client runs (shell, apply_patch) followed by its one output.
    order = [o["type"] for o in body["output"] if o["type"] != "message" or _has_text(o)]
    order = [k for kind in order for k in (kind, CLIENT_CALL_OUTPUTS.get(kind)) if k]
    assert [item["type"] for item in items] == order


@pytest.mark.parametrize("name", ["local-shell-tool.1", "shell-tool.1", "apply-patch-tool.1"])
def test_a_client_call_nobody_answered_gets_one_not_executed_output(name: str) -> None:
    _, turn = _body(name)
    items = _next_input(turn)
    (call,) = [item for item in items if item["type"] in CLIENT_CALL_OUTPUTS]
    (output,) = [item for item in items if item["type"] == CLIENT_CALL_OUTPUTS[call["type"]]]
    assert items.index(output) == items.index(call) + 1
    text = f"{NOT_EXECUTED}: {UNANSWERED_CALL_REASON}"
    # The documented input shapes of the three outputs.
    if call["type"] == "apply_patch_call":
        expected: dict[str, Any] = {"status": "failed", "output": text}
    elif call["type"] == "shell_call":
        run = {"stdout": "", "stderr": text, "outcome": {"type": "exit", "exit_code": 126}}
        expected = {"output": [run] * len(call["action"]["commands"])}
    else:
        expected = {"output": text}
    assert output == {"type": output["type"], "call_id": call["call_id"], **expected}
    # An answered call is not answered again; the answer goes back as it was given.
    answered = {"type": output["type"], "call_id": call["call_id"], "output": "done"}
    if call["type"] == "apply_patch_call":
        answered["status"] = "completed"
    elif call["type"] == "shell_call":
        exited = {"type": "exit", "exit_code": 0}
        answered["output"] = [{"stdout": "done", "stderr": "", "outcome": exited}]
    turn.message.parts.append(ProviderPart("openai_responses", answered["type"], answered))
    again = _next_input(turn)
    assert [i for i in again if i["type"] == answered["type"]] == [answered]


def _has_text(message: dict[str, Any]) -> bool:
    return any(part.get("text") for part in message.get("content", []))


def test_parts_of_another_provider_are_left_out() -> None:
    _, turn = _body("web-search-tool.1")
    turn.message.parts.append(ProviderPart("anthropic", "server_tool_use", {"type": "x"}))
    items = _next_input(turn)
    assert all(item.get("type") != "x" for item in items)


def test_a_history_with_kept_items_passes_the_check() -> None:
    """Before every request the agent checks the history: kept items are allowed."""
    from toolwire.history import check_history

    _, turn = _body("web-search-tool.1")
    check_history([UserMessage("go"), turn.message])
