"""Pausing for approval: a call the permission policy asks about waits outside the run.

``Agent(approve="pause")`` makes the approver answer :data:`~toolwire.run.gate.HOLD`
for every call the policy says to ask about. The executor then leaves that call without
a result, runs the rest of its batch, defers the later batches of the turn (so that
side effects never run out of call order), and the loop ends the round with a
:class:`~toolwire.run.agent.RunResult` whose ``paused`` is true and whose ``pending``
lists one :class:`PendingCall` per held call. The decision comes later, from any
process, through ``Agent.resume(run_id, approvals=...)`` (:mod:`toolwire.run.resuming`).

A resumed run hands its approvals to the gate through :data:`DECISIONS`, a context
variable set for the resumed run only: :class:`DecidedGate` answers a decided call
itself and asks the policy's gate about every other one (which may hold it again).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ..errors import CallerError
from ..tools.tool import Tool
from ..turn import ToolRequest
from .calls import TurnCall
from .gate import HOLD, Approval, CallGate, Hold

__all__ = [
    "DECISIONS",
    "DecidedGate",
    "PendingCall",
    "check_approval",
    "denial_reason",
    "hold_every_call",
    "pending_calls",
]

from types import MappingProxyType

DECISIONS: ContextVar[Mapping[str, Approval]] = ContextVar(
    "toolwire_decisions", default=MappingProxyType({})
)
"""The approvals of the resumed run in progress, by call id (empty otherwise)."""


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call that waits for approval in a paused run.

    Attributes:
        call_id: The provider's id of the call (the key of ``approvals=``).
        tool: The tool name.
        arguments: The parsed, validated input that would run.
        raw_arguments: The arguments text exactly as the model sent it.
        repaired: Whether JSON repair produced ``arguments``.
        index: The provider's index of the call in its turn.
    """

    call_id: str
    tool: str
    arguments: Any
    raw_arguments: str
    repaired: bool = False
    index: int = 0


def pending_calls(held: Sequence[TurnCall]) -> list[PendingCall]:
    """The :class:`PendingCall` of each held call, in call order."""
    return [
        PendingCall(
            c.request.id,
            c.request.name,
            c.validation.input,
            c.request.raw_arguments,
            c.request.repaired or c.validation.repaired,
            c.index,
        )
        for c in held
    ]


async def hold_every_call(request: ToolRequest) -> Approval:
    """The approver of ``approve="pause"``: every call it is asked about waits."""
    return HOLD


def check_approval(call_id: str, answer: object) -> Approval:
    """One entry of ``approvals=``: ``True``, ``False`` or a reason string.

    Raises:
        CallerError: Anything else.
    """
    if isinstance(answer, (bool, str)):
        return answer
    raise CallerError(
        f"approvals[{call_id!r}] is {answer!r}",
        hint="answer True (run it), False (deny it) or a reason string (deny it, with that reason)",
    )


def denial_reason(answer: Approval, tool: str) -> str | None:
    """``None`` for an approval, else the reason the model reads for a denial."""
    if answer is True:
        return None
    if isinstance(answer, str) and answer.strip():
        return answer.strip()
    return f"the call to `{tool}` was not approved"


class DecidedGate:
    """A gate that answers the calls decided in :data:`DECISIONS`, and asks ``inner``
    about the others."""

    def __init__(self, inner: CallGate) -> None:
        self.inner = inner

    async def __call__(self, request: ToolRequest, tool: Tool) -> str | Hold | None:
        """``None`` to run, a denial reason, or :data:`~toolwire.run.gate.HOLD`."""
        decided = DECISIONS.get()
        if request.id in decided:
            return denial_reason(decided[request.id], tool.name)
        return await self.inner(request, tool)
