"""The upstream connection pool: httpx's, without its quadratic bookkeeping.

httpcore's pool re-examines all its connections whenever a request starts or ends, and
for every idle connection it meets it builds a list of all connections again to count
them (``len([c.is_idle() for c in connections])``, which is just their number): with N
keep-alive connections a request's start and end cost O(N²) calls. A proxy keeps
hundreds of connections to one upstream; at 100 concurrent streams that bookkeeping was
the largest single share of the proxy's CPU (bench/bench_serve.py, bench/README.md).
:class:`LinearPool` does the same bookkeeping — which connections to drop, which
request gets which connection — in one pass. It is httpx's own transport otherwise.
"""

from __future__ import annotations

import httpcore
import httpx
from httpcore._async.interfaces import AsyncConnectionInterface

__all__ = ["LinearPool", "pooled_transport"]


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


def pooled_transport(limits: httpx.Limits) -> httpx.AsyncHTTPTransport:
    """httpx's transport (no proxy from the environment: the upstream is named
    explicitly) whose pool is a :class:`LinearPool`."""
    transport = httpx.AsyncHTTPTransport(limits=limits)
    pool = transport._pool
    if type(pool) is httpcore.AsyncConnectionPool:  # not a proxy's pool subclass
        pool.__class__ = LinearPool  # same state, linear bookkeeping
    return transport
