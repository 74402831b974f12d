"""Many agent runs at once: locally, or fanned out across a Ray cluster.

::

    results = run_many(agent, prompts, backend=RayBackend())      # in prompt order
    for index, result in iter_run_many(agent, prompts, backend=RayBackend()):
        ...                                                       # as each run finishes

With a backend, each prompt becomes one Ray task that rebuilds the agent from one
pickled copy (put in the object store once) and runs it with ``asyncio.run``; tool
calls inside that run execute in the worker (the copy's ``ExecutionOptions.backend``
is cleared, so a run never fans out again). MCP toolsets in the agent are configuration
only: each worker starts its own server for its run. The agent's hooks (audit log,
OpenTelemetry) and its ``approve`` and ``approve_mcp`` callbacks stay in this process:
the runs reach them through a relay actor (:mod:`.ray_relay`), which the calling
thread serves while it waits. Without a backend the runs are concurrent tasks of one local event loop.

A run that raises gives its exception (the run's own: ``MaxRoundsExceededError``,
``ProviderError``, ...): :func:`run_many` raises the first one in prompt order after
every run has ended, or puts it in the list when ``return_exceptions=True``. A worker
that dies under a run is a :class:`~toolwire.errors.ToolExecutionError` for that
prompt. Closing :func:`iter_run_many` early cancels the runs still going.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from ..errors import BackendError, CallerError, ToolExecutionError
from ..run import Agent, Executor, RunResult
from .ray_backend import RayBackend
from .ray_progress import check_deps
from .ray_relay import DriverSide, RelayHook, RemoteApprover, RemoteMCPApprover, new_relay

__all__ = ["arun_many", "iter_run_many", "pack_agent", "run_many", "unpack_agent"]

Outcome = RunResult | BaseException


def run_many(
    agent: Agent,
    prompts: Sequence[str],
    *,
    backend: RayBackend | None = None,
    return_exceptions: bool = False,
) -> list[Any]:
    """Run ``agent`` once per prompt; the results in prompt order.

    Args:
        agent: The agent (with a backend: it must pickle — see :func:`pack_agent`).
        prompts: One user prompt per run.
        backend: Where the runs go (``None``: concurrently, in this process).
        return_exceptions: Put a failed run's exception in its place instead of raising.

    Returns:
        One :class:`~toolwire.run.RunResult` (or exception) per prompt, in order.

    Raises:
        BackendError: The agent cannot be sent to the workers.
        Exception: The first failed run's error (unless ``return_exceptions``).
    """
    outcomes: list[Outcome | None] = [None] * len(_check(prompts))
    for index, outcome in iter_run_many(agent, prompts, backend=backend, return_exceptions=True):
        outcomes[index] = outcome
    if not return_exceptions:
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
    return outcomes


def iter_run_many(
    agent: Agent,
    prompts: Sequence[str],
    *,
    backend: RayBackend | None = None,
    return_exceptions: bool = False,
) -> Iterator[tuple[int, Any]]:
    """Run ``agent`` once per prompt; yield ``(prompt index, result)`` as each run ends.

    Args: as :func:`run_many`.

    Raises:
        Exception: A failed run's error when it arrives (unless ``return_exceptions``).
    """
    prompts = _check(prompts)
    outcomes = _local(agent, prompts) if backend is None else _on_ray(agent, prompts, backend)
    for index, outcome in outcomes:
        if isinstance(outcome, BaseException) and not return_exceptions:
            raise outcome
        yield index, outcome


async def arun_many(
    agent: Agent,
    prompts: Sequence[str],
    *,
    backend: RayBackend | None = None,
    return_exceptions: bool = False,
) -> list[Any]:
    """:func:`run_many` for code already in an event loop (a server of many users).

    Args: as :func:`run_many`. Cancelling it cancels the runs still going.
    """
    prompts = _check(prompts)
    outcomes: list[Outcome]
    if backend is None:
        outcomes = list(
            await asyncio.gather(*(agent.run(p) for p in prompts), return_exceptions=True)
        )
    else:
        ray = backend.ray
        refs, driver = _submit(agent, prompts, backend)
        pending = list(refs)
        try:
            if driver is None:
                outcomes = [await _awaited(ray, ref, index) for ref, index in refs.items()]
            else:
                outcomes = [None] * len(prompts)  # type: ignore[list-item]
                async for index, outcome in _served_async(ray, refs, pending, driver):
                    outcomes[index] = outcome
        finally:
            _cancel_unfinished(ray, pending)
            if driver is not None:
                driver.cancel_all()  # the runs still open end, cancelled, in the log
                ray.kill(driver.relay)
    if not return_exceptions:
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
    return outcomes


async def _awaited(ray: Any, ref: Any, index: int) -> Outcome:
    with contextlib.suppress(Exception):  # the outcome is read, and classified, below
        await asyncio.wrap_future(ref.future())
    return _ray_outcome(ray, ref, index)


def _check(prompts: Sequence[str]) -> list[str]:
    if isinstance(prompts, str) or not all(isinstance(p, str) for p in prompts):
        raise CallerError("run_many needs a list of prompt strings")
    return list(prompts)


# -- in this process ---------------------------------------------------------------------


def _local(agent: Agent, prompts: list[str]) -> Iterator[tuple[int, Outcome]]:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise CallerError(
            "run_many without a backend runs its own event loop and cannot be called inside one",
            hint="await asyncio.gather(*(agent.run(p) for p in prompts)) there",
        )
    loop = asyncio.new_event_loop()
    tasks = {loop.create_task(agent.run(prompt)): i for i, prompt in enumerate(prompts)}
    pending = set(tasks)
    try:
        while pending:
            done, pending = loop.run_until_complete(
                asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            )
            for task in sorted(done, key=tasks.__getitem__):
                yield tasks[task], _task_outcome(task)
    finally:
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()


def _task_outcome(task: asyncio.Task[RunResult]) -> Outcome:
    error = task.exception()
    return error if error is not None else task.result()


# -- on Ray ------------------------------------------------------------------------------------


def _submit(
    agent: Agent, prompts: list[str], backend: RayBackend
) -> tuple[dict[Any, int], DriverSide | None]:
    """One Ray task per prompt, over one shipped copy of the agent: ``{ref: index}``.

    An agent with hooks (audit log, OpenTelemetry) or an ``approve`` or
    ``approve_mcp`` callback gets a relay: its runs send their events and approval
    questions to this process, which the returned :class:`DriverSide` serves.
    """
    ray = backend.ray
    approve = getattr(agent, "approve", None)
    approve_mcp = getattr(agent, "approve_mcp", None)
    driver = None
    if agent.hooks or approve is not None or approve_mcp is not None:
        driver = DriverSide(agent.hooks, approve, new_relay(ray), approve_mcp)
    shipped = ray.put(pack_agent(agent, relay=None if driver is None else driver.relay))
    remote = ray.remote(_run_one).options(**backend.task_options)
    refs = {remote.remote(shipped, prompt, i): i for i, prompt in enumerate(prompts)}
    return refs, driver


def _on_ray(agent: Agent, prompts: list[str], backend: RayBackend) -> Iterator[tuple[int, Outcome]]:
    ray = backend.ray
    refs, driver = _submit(agent, prompts, backend)
    pending = list(refs)
    try:
        if driver is None:
            while pending:
                done, pending[:] = ray.wait(pending, num_returns=1)
                for ref in done:
                    yield refs[ref], _ray_outcome(ray, ref, refs[ref])
        else:
            yield from _served(ray, refs, pending, driver)
    finally:
        _cancel_unfinished(ray, pending)
        if driver is not None:
            driver.cancel_all()  # the runs still open end, cancelled, in the log
            ray.kill(driver.relay)


# How long the driver waits for a message before it looks for workers that died.
_WAKE = 1.0


def _served(
    ray: Any, refs: dict[Any, int], pending: list[Any], driver: DriverSide
) -> Iterator[tuple[int, Outcome]]:
    """Serve the relay (events to the hooks, approvals) until every run has ended.

    ``pending`` (shared with the caller, which cancels what is left) loses each run
    as it is yielded.
    """
    while pending:
        finished = _ending(ray, pending, refs, driver)
        if not finished:
            for key, request in driver.feed(ray.get(driver.relay.take.remote(_WAKE))):
                driver.answer(key, request)
            finished, _ = ray.wait(pending, num_returns=len(pending), timeout=0)
        if finished:  # their last events landed before they returned: take them first
            for key, request in driver.feed(ray.get(driver.relay.take.remote(0))):
                driver.answer(key, request)
        for ref in sorted(finished, key=refs.__getitem__):
            pending.remove(ref)
            yield refs[ref], _closed(driver, refs[ref], _ray_outcome(ray, ref, refs[ref]))


async def _served_async(
    ray: Any, refs: dict[Any, int], pending: list[Any], driver: DriverSide
) -> AsyncIterator[tuple[int, Outcome]]:
    """:func:`_served` for a driver in an event loop."""
    while pending:
        finished = _ending(ray, pending, refs, driver)
        if not finished:
            for key, request in driver.feed(await driver.relay.take.remote(_WAKE)):
                await driver.answer_async(key, request)
            finished, _ = ray.wait(pending, num_returns=len(pending), timeout=0)
        if finished:  # their last events landed before they returned: take them first
            for key, request in driver.feed(await driver.relay.take.remote(0)):
                await driver.answer_async(key, request)
        for ref in sorted(finished, key=refs.__getitem__):
            pending.remove(ref)
            yield refs[ref], _closed(driver, refs[ref], _ray_outcome(ray, ref, refs[ref]))


def _cancel_unfinished(ray: Any, refs: list[Any]) -> None:
    """Cancel the runs still going (a finished task is left alone: Ray does not expect it)."""
    if refs:
        _, unfinished = ray.wait(refs, num_returns=len(refs), timeout=0)
        for ref in unfinished:
            ray.cancel(ref, force=True)


def _ending(ray: Any, pending: list[Any], refs: dict[Any, int], driver: DriverSide) -> list[Any]:
    """The runs that said they are done (their tasks are returning): wait for one."""
    said = [ref for ref in pending if refs[ref] in driver.done]
    if not said:
        return []
    finished, _ = ray.wait(said, num_returns=1)
    return list(finished)


def _closed(driver: DriverSide, index: int, outcome: Outcome) -> Outcome:
    driver.close(index, outcome if isinstance(outcome, BaseException) else None)
    return driver.failed.get(index, outcome)


def _ray_outcome(ray: Any, ref: Any, index: int) -> Outcome:
    try:
        result: RunResult | _Failure = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        return cause if isinstance(cause, Exception) else exc
    except ray.exceptions.RayError as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return ToolExecutionError(
            f"the Ray worker running prompt #{index} failed ({type(exc).__name__}): {text}"
        )
    return result.rebuild(index) if isinstance(result, _Failure) else result


def _run_one(shipped: bytes, prompt: str, index: int) -> RunResult | _Failure:
    """The Ray task: rebuild the agent and run one prompt.

    A run's error comes back as a value: exceptions with their own ``__init__``
    arguments (most of toolwire's) do not survive pickling as Ray would do it.
    """
    agent = unpack_agent(shipped)
    relay = getattr(agent, "_relay", None)
    hook = None if relay is None else RelayHook(relay, index)
    agent.hooks = () if hook is None else (hook,)
    try:
        return asyncio.run(agent.run(prompt))
    except Exception as exc:  # the run's own error, handed to the driver as it is
        return _Failure.of(exc)
    finally:
        if hook is not None:
            import ray

            hook.finish(ray)


@dataclasses.dataclass(frozen=True)
class _Failure:
    """A run's exception, as parts that pickle: rebuilt without calling ``__init__``."""

    kind: type[Exception]
    args: tuple[Any, ...]
    state: dict[str, Any]
    text: str

    @classmethod
    def of(cls, exc: BaseException) -> _Failure:
        """The parts of ``exc`` (a cancellation counts as an error here)."""
        kind = type(exc) if isinstance(exc, Exception) else ToolExecutionError
        return cls(kind, exc.args, dict(getattr(exc, "__dict__", {})), _line(exc))

    def rebuild(self, index: int) -> Exception:
        try:
            error = self.kind.__new__(self.kind, *self.args)
            error.args = self.args
            error.__dict__.update(self.state)
        except Exception:  # an exception class that cannot be rebuilt: keep its text
            return ToolExecutionError(f"run #{index} failed: {self.kind.__name__}: {self.text}")
        return error


def pack_agent(agent: Agent, *, relay: Any = None) -> bytes:
    """The agent as bytes for a worker: its state, minus what stays in the driver.

    The executor is rebuilt in the worker; the hooks (audit log, OpenTelemetry) and
    the ``approve`` and ``approve_mcp`` callbacks stay here: with a ``relay`` (:mod:`.ray_relay`) the
    worker's run sends its events and approval questions back through it.

    Raises:
        BackendError: Some part of the agent cannot be pickled (named in the message;
            ``deps`` too),
            or it has an ``approve`` (or ``approve_mcp``) callback and no relay to
            reach it.
    """
    cloudpickle = _cloudpickle()

    state = dict(vars(agent))
    executor: Executor = state.pop("executor")
    state["hooks"] = ()
    # The run store is the driver's audit log too: it stays here, with the hooks.
    state["store"] = None
    approve, state["approve"] = state.get("approve"), None
    # approve_mcp stays here too: the worker's asks this process through the relay.
    if state.get("approve_mcp") is not None:
        if relay is None:
            raise BackendError(
                "an agent with an approve_mcp= callback cannot run in a Ray worker without a relay",
                hint="use run_many/iter_run_many/arun_many, which keep approvals in the driver",
            )
        state["approve_mcp"] = RemoteMCPApprover(relay)
    options = dataclasses.replace(executor.options, backend=None)
    # The permission gate travels with the run: a worker never runs a call the policy
    # denies; where it says ask, the worker asks the driver's approve callback.
    gate = executor.gate
    if approve is not None:
        if relay is None or agent.permissions is None:
            raise BackendError(
                "an agent with an approve= callback cannot run in a Ray worker without a relay",
                hint="use run_many/iter_run_many/arun_many, which keep approvals in the driver",
            )
        gate = agent.permissions.gate(RemoteApprover(relay))
    state["_relay"] = relay
    if state.get("deps") is not None:  # the tools' ToolContext.deps, in every worker
        check_deps(state["deps"], cloudpickle)
    payload = (type(agent), state, executor.toolset, options, gate)
    try:
        return bytes(cloudpickle.dumps(payload))
    except Exception as exc:  # cloudpickle raises many kinds; all mean "cannot ship this"
        culprit = _culprit(state, executor)
        raise BackendError(
            f"the agent cannot be sent to Ray workers: {culprit} cannot be pickled ({_line(exc)})",
            hint="keep locks, open files and clients out of the model and tools (create them inside)",
        ) from exc


def unpack_agent(shipped: bytes) -> Agent:
    """The inverse of :func:`pack_agent`, in the worker."""
    cloudpickle = _cloudpickle()

    cls, state, toolset, options, gate = cloudpickle.loads(shipped)
    agent: Agent = cls.__new__(cls)
    agent.__dict__.update(state)
    agent.executor = Executor(toolset, options, gate=gate)
    agent.toolset = agent.executor.toolset
    return agent


def _culprit(state: dict[str, Any], executor: Executor) -> str:
    cloudpickle = _cloudpickle()

    for tool in executor.toolset:
        if not _pickles(cloudpickle, tool):
            return f"tool {tool.name!r}"
    for key, value in state.items():
        if not _pickles(cloudpickle, value):
            return f"its {key!r}"
    return "its state"


def _pickles(cloudpickle: Any, value: Any) -> bool:
    try:
        cloudpickle.dumps(value)
    except Exception:  # any failure: this is the part that does not pickle
        return False
    return True


def _line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


def _cloudpickle() -> Any:
    """Ray's cloudpickle (untyped), which pickles functions and classes by value."""
    from ray import cloudpickle

    return cloudpickle
