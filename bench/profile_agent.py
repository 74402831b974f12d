"""Where a 100-tool agent run spends its time: cProfile's own time, by module.

Run: ``python bench/profile_agent.py`` (``--top N``: also the N costliest functions;
``--opcodes``: instead, the Python bytecodes one extra call executes, by area and by
function, counted with ``sys.settrace`` over one run at N = 10 and one at N = 100: a
deterministic count, in seconds, that moves with the Python work a change adds or
removes, not with what a C function does inside one bytecode; confirm with
``count_agent.py``).
The workload is ``bench_executor.py``'s: one turn of a scripted model calls 100
distinct no-op tools, a second turn answers; the default ``Agent``, 20 runs after 3 to
warm up. Shares are of the profiled time (cProfile slows small functions most),
measured in the thread's CPU time (``time.thread_time``): with wall time, a function
descheduled on a loaded machine is charged for the wait, and the shares move from run
to run. ``--src PATH`` profiles another copy of the package (an older tree).
"""

from __future__ import annotations

import asyncio
import collections
import cProfile
import pstats
import sys
import time
from collections import defaultdict
from types import FrameType
from typing import Any

if "--src" in sys.argv:
    sys.path.insert(0, sys.argv[sys.argv.index("--src") + 1])

import bench_executor as bench  # after the --src path

GROUPS = (
    ("toolwire/context/", "toolwire context/"),
    ("toolwire/run/", "toolwire run/"),
    ("toolwire/wire/", "toolwire wire/"),
    ("toolwire/tools/", "toolwire tools/"),
    ("toolwire/history/", "toolwire history/"),
    ("toolwire/testing.py", "ScriptedModel (toolwire/testing.py)"),
    ("toolwire/", "toolwire, other"),
    ("asyncio/", "asyncio"),
)


def group(filename: str) -> str:
    for marker, label in GROUPS:
        if marker in filename:
            return label
    return "builtins and other libraries"


def opcodes(n: int) -> collections.Counter[tuple[str, str]]:
    """The bytecodes one traced run at N = ``n`` executes, by (file, function)."""
    make = bench.toolwire_agent(None)(n, bench.noop_body)
    counts: collections.Counter[tuple[str, str]] = collections.Counter()

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            code = frame.f_code
            counts[(code.co_filename, f"{code.co_name}:{code.co_firstlineno}")] += 1
        return tracer

    async def traced() -> None:
        await make()  # warm: first-call caches
        await make()
        sys.settrace(tracer)
        try:
            await make()
        finally:
            sys.settrace(None)

    asyncio.run(traced())
    return counts


def per_call_opcodes(top: int) -> None:
    """Print the bytecodes of one extra call ((c(100) - c(10)) / 90), by area and function."""
    small, large = opcodes(10), opcodes(100)
    extra = {key: (large[key] - small.get(key, 0)) / 90 for key in large}
    print(f"bytecodes per run: N=10 {sum(small.values()):,}, N=100 {sum(large.values()):,}")
    print(f"per extra call: {(sum(large.values()) - sum(small.values())) / 90:,.0f}\n")
    areas: dict[str, float] = defaultdict(float)
    for (filename, _), count in extra.items():
        areas[group(filename)] += count
    print("| where | bytecodes per extra call |")
    print("|---|---:|")
    for label, count in sorted(areas.items(), key=lambda item: -item[1]):
        print(f"| {label} | {count:,.0f} |")
    print()
    for (filename, function), count in sorted(extra.items(), key=lambda item: -item[1])[:top]:
        print(f"{count:8.1f}  {'/'.join(filename.rsplit('/', 2)[-2:])} {function}")


def main() -> None:
    if "--opcodes" in sys.argv:
        top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 20
        per_call_opcodes(top)
        return
    make = bench.toolwire_agent(None)(100, bench.noop_body)

    async def runs(count: int) -> None:
        for _ in range(count):
            await make()

    asyncio.run(runs(3))
    profile = cProfile.Profile(time.thread_time)
    profile.enable()
    asyncio.run(runs(20))
    profile.disable()
    stats = pstats.Stats(profile)
    shares: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        shares[group(filename)] += own
    total = sum(shares.values())
    print(f"| where (own time) | share of {total / 20 * 1000:.1f} ms per profiled run |")
    print("|---|---:|")
    for label, own in sorted(shares.items(), key=lambda item: -item[1]):
        print(f"| {label} | {own / total:.1%} |")
    if "--top" in sys.argv:
        stats.sort_stats("tottime").print_stats(int(sys.argv[sys.argv.index("--top") + 1]))


if __name__ == "__main__":
    main()
