"""Instruction counts of the default agent's N-tool run, under ``valgrind --tool=callgrind``.

The workload is ``bench_executor.py --only agent``'s: one turn of a scripted model calls
N distinct no-op tools, a second turn answers; the floor is the same file's
``asyncio.gather`` + pydantic ``TypeAdapter`` + dict messages. On a shared machine a
10 ms run's CPU time moves by ±10%; its instruction count does not. For each
contestant and N this runs ``--repeats`` runs in one event loop under callgrind, and
the same process with none; the difference divided by the repeats is one run (start-up,
imports and building the agent cancel out). Columns as in the timed table: a run at
N = 10 and 100, the cost per extra call ``(c(100) - c(10)) / 90`` and the ratio to the
floor at N = 100. ``--src`` counts another copy of the package (an older tree side by
side with this one); ``--listen`` counts the run with a stream consumer attached
(``Agent.run_stream``), which asks the decoder for per-fragment events::

    python bench/count_agent.py
    PYTHONPATH=build/compiled python bench/count_agent.py     # the compiled wire layer
    python bench/count_agent.py --src /tmp/old/src --who default

``--collected`` counts with one process per contestant and N instead of two: it warms up
with one run, then callgrind collects only inside a C function wrapped around the
``--repeats`` runs (``--toggle-collect``); half the processes, for a loaded machine
(the two methods agree to 0.5%). ``--sizes`` counts other N (``--sizes 1 10 100``: the
run's fixed cost at N = 1 too); the per-extra-call column is always from the last two.

It needs ``valgrind`` (``apt-get install valgrind``) and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import shutil
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from callgrind import instructions  # noqa: E402 — bench/ on the path first

WHO = ("floor", "default", "context_off", "listen", "fragments", "fragments_listen")
FRAGMENT = 8  # characters per arguments fragment in the fragments workloads
SIZES = (10, 100)


def _make(who: str, n: int) -> Any:
    import bench_executor as bench

    if who == "floor":
        return bench.floor_run(n, bench.noop_body)
    if who.startswith("fragments"):
        return _fragments(n, listen=who.endswith("listen"))
    if who == "listen":
        return _listening(n)
    policy = None if who == "default" else bench.CONTEXT_OFF
    return bench.toolwire_agent(policy)(n, bench.noop_body)


def _listening(n: int) -> Any:
    """The default agent's run consumed as a stream of events (something listens)."""
    import bench_executor as bench
    from toolwire.run import Agent
    from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
    from toolwire.tools import tool

    tools = [
        tool(bench.named(bench.noop_body, k), concurrency_safe=True, side_effects=False)
        for k in range(n)
    ]
    calls = [(f"noop_{k}", {"i": k}, f"c{k}") for k in range(n)]
    script = [tool_call_turn(*calls), text_turn("done")]
    agent = Agent(ScriptedModel([]), tools)

    async def run() -> None:
        agent.model = ScriptedModel(script)
        async for _ in agent.run_stream("go"):
            pass

    return run


def _fragments(n: int, *, listen: bool) -> Any:
    """N calls of one tool whose ~2 KB of arguments arrive in 8-character fragments."""
    from toolwire.run import Agent
    from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
    from toolwire.tools import tool

    async def note(text: str) -> str:
        """Keeps a note."""
        return "ok"

    text = "lorem ipsum dolor sit amet, " * 72  # 2,016 characters
    calls = [("note", {"text": text}, f"c{k}") for k in range(n)]
    script = [tool_call_turn(*calls, fragment=FRAGMENT), text_turn("done")]
    agent = Agent(ScriptedModel([]), [tool(note, concurrency_safe=True, side_effects=False)])

    async def run() -> None:
        agent.model = ScriptedModel(script)
        if listen:
            async for _ in agent.run_stream("go"):
                pass
        else:
            await agent.run("go")

    return run


def _inner(src: str, who: str, n: int, repeats: int) -> None:
    if src:
        sys.path.insert(0, src)
    make = _make(who, n)

    async def runs() -> None:
        await make()  # warm: first-call caches
        for _ in range(repeats):
            await make()

    asyncio.run(runs())


def _inner_collected(src: str, who: str, n: int, repeats: int) -> None:
    """One warm-up run, then ``repeats`` runs inside ``itertools.starmap``'s C function,
    which ``--toggle-collect`` switches callgrind's counting on for."""
    if src:
        sys.path.insert(0, src)
    make = _make(who, n)

    async def runs(count: int) -> None:
        for _ in range(count):
            await make()

    loop = asyncio.new_event_loop()
    loop.run_until_complete(runs(1))  # warm: first-call caches
    list(itertools.starmap(lambda: loop.run_until_complete(runs(repeats)), [()]))
    loop.close()


def per_run(src: str, who: str, n: int, repeats: int, collected: bool = False) -> float:
    """Instructions of one run: (count with ``repeats`` runs - count with none) / repeats,
    or with ``collected``, the count inside the ``repeats`` runs / repeats."""
    if collected:
        args = [__file__, "--inner-collected", src, who, str(n), str(repeats)]
        return instructions(args, collect="starmap_next") / repeats

    def count(k: int) -> int:
        return instructions([__file__, "--inner", src, who, str(n), str(k)])

    return (count(repeats) - count(0)) / repeats


def _per_fragment(src: str, repeats: int, build: str) -> int:
    """Instructions per arguments fragment of a scripted 4-call run, listened to or not."""
    import json

    text = "lorem ipsum dolor sit amet, " * 72
    fragments = 4 * -(-len(json.dumps({"text": text})) // FRAGMENT)
    print(f"toolwire {build} wire layer, 4 calls, {fragments} fragments, instructions\n")
    print("| run | per run | per fragment |")
    print("|---|---:|---:|")
    for who in ("fragments", "fragments_listen"):
        count = per_run(src, who, 4, repeats)
        label = "stream consumer" if who.endswith("listen") else "no listener (`run`)"
        print(f"| {label} | {count / 1e6:.2f} M | {count / fragments:,.0f} |", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Print instructions per run, per extra call and against the floor."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs per counted process")
    ap.add_argument("--who", nargs="+", choices=WHO, default=["floor", "default", "context_off"])
    ap.add_argument("--src", default="", help="the package to count (default: on the path)")
    ap.add_argument(
        "--fragments",
        action="store_true",
        help="per arguments fragment: 4 calls x 2 KB in 8-character fragments, "
        "with no listener and with a stream consumer",
    )
    ap.add_argument(
        "--collected",
        action="store_true",
        help="one process per count, callgrind collecting only inside the runs",
    )
    ap.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=list(SIZES),
        help="the N counted (default: 10 100); the floor's ratio is at the last one",
    )
    ap.add_argument("--inner", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--inner-collected", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.inner:
        src, who, n, repeats = args.inner
        _inner(src, who, int(n), int(repeats))
        return 0
    if args.inner_collected:
        src, who, n, repeats = args.inner_collected
        _inner_collected(src, who, int(n), int(repeats))
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 1
    if args.src:
        sys.path.insert(0, args.src)
    import toolwire.wire

    build = "compiled" if toolwire.wire.COMPILED else "pure"
    if args.fragments:
        return _per_fragment(args.src, args.repeats, build)
    sizes = sorted(set(args.sizes))
    if len(sizes) < 2:
        ap.error("--sizes needs at least two N (the per-extra-call column is from the last two)")
    small, large = sizes[-2], sizes[-1]
    print(f"toolwire {build} wire layer, Python {sys.version.split()[0]}, instructions per run\n")
    heads = " | ".join(f"N={n}" for n in sizes)
    print(f"| contestant | {heads} | per extra call | × floor at N={large} |")
    print("|---|" + "---:|" * (len(sizes) + 2))
    floor_large = per_run(args.src, "floor", large, args.repeats, args.collected)
    for who in args.who:
        counts = {
            n: per_run(args.src, who, n, args.repeats, args.collected)
            for n in sizes
            if not (who == "floor" and n == large)
        }
        if who == "floor":
            counts[large] = floor_large
        extra = (counts[large] - counts[small]) / (large - small)
        cells = " | ".join(f"{counts[n] / 1e6:.3f} M" for n in sizes)
        print(
            f"| {who} | {cells} | {extra / 1e3:.1f} k | {counts[large] / floor_large:.2f}x |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
