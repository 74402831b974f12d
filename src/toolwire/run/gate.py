"""The executor's hook for permissions: a gate every valid call passes before it runs.

``run/`` defines only the shapes; the policy and the approval flow live in
:mod:`toolwire.safety`, a layer above (``Permissions.gate(approve)`` builds a
:class:`CallGate`). A gate answers ``None`` (run the call) or a reason (do not run it:
the call gets a ``denied`` result carrying that reason, which the model sees).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeAlias

from ..tools.tool import Tool
from ..turn import ToolRequest

__all__ = ["Approval", "Approver", "CallGate", "PermissionPolicy"]

Approval: TypeAlias = bool | str
"""An approver's answer: ``True`` allow, ``False`` deny, a string deny with that reason."""

Approver: TypeAlias = Callable[[ToolRequest], Approval | Awaitable[Approval]]
"""Asked about a call that needs approval; sync or async."""


class CallGate(Protocol):
    """Decides whether one validated call may run."""

    async def __call__(self, request: ToolRequest, tool: Tool) -> str | None:
        """``None`` to run the call, or the reason it is denied."""
        ...


class PermissionPolicy(Protocol):
    """A permission policy the agent can turn into a gate (``toolwire.Permissions``)."""

    def gate(self, approve: Approver | None) -> CallGate:
        """The gate that applies this policy, asking ``approve`` where it says ask."""
        ...
