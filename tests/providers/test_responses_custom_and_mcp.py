"""Whole runs over loopback HTTP with the Responses provider: a custom (free-form)
tool call executed and answered, and MCP approval requests answered in the next
request. The model's side is replayed from recordings (tests/wire/fixtures/recorded,
sources and licences in its README); the agent, the provider and the HTTP client are
the real ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, MCPApprovalRequest, tool
from toolwire.history.responses_mcp import NO_APPROVER_REASON
from toolwire.providers.openai_responses import OpenAIResponsesModel

from .faultserver import FaultServer, sse

RECORDED = Path(__file__).parents[1] / "wire" / "fixtures" / "recorded"


def _sse(name: str) -> bytes:
    """The first stream of a recording as SSE bytes."""
    out = []
    created = 0
    for line in filter(None, (RECORDED / f"responses-{name}.chunks.txt").read_text().splitlines()):
        event = json.loads(line)
        created += event["type"] == "response.created"
        if created > 1:
            break
        out.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
    return "".join(out).encode()


def _answer(text: str) -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []},
        },
        {"type": "response.output_text.delta", "output_index": 0, "delta": text},
        {"type": "response.completed", "response": {"status": "completed"}},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


SQL = {"type": "grammar", "syntax": "regex", "definition": "SELECT .+"}
queries: list[str] = []


@tool(freeform=SQL)
def write_sql(query: str) -> str:
    """Write a SQL SELECT query to answer the user question."""
    queries.append(query)
    return "3 rows"


def test_a_custom_tool_call_runs_once_and_is_answered(no_keys: None) -> None:
    queries.clear()
    with FaultServer(sse(_sse("custom-tool.1"), chunks=[7]), sse(_answer("Three."))) as server:
        model = OpenAIResponsesModel("gpt-5.2-codex", api_key="k", base_url=f"{server.url}/v1")
        result = Agent(model, [write_sql]).run_sync("Who is over 25?")
        first, second = (seen.body for seen in server.requests)
    assert result.output == "Three."
    assert queries == ["SELECT * FROM users WHERE age > 25"]
    assert first["tools"][0] == {
        "type": "custom",
        "name": "write_sql",
        "description": "Write a SQL SELECT query to answer the user question.",
        "format": SQL,
    }
    assert [t["name"] for t in first["tools"]] == ["write_sql", "read_result"]
    assert second["input"][1:] == [
        {
            "type": "custom_tool_call",
            "call_id": "call_custom_sql_001",
            "name": "write_sql",
            "input": "SELECT * FROM users WHERE age > 25",
        },
        {"type": "custom_tool_call_output", "call_id": "call_custom_sql_001", "output": "3 rows"},
    ]


def test_a_custom_call_for_a_json_tool_gets_feedback_not_a_crash(no_keys: None) -> None:
    @tool(name="write_sql")
    def json_sql(query: str) -> str:
        """Takes JSON."""
        raise AssertionError("must not run")

    with FaultServer(sse(_sse("custom-tool.1")), sse(_answer("Sorry."))) as server:
        model = OpenAIResponsesModel("gpt-5.2-codex", api_key="k", base_url=f"{server.url}/v1")
        result = Agent(model, [json_sql]).run_sync("Who is over 25?")
        second = server.requests[1].body
    assert result.output == "Sorry."
    (output,) = [item for item in second["input"] if item["type"] == "custom_tool_call_output"]
    assert output["call_id"] == "call_custom_sql_001"
    assert "called as a custom tool" in output["output"]


def _approval_run(**agent_options: Any) -> dict[str, Any]:
    """Run the recorded approval turn, then an answer; return the second request's body."""
    with FaultServer(sse(_sse("mcp-tool-approval.1")), sse(_sse("mcp-tool-approval.2"))) as server:
        model = OpenAIResponsesModel("gpt-5-mini", api_key="k", base_url=f"{server.url}/v1")
        result = Agent(model, **agent_options).run_sync("Shorten https://ai-sdk.dev")
        assert len(server.requests) == 2
        assert result.output  # the recorded answer after the approval
        body: dict[str, Any] = server.requests[1].body
    return body


def _response_item(body: dict[str, Any]) -> dict[str, Any]:
    (item,) = [i for i in body["input"] if i["type"] == "mcp_approval_response"]
    (request,) = [i for i in body["input"] if i["type"] == "mcp_approval_request"]
    assert item["approval_request_id"] == request["id"]
    return item


def test_without_an_approver_the_request_is_denied_with_a_reason(no_keys: None) -> None:
    item = _response_item(_approval_run())
    assert item["approve"] is False and item["reason"] == NO_APPROVER_REASON


def test_a_sync_approver_approves(no_keys: None) -> None:
    asked: list[MCPApprovalRequest] = []

    def approve(request: MCPApprovalRequest) -> bool:
        asked.append(request)
        return True

    item = _response_item(_approval_run(approve_mcp=approve))
    assert item == {
        "type": "mcp_approval_response",
        "approval_request_id": asked[0].id,
        "approve": True,
    }
    assert asked[0].server_label == "zip1" and asked[0].name


def test_an_async_approver_denies_with_its_reason(no_keys: None) -> None:
    async def approve(request: MCPApprovalRequest) -> str:
        return f"{request.name} is not allowed today"

    item = _response_item(_approval_run(approve_mcp=approve))
    assert item["approve"] is False and item["reason"].endswith("is not allowed today")


@pytest.mark.parametrize("answer", [None, 1, "", "yes"])
def test_anything_but_true_denies(no_keys: None, answer: object) -> None:
    item = _response_item(_approval_run(approve_mcp=lambda request: answer))
    assert item["approve"] is False
    if answer == "yes":  # a string is a denial reason, whatever it says
        assert item["reason"] == "yes"
    else:
        assert item["reason"] == "the MCP tool call `create_short_url` was not approved"


def test_a_failing_approver_denies(no_keys: None) -> None:
    def approve(request: MCPApprovalRequest) -> bool:
        raise RuntimeError("the approval service is down")

    item = _response_item(_approval_run(approve_mcp=approve))
    assert item["approve"] is False and "failed (RuntimeError)" in item["reason"]


def test_naming_a_free_form_tool_as_tool_choice(no_keys: None) -> None:
    from toolwire.providers.openai_chat import OpenAIChatModel
    from toolwire.run.model import ModelRequest

    request = ModelRequest([], tools=[write_sql.definition()], tool_choice="write_sql")
    responses = OpenAIResponsesModel("gpt-5", api_key="k").build_request(request).body
    assert responses["tool_choice"] == {"type": "custom", "name": "write_sql"}
    chat = OpenAIChatModel("gpt-5", api_key="k").build_request(request).body
    assert chat["tool_choice"] == {"type": "custom", "custom": {"name": "write_sql"}}
    assert chat["tools"] == [
        {
            "type": "custom",
            "custom": {
                "name": "write_sql",
                "description": write_sql.description,
                "format": write_sql.input_format,
            },
        }
    ]
