"""A small MCP server for toolwire's tests (mcp SDK, ``MCPServer``).

Run: ``python tool_server.py stdio`` or ``python tool_server.py http PORT``.
The environment variable ``TOOL_SERVER_MARKS`` names a folder where tools leave
marker files the tests wait for (a cancelled call, a crash).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
IDEMPOTENT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)

server = MCPServer("toolwire-test")
_arrived: dict[str, int] = {}
_everyone: dict[str, anyio.Event] = {}
_running = {"write": 0}
_attempts: dict[str, int] = {}


def _mark(name: str, text: str = "") -> None:
    folder = os.environ.get("TOOL_SERVER_MARKS")
    if folder:
        Path(folder, name).write_text(text, encoding="utf-8")


@server.tool(annotations=READ_ONLY)
async def meet(key: str, n: int) -> str:
    """Wait until n calls with this key are running at once (proof that they overlap)."""
    _arrived[key] = _arrived.get(key, 0) + 1
    event = _everyone.setdefault(key, anyio.Event())
    if _arrived[key] >= n:
        event.set()
    with anyio.move_on_after(20):
        await event.wait()
        return "met"
    return "alone"


@server.tool(annotations=DESTRUCTIVE)
async def write(key: str) -> str:
    """A destructive tool that reports how many calls of it were running at once."""
    _running["write"] += 1
    most = _running["write"]
    try:
        for _ in range(20):  # give an overlapping call every chance to show up
            await anyio.sleep(0)
            most = max(most, _running["write"])
        return f"{key}:{most}"
    finally:
        _running["write"] -= 1


@server.tool(annotations=READ_ONLY)
async def hang(tag: str) -> str:
    """Never returns; leaves a marker file when the client cancels it."""
    _mark(f"started-{tag}")
    try:
        await anyio.sleep_forever()
    finally:
        _mark(f"cancelled-{tag}")
    return "unreachable"


@server.tool(annotations=READ_ONLY)
async def crash() -> str:
    """Exits the server process at once."""
    print("crash requested by the test", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def fail(reason: str) -> str:
    """Reports a failure with isError."""
    raise ToolError(reason)


@server.tool(annotations=READ_ONLY)
def picture() -> list[TextContent | ImageContent]:
    """Text and an image."""
    return [
        TextContent(type="text", text="a red dot:"),
        ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
    ]


@server.tool(annotations=READ_ONLY)
def numbers() -> dict[str, int]:
    """Structured content."""
    return {"one": 1, "two": 2}


@server.tool(annotations=IDEMPOTENT)
def flaky(key: str) -> str:
    """Fails on the first attempt per key, succeeds on the second."""
    _attempts[key] = _attempts.get(key, 0) + 1
    if _attempts[key] == 1:
        raise ValueError("first attempt fails")
    return f"attempt {_attempts[key]}"


@server.tool(annotations=READ_ONLY)
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool(annotations=READ_ONLY)
async def header(name: str, ctx: Context) -> str:
    """The value of one HTTP request header ("" on stdio)."""
    return (ctx.headers or {}).get(name, "")


@server.tool(name="files.read/v2", annotations=READ_ONLY)
def read_v2(path: str) -> str:
    """A name that providers do not accept as it is."""
    return f"read {path}"


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `extra` and tells the client the tool list changed."""
    server.add_tool(_extra, name="extra", annotations=READ_ONLY)
    # Scoped to this request, so that over streamable HTTP it travels in the call's own
    # response stream, before the result (the standalone stream would race the result).
    await ctx.session.send_notification(
        types.ToolListChangedNotification(), related_request_id=ctx.request_id
    )
    return "grown"


def _extra() -> str:
    """Exists after grow."""
    return "extra here"


def main() -> None:
    """Serve on the transport ``sys.argv`` names (servers/zygote.py calls it in its child)."""
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))


if __name__ == "__main__":
    main()
