"""``MCPToolset``: the tools of an MCP server as a toolwire :class:`~toolwire.tools.Toolset`.

::

    async with toolwire.MCPToolset.stdio("uvx", ["mcp-server-git"]) as tools:
        agent = toolwire.Agent(model, tools)
        ...

    agent = toolwire.Agent(model, [toolwire.MCPToolset.http(url), my_tool])
    await agent.run("...")       # the agent opens and closes the server around the run

Each ``async with`` (or each agent run) starts the server once and stops it on the way
out, also on errors and cancellation (the SDK's transports shut the process or the
HTTP session down under a shield). The opened :class:`MCPTools` is live: after the
server sends ``tools/list_changed``, the agent reloads it between rounds.

A server is not trusted by default: its tool annotations are ignored (every tool has
side effects, runs alone, is never retried) unless ``trust_annotations=True``, and
``tool_policy`` sets the policy of named tools either way; its opening and every
reload of its tool list are bounded in time (``startup_timeout``) and in size (pages
and tools, :data:`~toolwire.integrations.mcp_connection.MAX_TOOLS`); its schemas'
``pattern`` keywords are checked by a linear-time engine.

Configuration only is kept on ``MCPToolset`` (it pickles, so an agent that holds one can
be shipped to a Ray worker, which then starts its own server); headers never appear
in a repr or a message.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

from ..checks import check_int, check_number
from ..errors import CallerError, MCPServerError
from ..tools import Tool, Toolset
from .mcp_connection import MCPConnection, Transport
from .mcp_tools import POLICY_KEYS, build_tool, policy_of, result_text

__all__ = ["MCPTools", "MCPToolset"]

DEFAULT_STARTUP_TIMEOUT = 30.0


class MCPTools(Toolset):
    """The opened tools of one MCP server (a :class:`~toolwire.tools.Toolset`).

    Attributes:
        server: How the server is named in messages.
    """

    def __init__(self, connection: MCPConnection, config: MCPToolset) -> None:
        super().__init__()
        self.server = connection.label
        self._connection = connection
        self._config = config

    async def load(self) -> None:
        """(Re)load the server's tool list.

        Raises:
            MCPServerError: A schema is invalid, or two tools end up with one name.
        """
        listed = await self._connection.list_tools()
        tools = [self._tool(item) for item in listed]
        seen: dict[str, str] = {}
        for tool, item in zip(tools, listed, strict=True):
            if tool.name in seen:
                raise MCPServerError(
                    f"MCP server {self.server} has tools {seen[tool.name]!r} and {item.name!r}, "
                    f"which both become {tool.name!r} (providers accept [A-Za-z0-9_-], 64 at most)",
                    server=self.server,
                    hint="rename one of them in the server",
                )
            seen[tool.name] = item.name
        self._tools = {tool.name: tool for tool in tools}

    async def refresh(self) -> bool:
        """Reload the tools if the server said they changed; whether they did.

        A server that died meanwhile keeps its old tools: their calls report the crash.
        """
        connection = self._connection
        if not connection.tools_changed or connection.dead is not None:
            return False
        connection.tools_changed = False
        try:
            await self.load()
        except MCPServerError:
            if connection.dead is None:
                raise
            return False
        return True

    def _tool(self, listed: Any) -> Tool:
        config = self._config
        override = config.tool_policy.get(listed.name)
        return build_tool(
            listed,
            _ServerCall(self._connection, listed.name),
            server=self.server,
            prefix=config.prefix,
            timeout=config.timeout,
            retries=config.retries,
            policy=policy_of(
                listed.annotations, trusted=config.trust_annotations, override=override
            ),
        )


class _ServerCall:
    """A tool function that calls one server tool by its original name."""

    runs_in_driver = True  # holds a live session: execution backends must not ship it

    def __init__(self, connection: MCPConnection, name: str) -> None:
        self.connection = connection
        self.name = name

    async def __call__(self, arguments: dict[str, Any]) -> str:
        result = await self.connection.call(self.name, arguments)
        return result_text(result, server=self.connection.label, tool=self.name)

    def __reduce__(self) -> Any:
        raise TypeError(f"the MCP tool {self.name!r} is bound to a live server session")


class MCPToolset:
    """An MCP server's tools, opened with ``async with`` (see the module docstring).

    Build one with :meth:`stdio` or :meth:`http`.

    Attributes:
        prefix: Put before every tool name (``<prefix>_<name>``), to tell servers apart.
        timeout: Seconds per call (``None``: no limit); on expiry the call is cancelled
            on the server too.
        retries: Re-runs of a failed call of an idempotent tool.
        startup_timeout: Seconds the server has to open (answer ``initialize`` and
            list its tools, every page) and, later, to answer each reload of its tool
            list after ``tools/list_changed``.
        trust_annotations: Take the server's tool annotations (``readOnlyHint``,
            ``idempotentHint``...) as the tools' policy. ``False`` (the default): every
            tool has side effects, is not concurrency-safe and is not idempotent,
            whatever the server claims.
        tool_policy: Per tool (by the server's tool name), the policy to use over the
            above: ``{"search": {"side_effects": False, "concurrency_safe": True,
            "idempotent": True}}`` (any of the three keys, each a bool).
    """

    def __init__(  # noqa: PLR0913 — keyword-only options, each documented
        self,
        *,
        label: str,
        stdio: tuple[str, list[str], dict[str, str] | None, str | None] | None = None,
        http: tuple[str, dict[str, str] | None] | None = None,
        prefix: str | None = None,
        timeout: float | None = None,
        retries: int = 2,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        trust_annotations: bool = False,
        tool_policy: Mapping[str, Mapping[str, bool]] | None = None,
    ) -> None:
        if prefix is not None and (not isinstance(prefix, str) or not prefix):
            raise CallerError(f"MCPToolset prefix must be a non-empty str, got {prefix!r}")
        check_int("MCPToolset retries", retries)
        if timeout is not None:
            check_number("MCPToolset timeout", timeout)
        check_number("MCPToolset startup_timeout", startup_timeout)
        self.label = label
        self.prefix = prefix
        self.timeout = timeout
        self.retries = retries
        self.startup_timeout = startup_timeout
        if not isinstance(trust_annotations, bool):
            raise CallerError(
                f"MCPToolset trust_annotations must be a bool, got {trust_annotations!r}"
            )
        self.trust_annotations = trust_annotations
        self.tool_policy = _tool_policy(tool_policy)
        self._stdio = stdio
        self._http = http
        self._opened: list[AbstractAsyncContextManager[MCPTools]] = []

    @classmethod
    def stdio(  # noqa: PLR0913 — keyword-only options, each documented
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        prefix: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
        timeout: float | None = None,
        retries: int = 2,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        trust_annotations: bool = False,
        tool_policy: Mapping[str, Mapping[str, bool]] | None = None,
    ) -> MCPToolset:
        """A server started as a subprocess, speaking MCP on stdin/stdout.

        Args:
            command: The executable.
            args: Its arguments.
            env: Extra environment variables (over the SDK's safe default set).
            prefix: See the class attributes.
            cwd: The server's working directory.
            timeout: See the class attributes.
            retries: See the class attributes.
            startup_timeout: See the class attributes.
            trust_annotations: See the class attributes.
            tool_policy: See the class attributes.

        Raises:
            CallerError: An argument has the wrong type.
        """
        if not isinstance(command, str) or not command.strip():
            raise CallerError(
                f"MCPToolset.stdio needs a command (a non-empty str), got {command!r}"
            )
        if isinstance(args, (str, bytes)) or not all(isinstance(a, str) for a in args):
            raise CallerError("MCPToolset.stdio args must be a list of str")
        if env is not None and not all(
            isinstance(k, str) and isinstance(v, str) for k, v in dict(env).items()
        ):
            raise CallerError("MCPToolset.stdio env must map str to str")
        label = repr(" ".join([command, *args]))
        return cls(
            label=label,
            stdio=(
                command,
                list(args),
                dict(env) if env else None,
                os.fspath(cwd) if cwd else None,
            ),
            prefix=prefix,
            timeout=timeout,
            retries=retries,
            startup_timeout=startup_timeout,
            trust_annotations=trust_annotations,
            tool_policy=tool_policy,
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        prefix: str | None = None,
        timeout: float | None = None,
        retries: int = 2,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        trust_annotations: bool = False,
        tool_policy: Mapping[str, Mapping[str, bool]] | None = None,
    ) -> MCPToolset:
        """A server reached over streamable HTTP at ``url``.

        Args:
            url: The MCP endpoint (``http://host:port/mcp``).
            headers: Sent with every request (authorization and the like; never shown).
            prefix: See the class attributes.
            timeout: See the class attributes.
            retries: See the class attributes.
            startup_timeout: See the class attributes.
            trust_annotations: See the class attributes.
            tool_policy: See the class attributes.

        Raises:
            CallerError: The URL is not http(s), or an argument has the wrong type.
        """
        if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
            raise CallerError(f"MCPToolset.http needs an http(s) URL, got {_safe_url(url)!r}")
        if headers is not None and not all(
            isinstance(k, str) and isinstance(v, str) for k, v in dict(headers).items()
        ):
            raise CallerError("MCPToolset.http headers must map str to str")
        return cls(
            label=repr(_safe_url(url)),
            http=(url, dict(headers) if headers else None),
            prefix=prefix,
            timeout=timeout,
            retries=retries,
            startup_timeout=startup_timeout,
            trust_annotations=trust_annotations,
            tool_policy=tool_policy,
        )

    def __repr__(self) -> str:
        kind = "stdio" if self._stdio is not None else "http"
        return f"MCPToolset.{kind}({self.label})"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_opened"] = []  # an open server stays with the process that opened it
        return state

    # -- opening -------------------------------------------------------------------------------

    def open(self) -> AbstractAsyncContextManager[MCPTools]:
        """A fresh context that starts the server and yields its tools.

        Raises (on entering):
            MCPServerError: The server would not start, does not speak MCP, or sent an
                invalid tool.
        """
        return self._session()

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[MCPTools]:
        connection = MCPConnection(
            self.label, self._transport(), startup_timeout=self.startup_timeout
        )
        async with connection:
            tools = MCPTools(connection, self)
            await tools.load()
            yield tools

    def _transport(self) -> Transport:
        if self._stdio is not None:
            command, args, env, cwd = self._stdio

            def stdio(errlog: TextIO) -> AbstractAsyncContextManager[Any]:
                from mcp.client.stdio import StdioServerParameters, stdio_client

                params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
                return stdio_client(params, errlog=errlog)

            return stdio
        assert self._http is not None
        url, headers = self._http

        def http(errlog: TextIO) -> AbstractAsyncContextManager[Any]:
            return _http_transport(url, headers)

        return http

    async def __aenter__(self) -> MCPTools:
        context = self.open()
        tools = await context.__aenter__()
        self._opened.append(context)
        return tools

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._opened:
            raise CallerError("MCPToolset.__aexit__ without a matching __aenter__")
        await self._opened.pop().__aexit__(exc_type, exc, tb)


@contextlib.asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str] | None) -> AsyncIterator[Any]:
    import httpx2  # the HTTP client the mcp SDK is built on
    from mcp.client.streamable_http import streamable_http_client

    # The SDK's own defaults: 30 s to connect or write, 300 s between reads (a server
    # may hold a response stream open while a tool runs).
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=timeout) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


def _tool_policy(value: object) -> dict[str, dict[str, bool]]:
    """``tool_policy`` checked: tool names to ``{key: bool}`` with keys of POLICY_KEYS."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise CallerError(
            f"MCPToolset tool_policy must map tool names to policies, got {value!r:.80}"
        )
    checked: dict[str, dict[str, bool]] = {}
    for name, policy in value.items():
        if not isinstance(name, str) or not isinstance(policy, Mapping):
            raise CallerError(
                f"MCPToolset tool_policy must map tool names (str) to dicts, got {name!r}: {policy!r:.80}"
            )
        for key, flag in policy.items():
            if key not in POLICY_KEYS or not isinstance(flag, bool):
                raise CallerError(
                    f"MCPToolset tool_policy[{name!r}] has {key!r}: {flag!r:.40}; the keys are "
                    f"{', '.join(POLICY_KEYS)}, each True or False"
                )
        checked[name] = dict(policy)
    return checked


def _safe_url(url: object) -> str:
    """The URL without credentials or query (which may hold tokens)."""
    if not isinstance(url, str):
        return repr(url)
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
