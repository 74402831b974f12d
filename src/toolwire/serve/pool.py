"""The upstream connection pool: httpx's request and response, aiohttp's connection pool
and HTTP/1.1 parser.

A streamed answer is one small chunk per token; at 100 streams of 50 tokens/s the
proxy reads 5,000 a second. Through httpx's own transport each chunk went through
httpcore's connection, h11's pure-Python parser and anyio's socket stream (a cancel
scope and an event-loop lookup per read): most of the proxy's CPU per token
(bench/bench_serve.py ``--only profile``, bench/README.md). aiohttp's client parses in
C and feeds a buffered reader from the event loop's protocol callback, so a chunk costs
the proxy one wake-up and one ``readany``. The proxy keeps httpx's API (requests,
responses, its exception classes, which :mod:`.upstream` maps to toolwire's errors);
only the transport under it changes (httpx's ``AsyncBaseTransport`` extension point).

What the proxy relies on, kept here:

- one connection pool per upstream, connections reused (keep-alive), at most
  ``max_connections``, idle ones closed after ``keepalive_expiry``;
- httpx's timeouts: ``connect`` (a new connection), ``pool`` (waiting for one), ``read``
  (each read of the response);
- no cookie jar (one client's upstream cookies would reach every later request), no
  redirects, no decompression (the proxy reads raw bytes; httpx decodes a coded body);
- closing a response before its end closes its connection (a client that went away
  cancels the upstream request, the connection is not reused half-read);
- aiohttp's errors as httpx's: cannot connect → ``ConnectError``, a timeout →
  ``ConnectTimeout``/``PoolTimeout``/``ReadTimeout``, a connection lost or a broken
  answer → ``RemoteProtocolError``/``ReadError``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import aiohttp
import httpx
from yarl import URL

__all__ = ["AiohttpTransport", "pooled_transport"]


def pooled_transport(limits: httpx.Limits) -> AiohttpTransport:
    """The proxy's transport to its upstream: one pool of at most
    ``limits.max_connections`` connections, kept alive ``limits.keepalive_expiry``."""
    return AiohttpTransport(limits)


class AiohttpTransport(httpx.AsyncBaseTransport):
    """An ``httpx.AsyncBaseTransport`` over one ``aiohttp.ClientSession``.

    The session is made on the first request (aiohttp binds it to the running event
    loop), closed by :meth:`aclose`.
    """

    def __init__(self, limits: httpx.Limits) -> None:
        self._limits = limits
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        limits = self._limits
        connector = aiohttp.TCPConnector(
            limit=limits.max_connections or 0,
            limit_per_host=0,
            # httpx's "no expiry" (None) has no aiohttp equivalent: aiohttp's default then.
            keepalive_timeout=15.0 if limits.keepalive_expiry is None else limits.keepalive_expiry,
            ssl=httpx.create_ssl_context(),  # httpx's defaults: certifi, verified
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=False,
            timeout=aiohttp.ClientTimeout(total=None),
            # httpx's request carries its own; aiohttp would add others.
            skip_auto_headers=("User-Agent", "Accept-Encoding", "Content-Type"),
        )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``; the response's body is read as it is iterated."""
        session = self._session or self._open()
        timeout = request.extensions.get("timeout", {})
        client_timeout = aiohttp.ClientTimeout(
            total=None,
            connect=timeout.get("pool"),
            sock_connect=timeout.get("connect"),
            sock_read=timeout.get("read"),
        )
        with _mapped(connecting=True):
            response = await session.request(
                request.method,
                _yarl(str(request.url)),
                headers=request.headers.multi_items(),
                data=await request.aread() or None,
                allow_redirects=False,
                timeout=client_timeout,
            )
        return httpx.Response(
            response.status,
            headers=response.raw_headers,
            stream=_Body(response),
            request=request,
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": (response.reason or "").encode(),
            },
        )

    async def aclose(self) -> None:
        """Close the pool's connections."""
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()


@functools.lru_cache(maxsize=64)  # a proxy sends to a few URLs, often
def _yarl(url: str) -> URL:
    """The yarl URL of ``url``, parsed once."""
    return URL(url, encoded=True)


class _Body(httpx.AsyncByteStream):
    """A response body: what has arrived at each read, as it arrives."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        content = self._response.content
        with _mapped(connecting=False):
            while True:
                chunk = await content.readany()
                if not chunk:
                    return
                yield chunk

    async def aclose(self) -> None:
        """Release the connection: back to the pool when the body was read to its end,
        closed otherwise."""
        response = self._response
        if response.content.is_eof():
            response.release()
        else:
            response.close()


@contextmanager
def _mapped(*, connecting: bool) -> Iterator[None]:
    """aiohttp's errors as httpx's (which the proxy maps to toolwire's)."""
    try:
        yield
    except aiohttp.ConnectionTimeoutError as exc:
        raise httpx.ConnectTimeout(str(exc) or "connect timed out") from exc
    except aiohttp.ServerTimeoutError as exc:
        raise httpx.ReadTimeout(str(exc) or "read timed out") from exc
    except asyncio.TimeoutError as exc:  # the pool's wait for a free connection
        kind: Any = httpx.PoolTimeout if connecting else httpx.ReadTimeout
        raise kind("timed out") from exc
    except aiohttp.ClientConnectorError as exc:
        raise httpx.ConnectError(str(exc)) from exc
    except aiohttp.InvalidURL as exc:
        raise httpx.UnsupportedProtocol(str(exc)) from exc
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientResponseError) as exc:
        raise httpx.RemoteProtocolError(str(exc) or type(exc).__name__) from exc
    except aiohttp.ClientError as exc:  # payload errors, lost connections
        raise httpx.ReadError(str(exc) or type(exc).__name__) from exc
