"""What Ray costs and when it pays: RayBackend against the local executor.

Run: ``.venv/bin/python bench/bench_ray.py`` (``--quick`` for a smoke run). Starts its
own local Ray instance (2 CPUs, no dashboard, token auth) and stops it at the end.

1. **Start and memory.** Wall time of ``ray.init`` and ``ray.shutdown``; resident
   memory of the driver before and after, and of every process Ray started (GCS,
   raylet, workers), from ``/proc``.
2. **Per-call overhead.** One call to a sync no-op tool, run alone (an unsafe call) and
   in a parallel batch of 20 safe calls: the local executor (worker threads), toolwire's
   ``RayBackend``, and a bare ``ray.get(f.remote())`` (the floor a Ray task costs).
3. **Break-even.** A batch of 4 concurrency-safe, CPU-bound pure-Python tools of
   duration *d*: locally they share one GIL (about 4·d), on Ray they run in parallel
   worker processes (about 2·d on 2 CPUs) plus Ray's overhead. The ratio local/Ray for
   each *d*; Ray pays off where it passes 1.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_AUTH_MODE", "token")  # Ray 2.60: token auth on every node
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))

import ray

from toolwire import ExecutionOptions, RayBackend, tool
from toolwire.run import Executor
from toolwire.turn import ToolRequest

QUICK = "--quick" in sys.argv


@tool
def noop(x: int) -> int:
    """Returns its input."""
    return x


@tool(concurrency_safe=True)
def noop_safe(x: int) -> int:
    """Returns its input."""
    return x


@tool(concurrency_safe=True)
def spin(loops: int) -> int:
    """Burns CPU in pure Python (holds the GIL): a fixed amount of work, not of time."""
    total = 0
    for i in range(loops):
        total += i
    return total


def loops_per_ms() -> float:
    """Calibrate ``spin``: loops per millisecond, alone on one core."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        spin.fn(200_000)
        best = min(best, time.perf_counter() - start)
    return 200_000 / (best * 1000)


def _bare(x: int) -> int:
    return x


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def requests(name: str, values: list[dict[str, Any]]) -> list[ToolRequest]:
    import json

    return [ToolRequest(f"c{i}", name, json.dumps(v), v, None, i) for i, v in enumerate(values)]


def timed(executor: Executor, batch: list[ToolRequest], repeat: int) -> float:
    async def once() -> None:
        results = await executor.execute(batch)
        assert all(r.status.value == "ok" for r in results), results

    async def main() -> list[float]:
        await once()  # warm: threads, staged tools, worker processes
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            await once()
            times.append(time.perf_counter() - start)
        return times

    return statistics.median(asyncio.run(main()))


def bare_ray(n: int, repeat: int) -> float:
    remote = ray.remote(max_retries=0)(_bare)
    ray.get([remote.remote(i) for i in range(n)])
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        ray.get([remote.remote(i) for i in range(n)])
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    repeat = 3 if QUICK else 15
    driver = os.getpid()
    before = rss_kib(driver)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    started = time.perf_counter() - start
    local = Executor([noop, noop_safe, spin])
    remote = Executor([noop, noop_safe, spin], ExecutionOptions(backend=RayBackend()))
    timed(remote, requests("noop_safe", [{"x": i} for i in range(4)]), 1)  # workers up
    after = rss_kib(driver)
    ray_rss = sum(rss_kib(pid) for pid in descendants(driver))
    print("## Start and memory\n")
    print(f"- ray.init (local, 2 CPUs, no dashboard): {started:.2f} s")
    print(f"- driver RSS: {before / 1024:.0f} MiB before, {after / 1024:.0f} MiB after")
    print(f"- processes Ray started (GCS, raylet, workers): {ray_rss / 1024:.0f} MiB RSS\n")

    print("## Per-call overhead (median)\n")
    print("| case | local executor | RayBackend | bare Ray task | RayBackend / local |")
    print("|---|---:|---:|---:|---:|")
    one = requests("noop", [{"x": 1}])
    lone_local, lone_ray = timed(local, one, repeat * 4), timed(remote, one, repeat * 4)
    lone_bare = bare_ray(1, repeat * 4)
    print(
        f"| 1 call, alone | {lone_local * 1e6:.0f} µs | {lone_ray * 1e3:.2f} ms | "
        f"{lone_bare * 1e3:.2f} ms | {lone_ray / lone_local:.0f}x |"
    )
    batch = requests("noop_safe", [{"x": i} for i in range(20)])
    many_local, many_ray = timed(local, batch, repeat), timed(remote, batch, repeat)
    many_bare = bare_ray(20, repeat)
    print(
        f"| per call, batch of 20 | {many_local / 20 * 1e6:.0f} µs | "
        f"{many_ray / 20 * 1e3:.2f} ms | {many_bare / 20 * 1e3:.2f} ms | "
        f"{many_ray / many_local:.0f}x |\n"
    )

    print("## Break-even: 4 parallel CPU-bound calls of d ms each (median)\n")
    print("| d | local (one GIL) | RayBackend (2 CPUs) | local / Ray |")
    print("|---:|---:|---:|---:|")
    rate = loops_per_ms()
    for ms in [1, 10, 50] if QUICK else [1, 5, 10, 20, 50, 100, 200]:
        work = requests("spin", [{"loops": int(ms * rate)}] * 4)
        t_local, t_ray = timed(local, work, repeat), timed(remote, work, repeat)
        print(
            f"| {ms} ms | {t_local * 1e3:.1f} ms | {t_ray * 1e3:.1f} ms | {t_local / t_ray:.2f}x |"
        )

    start = time.perf_counter()
    ray.shutdown()
    print(f"\nray.shutdown: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
