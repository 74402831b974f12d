"""The ExecutionBackend seam: which calls a backend gets, and what stays with the executor."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

from toolwire.errors import CallerError
from toolwire.messages import ToolStatus
from toolwire.run import ExecutionOptions, Executor
from toolwire.tools import Tool, Toolset, tool

from .helpers import request


def pid() -> int:
    return os.getpid()


@tool(concurrency_safe=True)
def remote_pid() -> int:
    """Runs wherever the backend sends it."""
    return pid()


@tool(concurrency_safe=True)
def local_pid() -> int:
    """Kept local by the backend."""
    return pid()


class ProcessBackend:
    """A backend over a real process pool: calls its module-level function there."""

    def __init__(self, pool: ProcessPoolExecutor) -> None:
        self.pool = pool

    def accepts(self, tool: Tool) -> bool:
        return tool.name == "remote_pid"

    def prepare(self, tools: Toolset) -> None:
        """Nothing to stage: the function is importable in the pool's process."""

    async def invoke(self, tool: Tool, value: Any) -> Any:
        return await asyncio.wrap_future(self.pool.submit(pid))


def test_a_backend_runs_the_calls_it_accepts_and_results_keep_their_order() -> None:
    with ProcessPoolExecutor(1) as pool:
        backend = ProcessBackend(pool)
        executor = Executor([remote_pid, local_pid], ExecutionOptions(backend=backend))
        calls = [request("remote_pid", index=0), request("local_pid", index=1)]
        remote, local = asyncio.run(executor.execute(calls))
    assert (remote.status, local.status) == (ToolStatus.OK, ToolStatus.OK)
    assert int(local.content) == os.getpid()
    assert int(remote.content) != os.getpid()


def test_something_that_is_not_a_backend_is_refused() -> None:
    with pytest.raises(CallerError, match="must be an execution backend"):
        ExecutionOptions(backend="ray")  # type: ignore[arg-type]
