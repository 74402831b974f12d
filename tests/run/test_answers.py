"""The items a turn owes an answer, answered through the provider-neutral hook.

The loop knows no Responses item: ``toolwire.history.owed`` lists what an assistant
message still owes, ``toolwire.run.answers`` asks the handlers. These tests hold the
permission rules the hook keeps: one answer per item, a refusal without a handler or
when it raises, no built-in call run in a forced final turn, approvals still asked.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from toolwire.errors import CallerError
from toolwire.history.owed import MCP_APPROVAL, owed_answers
from toolwire.history.responses_builtin import BuiltinCall, ShellOutput
from toolwire.history.responses_mcp import NO_APPROVER_REASON, MCPApprovalRequest
from toolwire.messages import AssistantMessage, ProviderPart
from toolwire.run.answers import answer_owed, owed_handlers
from toolwire.wire.openai_responses import PROVIDER

APPROVAL = {
    "type": "mcp_approval_request",
    "id": "mcpr_1",
    "server_label": "deepwiki",
    "name": "ask_question",
    "arguments": '{"q": "x"}',
}
SHELL = {
    "type": "shell_call",
    "call_id": "call_1",
    "action": {"commands": ["ls"], "timeout_ms": 1000},
}


def _message() -> AssistantMessage:
    return AssistantMessage(
        [
            ProviderPart(PROVIDER, APPROVAL["type"], dict(APPROVAL)),
            ProviderPart(PROVIDER, SHELL["type"], dict(SHELL)),
        ]
    )


def _answers(message: AssistantMessage) -> dict[str, dict[str, Any]]:
    parts = [p for p in message.parts if isinstance(p, ProviderPart)]
    return {p.type: p.data for p in parts if p.type.endswith(("_output", "_response"))}


def test_each_owed_item_is_listed_once_and_not_again_once_answered() -> None:
    message = _message()
    assert [o.kind for o in owed_answers(message)] == [MCP_APPROVAL, "shell"]
    asyncio.run(answer_owed(message, {}))
    assert owed_answers(message) == []
    asyncio.run(answer_owed(message, {}))  # nothing owed: nothing appended
    assert len(message.parts) == 4


def test_without_handlers_approvals_are_denied_and_calls_not_executed() -> None:
    message = _message()
    answered = asyncio.run(answer_owed(message, {}))
    assert [p.type for p in answered] == ["mcp_approval_response", "shell_call_output"]
    answers = _answers(message)
    assert answers["mcp_approval_response"] == {
        "type": "mcp_approval_response",
        "approval_request_id": "mcpr_1",
        "approve": False,
        "reason": NO_APPROVER_REASON,
    }
    (run,) = answers["shell_call_output"]["output"]
    assert run["outcome"] == {"type": "exit", "exit_code": 126}


def test_handlers_answer_and_a_sync_one_runs_off_the_event_loop() -> None:
    seen: dict[str, Any] = {}

    def shell(call: BuiltinCall) -> ShellOutput:
        seen["thread"] = threading.current_thread()
        return ShellOutput(stdout="a\n")

    async def approve(request: MCPApprovalRequest) -> bool:
        seen["request"] = request
        return True

    message = _message()
    asyncio.run(answer_owed(message, owed_handlers({"shell": shell}, approve)))
    assert seen["thread"] is not threading.main_thread()
    assert seen["request"].name == "ask_question"
    answers = _answers(message)
    assert answers["mcp_approval_response"]["approve"] is True
    (run,) = answers["shell_call_output"]["output"]
    assert run == {"stdout": "a\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}


def test_a_failing_or_wrong_handler_refuses_with_the_reason() -> None:
    def shell(call: BuiltinCall) -> Any:
        return 42  # not a ShellOutput

    def approve(request: MCPApprovalRequest) -> bool:
        raise RuntimeError("approver offline")

    message = _message()
    asyncio.run(answer_owed(message, owed_handlers({"shell": shell}, approve)))
    answers = _answers(message)
    denial = answers["mcp_approval_response"]
    assert denial["approve"] is False and "RuntimeError" in denial["reason"]
    (run,) = answers["shell_call_output"]["output"]
    assert "TypeError" in run["stderr"] and run["outcome"]["exit_code"] == 126


def test_a_final_turn_asks_approvals_but_runs_no_built_in_call() -> None:
    ran: list[str] = []

    def shell(call: BuiltinCall) -> str:
        ran.append("shell")
        return "ran"

    def approve(request: MCPApprovalRequest) -> str:
        ran.append("approve")
        return "not today"

    message = _message()
    asyncio.run(answer_owed(message, owed_handlers({"shell": shell}, approve), final=True))
    assert ran == ["approve"]
    answers = _answers(message)
    assert answers["mcp_approval_response"]["reason"] == "not today"
    (run,) = answers["shell_call_output"]["output"]
    assert run["outcome"]["exit_code"] == 126


@pytest.mark.parametrize(
    ("builtin", "approve", "match"),
    [
        ({"python": print}, None, "unknown kind"),
        ({"shell": "ls"}, None, "must be a function"),
        ([print], None, "dict of kind"),
        (None, "yes", "approve_mcp"),
    ],
)
def test_bad_handlers_are_caller_errors(builtin: Any, approve: Any, match: str) -> None:
    with pytest.raises(CallerError, match=match):
        owed_handlers(builtin, approve)
