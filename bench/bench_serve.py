"""`toolwire serve` against going to the upstream directly, same loopback upstream.

Three processes: the recorded upstream (tests/serve/recorded.py, asyncio, real HTTP),
the proxy (`python -m toolwire serve`, as users run it) and this client (httpx, raw SSE,
no SDK: the SDK's own cost would hide the proxy's). Measured:

- time to first byte (TTFB), direct and through the proxy, requests one at a time;
- time to the first complete tool call: direct, a client that assembles the native
  ``tool_calls`` fragments itself (complete when the arguments parse); through the
  proxy, the first chunk with a call (the proxy sends calls whole); and through the
  proxy for a call the model left in ``content`` (direct never gets one);
- 100 concurrent streams from an upstream paced at 50 tokens/s each: per-stream tokens/s
  and the p99 delay between two chunks of a stream, direct and through the proxy, and
  the proxy's CPU time per 1,000 tokens (its /proc counters);
- the proxy's resident memory every 1,000 of 10,000 streamed requests;
- in this process, without sockets, the proxy's own work per request and per token.

Run: ``python bench/bench_serve.py`` (``--quick``: fewer requests, 20 streams;
``--only inproc``: the in-process part; ``--only count [--src PATH] [--streams N] [--tokens N]``: the
proxy's instructions per token under callgrind, for comparing two versions on a loaded
machine; with ``--requests N``: its instructions per one-token request instead;
``--only first-byte [--src PATH] [--requests N]``: the proxy's CPU time from a request's
arrival to its first byte written; ``--only ttfb [--src PATH] [--requests N]``: the added
time to first byte alone, N interleaved pairs, the median of the pairs' differences with
its spread, and the proxy's whole CPU per request; ``--only profile [--src PATH] [--streams N]
[--tokens N]``: the proxy's CPU per token by layer, under cProfile). The full run ends with one row per target.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "tok "  # one paced piece of content: one "token"
CALL_TEXT = (
    '<tool_call>{"name": "read", "arguments": {"path": "src/a.rs", "lines": [1, 40]}}</tool_call>'
)
TOOLS = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]


# -- the upstream process ------------------------------------------------------------------


def upstream_main(port_file: str) -> None:
    """Serve the recorded upstream; the request's ``metadata`` says what to play."""
    sys.path.insert(0, str(ROOT))
    from tests.serve.recorded import RecordedUpstream, Reply

    def script(body: dict[str, Any]) -> Reply:
        meta = body.get("metadata") or {}
        kind = meta.get("kind", "text")
        tokens = int(meta.get("tokens", 50))
        delay = float(meta.get("delay", 0))
        if kind == "markup":
            return Reply(text=CALL_TEXT, pieces=4, delay=delay)
        if kind == "native":
            args = json.dumps({"path": "src/a.rs", "lines": [1, 40], "pad": "x" * 40})
            pieces = [args[i : i + 4] for i in range(0, len(args), 4)]
            first = {"index": 0, "id": "call_1", "type": "function",
                     "function": {"name": "read", "arguments": pieces[0]}}  # fmt: skip
            chunks = [{"tool_calls": [first]}]
            chunks += [
                {"tool_calls": [{"index": 0, "function": {"arguments": p}}]} for p in pieces[1:]
            ]
            return Reply(chunks=chunks, finish="tool_calls", delay=delay)
        return Reply(text=TOKEN * tokens, pieces=len(TOKEN), delay=delay)

    with RecordedUpstream(script) as upstream:
        gc.collect()
        gc.freeze()  # its full collections would stall direct and proxied streams alike
        Path(port_file).write_text(str(upstream.port))
        signal.sigwait({signal.SIGTERM, signal.SIGINT})


# -- processes -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(url: str, limit: float = 60, each: float = 1) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=each).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer")


def start_upstream(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    port_file = tmp / "upstream.port"
    port_file.unlink(missing_ok=True)
    process = subprocess.Popen([sys.executable, __file__, "--upstream-only", str(port_file)])
    deadline = time.monotonic() + 60
    while not port_file.exists() or not port_file.read_text():
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError("the upstream did not start")
        time.sleep(0.02)
    return process, f"http://127.0.0.1:{port_file.read_text()}/v1"


def start_proxy(upstream: str, src: Path = ROOT / "src") -> tuple[subprocess.Popen[bytes], str]:
    """``python -m toolwire serve`` in front of ``upstream``, as users run it."""
    return _proxy_process(["-m", "toolwire", "serve", "--upstream", upstream, "--port"], src)


def _instrumented_proxy(
    flag: str, upstream: str, src: Path, out: Path
) -> tuple[subprocess.Popen[bytes], str]:
    """This script's own proxy (``--traced-proxy``, ``--profiled-proxy``) writing ``out``."""
    return _proxy_process([__file__, flag, upstream], src, str(out))


def _proxy_process(
    args: list[str], src: Path, *after_port: str
) -> tuple[subprocess.Popen[bytes], str]:
    """A proxy process on a free port (``args``, the port, ``after_port``), ready."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, *args, str(port), *after_port]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    wait_for(f"{url}/models")
    return process, url


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# -- the client ----------------------------------------------------------------------------


def body(kind: str, *, tokens: int = 50, delay: float = 0.0) -> dict[str, Any]:
    return {
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "messages": [{"role": "user", "content": "go"}],
        "tools": TOOLS,
        "stream": True,
        "metadata": {"kind": kind, "tokens": str(tokens), "delay": str(delay)},
    }


async def one_stream(
    client: httpx.AsyncClient, url: str, payload: dict[str, Any]
) -> dict[str, Any]:
    """One streamed request: when its first byte came, when a call was first complete,
    and when each content chunk came."""
    start = time.perf_counter()
    first_byte = first_call = None
    stamps: list[float] = []
    args: dict[int, str] = {}
    buffer = b""
    async with client.stream("POST", f"{url}/chat/completions", json=payload) as response:
        async for raw in response.aiter_raw():
            now = time.perf_counter()
            first_byte = first_byte or now
            buffer += raw
            *events, buffer = buffer.split(b"\n\n")
            for event in events:
                data = event.removeprefix(b"data: ")
                if data == b"[DONE]" or not data.startswith(b"{"):
                    continue
                for choice in json.loads(data).get("choices", []):
                    delta = choice.get("delta") or {}
                    if delta.get("content"):
                        stamps.append(now)
                    for call in delta.get("tool_calls") or []:
                        index = call.get("index", 0)
                        args[index] = args.get(index, "") + (call.get("function") or {}).get(
                            "arguments", ""
                        )
                        if first_call is None and _complete(args[index]):
                            first_call = now
    return {
        "ttfb": (first_byte or start) - start,
        "call": None if first_call is None else first_call - start,
        "stamps": stamps,
    }


def _complete(arguments: str) -> bool:
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def p99(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))]


async def sequential(direct: str, proxy: str, n: int) -> dict[str, float]:
    """TTFB and time to the first complete call, one request at a time, interleaved."""
    results: dict[str, list[dict[str, Any]]] = {"direct": [], "proxy": [], "proxy-markup": []}
    async with httpx.AsyncClient(timeout=60) as client:
        for _ in range(5):  # warm the pools
            await one_stream(client, direct, body("native"))
            await one_stream(client, proxy, body("native"))
        for _ in range(n):
            results["direct"].append(await one_stream(client, direct, body("native")))
            results["proxy"].append(await one_stream(client, proxy, body("native")))
            results["proxy-markup"].append(await one_stream(client, proxy, body("markup")))
    print(f"\n## One request at a time ({n} each, interleaved)\n")
    print("| | TTFB median | TTFB p99 | first complete call median | p99 |")
    print("|---|---:|---:|---:|---:|")
    for name, rows in results.items():
        ttfb = [r["ttfb"] for r in rows]
        calls = [r["call"] for r in rows if r["call"] is not None]
        print(f"| {name} | {ms(statistics.median(ttfb))} | {ms(p99(ttfb))} | "
              f"{ms(statistics.median(calls))} | {ms(p99(calls))} |")  # fmt: skip
    added = statistics.median(r["ttfb"] for r in results["proxy"]) - statistics.median(
        r["ttfb"] for r in results["direct"]
    )
    added_call = statistics.median(r["call"] for r in results["proxy"]) - statistics.median(
        r["call"] for r in results["direct"]
    )
    print(
        f"\nadded TTFB (median): {ms(added)}; added time to the first complete call: {ms(added_call)}"
    )
    return {
        "ttfb_direct": statistics.median(r["ttfb"] for r in results["direct"]),
        "ttfb_proxy": statistics.median(r["ttfb"] for r in results["proxy"]),
        "ttfb_added": added,
        "call_added": added_call,
    }


async def concurrent(
    direct: str, proxy: str, proxy_pid: int, streams: int, tokens: int
) -> dict[str, float]:
    """``streams`` at once, each paced at 50 tokens/s; then where the long gaps were."""
    print(f"\n## {streams} concurrent streams, {tokens} tokens each, paced at 50 tokens/s\n")
    print(
        "| | per-stream tokens/s (median) | slowest stream | p99 inter-chunk delay | proxy CPU per 1,000 tokens |"
    )
    print("|---|---:|---:|---:|---:|")
    limits = httpx.Limits(max_connections=streams * 2)
    out: dict[str, float] = {}
    spread: dict[str, list[list[float]]] = {}
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        for url in (direct, proxy):  # both pools hold their connections before the clock
            await asyncio.gather(*(one_stream(client, url, body("text", tokens=2)) for _ in range(streams)))  # fmt: skip
        gc.collect()
        gc.freeze()  # this client's own full collections would stall its stamps
        for name, url in (("direct", direct), ("proxy", proxy)):
            cpu = cpu_seconds(proxy_pid)
            payload = body("text", tokens=tokens, delay=0.02)
            rows = await asyncio.gather(*(one_stream(client, url, payload) for _ in range(streams)))
            spent = cpu_seconds(proxy_pid) - cpu
            rates, gaps = [], []
            spread[name] = []
            for row in rows:
                stamps = row["stamps"]
                rates.append((len(stamps) - 1) / (stamps[-1] - stamps[0]))
                mine = [b - a for a, b in itertools.pairwise(stamps)]
                spread[name].append(mine)
                gaps += mine
            total = sum(len(r["stamps"]) for r in rows)
            per_k = f"{spent / total * 1000 * 1000:.1f} ms" if name == "proxy" else "—"
            print(
                f"| {name} | {statistics.median(rates):.1f} | {min(rates):.1f} | {ms(p99(gaps))} | {per_k} |"
            )
            out[f"rate_{name}"] = statistics.median(rates)
            out[f"p99_{name}"] = p99(gaps)
    gaps_table(spread)
    return out


def gaps_table(spread: dict[str, list[list[float]]]) -> None:
    """The inter-chunk delays' distribution, and how the long ones fall on streams: a
    pause of the whole process (a collection, the CPU taken away) hits every stream at
    once; a slow stream shows in few. A gap of 0 is two chunks read together (the one
    after them is then twice as long)."""
    print("\n| inter-chunk delay | p50 | p90 | p99 | p99.9 | max | zero gaps | gaps > 40 ms | streams with one |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, per_stream in spread.items():
        gaps = sorted(g for mine in per_stream for g in mine)
        at = [gaps[min(len(gaps) - 1, int(len(gaps) * q))] for q in (0.5, 0.9, 0.99, 0.999)]
        zero = sum(g < 0.0005 for g in gaps) / len(gaps)
        long = sum(g > 0.04 for g in gaps)
        hit = sum(any(g > 0.04 for g in mine) for mine in per_stream)
        print(f"| {name} | " + " | ".join(ms(v) for v in [*at, gaps[-1]])
              + f" | {zero:.1%} | {long} | {hit} of {len(per_stream)} |")  # fmt: skip


async def memory(proxy: str, proxy_pid: int, requests: int) -> list[tuple[int, float]]:
    """Resident memory of the proxy every tenth of ``requests`` streamed requests."""
    print(f"\n## Proxy memory over {requests:,} streamed requests (10 at a time)\n")
    samples = [(0, rss_mb(proxy_pid))]
    done = 0
    async with httpx.AsyncClient(timeout=60) as client:
        while done < requests:
            batch = [one_stream(client, proxy, body("markup")) for _ in range(10)]
            await asyncio.gather(*batch)
            done += 10
            if done % (requests // 10) == 0:
                samples.append((done, rss_mb(proxy_pid)))
    print("| requests | " + " | ".join(f"{n:,}" for n, _ in samples) + " |")
    print("|---|" + "---:|" * len(samples))
    print("| RSS MB | " + " | ".join(f"{mb:.1f}" for _, mb in samples) + " |")
    return samples


def summary(seq: dict[str, float], conc: dict[str, float], rss: list[tuple[int, float]]) -> None:
    """The issue's targets, one row each, for comparing runs at a glance."""
    print(f"\n## Targets (load {os.getloadavg()[0]:.1f} now)\n")
    print("| measure | direct | proxy | added / ratio | target |")
    print("|---|---:|---:|---:|---|")
    print(f"| TTFB, median | {ms(seq['ttfb_direct'])} | {ms(seq['ttfb_proxy'])} | "
          f"+{ms(seq['ttfb_added'])} | ≤ +2 ms |")  # fmt: skip
    print(f"| p99 inter-chunk delay | {ms(conc['p99_direct'])} | {ms(conc['p99_proxy'])} | "
          f"+{ms(conc['p99_proxy'] - conc['p99_direct'])} | ≤ +5 ms |")  # fmt: skip
    print(f"| per-stream tokens/s | {conc['rate_direct']:.1f} | {conc['rate_proxy']:.1f} | "
          f"{conc['rate_proxy'] / conc['rate_direct']:.1%} | ≥ 90% |")  # fmt: skip
    print(f"| proxy RSS, MB | | {rss[1][1]:.1f} → {rss[-1][1]:.1f} | "
          f"{rss[-1][1] - rss[1][1]:+.1f} | flat |")  # fmt: skip


def inproc(tokens: int, repeat: int) -> None:
    """The proxy's own work per token and per request, in this process, no sockets:
    decode the upstream's SSE (assembler, the family's parser on ``content``), relay,
    encode the client's chunk. Best of ``repeat``."""
    sys.path.insert(0, str(ROOT / "src"))
    from toolwire.run.model import TurnDone
    from toolwire.serve.encode import ChunkWriter
    from toolwire.serve.relay import Relay
    from toolwire.serve.request import read_call
    from toolwire.serve.upstream import _chat_wire

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        chunk = {"id": "up-1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
        return f"data: {json.dumps(chunk)}\n\n".encode()

    stream = [event({"content": TOKEN}) for _ in range(tokens)] + [
        event({}, "stop"),
        b"data: [DONE]\n\n",
    ]
    payload = body("text")

    def setup() -> tuple[Any, ...]:
        call = read_call(payload, None)
        writer = ChunkWriter(call)
        return call, _chat_wire(call).stream(), Relay(call), writer, writer.first()

    def run() -> None:
        _call, decoder, relay, writer, _ = setup()
        for data in stream:
            for item in decoder.feed_bytes(data):
                for delta in relay.feed(item):
                    writer.delta(delta)
        relay.feed(TurnDone(decoder.close()))
        writer.last(relay)

    def best(fn: Any, n: int) -> float:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(n):
                fn()
            times.append((time.perf_counter() - start) / n)
        return min(times)

    def floor() -> None:
        """The least a proxy does per token: parse the chunk, re-encode its delta."""
        for data in stream:
            if data.startswith(b"data: {"):
                for choice in json.loads(data[6:])["choices"]:
                    out = '{"id":"x","choices":[{"index":0,"delta":' + json.dumps(choice["delta"])
                    (out + "}]}\n\n").encode()

    per_request = best(setup, 200)
    per_turn = best(run, 5)
    per_token = (per_turn - per_request) / tokens
    floor_token = best(floor, 5) / tokens
    print(f"\n## In process (no sockets), best of {repeat}\n")
    print(
        f"per request (read the body, the family's format, relay and writer): {per_request * 1e6:.0f} µs"
    )
    print(f"per token (decode the upstream's chunk, relay it, encode the client's): {per_token * 1e6:.1f} µs"
          f" = {per_token / floor_token:.1f}x a floor that only re-encodes each delta ({floor_token * 1e6:.1f} µs)")  # fmt: skip


async def _streams(url: str, streams: int, tokens: int, delay: float) -> None:
    limits = httpx.Limits(max_connections=streams * 2)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        payload = body("text", tokens=tokens, delay=delay)
        await asyncio.gather(*(one_stream(client, url, payload) for _ in range(streams)))


async def _requests(url: str, n: int) -> None:
    """``n`` short streamed requests (one token), one at a time."""
    async with httpx.AsyncClient(timeout=600) as client:
        for _ in range(n):
            await one_stream(client, url, body("text", tokens=1))


def count(src: Path, streams: int, tokens: int, requests: int = 0) -> None:
    """Instructions the proxy process spends per upstream token (its HTTP stacks, the
    event loop and toolwire; not the kernel), under callgrind: counters zeroed after a
    warm-up round, ``streams`` concurrent streams of ``tokens`` paced tokens, dumped.
    With ``requests``: per request instead, that many one-token streamed requests one
    at a time (a request's cost is mostly its path to the first byte: read the request,
    send the upstream's, read its headers, write the first chunk).
    Counts repeat where CPU times on a loaded machine do not."""
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    out = tmp / f"bench_serve.callgrind.{os.getpid()}"
    upstream, direct = start_upstream(tmp)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"}
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
               "-m", "toolwire", "serve", "--upstream", direct, "--port", str(port)]  # fmt: skip
    proxy = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_for(f"{url}/models", limit=900, each=60)
        asyncio.run(_streams(url, streams, 5, 0.0))  # connections, imports, caches
        if requests:
            asyncio.run(_requests(url, 20))
        subprocess.run(["callgrind_control", "-z", str(proxy.pid)], check=True, capture_output=True)
        if requests:
            asyncio.run(_requests(url, requests))
        else:
            asyncio.run(_streams(url, streams, tokens, 0.02))
        subprocess.run(["callgrind_control", "-d", str(proxy.pid)], check=True, capture_output=True)
        dumps = [p for p in tmp.glob(f"{out.name}.*") if p.stat().st_size]
        total = max(int(m.group(1)) for p in dumps for m in [_SUMMARY.search(p.read_text())] if m)
    finally:
        for process in (proxy, upstream):
            process.send_signal(signal.SIGTERM)
            process.wait(120)
        for path in tmp.glob(f"{out.name}*"):
            path.unlink()
    if requests:
        print(f"\n## Proxy instructions per request (callgrind; {src})\n")
        print(f"{requests} one-token streamed requests, one at a time: "
              f"{total / requests / 1000:.1f} k instructions per request")  # fmt: skip
        return
    print(f"\n## Proxy instructions per token (callgrind; {src})\n")
    print(f"{streams} streams x {tokens} tokens paced at 50 tokens/s: "
          f"{total / (streams * tokens) / 1000:.1f} k instructions per upstream token")  # fmt: skip


def traced_proxy_main(upstream: str, port: int, out: str) -> None:
    """The proxy as ``toolwire serve`` runs it, each chat request's CPU time (this
    thread's) from the app's call to its first body write kept, written to ``out`` at
    exit: what the first byte waits for in this process, without the wait for the
    upstream (CPU time: a loaded machine inflates it far less than wall time)."""
    import atexit
    import inspect

    import uvicorn

    from toolwire.serve import create_app

    options = {"freeze_gc": True} if "freeze_gc" in inspect.signature(create_app).parameters else {}
    app = create_app(upstream, **options)  # an older --src has no freeze_gc
    spent: list[int] = []

    async def traced(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/v1/chat/completions":
            return await app(scope, receive, send)
        start = time.thread_time_ns()
        first = True

        async def timed_send(message: Any) -> None:
            nonlocal first
            if first and message["type"] == "http.response.body":
                first = False
                await send(message)
                spent.append(time.thread_time_ns() - start)
                return
            await send(message)

        await app(scope, receive, timed_send)

    atexit.register(lambda: Path(out).write_text(json.dumps(spent)))
    uvicorn.run(traced, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def first_byte(src: Path, requests: int) -> None:
    """The proxy's CPU from a request's arrival to its first byte written, one-token
    streamed requests one at a time (after 30 to warm up)."""
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    out = tmp / f"bench_serve.first_byte.{os.getpid()}.json"
    upstream, direct = start_upstream(tmp)
    proxy, url = _instrumented_proxy("--traced-proxy", direct, src, out)
    try:
        asyncio.run(_requests(url, 30 + requests))
    finally:
        for process in (proxy, upstream):
            process.send_signal(signal.SIGINT)
            process.wait(120)
    spent = [ns / 1000 for ns in json.loads(out.read_text())[30:]]
    out.unlink()
    print(f"\n## Proxy CPU to the first byte ({src}; load {os.getloadavg()[0]:.1f})\n")
    print(f"{len(spent)} one-token streamed requests: median {statistics.median(spent):.0f} µs, "
          f"min {min(spent):.0f} µs, p90 {sorted(spent)[int(len(spent) * 0.9)]:.0f} µs")  # fmt: skip


def ttfb(src: Path, pairs: int) -> None:
    """Added time to first byte, made robust: ``pairs`` pairs of one request direct and
    one through the proxy, back to back, the order alternating pair by pair (a drift of
    the machine's state hits both sides alike); the added time is the median of the
    pairs' differences, with its spread (quartiles) and per quarter of the run (a drift
    shows there); and the proxy's whole CPU per request (/proc: uvicorn, the kernel's
    socket work, toolwire), to set the added time against."""
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    upstream, direct = start_upstream(tmp)
    proxy_process, proxy = start_proxy(direct, src)
    load = os.getloadavg()[0]
    try:
        rows, cpu = asyncio.run(_ttfb_pairs(direct, proxy, proxy_process.pid, pairs))
    finally:
        for process in (proxy_process, upstream):
            process.send_signal(signal.SIGTERM)
            process.wait(30)
    direct_t = [d for d, _ in rows]
    proxy_t = [p for _, p in rows]
    added = sorted(p - d for d, p in rows)
    q = len(added) // 4
    quarters = [statistics.median(p - d for d, p in rows[i * q : (i + 1) * q]) for i in range(4)]
    print(f"\n## Added time to first byte ({src}; load {load:.1f} -> {os.getloadavg()[0]:.1f})\n")
    print(f"{pairs} pairs (native-call stream), direct and proxy back to back, order alternating")
    print("| direct median | proxy median | added: median of the pairs | quartiles | "
          "per quarter of the run | proxy CPU per request |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {ms(statistics.median(direct_t))} | {ms(statistics.median(proxy_t))} | "
          f"**{ms(statistics.median(added))}** | {ms(added[q])} .. {ms(added[3 * q])} | "
          f"{' / '.join(f'{x * 1000:+.2f}' for x in quarters)} ms | {cpu * 1e6:.0f} µs |")  # fmt: skip


async def _ttfb_pairs(
    direct: str, proxy: str, proxy_pid: int, pairs: int
) -> tuple[list[tuple[float, float]], float]:
    rows: list[tuple[float, float]] = []
    async with httpx.AsyncClient(timeout=60) as client:
        for _ in range(20):  # the pools, the caches
            await one_stream(client, direct, body("native"))
            await one_stream(client, proxy, body("native"))
        start = cpu_seconds(proxy_pid)
        for i in range(pairs):
            first, second = (direct, proxy) if i % 2 == 0 else (proxy, direct)
            a = (await one_stream(client, first, body("native")))["ttfb"]
            b = (await one_stream(client, second, body("native")))["ttfb"]
            rows.append((a, b) if first == direct else (b, a))
        cpu = (cpu_seconds(proxy_pid) - start) / pairs
    return rows, cpu


_LAYERS = (  # (layer, what a profiled function's file path or name contains), first match
    ("toolwire serve/pool.py", "toolwire/serve/pool.py"),
    ("toolwire serve", "toolwire/serve/"),
    ("toolwire wire/formats", "toolwire/"),
    ("httpx", "/httpx/"),
    ("aiohttp", "/aiohttp/"),
    ("httpcore", "/httpcore/"),
    ("h11", "/h11/"),
    ("anyio", "/anyio/"),
    ("sniffio", "/sniffio/"),
    ("starlette", "/starlette/"),
    ("uvicorn", "/uvicorn/"),
    ("asyncio", "/asyncio/"),
    ("uvloop", "uvloop"),
    ("json", "/json/"),
)


def _layer(path: str, name: str) -> str:
    for layer, mark in _LAYERS:
        if mark in path or (path == "~" and mark in name):
            return layer
    return "builtins" if path == "~" else "other python"


def profiled_proxy_main(upstream: str, port: int, out: str) -> None:
    """The proxy as ``toolwire serve`` runs it, under cProfile (timed by this thread's
    CPU clock) from SIGUSR1 to SIGUSR2, then its statistics written to ``out``."""
    import cProfile

    import uvicorn

    from toolwire.serve import create_app

    profiler = cProfile.Profile(time.thread_time)  # CPU time: waits and preemption left out
    signal.signal(signal.SIGUSR1, lambda *_: profiler.enable())
    signal.signal(signal.SIGUSR2, lambda *_: (profiler.disable(), profiler.dump_stats(out)))
    app = create_app(upstream, freeze_gc=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def profile(src: Path, streams: int, tokens: int, top: int) -> None:
    """Where the proxy's CPU goes per upstream token, by layer (cProfile's own time of
    each function, grouped by package) and its ``top`` functions: ``streams`` paced
    streams of ``tokens`` tokens after a warm-up round. cProfile's cost per call
    inflates the layers of many small calls; the shares steer, callgrind's totals
    (``--only count``) measure."""
    import pstats

    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    out = tmp / f"bench_serve.profile.{os.getpid()}"
    upstream, direct = start_upstream(tmp)
    proxy, url = _instrumented_proxy("--profiled-proxy", direct, src, out)
    try:
        asyncio.run(_streams(url, streams, 5, 0.0))
        proxy.send_signal(signal.SIGUSR1)
        asyncio.run(_streams(url, streams, tokens, 0.02))
        proxy.send_signal(signal.SIGUSR2)
        deadline = time.monotonic() + 60
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        for process in (proxy, upstream):
            process.send_signal(signal.SIGTERM)
            process.wait(120)
    stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    out.unlink()
    layers: dict[str, float] = {}
    rows = []
    for (path, line, name), (_cc, calls, own, _cum, _callers) in stats.items():
        layer = _layer(path, name)
        layers[layer] = layers.get(layer, 0.0) + own
        rows.append((own, calls, layer, f"{Path(path).name}:{line}({name})"))
    total = sum(layers.values())
    n = streams * tokens
    print(f"\n## Proxy CPU by layer (cProfile own time; {src}; {streams} x {tokens} tokens)\n")
    print("| layer | share | µs per token (profiled) |")
    print("|---|---:|---:|")
    for layer, own in sorted(layers.items(), key=lambda kv: -kv[1]):
        print(f"| {layer} | {own / total:.1%} | {own / n * 1e6:.1f} |")
    print(f"| total | | {total / n * 1e6:.1f} |")
    print("\n| function | layer | calls per token | share |\n|---|---|---:|---:|")
    for own, calls, layer, where in sorted(rows, reverse=True)[:top]:
        print(f"| {where} | {layer} | {calls / n:.2f} | {own / total:.1%} |")


_SUMMARY = re.compile(r"^(?:summary|totals): (\d+)", re.M)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--upstream-only")
    parser.add_argument("--traced-proxy", nargs=3)
    parser.add_argument("--profiled-proxy", nargs=3)
    parser.add_argument("--only", choices=["inproc", "count", "first-byte", "ttfb", "profile"])
    parser.add_argument("--top", type=int, default=30, help="profile: functions listed")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="toolwire to count")
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--tokens", type=int, default=100, help="per stream (count)")
    parser.add_argument(
        "--requests", type=int, default=0, help="count: per request, this many one at a time"
    )
    args = parser.parse_args()
    if args.upstream_only:
        upstream_main(args.upstream_only)
        return
    if args.traced_proxy:
        upstream_url, port, out = args.traced_proxy
        traced_proxy_main(upstream_url, int(port), out)
        return
    if args.profiled_proxy:
        upstream_url, port, out = args.profiled_proxy
        profiled_proxy_main(upstream_url, int(port), out)
        return
    if args.only == "profile":
        profile(args.src, args.streams, args.tokens, args.top)
        return
    if args.only == "first-byte":
        first_byte(args.src, args.requests or 300)
        return
    if args.only == "ttfb":
        ttfb(args.src, args.requests or 400)
        return
    if args.only == "count":
        count(args.src, args.streams, args.tokens, args.requests)
        return
    inproc(1000, 3 if args.quick else 7)
    if args.only:
        return
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    upstream, direct = start_upstream(tmp)
    proxy_process, proxy = start_proxy(direct)
    try:
        print(
            f"python {sys.version.split()[0]}, {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}"
        )
        seq = asyncio.run(sequential(direct, proxy, 30 if args.quick else 300))
        streams = 20 if args.quick else 100
        conc = asyncio.run(concurrent(direct, proxy, proxy_process.pid, streams, 100))
        rss = asyncio.run(memory(proxy, proxy_process.pid, 1_000 if args.quick else 10_000))
        summary(seq, conc, rss)
    finally:
        for process in (proxy_process, upstream):
            process.send_signal(signal.SIGTERM)
            process.wait(30)


if __name__ == "__main__":
    main()
