"""Tools that come and go with a run: tool sources and live toolsets.

``Agent(tools=[...])`` accepts, besides tools and functions, two kinds of entries:

* a :class:`ToolSource` — something the agent *opens* around each run and closes after
  it, whose opened form is a :class:`~toolwire.tools.Toolset` (an MCP server:
  ``toolwire.MCPToolset.stdio(...)``);
* a :class:`~toolwire.tools.Toolset` already opened by the caller.

A toolset may be *live*: it has an ``async refresh() -> bool`` that reloads its tools
when they changed (an MCP server's ``tools/list_changed``). The run calls it between
rounds, never during one, so a turn's calls are always validated and run against the
tools the model was offered.

:func:`run_tools` builds the run's executor: the agent's own when nothing is opened or
merged, else a copy over the merged toolset. A run whose agent has no sources (the
common case) opens nothing and makes no :class:`RunTools`: the agent asks its
executor's backend to ``prepare`` the tools itself, by :func:`prepare_tools`, as :class:`RunTools` does. Two
entries offering the same name are an error naming both.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, runtime_checkable

from ..errors import CallerError
from ..tools.tool import Tool, Toolset
from .execute import Executor

__all__ = ["RunTools", "ToolSource", "run_tools", "split_tools"]

ToolEntry = Tool | Callable[..., Any]


@runtime_checkable
class ToolSource(Protocol):
    """Something that yields a :class:`~toolwire.tools.Toolset` while it is open."""

    def open(self) -> AbstractAsyncContextManager[Toolset]:
        """A fresh context: entering starts the source, exiting stops it."""
        ...


def split_tools(
    tools: Toolset | Sequence[ToolEntry | ToolSource | Toolset],
) -> tuple[Toolset | list[ToolEntry], list[ToolSource | Toolset]]:
    """Separate plain tools from the sources and toolsets to merge at run time."""
    if isinstance(tools, Toolset) and callable(getattr(tools, "refresh", None)):
        return [], [tools]  # a live toolset (an opened MCPToolset): merged, so it refreshes
    if isinstance(tools, (Toolset, str, bytes)):
        return tools, []  # a str goes on to Toolset, which rejects it
    plain: list[ToolEntry] = []
    parts: list[ToolSource | Toolset] = []
    for entry in tools:
        if isinstance(entry, (Toolset, ToolSource)) and not isinstance(entry, Tool):
            parts.append(entry)
        else:
            plain.append(entry)
    return plain, parts


class RunTools:
    """The tools of one run: its executor, and the live parts to refresh between rounds."""

    def __init__(self, base: Executor, parts: list[tuple[str, Toolset]]) -> None:
        self._base = base
        self._parts = parts
        self.executor = base if not parts else copy.copy(base)
        if parts:
            self.executor.toolset = _merge(base.toolset, parts)
        prepare_tools(self.executor)

    async def refresh(self) -> None:
        """Reload live toolsets that changed; rebuild the merged toolset if needed."""
        changed = await _refresh(self._base.toolset)
        merged_changed = False
        for _, toolset in self._parts:
            merged_changed = await _refresh(toolset) or merged_changed
        if merged_changed:
            self.executor.toolset = _merge(self._base.toolset, self._parts)
        if changed or merged_changed:
            prepare_tools(self.executor)


def prepare_tools(executor: Executor) -> None:
    """Ask ``executor``'s backend (if any) to prepare its tools: before a run's first
    request, and again whenever the run's tools change."""
    backend = executor.options.backend
    if backend is not None:
        backend.prepare(executor.toolset)


@contextlib.asynccontextmanager
async def run_tools(
    base: Executor, parts: Sequence[ToolSource | Toolset]
) -> AsyncIterator[RunTools]:
    """Open the sources (in order; closed in reverse, also on errors) for one run."""
    async with contextlib.AsyncExitStack() as stack:
        opened: list[tuple[str, Toolset]] = []
        for part in parts:
            if isinstance(part, Toolset):
                opened.append((f"toolset #{len(opened) + 1}", part))
            else:
                opened.append((repr(part), await stack.enter_async_context(part.open())))
        yield RunTools(base, opened)


async def _refresh(toolset: Toolset) -> bool:
    refresh = getattr(toolset, "refresh", None)
    return bool(await refresh()) if refresh is not None else False


def _merge(plain: Toolset, parts: list[tuple[str, Toolset]]) -> Toolset:
    """One toolset over the plain tools and every part; a name offered twice is an error."""
    merged = Toolset(plain, repair_policy=plain.repair_policy)
    owner = dict.fromkeys(plain.names, "the agent's own tools")
    for label, toolset in parts:
        for tool in toolset:
            if tool.name in owner:
                raise CallerError(
                    f"two tools are named {tool.name!r}: one from {owner[tool.name]}, one from {label}",
                    hint="pass prefix= to one MCPToolset (its tools become '<prefix>_<name>')",
                )
            owner[tool.name] = label
            merged.add(tool)
    return merged
