"""The items a turn owes an answer: the hook through which the loop answers them.

Some providers return items that are neither text nor a toolwire tool call, but that
the *client* must answer in the next request: the OpenAI Responses API's MCP approval
requests (:mod:`.responses_mcp`) and its client-executed built-in calls, shell and
apply_patch (:mod:`.responses_builtin`). The agent loop knows none of their shapes: it
asks :func:`owed_answers` for what an assistant message still owes, hands each
:class:`OwedAnswer`'s ``subject`` to the handler registered for its ``kind``, and
appends the part that ``answer`` (or ``refuse``) writes to the same message, so that
the provider's encoder sends item and answer in order. A provider with such items adds
its finder to :data:`_FINDERS`; nothing in ``run/`` changes.

Kinds and the handler that answers each (``Agent`` keywords):

=================  ==========================================  =========================
kind               subject                                     handler
=================  ==========================================  =========================
``mcp_approval``   :class:`.responses_mcp.MCPApprovalRequest`  ``approve_mcp``
``shell``,         :class:`.responses_builtin.BuiltinCall`     ``builtin_handlers[kind]``
``local_shell``,
``apply_patch``
=================  ==========================================  =========================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..messages import IS_PROVIDER_PART, AssistantMessage, ProviderPart
from .responses_builtin import BUILTIN_KINDS, builtin_answer, builtin_calls, builtin_refusal
from .responses_mcp import (
    MCPApprovalRequest,
    approval_answer,
    approval_refusal,
    mcp_approval_requests,
)

__all__ = ["BUILTIN_HANDLER_KINDS", "MCP_APPROVAL", "OwedAnswer", "mcp_owed", "owed_answers"]

MCP_APPROVAL = "mcp_approval"
"""The kind of an MCP approval request (answered by ``approve_mcp``)."""

BUILTIN_HANDLER_KINDS: tuple[str, ...] = tuple(sorted(set(BUILTIN_KINDS.values())))
"""The kinds ``Agent(builtin_handlers=...)`` may name."""


@dataclass(frozen=True, slots=True)
class OwedAnswer:
    """One item of an assistant message that the next request must answer.

    Attributes:
        kind: Which handler answers it (see the module's table).
        subject: What that handler is given.
        answer: The answer part for the handler's return value (never raises: a value
            the handler should not have returned is answered as a refusal).
        refuse: The answer part when there is no handler (``None``) or it raised.
        ask_when_final: Whether a run's forced final turn still asks the handler (an
            approval does; a built-in call is not run, since nobody reads its output).
    """

    kind: str
    subject: Any
    answer: Callable[[Any], ProviderPart]
    refuse: Callable[[BaseException | None], ProviderPart]
    ask_when_final: bool = False


def mcp_owed(request: MCPApprovalRequest) -> OwedAnswer:
    """The owed answer to one MCP approval request."""
    return OwedAnswer(
        MCP_APPROVAL,
        request,
        partial(approval_answer, request),
        partial(approval_refusal, request),
        ask_when_final=True,
    )


def _approvals(message: AssistantMessage) -> list[OwedAnswer]:
    return [mcp_owed(r) for r in mcp_approval_requests(message, pending=True)]


def _builtin_calls(message: AssistantMessage) -> list[OwedAnswer]:
    return [
        OwedAnswer(call.kind, call, partial(builtin_answer, call), partial(builtin_refusal, call))
        for call in builtin_calls(message, pending=True)
    ]


# In the order their answers are appended (and sent): approvals, then built-in outputs.
_FINDERS: tuple[Callable[[AssistantMessage], list[OwedAnswer]], ...] = (
    _approvals,
    _builtin_calls,
)


def owed_answers(message: AssistantMessage) -> list[OwedAnswer]:
    """The items of ``message`` that no part of it answers yet, in answering order."""
    if not any(map(IS_PROVIDER_PART, message.parts)):
        return []  # only provider items owe answers: a turn of calls is passed over in C
    return [owed for find in _FINDERS for owed in find(message)]
