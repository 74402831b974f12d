"""The upstream pool (httpcore's with linear bookkeeping) over a real loopback server:
connections are reused, capped, and idle ones beyond the keep-alive limit are closed;
a request leaves in one write."""

from __future__ import annotations

import asyncio
import select
import socket
from collections.abc import Iterator

import httpcore
import httpx
import pytest

from toolwire.serve.pool import LinearPool, OneWriteBackend, pooled_transport

from .recorded import RecordedUpstream, Reply


@pytest.fixture
def upstream() -> Iterator[RecordedUpstream]:
    with RecordedUpstream(lambda body: Reply(text="hello", pieces=2)) as server:
        yield server


def ask_many(url: str, limits: httpx.Limits, rounds: list[int]) -> tuple[list[int], int]:
    """``rounds[i]`` concurrent streamed requests, one round after another: the
    statuses, and the connections the pool keeps at the end."""

    async def main() -> tuple[list[int], int]:
        transport = pooled_transport(limits)
        assert type(transport._pool) is LinearPool
        statuses: list[int] = []
        async with httpx.AsyncClient(transport=transport) as client:

            async def one() -> None:
                body = {"model": "m", "messages": [], "stream": True}
                async with client.stream("POST", f"{url}/chat/completions", json=body) as r:
                    await r.aread()
                    statuses.append(r.status_code)

            for n in rounds:
                await asyncio.gather(*(one() for _ in range(n)))
            return statuses, len(transport._pool.connections)

    return asyncio.run(main())


def test_one_connection_serves_requests_one_after_another(upstream: RecordedUpstream) -> None:
    statuses, kept = ask_many(upstream.url, httpx.Limits(max_connections=10), [1] * 5)
    assert statuses == [200] * 5 and kept == 1


def test_requests_beyond_the_limit_wait_for_a_connection(upstream: RecordedUpstream) -> None:
    limits = httpx.Limits(max_connections=3, max_keepalive_connections=3)
    statuses, kept = ask_many(upstream.url, limits, [12])
    assert statuses == [200] * 12 and kept == 3


def test_idle_connections_beyond_keep_alive_are_closed(upstream: RecordedUpstream) -> None:
    limits = httpx.Limits(max_connections=20, max_keepalive_connections=4)
    statuses, kept = ask_many(upstream.url, limits, [20, 1])
    assert statuses == [200] * 21 and kept == 4


def test_a_request_leaves_in_one_write_when_the_response_is_read() -> None:
    # Loopback delivers a write before send() returns, so "nothing readable yet" after
    # the head was written means it was held, not sent.
    async def main() -> tuple[bytes, bytes, bytes]:
        listener = socket.create_server(("127.0.0.1", 0))
        host, port = listener.getsockname()
        backend = OneWriteBackend(httpcore.AnyIOBackend())
        stream = await backend.connect_tcp(host, port)
        server, _ = listener.accept()
        listener.close()
        with server:
            server.setblocking(False)
            await stream.write(b"HEAD\r\n\r\n")
            await stream.write(b"BODY")
            held = _available(server)
            server.sendall(b"answer")
            answer = await stream.read(100)  # sends the request first
            sent = _available(server)
            await stream.aclose()
        return held, sent, answer

    held, sent, answer = asyncio.run(main())
    assert held == b"" and sent == b"HEAD\r\n\r\nBODY" and answer == b"answer"


def _available(sock: socket.socket) -> bytes:
    ready, _, _ = select.select([sock], [], [], 0)
    return sock.recv(1000) if ready else b""


def test_an_httpcore_without_the_expected_state_keeps_its_own_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A future httpcore whose pool no longer has the private step LinearPool replaces:
    # the transport stays httpx's own (correct, only slower), never a half-swapped pool.
    monkeypatch.delattr(httpcore.AsyncConnectionPool, "_assign_requests_to_connections")
    transport = pooled_transport(httpx.Limits(max_connections=4))
    assert type(transport._pool) is httpcore.AsyncConnectionPool
    assert not isinstance(transport._pool._network_backend, OneWriteBackend)
