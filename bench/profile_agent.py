"""Where a 100-tool agent run spends its time: cProfile's own time, by module.

Run: ``python bench/profile_agent.py`` (``--top N``: also the N costliest functions).
The workload is ``bench_executor.py``'s: one turn of a scripted model calls 100
distinct no-op tools, a second turn answers; the default ``Agent``, 20 runs after 3 to
warm up. Shares are of the profiled time (cProfile slows small functions most),
measured in the thread's CPU time (``time.thread_time``): with wall time, a function
descheduled on a loaded machine is charged for the wait, and the shares move from run
to run. ``--src PATH`` profiles another copy of the package (an older tree).
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import sys
import time
from collections import defaultdict

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


def main() -> None:
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
