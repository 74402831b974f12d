"""Where a tool call runs: the seam between the executor and remote execution.

The executor owns the rules — batching, call order, exactly one result per call,
timeouts, retries. A backend owns one thing: running a single call's function
somewhere else and handing back its value (or raising its failure). With no backend
(the default) calls run in this process: async tools on the event loop, sync tools on
worker threads (``_threads.py``).

The executor awaits :meth:`ExecutionBackend.invoke` under the tool's timeout and
cancels the await when the call is timed out or the run is cancelled; a backend must
pass that cancellation on to the remote work and return only once the remote call has
ended (or has been given up for good), so that an unsafe call never overlaps the next
one. ``toolwire.integrations.RayBackend`` is the one shipped implementation.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..tools.context import ToolContext
from ..tools.tool import Tool, Toolset

__all__ = ["ExecutionBackend"]


@runtime_checkable
class ExecutionBackend(Protocol):
    """Runs single tool calls outside the executor's process or thread pool."""

    def accepts(self, tool: Tool) -> bool:
        """Whether this backend runs ``tool`` (others run locally, as without a backend)."""
        ...

    def prepare(self, tools: Toolset) -> None:
        """Check (and stage) the tools before a run's first request.

        Raises:
            ToolwireError: A tool cannot be run by this backend (say which and why).
        """
        ...

    async def invoke(self, tool: Tool, value: Any, context: ToolContext | None = None) -> Any:
        """Run one call with its validated input; return the tool's value or raise its error.

        ``context`` is given only for a tool that is not ``plain`` (it takes a
        ``ToolContext`` or is a generator, :mod:`toolwire.run.progress`): the backend
        hands it to the tool and sends each progress value to ``context.progress`` in
        this process, before it returns.
        """
        ...
