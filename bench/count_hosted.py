"""Instruction counts of the hosted providers against a loopback HTTP server (callgrind).

A real provider's turn is one POST: the request built from the ``ModelRequest``, sent
with httpx, and the body fed to the wire decoder, its events passed up to the caller.
This counts that client side, per request and per event, for OpenAI Chat, Responses and
Anthropic, streamed and not. The server runs in its own process (callgrind counts only
the client); it answers the demo turn (``toolwire.demo``'s recorded streams: reasoning,
text and two calls), one SSE event an HTTP chunk as the APIs send them, with
``--events`` extra text deltas when asked, or the same calls as one JSON body. The client reuses one ``httpx.AsyncClient``, as a long-lived agent
does; callgrind collects only inside the ``--repeats`` requests (after a warm one)::

    python bench/count_hosted.py                  # the table (a few minutes)
    python bench/count_hosted.py --repeats 20 --events 100
    python bench/count_hosted.py --own-client 1     # and a model given no client
    python bench/count_hosted.py --build 20         # building a request for 20 tools

Columns: per request, the demo turn streamed with ``deltas`` on and off (what an agent
nobody listens to asks for), and as a JSON body (``settings={"stream": False}``); per
event, ``(c(E extra text deltas) - c(0)) / E`` on the streamed turn.

It needs ``valgrind`` (``apt-get install valgrind``) and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from callgrind import instructions

PROVIDERS = ("openai", "responses", "anthropic")
LABELS = {"openai": "OpenAI Chat", "responses": "OpenAI Responses", "anthropic": "Anthropic"}
# The one text delta of each recorded stream that is repeated for the per-event column.
_REPEATED = {
    "openai": b'"delta":{"content":"both keywords."}',
    "responses": b'"type":"response.output_text.delta"',
    "anthropic": b'"type":"text_delta","text":"both."',
}


# -- the server (its own process) --------------------------------------------------------


def _streamed(provider: str, extra: int) -> bytes:
    """The recorded demo stream with ``extra`` copies of one of its text deltas."""
    from toolwire.demo import recorded_stream

    events = recorded_stream(provider).split(b"\n\n")
    at = next(i for i, event in enumerate(events) if _REPEATED[provider] in event)
    return b"\n\n".join([*events[: at + 1], *[events[at]] * extra, *events[at + 1 :]])


def _json_body(provider: str) -> bytes:
    """The demo turn's two calls as one non-streamed response body."""
    from workloads import build_tool_workload, response_bodies

    body = response_bodies(build_tool_workload(2, 100))[LABELS[provider]]
    return json.dumps(body).encode()


def _reply(key: str) -> tuple[str, list[bytes]]:
    """The content type and the body's HTTP chunks: a stream's events one a chunk, as the
    APIs send them (httpx reads a chunk at a time however the bytes arrived, so each
    event costs the client one chunk's read, as from a real server)."""
    provider, mode, extra = key.split("/")
    if mode == "json":
        return "application/json", [_json_body(provider)]
    events = _streamed(provider, int(extra)).split(b"\n\n")
    return "text/event-stream", [event + b"\n\n" for event in events if event.strip()]


def serve() -> None:
    """Answer each POST with the body its ``x-bench`` header names; print the port."""
    bodies: dict[str, tuple[str, list[bytes]]] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            key = self.headers["x-bench"]
            if key not in bodies:
                bodies[key] = _reply(key)
            content_type, chunks = bodies[key]
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks)
            self.wfile.write(body + b"0\r\n\r\n")  # one write: the chunks, not the reads, count
            self.wfile.flush()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()


# -- the client (counted) ----------------------------------------------------------------


def _model(provider: str, port: int, key: str, client: Any) -> Any:
    from toolwire.providers.spec import resolve

    base = f"http://127.0.0.1:{port}" + ("" if provider == "anthropic" else "/v1")
    return resolve(
        f"{provider}:m", base_url=base, api_key="k", headers={"x-bench": key}, client=client
    )


def _request(mode: str, deltas: bool) -> Any:
    from toolwire.demo.tools import DEMO_TOOLS
    from toolwire.messages import SystemMessage, UserMessage
    from toolwire.run.model import ModelRequest

    return ModelRequest(
        [SystemMessage("Be brief."), UserMessage('Search "login" and "session".')],
        tools=[tool.definition() for tool in DEMO_TOOLS],
        settings={"stream": False} if mode == "json" else {},
        deltas=deltas,
    )


def inner(
    provider: str, mode: str, extra: int, deltas: bool, repeats: int, port: int, own: bool
) -> None:
    """One warm request, then ``repeats`` inside ``itertools.starmap``'s C function,
    which ``--toggle-collect`` switches callgrind's counting on for. ``own``: the model
    makes its own client each turn (no ``client=``, the default)."""
    import httpx

    from toolwire.run.model import TurnDone

    async def requests(client: httpx.AsyncClient | None, count: int) -> None:
        model = _model(provider, port, f"{provider}/{mode}/{extra}", client)
        request = _request(mode, deltas)
        for _ in range(count):
            items = [item async for item in model.stream(request)]
            assert isinstance(items[-1], TurnDone)

    loop = asyncio.new_event_loop()
    client = None if own else httpx.AsyncClient()
    loop.run_until_complete(requests(client, 1))  # warm: imports, the connection, caches
    list(itertools.starmap(lambda: loop.run_until_complete(requests(client, repeats)), [()]))
    if client is not None:
        loop.run_until_complete(client.aclose())
    loop.close()


def _schema(i: int) -> dict[str, Any]:
    """A tool's parameters as agents' tools have them: five typed, described fields."""
    fields = {
        f"field_{k}": {"type": ("string", "integer", "boolean")[k % 3], "description": f"field {k}"}
        for k in range(5)
    }
    return {"type": "object", "properties": fields, "required": [f"field_{i % 5}"]}


def inner_build(provider: str, tools: int, repeats: int, shared: bool) -> None:
    """``repeats`` requests built for ``tools`` tools, as ``inner`` counts requests:
    ``build_request``'s (the schemas copied) or the one ``stream`` sends (shared)."""
    from toolwire.messages import UserMessage
    from toolwire.run.model import ModelRequest
    from toolwire.tooldef import ToolDef

    defs = [ToolDef(f"tool_{i}", f"Does thing {i}.", _schema(i)) for i in range(tools)]
    request = ModelRequest([UserMessage("Go.")], tools=defs)
    model = _model(provider, 9, "", None)
    build = model._sent_request if shared else model.build_request
    build(request)  # warm
    list(itertools.starmap(lambda: [build(request) for _ in range(repeats)], [()]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--events", type=int, default=100, help="extra text deltas")
    ap.add_argument("--providers", nargs="+", default=list(PROVIDERS), choices=PROVIDERS)
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--own-client",
        type=int,
        default=0,
        metavar="REPEATS",
        help="also count a streamed request of a model given no client (the default: "
        "one a turn), REPEATS requests, for the first provider",
    )
    ap.add_argument(
        "--build",
        type=int,
        default=0,
        metavar="TOOLS",
        help="count building a request for TOOLS tools instead: build_request's and the "
        "one stream sends",
    )
    ap.add_argument("--inner", nargs=7, help=argparse.SUPPRESS)
    ap.add_argument("--inner-build", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve()
        return
    if args.inner_build:
        provider, tools, repeats, shared = args.inner_build
        inner_build(provider, int(tools), int(repeats), shared == "1")
        return
    if args.build:
        r = args.repeats
        print(f"building a request for {args.build} tools, {r} requests each:\n")
        for provider in args.providers:
            copied, shared = (
                instructions(
                    [__file__, "--inner-build", provider, str(args.build), str(r), flag],
                    collect="starmap_next",
                )
                / r
                for flag in "01"
            )
            print(
                f"- {LABELS[provider]}: {copied / 1e3:,.1f} k -> {shared / 1e3:,.1f} k", flush=True
            )
        return
    if args.inner:
        provider, mode, extra, deltas, repeats, port, own = args.inner
        inner(provider, mode, int(extra), deltas == "1", int(repeats), int(port), own == "1")
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = server.stdout.readline().strip()
        r = args.repeats

        def count(provider: str, mode: str, extra: int, deltas: bool, own: int = 0) -> float:
            repeats = own or r
            flags = ["1" if deltas else "0", str(repeats), port, "1" if own else "0"]
            return (
                instructions(
                    [__file__, "--inner", provider, mode, str(extra), *flags],
                    collect="starmap_next",
                )
                / repeats
            )

        if args.own_client:
            print(f"a streamed request, the model's own client, {args.own_client} requests:\n")
            for provider in args.providers[:1]:  # the client is the same for each
                own = count(provider, "sse", 0, True, args.own_client)
                print(f"- {LABELS[provider]}: {own / 1e6:,.1f} M", flush=True)
            print()

        print(f"instructions, {r} requests each; per event: {args.events} extra text deltas\n")
        print(
            "| provider | streamed | streamed, deltas=False | JSON | JSON, deltas=False "
            "| per event |"
        )
        print("|---|--:|--:|--:|--:|--:|")
        for provider in args.providers:
            streamed = count(provider, "sse", 0, True)
            quiet = count(provider, "sse", 0, False)
            body = count(provider, "json", 0, True)
            body_quiet = count(provider, "json", 0, False)
            more = count(provider, "sse", args.events, True)
            per_event = (more - streamed) / args.events
            print(
                f"| {LABELS[provider]} | {streamed / 1e3:,.1f} k | {quiet / 1e3:,.1f} k "
                f"| {body / 1e3:,.1f} k | {body_quiet / 1e3:,.1f} k | {per_event:,.0f} |",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
