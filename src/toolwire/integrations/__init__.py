"""Reach beyond one process: MCP servers' tools, and execution on a Ray cluster.

* :mod:`.mcp_toolset` — ``MCPToolset.stdio`` / ``MCPToolset.http``: an MCP server's
  tools as a live :class:`~toolwire.tools.Toolset` (the ``toolwire[mcp]`` extra);
  :mod:`.mcp_connection` owns the SDK session, :mod:`.mcp_tools` the pure mapping of
  names, annotations and results.
* :mod:`.ray_backend` — ``RayBackend``: tool calls as Ray tasks, an
  :class:`~toolwire.run.backend.ExecutionBackend` (the ``toolwire[ray]`` extra).
* :mod:`.ray_runs` — ``run_many`` / ``iter_run_many`` / ``arun_many``: whole agent
  runs fanned out as Ray tasks.

Nothing here imports ``mcp`` or ``ray`` until it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = ["MCPTools", "MCPToolset", "RayBackend", "arun_many", "iter_run_many", "run_many"]

_EXPORTS = {
    "MCPTools": "mcp_toolset",
    "MCPToolset": "mcp_toolset",
    "RayBackend": "ray_backend",
    "arun_many": "ray_runs",
    "iter_run_many": "ray_runs",
    "run_many": "ray_runs",
}


__getattr__ = lazy_exports(globals(), _EXPORTS)


if TYPE_CHECKING:
    from .mcp_toolset import MCPTools, MCPToolset
    from .ray_backend import RayBackend
    from .ray_runs import arun_many, iter_run_many, run_many
