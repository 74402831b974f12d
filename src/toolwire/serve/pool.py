"""The upstream connection pool: httpx's, without its quadratic bookkeeping, sending
each request in one write.

httpcore's pool re-examines all its connections whenever a request starts or ends, and
for every idle connection it meets it builds a list of all connections again to count
them (``len([c.is_idle() for c in connections])``, which is just their number): with N
keep-alive connections a request's start and end cost O(N²) calls. A proxy keeps
hundreds of connections to one upstream; at 100 concurrent streams that bookkeeping was
the largest single share of the proxy's CPU (bench/bench_serve.py, bench/README.md).
:class:`LinearPool` does the same bookkeeping — which connections to drop, which
request gets which connection — in one pass.

httpcore writes a request's head and its body separately. On a busy machine each write
that wakes the upstream can hand it the CPU before the proxy writes again, so a request
paid two wake-ups of the upstream where one does (added time to first byte,
bench/README.md). :class:`OneWriteStream` holds writes until the connection is next
read, which for HTTP/1.1 is when the whole request has been written.

It is httpx's own transport otherwise.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx
from httpcore._async.interfaces import AsyncConnectionInterface

__all__ = ["LinearPool", "OneWriteBackend", "OneWriteStream", "pooled_transport"]


class LinearPool(httpcore.AsyncConnectionPool):
    """httpcore's connection pool with its assignment step done in linear time."""

    def _assign_requests_to_connections(self) -> list[AsyncConnectionInterface]:
        """Drop closed, expired and surplus idle connections; give each queued request
        a connection (reused, new, or new in place of an idle one). Returns the
        connections to close (the caller closes them outside its lock)."""
        closing = self._drop_unusable()
        for pool_request in self._requests:
            if not pool_request.is_queued():
                continue
            origin = pool_request.request.url.origin
            connection = self._reusable(origin)
            if connection is None:
                if len(self._connections) >= self._max_connections:
                    idle = next((c for c in self._connections if c.is_idle()), None)
                    if idle is None:
                        continue  # it waits for a connection to come free
                    self._connections.remove(idle)
                    closing.append(idle)
                connection = self.create_connection(origin)
                self._connections.append(connection)
            pool_request.assign_to_connection(connection)
        return closing

    def _drop_unusable(self) -> list[AsyncConnectionInterface]:
        """Remove closed connections, and return expired ones and idle ones beyond
        the keep-alive limit (counting the connections left as it goes)."""
        closing: list[AsyncConnectionInterface] = []
        kept: list[AsyncConnectionInterface] = []
        left = len(self._connections)
        for connection in self._connections:
            if connection.is_closed():
                left -= 1
            elif connection.has_expired() or (
                connection.is_idle() and left > self._max_keepalive_connections
            ):
                left -= 1
                closing.append(connection)
            else:
                kept.append(connection)
        self._connections[:] = kept
        return closing

    def _reusable(self, origin: httpcore.Origin) -> AsyncConnectionInterface | None:
        for connection in self._connections:
            if connection.can_handle_request(origin) and connection.is_available():
                return connection
        return None


class OneWriteStream(httpcore.AsyncNetworkStream):
    """A connection whose writes wait for its next read (or TLS start), then leave as
    one write. A write error therefore surfaces from that read: the same
    ``httpx.TransportError`` to the proxy."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._pending: list[bytes] = []
        self._timeout: float | None = None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Hold ``buffer`` until the next read."""
        if buffer:
            self._pending.append(buffer)
            self._timeout = timeout

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Send what is held, then read."""
        await self._flush()
        return await self._inner.read(max_bytes, timeout)

    async def aclose(self) -> None:
        """Close the connection (a request never read has nothing worth sending)."""
        self._pending.clear()
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Send what is held, then wrap the TLS stream the same way."""
        await self._flush()
        return OneWriteStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        """The inner connection's (the pool asks whether it is readable)."""
        return self._inner.get_extra_info(info)

    async def _flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            await self._inner.write(data, self._timeout)


class OneWriteBackend(httpcore.AsyncNetworkBackend):
    """The pool's network backend, its connections wrapped in :class:`OneWriteStream`."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self._inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """A TCP connection to the upstream."""
        stream = await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return OneWriteStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """A Unix socket connection to the upstream."""
        return OneWriteStream(await self._inner.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        """The inner backend's sleep (connection retries)."""
        await self._inner.sleep(seconds)


_POOL_STATE = (
    "_assign_requests_to_connections",
    "_requests",
    "_connections",
    "_max_connections",
    "_max_keepalive_connections",
    "_network_backend",
)
"""httpcore's private names :class:`LinearPool` and :class:`OneWriteBackend` rely on."""


def pooled_transport(limits: httpx.Limits) -> httpx.AsyncHTTPTransport:
    """httpx's transport (no proxy from the environment: the upstream is named
    explicitly) whose pool is a :class:`LinearPool` sending each request in one write."""
    transport = httpx.AsyncHTTPTransport(limits=limits)
    pool = transport._pool
    # Both swaps reach into httpcore's private state: made only where it is the state
    # this module was written against, else httpx's own pool (correct, just slower).
    if type(pool) is httpcore.AsyncConnectionPool and all(
        hasattr(pool, name) for name in _POOL_STATE
    ):
        pool.__class__ = LinearPool  # same state, linear bookkeeping
        pool._network_backend = OneWriteBackend(pool._network_backend)
    return transport
