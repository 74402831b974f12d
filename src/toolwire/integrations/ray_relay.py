"""The driver's side of runs on Ray: observers and approvals stay in the driver process.

A run in a Ray worker has no audit log, no OpenTelemetry and no approval callback of
its own. Instead it talks to a :class:`Relay`, a small async Ray actor that the driver
creates for one ``run_many``:

- the worker's only run hook (:class:`RelayHook`) posts each observed event to the relay,
  numbered per run (an async actor does not promise to run posts in the order they were
  sent; the numbers restore it), and finally a ``done`` message once every post landed;
- the worker's approver (:class:`RemoteApprover`) posts the call's ``ToolRequest`` and
  waits on the relay for the answer;
- the driver takes what the relay collected (:meth:`Relay.take`, one blocking call that
  wakes at the first message) and hands it to :class:`DriverSide`, which feeds the
  events to the agent's hooks in order, as if the run were local, and asks the agent's
  ``approve`` callback — in the driver's process — for each approval;
- the same way, the worker's ``approve_mcp`` (:class:`RemoteMCPApprover`) posts each
  MCP approval request of a Responses turn and the driver asks the agent's
  ``approve_mcp`` about it: neither callback ever travels to a worker.

A run's ``ToolProgress`` events travel like its other events. A single call that
``RayBackend`` runs in a worker (the run itself in the driver) reports its progress
through a relay too, keyed by the call (:meth:`Relay.post_progress`,
:meth:`Relay.take_progress`): the driver turns each value into the call's
``ToolProgress`` on the run's stream, in order, before the call's result.

The run ids are the worker's: the run's ``RunResult.run_id`` and the driver's log agree.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import time
import uuid
import warnings
from typing import Any, Literal

from ..errors import ToolExecutionError
from ..history.owed import mcp_owed
from ..history.responses_mcp import MCPApprovalRequest
from ..messages import Usage
from ..run.answers import settle
from ..run.events import ObservedEvent, RunEnded, RunStarted
from ..run.observers import RunHook, RunListener
from ..turn import ToolRequest

__all__ = [
    "DriverSide",
    "Relay",
    "RelayHook",
    "RemoteApprover",
    "RemoteMCPApprover",
    "new_relay",
]

Message = tuple[Any, ...]


class Relay:
    """The Ray actor between the workers' runs and the driver (see the module docstring)."""

    def __init__(self) -> None:
        self._out: asyncio.Queue[Message] = asyncio.Queue()
        self._answers: dict[str, asyncio.Future[Any]] = {}
        self._progress: dict[str, list[Any]] = {}  # by call: numbered progress values
        self._arrived: dict[str, asyncio.Event] = {}

    async def post_progress(self, key: str, values: list[Any]) -> None:
        """Progress values of the call ``key`` (a worker's, numbered: ``(n, value)``)."""
        self._progress.setdefault(key, []).extend(values)
        arrived = self._arrived.get(key)
        if arrived is not None:
            arrived.set()

    async def take_progress(self, key: str, after: int, timeout: float) -> list[Any]:
        """The call's values from the ``after``-th on; waits up to ``timeout`` seconds
        for one. Nothing is removed until :meth:`forget`: a take whose answer was lost
        (the driver stopped waiting for it) loses no value."""
        values = self._progress.setdefault(key, [])
        if len(values) <= after and timeout > 0:
            arrived = self._arrived.setdefault(key, asyncio.Event())
            arrived.clear()
            try:
                await asyncio.wait_for(arrived.wait(), timeout)
            except asyncio.TimeoutError:
                return []
        return values[after:]

    async def forget(self, key: str) -> None:
        """The call ended: drop its values."""
        self._progress.pop(key, None)
        self._arrived.pop(key, None)

    async def post(self, messages: list[Message]) -> None:
        """A worker's messages for the driver."""
        for message in messages:
            self._out.put_nowait(message)

    async def take(self, timeout: float) -> list[Message]:
        """Everything collected so far; waits up to ``timeout`` seconds for the first."""
        if self._out.empty() and timeout > 0:
            try:
                return [await asyncio.wait_for(self._out.get(), timeout), *self._drain()]
            except asyncio.TimeoutError:
                return []
        return self._drain()

    def _drain(self) -> list[Message]:
        messages = []
        while not self._out.empty():
            messages.append(self._out.get_nowait())
        return messages

    async def ask(self, request: ToolRequest | MCPApprovalRequest) -> Any:
        """A worker's approval question (a tool call or an MCP approval request);
        returns the driver's answer."""
        key = uuid.uuid4().hex
        answer = asyncio.get_running_loop().create_future()
        self._answers[key] = answer
        self._out.put_nowait(("ask", key, request))
        try:
            return await answer
        finally:
            self._answers.pop(key, None)

    async def answer(self, key: str, value: Any) -> None:
        """The driver's answer to question ``key``."""
        waiter = self._answers.get(key)
        if waiter is not None and not waiter.done():
            waiter.set_result(value)


def new_relay(ray: Any) -> Any:
    """A relay actor for one fan-out (it ends when the driver drops its handle)."""
    return ray.remote(num_cpus=0)(Relay).remote()


class RemoteApprover:
    """The worker's approver: asks the driver (through the relay) and returns its answer."""

    def __init__(self, relay: Any) -> None:
        self.relay = relay

    async def __call__(self, request: ToolRequest) -> Any:
        """The driver's ``approve`` answer for ``request``."""
        return await self.relay.ask.remote(request)


class RemoteMCPApprover:
    """The worker's ``approve_mcp``: asks the driver's ``approve_mcp`` through the relay.

    Its answer is ``True`` or the denial's reason, as the driver decided it (see
    :func:`mcp_approval_answer`).
    """

    def __init__(self, relay: Any) -> None:
        self.relay = relay

    async def __call__(self, request: MCPApprovalRequest) -> Any:
        """The driver's answer about ``request``."""
        return await self.relay.ask.remote(request)


async def mcp_approval_answer(approve: Any, request: MCPApprovalRequest) -> bool | str:
    """What ``approve`` decides about ``request``: ``True``, or the denial's reason.

    The agent's own rules (:func:`toolwire.run.answers.settle`: anything but ``True``,
    or a failure, denies), applied in the driver on the worker's behalf.
    """
    answer = await settle(mcp_owed(request), approve)
    return True if answer.data.get("approve") is True else str(answer.data.get("reason"))


class RelayHook:
    """The worker's run hook: sends the run's events to the driver, numbered.

    Events emitted in one turn of the worker's event loop travel as one batch (one
    actor call), sent when the loop gets back to its other work.
    """

    def __init__(self, relay: Any, index: int) -> None:
        self.relay = relay
        self.index = index
        self.sent: list[Any] = []
        self._number = 0
        self._batch: list[Message] = []

    def begin(self, start: RunStarted) -> RunListener:
        """Send the start; the listener sends the rest."""
        self._add(start, None)
        self._flush()
        # Wait for this one: once the driver knows the run began, a worker that dies
        # later still ends the run in the driver's log (as an error).
        import ray

        ray.get(self.sent[-1])
        return self._event

    def _event(self, event: ObservedEvent) -> None:
        if isinstance(event, RunEnded) and event.error is not None:
            # Many exceptions do not pickle as they are: send their parts.
            from .ray_runs import _Failure

            self._add(dataclasses.replace(event, error=None), _Failure.of(event.error))
        else:
            self._add(event, None)

    def _add(self, event: Any, failure: Any) -> None:
        self._batch.append(("event", self.index, self._number, event, failure))
        self._number += 1
        if len(self._batch) == 1:
            # Without a running loop (the run is over) the finish sends it.
            with contextlib.suppress(RuntimeError):
                asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        if not batch:
            return
        try:
            self.sent.append(self.relay.post.remote(batch))
        except Exception:  # something in it does not pickle: send what does, say what not
            self.sent.append(self.relay.post.remote([_sendable(m) for m in batch]))

    def finish(self, ray: Any) -> None:
        """Send what is left, wait until all of it landed, then say so (as the task ends)."""
        self._flush()
        ray.get([*self.sent, self.relay.post.remote([("done", self.index)])])


def _sendable(message: Message) -> Message:
    """``message``, or in its place a note that its event could not be sent."""
    import ray

    pickler: Any = ray.cloudpickle  # untyped
    try:
        pickler.dumps(message)
    except Exception as exc:  # cloudpickle raises many kinds; all mean "cannot send"
        _, index, number, event, _failure = message
        lost = f"{type(event).__name__} ({type(exc).__name__}: {str(exc)[:200]})"
        return ("event", index, number, None, lost)
    return message


class DriverSide:
    """The driver's half: feeds events to the agent's hooks and answers approvals.

    Args:
        hooks: The agent's run hooks (audit log, OpenTelemetry).
        approve: The agent's approval callback, or ``None``.
        relay: The relay actor handle.
        approve_mcp: The agent's MCP approval callback, or ``None`` (every MCP
            approval request is then denied, as in a local run).
    """

    def __init__(
        self, hooks: tuple[RunHook, ...], approve: Any, relay: Any, approve_mcp: Any = None
    ) -> None:
        self.hooks = hooks
        self.approve = approve
        self.approve_mcp = approve_mcp
        self.relay = relay
        self.done: set[int] = set()
        self._listeners: dict[int, list[RunListener]] = {}
        self._next: dict[int, int] = {}
        self._held: dict[int, dict[int, tuple[Any, Any]]] = {}
        self._ended: set[int] = set()
        self._run_ids: dict[int, str] = {}
        self.failed: dict[int, Exception] = {}  # a hook refused the run (strict logging)

    def feed(self, messages: list[Message]) -> list[tuple[str, Any]]:
        """Hand the events to the hooks in order; returns the approval questions."""
        questions = []
        for message in messages:
            if message[0] == "ask":
                questions.append((message[1], message[2]))
            elif message[0] == "done":
                self.done.add(message[1])
            else:
                _, index, number, event, failure = message
                self._held.setdefault(index, {})[number] = (event, failure)
                self._release(index)
        return questions

    def _release(self, index: int) -> None:
        held = self._held[index]
        while self._next.get(index, 0) in held:
            event, failure = held.pop(self._next.get(index, 0))
            self._next[index] = self._next.get(index, 0) + 1
            if event is None:  # it could not be sent: the observers miss it, visibly
                warnings.warn(
                    f"run #{index} on Ray: an event could not be sent to the driver: {failure}",
                    RuntimeWarning,
                    stacklevel=2,
                )
                continue
            if failure is not None:
                event = dataclasses.replace(event, error=failure.rebuild(index))
            self._deliver(index, event)

    def _deliver(self, index: int, event: Any) -> None:
        if isinstance(event, RunStarted):
            self._run_ids[index] = event.run_id
            try:
                self._listeners[index] = [hook.begin(event) for hook in self.hooks]
            except Exception as exc:  # a strict hook refused: the run fails, as locally
                self.failed[index] = exc
                self._listeners[index] = []
            return
        if isinstance(event, RunEnded):
            self._ended.add(index)
        for listener in self._listeners.get(index, ()):
            try:
                listener(event)
            except Exception as exc:  # a strict log failed: the run fails, as locally
                self.failed.setdefault(index, exc)

    def close(self, index: int, error: BaseException | None) -> None:
        """The run's task ended; a run whose worker died before ``RunEnded`` ends here."""
        if index in self._ended or index not in self._listeners:
            return
        self._ended.add(index)
        cause = error or ToolExecutionError(f"the Ray worker running prompt #{index} was lost")
        outcome: Literal["error", "cancelled"] = (
            "cancelled" if isinstance(cause, asyncio.CancelledError) else "error"
        )
        ended = RunEnded(self._run_ids[index], outcome, time.time(), None, cause, 0, 0, Usage())
        for listener in self._listeners[index]:
            listener(ended)

    def cancel_all(self) -> None:
        """The caller stopped waiting (closed the iterator, cancelled): end the open runs."""
        for index in list(self._listeners):
            self.close(index, asyncio.CancelledError())

    def answer(self, key: str, request: ToolRequest | MCPApprovalRequest) -> None:
        """Ask ``approve`` (``approve_mcp`` for an MCP approval request) here, in the
        driver (a sync driver); send the answer back."""
        if isinstance(request, MCPApprovalRequest):
            self.reply(key, asyncio.run(mcp_approval_answer(self.approve_mcp, request)))
            return
        try:
            value = resolved(self.approve(request))
        except Exception as exc:  # a broken approval denies, with the local gate's words
            value = broken(request, exc)
        self.reply(key, value)

    async def answer_async(self, key: str, request: ToolRequest | MCPApprovalRequest) -> None:
        """:meth:`answer` for a driver in an event loop (a sync approver runs in a thread)."""
        if isinstance(request, MCPApprovalRequest):
            self.reply(key, await mcp_approval_answer(self.approve_mcp, request))
            return
        try:
            if inspect.iscoroutinefunction(self.approve) or inspect.iscoroutinefunction(
                getattr(self.approve, "__call__", None)  # noqa: B004 - an async __call__
            ):
                value = await self.approve(request)
            else:
                value = await asyncio.to_thread(self.approve, request)
                if inspect.isawaitable(value):
                    value = await value
        except Exception as exc:  # a broken approval denies, with the local gate's words
            value = broken(request, exc)
        self.reply(key, value)

    def reply(self, key: str, value: Any) -> None:
        """Send an approval answer to the waiting worker."""
        self.relay.answer.remote(key, value)


def broken(request: ToolRequest, exc: Exception) -> str:
    """The denial for an approver that raised (the local gate's words)."""
    return f"the approval of `{request.name}` failed ({type(exc).__name__}), so it was refused"


def resolved(value: Any) -> Any:
    """A sync driver's way to settle an approver's answer that is awaitable."""
    if inspect.isawaitable(value):

        async def settle() -> Any:
            return await value

        return asyncio.run(settle())
    return value
