"""The executor's hook for permissions: a gate every valid call passes before it runs.

``run/`` defines only the shapes; the policy and the approval flow live in
:mod:`toolwire.safety`, a layer above (``Permissions.gate(approve)`` builds a
:class:`CallGate`). A gate answers ``None`` (run the call) or a reason (do not run it:
the call gets a ``denied`` result carrying that reason, which the model sees), or
:data:`HOLD`: the call waits for a decision made later, outside the run
(``Agent(approve="pause")``, :mod:`toolwire.run.pause`): it gets no result in this run,
the calls of later batches wait with it, and the run pauses at the end of the round.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeAlias

from ..tools.tool import Tool
from ..turn import ToolRequest

__all__ = ["HOLD", "Approval", "Approver", "CallGate", "Hold", "PermissionPolicy"]


class Hold:
    """The type of :data:`HOLD` (one instance)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "HOLD"

    def __reduce__(self) -> str:
        return "HOLD"  # unpickled as this module's one instance (Ray relays approvals)


HOLD = Hold()
"""A gate's (or an approver's) answer: decide later; the run pauses for it."""

Approval: TypeAlias = bool | str | Hold
"""An approver's answer: ``True`` allow, ``False`` deny, a string deny with that reason
(:data:`HOLD`: pause the run for a later decision)."""

Approver: TypeAlias = Callable[[ToolRequest], Approval | Awaitable[Approval]]
"""Asked about a call that needs approval; sync or async."""


class CallGate(Protocol):
    """Decides whether one validated call may run."""

    async def __call__(self, request: ToolRequest, tool: Tool) -> str | Hold | None:
        """``None`` to run the call, the reason it is denied, or :data:`HOLD`."""
        ...


class PermissionPolicy(Protocol):
    """A permission policy the agent can turn into a gate (``toolwire.Permissions``)."""

    def gate(self, approve: Approver | None) -> CallGate:
        """The gate that applies this policy, asking ``approve`` where it says ask."""
        ...
