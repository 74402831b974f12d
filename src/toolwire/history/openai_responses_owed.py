"""What a Responses request owes: answers to the items nobody answered.

Every ``mcp_approval_request`` item is answered in the same request: a history without
an ``mcp_approval_response`` for it (a part the agent adds, see
:mod:`toolwire.history.responses_mcp`) gets one that denies it, with a reason, right after
it (``answer_approvals``), so a request never leaves an approval unanswered and never
approves by default. In the same way every ``local_shell_call``, ``shell_call`` and
``apply_patch_call`` (run by the client, see :mod:`toolwire.history.responses_builtin`) without
its output item gets one that says it was not executed (``answer_client_calls``). An
output is matched to its call by ``call_id`` (``keyed_by_call_id``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..messages import (
    TOOL_ERROR_PREFIX,
)

__all__ = [
    "CLIENT_CALL_OUTPUTS",
    "NOT_EXECUTED",
    "UNANSWERED_APPROVAL_REASON",
    "UNANSWERED_CALL_REASON",
    "answer_approvals",
    "answer_client_calls",
    "keyed_by_call_id",
    "not_executed_item",
]

JSONDict = dict[str, Any]


def answer_approvals(items: list[JSONDict]) -> list[JSONDict]:
    """``items`` with a denying ``mcp_approval_response`` after each unanswered request.

    An ``mcp_approval_request`` that no ``mcp_approval_response`` of ``items`` answers
    would be left hanging; toolwire never approves on anyone's behalf, so it denies it,
    saying why. ``items`` itself is returned when every request is answered.
    """
    answered = {
        str(item.get("approval_request_id"))
        for item in items
        if item.get("type") == "mcp_approval_response"
    }
    pending = [
        item
        for item in items
        if item.get("type") == "mcp_approval_request" and str(item.get("id")) not in answered
    ]
    if not pending:
        return items
    out: list[JSONDict] = []
    for item in items:
        out.append(item)
        if any(item is request for request in pending):
            out.append(
                {
                    "type": "mcp_approval_response",
                    "approval_request_id": item.get("id"),
                    "approve": False,
                    "reason": UNANSWERED_APPROVAL_REASON,
                }
            )
    return out


CLIENT_CALL_OUTPUTS = {
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
}
"""Client-executed built-in call item -> the type of the output item that answers it."""

NOT_EXECUTED = f"{TOOL_ERROR_PREFIX}toolwire did not execute this call"
"""The start of the text of every output that answers a call nobody executed."""

UNANSWERED_CALL_REASON = "nothing answered it before the next request"
"""Why the encoder answers a shell or apply_patch call itself (see ``answer_client_calls``)."""

_CANNOT_EXECUTE = 126  # a shell's exit status for a command that could not be run


def answer_client_calls(items: list[JSONDict]) -> list[JSONDict]:
    """``items`` with a not-executed output after each unanswered shell or patch call.

    A ``local_shell_call``, ``shell_call`` or ``apply_patch_call`` is run by the client;
    the API rejects a request that carries one without its output. One that no output
    item of ``items`` answers (by ``call_id``) gets :func:`not_executed_item` right
    after it. ``items`` itself is returned when every call is answered.
    """
    outputs = set(CLIENT_CALL_OUTPUTS.values())
    answered = {str(item.get("call_id")) for item in items if _kind(item) in outputs}
    if not any(
        _kind(item) in CLIENT_CALL_OUTPUTS and str(item.get("call_id")) not in answered
        for item in items
    ):
        return items
    out: list[JSONDict] = []
    for item in items:
        out.append(item)
        if _kind(item) in CLIENT_CALL_OUTPUTS and str(item.get("call_id")) not in answered:
            answered.add(str(item.get("call_id")))  # one output per call, even if repeated
            out.append(not_executed_item(item, UNANSWERED_CALL_REASON))
    return out


def _kind(item: Mapping[str, Any]) -> str:
    """An item's ``type`` ("" when it is not a string: a kept item may hold anything)."""
    kind = item.get("type")
    return kind if isinstance(kind, str) else ""


def not_executed_item(call: Mapping[str, Any], why: str) -> JSONDict:
    """The output item that answers a shell or apply_patch ``call`` item as not run.

    ``apply_patch_call_output`` has status ``failed``; a ``shell_call_output`` has one
    entry per command with exit code 126 ("cannot execute") and the text on stderr; a
    ``local_shell_call_output`` has the text as its output. The text is
    :data:`NOT_EXECUTED` followed by ``why``.
    """
    kind = str(call.get("type"))
    answer: JSONDict = {"type": CLIENT_CALL_OUTPUTS[kind], "call_id": call.get("call_id")}
    text = f"{NOT_EXECUTED}: {why}"
    if kind == "apply_patch_call":
        answer.update(status="failed", output=text)
    elif kind == "shell_call":
        action = call.get("action")
        commands = action.get("commands") if isinstance(action, Mapping) else None
        count = len(commands) if isinstance(commands, list) and commands else 1
        outcome = {"type": "exit", "exit_code": _CANNOT_EXECUTE}
        answer["output"] = [
            {"stdout": "", "stderr": text, "outcome": dict(outcome)} for _ in range(count)
        ]
    else:
        answer["output"] = text
    return answer


UNANSWERED_APPROVAL_REASON = (
    "no one approved this MCP tool call (toolwire denies approval requests nobody answered)"
)
"""The ``reason`` of the denial sent for an approval request nobody answered."""


def keyed_by_call_id(item: JSONDict) -> JSONDict:
    """A ``local_shell_call_output`` that names its call ``id`` sent with ``call_id``.

    The API matches an output to its call by ``call_id``: the OpenAPI spec's
    ``LocalShellToolCallOutput`` requires it (openai-python, ``api_reference/
    openapi.transformed.yml``), and with ``id`` alone the API answers 400 "No tool output
    found for local shell call". openai-python's ``LocalShellCallOutput`` type, made
    from the spec's properties, has only ``id`` ("the unique ID of the local shell tool
    call"), so an item written to that type carries the call's id there: it moves to
    ``call_id``. An item with a ``call_id`` goes back as it is.
    """
    if item.get("type") != "local_shell_call_output" or "call_id" in item or "id" not in item:
        return item
    return {("call_id" if key == "id" else key): value for key, value in item.items()}
