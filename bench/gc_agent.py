"""The garbage collector's share of the default agent's N-tool run, against the floor's.

Run: ``python bench/gc_agent.py`` (``--runs K``, default 400; ``--src PATH``: another
copy of the package). The workload is ``bench_executor.py --only agent``'s (one turn of
a scripted model calls N distinct no-op tools, a second turn answers) for the floor and
the default ``Agent()``, at N = 10 and 100. Per run:

* *cyclic garbage*: the objects a run leaves in reference cycles (found with
  collections off, then one collection), which only a collection frees;
* *peak tracked objects*: the net count of GC-tracked objects (``gc.get_count()[0]``,
  collections off) when the last tool runs: a generation-0 collection comes every 700
  of them;
* *peak bytes*: the most memory (``tracemalloc``) the run holds above what was held
  before it: what it writes fresh, which a cold cache fetches line by line (a run after
  another framework's pays ~100 ns a 64-byte line; bench/README.md, "where the clock
  goes");
* *collections* by generation and the collector's CPU time (``gc.callbacks``, thread
  time), against the run's CPU time: mean and median (a median hides the rarer, dearer
  older-generation collections).

Instruction counts (``count_agent.py``) barely see the collector: a collection is few
instructions but many cache misses, and garbage still pending when counting stops is
never counted.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
import tracemalloc
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

if "--src" in sys.argv:
    sys.path.insert(0, sys.argv[sys.argv.index("--src") + 1])

import bench_executor as bench  # after the --src path

Make = Callable[[], Awaitable[Any]]


def _factory(who: str) -> bench.Factory:
    return bench.floor_run if who == "floor" else bench.toolwire_agent(None)


async def _cyclic(make: Make) -> int:
    """How many objects one run leaves in reference cycles."""
    gc.collect()
    gc.disable()
    try:
        await make()
        return gc.collect()
    finally:
        gc.enable()


async def _peak(who: str, n: int) -> int:
    """Net GC-tracked objects alive when the run's last tool runs."""
    seen = [0, 0]  # base, peak

    async def body(i: int) -> str:
        seen[1] = max(seen[1], gc.get_count()[0] - seen[0])
        return "ok"

    make = _factory(who)(n, body)
    await make()
    gc.collect()
    gc.disable()
    try:
        seen[0] = gc.get_count()[0]
        await make()
    finally:
        gc.enable()
    return seen[1]


async def _peak_bytes(make: Make) -> int:
    """The most bytes one run holds at once above what was held before it."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        await make()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


async def _timed(make: Make, runs: int) -> tuple[list[float], Counter[int], dict[int, float]]:
    """Each run's CPU time; collections and their CPU time by generation."""
    count: Counter[int] = Counter()
    spent: dict[int, float] = defaultdict(float)
    began = [0.0]

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = time.thread_time()
        else:
            count[info["generation"]] += 1
            spent[info["generation"]] += time.thread_time() - began[0]

    gc.collect()
    gc.callbacks.append(watch)
    samples = []
    try:
        for _ in range(runs):
            start = time.thread_time()
            await make()
            samples.append(time.thread_time() - start)
    finally:
        gc.callbacks.remove(watch)
    return samples, count, spent


async def _row(who: str, n: int, runs: int) -> str:
    make = _factory(who)(n, bench.noop_body)
    for _ in range(3):  # warm: first-run caches
        await make()
    cyclic = await _cyclic(make)
    peak = await _peak(who, n)
    held = await _peak_bytes(make)
    samples, count, spent = await _timed(make, runs)
    mean = statistics.fmean(samples)
    in_gc = sum(spent.values()) / runs
    generations = ", ".join(
        f"{g}: {count[g] / runs:.2f} × {spent[g] / count[g] * 1e6:,.0f} µs" for g in sorted(count)
    )
    return (
        f"| {who} | {n} | {cyclic:,} | {peak:,} | {held / 1024:,.1f} KB | {generations or '-'} "
        f"| {in_gc * 1e3:.3f} ms ({in_gc / mean:.1%}) | {mean * 1e3:.2f} ms "
        f"| {statistics.median(samples) * 1e3:.2f} ms |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--src", default="", help="the package to measure (default: on the path)")
    args = ap.parse_args()
    print(
        "| run | N | cyclic garbage per run | peak tracked objects | peak bytes "
        "| collections per run × CPU each, by generation | collector's CPU per run "
        "| run's CPU, mean | median |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    for n in (10, 100):
        for who in ("floor", "default"):
            print(asyncio.run(_row(who, n, args.runs)), flush=True)


if __name__ == "__main__":
    main()
