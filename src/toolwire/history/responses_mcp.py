"""Answers to the Responses API's MCP approval requests (remote MCP servers).

A Responses request may offer a remote MCP server (``{"type": "mcp", "server_label",
"server_url", "require_approval"}``). The provider runs that server's tools itself, but
when approval is required it stops first and returns an ``mcp_approval_request`` item
(``id``, ``server_label``, ``name``, ``arguments``). The next request must carry it
back followed by an ``mcp_approval_response`` item: ``{"type": "mcp_approval_response",
"approval_request_id", "approve", "reason"?}``.

The turn keeps the request as a :class:`~toolwire.messages.ProviderPart`. This module
is pure: it finds the requests still unanswered and writes their answers. The agent
reaches it only through :mod:`toolwire.history.owed` (the items a turn owes an
answer): it asks its ``approve_mcp`` callback about each request
(:class:`MCPApprovalRequest` in, ``True`` to approve, ``False`` or a reason string to
deny; sync or async) and appends the answer to the same assistant message as another
``ProviderPart``, so the Responses encoder sends request and answer in order. Without a callback, or when it raises or
answers anything else, the request is denied with a reason: a call on someone's MCP
server never runs unapproved. A history that reaches the encoder with a request still
unanswered gets a denial there too (``toolwire.history.openai_responses_owed``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..messages import IS_ASSISTANT, IS_PROVIDER_PART, AssistantMessage, Message, ProviderPart
from ..turn import Turn
from ..wire.openai_responses import PROVIDER

__all__ = [
    "NO_APPROVER_REASON",
    "MCPApprovalRequest",
    "MCPApprover",
    "approval_answer",
    "approval_refusal",
    "approval_response",
    "mcp_approval_requests",
]

NO_APPROVER_REASON = "no approver is configured for MCP tool calls, so the call was refused"
"""The denial's reason when the agent has no ``approve_mcp`` callback."""

REQUEST = "mcp_approval_request"
RESPONSE = "mcp_approval_response"


@dataclass(frozen=True, slots=True)
class MCPApprovalRequest:
    """One MCP tool call the provider wants approved before it runs it.

    Attributes:
        id: The approval request's id (the answer's ``approval_request_id``).
        server_label: The MCP server's label, as the request's tool declared it.
        name: The MCP tool to be called.
        arguments: Its arguments, as the JSON text the provider sent.
        data: The item exactly as received.
    """

    id: str
    server_label: str
    name: str
    arguments: str
    data: dict[str, Any] = field(repr=False, compare=False)


MCPApprover: TypeAlias = Callable[[MCPApprovalRequest], "bool | str | Awaitable[bool | str]"]
"""``approve_mcp``: ``True`` approves; ``False`` or a reason string denies."""


def responses_items(source: Turn | AssistantMessage | Sequence[Message]) -> list[ProviderPart]:
    """The Responses items kept as provider parts in the assistant messages of ``source``
    (a turn, a message or a history), in order."""
    messages: Sequence[Message]
    if isinstance(source, Turn):
        messages = [source.message]
    elif isinstance(source, AssistantMessage):
        messages = [source]
    else:
        messages = source
    # Asked of every turn (what it owes), whose parts are mostly tool calls: the parts
    # are passed over in C, and only a provider part is looked at in Python.
    return [
        part
        for message in filter(IS_ASSISTANT, messages)
        for part in filter(IS_PROVIDER_PART, message.parts)
        if part.provider == PROVIDER
    ]


def mcp_approval_requests(
    source: Turn | AssistantMessage | Sequence[Message], *, pending: bool = False
) -> list[MCPApprovalRequest]:
    """The MCP approval requests of a turn, a message or a history, in order.

    Args:
        source: Where to look.
        pending: Only those that no ``mcp_approval_response`` part in ``source``
            answers yet.
    """
    parts = responses_items(source)
    answered = {str(p.data.get("approval_request_id")) for p in parts if p.type == RESPONSE}
    found = [_request(p.data) for p in parts if p.type == REQUEST]
    return [r for r in found if not (pending and r.id in answered)]


def approval_response(
    request: MCPApprovalRequest, approve: bool, reason: str | None = None
) -> ProviderPart:
    """The ``mcp_approval_response`` item answering ``request``, as a part."""
    data: dict[str, Any] = {"type": RESPONSE, "approval_request_id": request.id, "approve": approve}
    if reason:
        data["reason"] = reason
    return ProviderPart(PROVIDER, RESPONSE, data)


def approval_answer(request: MCPApprovalRequest, value: object) -> ProviderPart:
    """The answer for what the approver returned: ``True`` approves; a non-empty string
    denies with that reason; anything else denies."""
    if value is True:
        return approval_response(request, True)
    if isinstance(value, str) and value:
        return approval_response(request, False, value)
    return approval_response(request, False, f"the MCP tool call `{request.name}` was not approved")


def approval_refusal(request: MCPApprovalRequest, error: BaseException | None) -> ProviderPart:
    """The denial when no approver is configured (``None``) or it failed with ``error``:
    a call on someone's MCP server never runs unapproved."""
    if error is None:
        return approval_response(request, False, NO_APPROVER_REASON)
    return approval_response(
        request,
        False,
        f"the approval of the MCP tool `{request.name}` failed ({type(error).__name__}), "
        "so the call was refused",
    )


def _request(data: dict[str, Any]) -> MCPApprovalRequest:
    """The request of an ``mcp_approval_request`` item (missing fields read as empty)."""
    return MCPApprovalRequest(
        str(data.get("id") or ""),
        str(data.get("server_label") or ""),
        str(data.get("name") or ""),
        str(data.get("arguments") or ""),
        data,
    )
