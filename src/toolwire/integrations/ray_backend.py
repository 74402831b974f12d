"""``RayBackend``: tool calls as Ray tasks, for tools too heavy for one machine.

::

    ray.init(address="auto")                       # or set RAY_ADDRESS
    agent = Agent(model, tools, execution=ExecutionOptions(backend=RayBackend()))

The executor keeps every rule (:mod:`toolwire.run.backend`): it plans the batches,
awaits each call under its timeout and records exactly one result per call, in call
order; this backend only runs one call's function in a Ray worker. What that takes:

* **Never start Ray.** ``RayBackend()`` uses the Ray this process already
  initialised, else connects to ``RAY_ADDRESS``, else raises :class:`BackendError`;
  an explicit ``address`` is connected to (``"local"``, which would start a cluster,
  is refused). A cluster that does not answer is a ``BackendError`` too.
* **Tools are shipped once.** Before a run's first request each tool is pickled
  (cloudpickle) and put in the object store; a tool that cannot be pickled is a
  ``BackendError`` naming it, before anything is sent to the model.
* **Cancellation reaches the task.** A timed-out or cancelled call is cancelled with
  ``ray.cancel`` (``KeyboardInterrupt`` in the task); one still running after
  ``cancel_grace`` seconds is force-killed. The call returns only once the task ended,
  so an unsafe call never overlaps the next one.
* **A dead worker is that call's error.** Ray retries nothing (``max_retries=0``;
  retries are the executor's business, for idempotent tools); a worker that dies
  mid-call gives the call an error result naming the tool and the cause, and the run
  goes on.

* **Context and progress come back.** A tool that takes a ``ToolContext`` or is a
  generator gets its context in the worker (``deps`` must pickle: a ``BackendError``
  result otherwise); its progress travels through a relay actor to the driver, where
  it is the call's ``ToolProgress`` on the run's stream (:mod:`.ray_progress`).

Tools that hold something live (an MCP server session) stay in the driver process:
their function has ``runs_in_driver = True``. The audit log, approval callbacks and
the live view stay there too; only the tool function moves.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import socket
import weakref
from collections.abc import Mapping
from typing import Any

from ..checks import check_number
from ..errors import BackendError, ToolExecutionError
from ..tools import Tool, ToolContext, Toolset
from .ray_progress import Receiver, ShippedContext, check_deps, run_with_context, ship
from .ray_relay import new_relay

__all__ = ["RayBackend", "connect_ray", "import_ray"]

DEFAULT_CANCEL_GRACE = 5.0
PROBE_TIMEOUT = 5.0


def import_ray() -> Any:
    """The ``ray`` module (the ``toolwire[ray]`` extra)."""
    try:
        import ray
    except ImportError as exc:
        raise BackendError(
            "RayBackend needs the ray package", hint="pip install 'toolwire[ray]'"
        ) from exc
    return ray


def connect_ray(address: str | None) -> Any:
    """Ray, connected: the instance this process initialised, ``address``, or ``RAY_ADDRESS``.

    Raises:
        BackendError: No Ray to use (toolwire never starts one), or it does not answer.
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray
    target = address or os.environ.get("RAY_ADDRESS")
    if not target:
        raise BackendError(
            "Ray is not initialised in this process and RAY_ADDRESS is not set "
            "(toolwire never starts Ray itself)"
        )
    if target == "local":
        raise BackendError("address='local' would start a new Ray cluster; toolwire never does")
    _probe(target)
    try:
        ray.init(address=target, log_to_driver=False)
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BackendError(f"no Ray cluster answers at {target!r}: {reason}") from exc
    return ray


def _probe(address: str) -> None:
    """Fail fast when nothing listens at ``host:port``: ``ray.init`` would wait minutes.

    ``"auto"`` (find the local cluster) and other address forms are left to Ray.
    """
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT).close()
    except OSError as exc:
        raise BackendError(
            f"no Ray cluster answers at {address!r}: {exc.strerror or type(exc).__name__}",
            hint="check the address (host:port of the head node's GCS, or ray://host:10001)",
        ) from exc


class RayBackend:
    """Runs tool calls as Ray tasks; pass it as ``ExecutionOptions(backend=...)``.

    Args:
        address: A Ray cluster to connect to (``None``: the instance this process
            already initialised, else ``RAY_ADDRESS``).
        task_options: Passed to each task's ``.options(...)`` (``num_cpus``,
            ``resources``, ``runtime_env``, ...).
        cancel_grace: Seconds a cancelled task gets to stop before it is force-killed.

    Raises:
        BackendError: No Ray to use, or it does not answer.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        task_options: Mapping[str, Any] | None = None,
        cancel_grace: float = DEFAULT_CANCEL_GRACE,
    ) -> None:
        if address is not None and (not isinstance(address, str) or not address):
            raise BackendError(f"RayBackend address must be a non-empty str, got {address!r}")
        check_number("RayBackend cancel_grace", cancel_grace, positive=False, error=BackendError)
        self._ray = connect_ray(address)
        self.task_options = {"max_retries": 0, "retry_exceptions": False, **(task_options or {})}
        self.cancel_grace = float(cancel_grace)
        self._staged: weakref.WeakKeyDictionary[Tool, Any] = weakref.WeakKeyDictionary()
        self._remote = self._ray.remote(_call_tool).options(**self.task_options)
        self._relay: Any = None  # made for the first call that reports progress
        self._deps_checked: set[int] = set()  # id() of deps known to pickle

    def __repr__(self) -> str:
        return f"RayBackend(task_options={self.task_options!r})"

    @property
    def ray(self) -> Any:
        """The connected ``ray`` module."""
        return self._ray

    def __reduce__(self) -> Any:
        raise TypeError("a RayBackend belongs to the driver process; workers run tools locally")

    # -- ExecutionBackend ------------------------------------------------------------------

    def accepts(self, tool: Tool) -> bool:
        """Every tool but those bound to something live in this process."""
        return not getattr(tool.fn, "runs_in_driver", False)

    def prepare(self, tools: Toolset) -> None:
        """Pickle each tool once and put it in the object store.

        Raises:
            BackendError: A tool cannot be pickled.
        """
        for tool in tools:
            if self.accepts(tool) and tool not in self._staged:
                self._staged[tool] = self._ray.put(_pickled(tool))

    async def invoke(self, tool: Tool, value: Any, context: ToolContext | None = None) -> Any:
        """Run one call as a Ray task; the tool's value, or its exception.

        ``context``: the call's ``ToolContext`` (a tool that takes one or is a
        generator); its progress comes back through the relay.

        Raises:
            BackendError: ``context.deps`` cannot be pickled.
        """
        if tool not in self._staged:
            self._staged[tool] = self._ray.put(_pickled(tool))
        if context is None:
            return await self._run(tool, self._remote.remote(self._staged[tool], value))
        shipped = self._ship(context)
        task = self._remote.remote(self._staged[tool], value, shipped)
        receiver = Receiver(shipped, context)
        pumping = asyncio.ensure_future(receiver.pump())
        try:
            return await self._run(tool, task)
        finally:
            pumping.cancel()
            await asyncio.gather(pumping, return_exceptions=True)
            await receiver.drain()

    def _ship(self, context: ToolContext) -> ShippedContext:
        """The context for the worker (its deps checked once), with the relay."""
        if context.deps is not None and id(context.deps) not in self._deps_checked:
            check_deps(context.deps, _cloudpickle())
            self._deps_checked.add(id(context.deps))
        if self._relay is None:
            self._relay = new_relay(self._ray)
        return ship(context, self._relay)

    async def _run(self, tool: Tool, task: Any) -> Any:
        try:
            return await self._outcome(tool, task)
        except asyncio.CancelledError:
            await self._cancel(task)
            raise

    # -- helpers ---------------------------------------------------------------------------

    async def _outcome(self, tool: Tool, task: Any) -> Any:
        exceptions = self._ray.exceptions
        try:
            return await task
        except exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None  # the tool's own exception, as if it ran here
            raise ToolExecutionError(
                f"`{tool.name}` failed on a Ray worker: {_first_line(exc)}"
            ) from exc
        except exceptions.RayError as exc:  # the worker or its node died, the object was lost
            raise ToolExecutionError(
                f"the Ray worker running `{tool.name}` failed during the call "
                f"({type(exc).__name__}): {_first_line(exc)}"
            ) from exc

    async def _cancel(self, task: Any) -> None:
        """Stop the task and wait until it has ended (force-kill after the grace)."""
        ray = self._ray
        for force in (False, True):
            ray.cancel(task, force=force)
            if await self._ended(task):
                return

    async def _ended(self, task: Any) -> bool:
        future = asyncio.wrap_future(task.future())
        try:
            await asyncio.wait_for(asyncio.shield(future), self.cancel_grace)
        except asyncio.TimeoutError:
            future.cancel()
            return False
        except Exception:  # the task ended by being cancelled, as asked
            return True
        return True


_UNPICKLED: dict[bytes, Tool] = {}  # in a worker: each shipped tool, unpickled once


def _call_tool(pickled: bytes, value: Any, shipped: ShippedContext | None = None) -> Any:
    """The Ray task: unpickle the tool, run it (an async tool in its own event loop;
    one that takes a context or is a generator with its context rebuilt here)."""
    tool = _UNPICKLED.get(pickled)
    if tool is None:
        if len(_UNPICKLED) >= 256:
            _UNPICKLED.clear()
        tool = _UNPICKLED[pickled] = _cloudpickle().loads(pickled)
    if shipped is not None:
        return run_with_context(tool, value, shipped)
    result = tool.invoke(value)
    if inspect.iscoroutine(result):
        result = asyncio.run(result)
    return result


def _pickled(tool: Tool) -> bytes:
    cloudpickle = _cloudpickle()

    try:
        return bytes(cloudpickle.dumps(tool))
    except Exception as exc:  # cloudpickle raises many kinds; all mean "cannot ship this"
        raise BackendError(
            f"tool {tool.name!r} cannot be pickled for Ray: {_first_line(exc)}",
            hint="keep locks, open files and clients out of the tool (create them inside it)",
        ) from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return line if len(line) <= 300 else line[:300] + "..."


def _cloudpickle() -> Any:
    """Ray's cloudpickle (untyped), which pickles functions and classes by value."""
    from ray import cloudpickle

    return cloudpickle
