"""Tools and models shared by the audit-log tests."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

from toolwire import tool
from toolwire.messages import AssistantMessage, ToolCall
from toolwire.run.model import ModelEvent, ModelRequest, TurnDone
from toolwire.turn import ToolRequest, Turn
from toolwire.wire.events import ToolCallReady, ToolCallStarted


@tool(concurrency_safe=True, side_effects=False)
async def search(q: str) -> str:
    """Search the notes."""
    await asyncio.sleep(0)
    return f"found {q}"


@tool
def write(path: str) -> str:
    """Write a file (always fails here)."""
    raise RuntimeError(f"disk full while writing {path}")


@tool(concurrency_safe=True)
def dump(size: int) -> str:
    """Return ``size`` characters."""
    return "x" * size


class CorrectingModel:
    """Streams a call with draft arguments, then ends the turn with corrected ones.

    The draft starts early and is discarded; the corrected call runs. A second
    request gets a plain answer.
    """

    name = "correcting"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        return self._play(len(self.requests))

    async def _play(self, number: int) -> AsyncIterator[ModelEvent]:
        if number > 1:
            yield TurnDone(Turn(AssistantMessage([]), [], "stop"))
            return
        draft = ToolRequest("c1", "search", '{"q": "draft"}', {"q": "draft"})
        final = ToolRequest("c1", "search", '{"q": "final"}', {"q": "final"})
        yield ToolCallStarted(0, "c1", "search")
        yield ToolCallReady(0, ToolCall("c1", "search", draft.raw_arguments), draft)
        # The draft is to be discarded after its first step, before its second: where
        # tasks start eagerly (Python 3.12+) it took that step as it started.
        if sys.version_info < (3, 12):
            await asyncio.sleep(0)
        message = AssistantMessage([ToolCall("c1", "search", final.raw_arguments)])
        yield TurnDone(Turn(message, [final], "tool_calls"))


def rows(path: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Rows of a query on the audit log at ``path`` (its own read-only connection)."""
    from toolwire.observe.store import connect

    conn = connect(path, readonly=True)
    try:
        return list(conn.execute(sql, params))
    finally:
        conn.close()
