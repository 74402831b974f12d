"""One live connection to an MCP server, through the official ``mcp`` SDK.

Opening starts the transport (a subprocess for stdio, an HTTP session for streamable
HTTP), runs ``initialize`` and lists the tools; any failure there is one
:class:`~toolwire.errors.MCPServerError` naming the server, raised before the run's
first request, with everything already started shut down again. A server is not
trusted to end what it starts: ``initialize`` and the whole listing (every page) share
one deadline, each later listing (a reload after ``tools/list_changed``) gets a
deadline of its own, and a listing stops with an error past :data:`MAX_PAGES` pages
or :data:`MAX_TOOLS` tools (a server that always sends a ``nextCursor``). The SDK owns the
protocol: it correlates requests, sends ``notifications/cancelled`` when a caller
stops waiting (a toolwire timeout or a cancelled run), and fails every in-flight
request when the connection closes. This module adds what toolwire needs on top:

* **crash bookkeeping** — a call that fails because the connection closed marks the
  server dead; that call and every later one get an error that says so, with the last
  line the server wrote to stderr;
* **protocol garbage** — a server that writes lines that are not JSON-RPC fails the
  open at once instead of waiting for the start-up timeout;
* **``tools/list_changed``** — sets :attr:`MCPConnection.tools_changed`, which the
  toolset reads between rounds.

The ``mcp`` package is imported only here, when a connection is opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import IO, Any, TextIO, cast

from ..errors import MCPServerError, MCPToolError

__all__ = ["MAX_PAGES", "MAX_TOOLS", "MCPConnection", "Transport"]

MAX_PAGES = 100
"""The most pages of ``tools/list`` one listing reads."""

MAX_TOOLS = 1000
"""The most tools one server may list (providers accept 128 to a few hundred)."""

# A function of the stderr file (stdio servers write their log there) that opens the
# SDK's transport and yields its (read stream, write stream) pair.
Transport = Callable[[TextIO], AbstractAsyncContextManager[Any]]

_CONNECTION_CLOSED = -32000  # mcp_types.jsonrpc.CONNECTION_CLOSED


class MCPConnection:
    """An initialised MCP client session; use as ``async with``.

    Args:
        label: How messages name the server (command line or URL, no secrets).
        transport: Opens the SDK transport (see :data:`Transport`).
        startup_timeout: Seconds the server has to answer ``initialize`` and list its
            tools; then, seconds for each later listing.
    """

    def __init__(self, label: str, transport: Transport, *, startup_timeout: float) -> None:
        self.label = label
        self._transport = transport
        self._startup_timeout = startup_timeout
        self._stack = contextlib.AsyncExitStack()
        self._stderr: IO[str] | None = None
        self._session: Any = None
        self._garbage: str | None = None
        self._broken = asyncio.Event()
        self.dead: str | None = None
        self.tools_changed = False
        self._opened_by: float | None = None  # the opening's deadline (loop time)

    async def __aenter__(self) -> MCPConnection:
        try:
            await self._start()
        except MCPServerError:
            await self._close_quietly()
            raise
        except Exception as exc:
            await self._close_quietly()
            raise self._open_error(exc) from exc
        except BaseException:
            # The SDK's transports run in task groups: a connection that fails (refused,
            # reset, a bad HTTP status) cancels this task and surfaces, as an exception
            # group, when the group is left. Anything else is a real cancellation.
            try:
                await self._stack.aclose()
            except Exception as exc:
                raise self._open_error(exc) from exc
            raise
        return self

    def _open_error(self, error: BaseException) -> MCPServerError:
        cause = _describe(_leaf(error))
        return MCPServerError(
            f"MCP server {self.label} could not be opened: {cause}{self._stderr_tail()}",
            server=self.label,
        )

    async def _close_quietly(self) -> None:
        """Shut down what started; the failure being reported already says why."""
        with contextlib.suppress(Exception):
            await self._stack.aclose()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stack.aclose()

    # -- opening -------------------------------------------------------------------------

    async def _start(self) -> None:
        from mcp import ClientSession

        # The server's stderr goes to a file, so errors can quote its last line.
        stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._stderr = self._stack.enter_context(stderr)
        try:
            read, write = await self._stack.enter_async_context(
                self._transport(cast(TextIO, self._stderr))
            )
        except FileNotFoundError as exc:
            raise MCPServerError(
                f"MCP server {self.label} could not start: command not found ({exc.filename or exc})",
                server=self.label,
                hint="check the command and PATH",
            ) from exc
        except PermissionError as exc:
            raise MCPServerError(
                f"MCP server {self.label} could not start: permission denied", server=self.label
            ) from exc
        session = ClientSession(read, write, message_handler=self._on_message)
        self._session = await self._stack.enter_async_context(session)
        self._opened_by = asyncio.get_running_loop().time() + self._startup_timeout
        init = await self._bounded(self._session.initialize(), self._startup_timeout)
        if init is None or init.cancelled() or init.exception() is not None:
            raise self._startup_error(init)

    async def _bounded(self, work: Any, seconds: float) -> asyncio.Future[Any] | None:
        """Run ``work`` for at most ``seconds``; its finished task, or ``None`` when the
        time ran out or the server wrote garbage first."""
        task = asyncio.ensure_future(work)
        broken = asyncio.ensure_future(self._broken.wait())
        try:
            done, _ = await asyncio.wait(
                {task, broken}, timeout=max(seconds, 0.0), return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for each in (task, broken):
                each.cancel()
            await asyncio.gather(task, broken, return_exceptions=True)
        return task if task in done else None

    def _startup_error(self, init: asyncio.Future[Any] | None) -> MCPServerError:
        if self._garbage is not None:
            reason = f"it does not speak MCP: it wrote {self._garbage}"
        elif init is None:
            reason = f"it did not answer initialize within {self._startup_timeout:g} s"
        else:
            error = init.exception()
            reason = _describe(error) if error is not None else "initialize was cancelled"
            if _is_closed(error):
                reason = "it exited (or closed the connection) before answering initialize"
        message = f"MCP server {self.label} could not be opened: {reason}{self._stderr_tail()}"
        return MCPServerError(message, server=self.label)

    # -- use -------------------------------------------------------------------------------

    async def list_tools(self) -> list[Any]:
        """Every tool the server lists (all pages), within the time the server has.

        The first listing shares the opening's deadline; each later one has
        ``startup_timeout`` seconds of its own.

        Raises:
            MCPServerError: The time ran out, the server failed the request or wrote
                garbage, or it listed more than :data:`MAX_PAGES` pages or
                :data:`MAX_TOOLS` tools.
        """
        loop = asyncio.get_running_loop()
        by, self._opened_by = self._opened_by, None
        seconds = self._startup_timeout if by is None else by - loop.time()
        listing = await self._bounded(self._all_pages(), seconds)
        if listing is None:
            if self._garbage is not None:
                reason = f"it does not speak MCP: it wrote {self._garbage}"
            else:
                reason = f"it did not list its tools within {self._startup_timeout:g} s"
            raise MCPServerError(
                f"MCP server {self.label} failed: {reason}{self._stderr_tail()}", server=self.label
            )
        error = None if listing.cancelled() else listing.exception()
        if isinstance(error, MCPServerError):
            raise error
        if error is not None or listing.cancelled():
            cause = _describe(error) if error is not None else "the listing was cancelled"
            raise MCPServerError(
                f"MCP server {self.label} failed to list its tools: {cause}{self._stderr_tail()}",
                server=self.label,
            ) from error
        return cast(list[Any], listing.result())

    async def _all_pages(self) -> list[Any]:
        from mcp.types import PaginatedRequestParams

        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self._session.list_tools(params=params)
            tools.extend(page.tools)
            if len(tools) > MAX_TOOLS:
                raise self._too_many(f"more than {MAX_TOOLS} tools")
            cursor = page.next_cursor
            if not cursor:
                return tools
        raise self._too_many(f"more than {MAX_PAGES} pages of tools (it keeps sending nextCursor)")

    def _too_many(self, what: str) -> MCPServerError:
        return MCPServerError(
            f"MCP server {self.label} listed {what}; toolwire stops there",
            server=self.label,
            hint="fix the server's tools/list, or split its tools over several servers",
        )

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """``tools/call`` by the server's own tool name; returns the ``CallToolResult``.

        Raises:
            MCPServerError: The server is gone (crashed now or earlier).
            MCPToolError: The server answered with a JSON-RPC error.
        """
        from mcp.shared.exceptions import MCPError

        if self.dead is not None:
            raise MCPServerError(
                f"MCP server {self.label} is not running any more: {self.dead}", server=self.label
            )
        try:
            return await self._session.call_tool(name, arguments)
        except MCPError as exc:
            if exc.code == _CONNECTION_CLOSED:
                self.dead = (
                    f"it crashed or closed the connection while `{name}` ran{self._stderr_tail()}"
                )
                raise MCPServerError(
                    f"MCP server {self.label} crashed or closed the connection while `{name}` ran"
                    f"{self._stderr_tail()}",
                    server=self.label,
                ) from exc
            raise MCPToolError(
                f"MCP server {self.label} answered `{name}` with error {exc.code}: {exc.message}"
            ) from exc

    # -- notifications ------------------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        from mcp.types import ToolListChangedNotification

        if isinstance(message, Exception):  # a line that is not JSON-RPC, or a transport error
            if self._garbage is None:
                self._garbage = _garbage(message)
            self._broken.set()
        elif isinstance(message, ToolListChangedNotification):
            self.tools_changed = True

    def _stderr_tail(self) -> str:
        """``; its stderr ends: ...`` with the last line the server wrote, or ``""``."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            lines = [line.strip() for line in self._stderr.read()[-4000:].splitlines()]
        except (OSError, ValueError):  # closed already
            return ""
        lines = [line for line in lines if line]
        if not lines:
            return ""
        last = lines[-1] if len(lines[-1]) <= 300 else lines[-1][:300] + "..."
        return f"; its stderr ends: {last}"


def _garbage(error: Exception) -> str:
    """What the server wrote that is not JSON-RPC (pydantic keeps the offending text)."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):  # any other shape: describe the error instead
            value = errors()[0].get("input")
            if isinstance(value, str):
                shown = value if len(value) <= 80 else value[:80] + "..."
                return f"a line that is not JSON-RPC: {shown!r}"
    return _describe(error)


def _leaf(error: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups."""
    inner = getattr(error, "exceptions", None)  # BaseExceptionGroup (3.11+, or the backport)
    while isinstance(inner, tuple) and inner and isinstance(inner[0], BaseException):
        error = inner[0]
        inner = getattr(error, "exceptions", None)
    return error


def _is_closed(error: BaseException | None) -> bool:
    return getattr(error, "code", None) == _CONNECTION_CLOSED


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if len(text) > 200:
        text = text[:200] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
