"""The upstream pool (aiohttp's, under httpx's API) over a real loopback server:
connections are reused and capped, a response closed before its end closes its
connection, a request leaves in one write, no cookie is kept, and aiohttp's errors
arrive as httpx's."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import aiohttp
import httpx
import pytest

from toolwire.serve.pool import AiohttpTransport, _mapped, pooled_transport

from .recorded import RecordedUpstream, Reply

BODY = {"model": "m", "messages": [], "stream": True}


@pytest.fixture
def upstream() -> Iterator[RecordedUpstream]:
    with RecordedUpstream(lambda body: Reply(text="hello", pieces=2)) as server:
        yield server


def ask_many(url: str, limits: httpx.Limits, rounds: list[int]) -> list[int]:
    """``rounds[i]`` concurrent streamed requests, one round after another: the statuses."""

    async def main() -> list[int]:
        statuses: list[int] = []
        async with httpx.AsyncClient(transport=pooled_transport(limits)) as client:

            async def one() -> None:
                async with client.stream("POST", f"{url}/chat/completions", json=BODY) as r:
                    await r.aread()
                    statuses.append(r.status_code)

            for n in rounds:
                await asyncio.gather(*(one() for _ in range(n)))
        return statuses

    return asyncio.run(main())


def test_one_connection_serves_requests_one_after_another(upstream: RecordedUpstream) -> None:
    statuses = ask_many(upstream.url, httpx.Limits(max_connections=10), [1] * 5)
    assert statuses == [200] * 5 and upstream.connections == 1


def test_requests_beyond_the_limit_wait_for_a_connection(upstream: RecordedUpstream) -> None:
    statuses = ask_many(upstream.url, httpx.Limits(max_connections=3), [12, 12])
    assert statuses == [200] * 24 and upstream.connections == 3


def test_a_response_closed_before_its_end_closes_its_connection() -> None:
    # The first stream is left after one chunk: its connection must not serve the next
    # request half-read; the upstream sees the client leave.
    def script(body: dict[str, Any]) -> Reply:
        return Reply(text="one two three", pieces=4, hold=30.0 if body["model"] == "slow" else 0)

    async def main(url: str) -> tuple[bytes, int]:
        async with httpx.AsyncClient(transport=pooled_transport(httpx.Limits())) as client:
            slow = {**BODY, "model": "slow"}
            async with client.stream("POST", f"{url}/chat/completions", json=slow) as r:
                first = await r.aiter_raw().__anext__()
            async with client.stream("POST", f"{url}/chat/completions", json=BODY) as r:
                await r.aread()
                return first, r.status_code

    with RecordedUpstream(script) as server:
        first, status = asyncio.run(main(server.url))
        assert server.disconnected.wait(30)
    assert first.startswith(b"data: ") and status == 200 and server.connections == 2


def test_a_request_leaves_in_one_write_and_no_cookie_is_kept() -> None:
    # Loopback delivers one write whole to one recv; the answer sets a cookie that a
    # jar would send back with the next request (the proxy sends to the transport).
    answer = b"HTTP/1.1 200 OK\r\nset-cookie: s=1\r\ncontent-length: 2\r\n\r\nok"

    async def main(port: int) -> None:
        transport = AiohttpTransport(httpx.Limits())
        try:
            for _ in range(2):
                request = httpx.Request("POST", f"http://127.0.0.1:{port}/v1/x", content=b"BODY")
                response = await transport.handle_async_request(request)
                assert await response.aread() == b"ok"
        finally:
            await transport.aclose()

    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        received: list[bytes] = []

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                for _ in range(2):
                    received.append(conn.recv(65536))
                    conn.sendall(answer)

        thread = threading.Thread(target=serve)
        thread.start()
        asyncio.run(main(port))
        thread.join(10)
    assert len(received) == 2
    for request in received:
        head, _, body = request.partition(b"\r\n\r\n")
        assert body == b"BODY"
        assert b"\r\ncookie:" not in head.lower()
        assert b"\r\ncontent-type:" not in head.lower()  # none sent, none added


def test_an_upstream_that_is_not_listening_is_a_connect_error() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    async def main() -> None:
        async with httpx.AsyncClient(transport=pooled_transport(httpx.Limits())) as client:
            await client.get(f"http://127.0.0.1:{port}/v1/models")

    with pytest.raises(httpx.ConnectError):
        asyncio.run(main())


class _Key:  # aiohttp's connector errors name the connection they were for
    host, port, ssl = "127.0.0.1", 1, None


@pytest.mark.parametrize(
    ("error", "connecting", "expected"),
    [
        (aiohttp.ConnectionTimeoutError("t"), True, httpx.ConnectTimeout),
        (aiohttp.SocketTimeoutError("t"), False, httpx.ReadTimeout),
        (asyncio.TimeoutError(), True, httpx.PoolTimeout),
        (asyncio.TimeoutError(), False, httpx.ReadTimeout),
        (aiohttp.ClientConnectorError(_Key(), OSError(111, "refused")), True, httpx.ConnectError),  # type: ignore[arg-type]
        (aiohttp.ServerDisconnectedError(), False, httpx.RemoteProtocolError),
        (aiohttp.ClientPayloadError("cut"), False, httpx.ReadError),
        (aiohttp.InvalidURL("x"), True, httpx.UnsupportedProtocol),
    ],
)
def test_aiohttps_errors_arrive_as_httpxs(
    error: BaseException, connecting: bool, expected: type[Exception]
) -> None:
    with pytest.raises(expected) as caught, _mapped(connecting=connecting):
        raise error
    assert type(caught.value) is expected
    assert isinstance(caught.value, httpx.TransportError)
