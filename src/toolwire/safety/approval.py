"""The approval flow: apply a :class:`~toolwire.safety.Permissions` policy to each call.

:class:`ApprovalGate` is the executor's gate (:mod:`toolwire.run.gate`): for each
valid call it asks the policy, and where the policy says ``"ask"`` it asks the
approver. The gate runs inside the call's own task, so a call waiting for approval
never holds up the calls of its batch that need none. A sync approver runs in a
daemon thread of its own, so a prompt waiting on a terminal blocks neither the event
loop nor the interpreter's exit.

The approver gets the :class:`~toolwire.turn.ToolRequest` with the *validated*
input — exactly what the tool will run with; where repair recovered malformed JSON,
``repaired`` is set and ``raw_arguments`` keeps what the model sent — and answers
``True`` (run it), ``False`` (deny) or a string (deny, with that reason for the
model). Anything else — ``None`` from a forgotten ``return``, an exception, a
``CancelledError`` (a dialog's future cancelled) while the run itself is not being
cancelled — denies: a broken approval must not let a call through, nor end the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from typing import TYPE_CHECKING, Any

from ..run.gate import HOLD, Hold

if TYPE_CHECKING:
    from ..run.gate import Approval, Approver
    from ..tools.tool import Tool
    from ..turn import ToolRequest
    from .permissions import Permissions

__all__ = ["ApprovalGate", "approval_reason"]


class ApprovalGate:
    """Decides, per call, whether it may run (see the module docstring).

    Args:
        permissions: The policy.
        approve: Asked about calls the policy says to ask about (``None``: deny them).
    """

    def __init__(self, permissions: Permissions, approve: Approver | None) -> None:
        self.permissions = permissions
        self.approve = approve

    async def __call__(self, request: ToolRequest, tool: Tool) -> str | Hold | None:
        """``None`` when the call may run, :data:`~toolwire.run.gate.HOLD` when the
        approver defers the decision (a paused run), else the reason it is denied."""
        decision = self.permissions.decide_tool(tool)
        if decision == "allow":
            return None
        if decision == "deny":
            return f"the permission policy does not allow `{tool.name}`"
        if self.approve is None:
            return (
                f"`{tool.name}` requires approval and no approver is configured, so the "
                "call was refused"
            )
        # The approver runs in a task of its own: a CancelledError out of it (a dialog's
        # future cancelled) is then told apart from the cancellation of this call's
        # task (the run stopping), on every Python version.
        asking = asyncio.ensure_future(_answer(self.approve, request))
        try:
            await asyncio.wait({asking})
        except asyncio.CancelledError:
            asking.cancel()
            raise
        if asking.cancelled():
            return f"the approval of `{tool.name}` was cancelled, so the call was refused"
        answer = asking.result()
        if isinstance(answer, (KeyboardInterrupt, SystemExit)):
            raise answer  # the executor's to handle, as if raised here
        if isinstance(answer, Exception):
            return (
                f"the approval of `{tool.name}` failed ({type(answer).__name__}), so it was refused"
            )
        return approval_reason(answer, tool.name)


def approval_reason(answer: object, name: str) -> str | Hold | None:
    """An approver's answer as a gate answer: ``None`` to run, :data:`HOLD` to decide
    later, or the denial reason."""
    if answer is True:
        return None
    if answer is HOLD:
        return HOLD
    if answer is False:
        return f"the user did not approve this call to `{name}`"
    if isinstance(answer, str):
        return answer.strip() or f"the user did not approve this call to `{name}`"
    return (
        f"the approver answered {type(answer).__name__} instead of True, False or a reason, "
        f"so the call to `{name}` was refused"
    )


async def _answer(approve: Approver, request: ToolRequest) -> object:
    """The approver's answer, or what it raised (a task lets no exception out: a
    ``KeyboardInterrupt`` would otherwise stop the event loop itself)."""
    try:
        return await _ask(approve, request)
    except (Exception, KeyboardInterrupt, SystemExit) as exc:
        return exc


async def _ask(approve: Approver, request: ToolRequest) -> Approval:
    if inspect.iscoroutinefunction(approve) or inspect.iscoroutinefunction(
        getattr(approve, "__call__", None)  # noqa: B004 - an object with an async __call__
    ):
        return await approve(request)  # type: ignore[no-any-return,misc]
    answer = await _in_daemon_thread(approve, request)
    if inspect.isawaitable(answer):  # a sync function returning an awaitable
        answer = await answer
    return answer  # type: ignore[no-any-return]


async def _in_daemon_thread(function: Any, argument: Any) -> Any:
    """Call ``function(argument)`` in a daemon thread; an abandoned wait blocks no exit."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def deliver(ok: bool, value: Any) -> None:
        if future.done():
            return  # the waiter was cancelled
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def work() -> None:
        try:
            outcome = (True, function(argument))
        except BaseException as exc:  # handed to the waiter, raised there
            outcome = (False, exc)
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(deliver, *outcome)

    threading.Thread(target=work, name="toolwire-approval", daemon=True).start()
    return await future
