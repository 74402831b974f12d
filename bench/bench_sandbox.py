"""Benchmark: what the sandbox costs per command, against a bare ``subprocess.run``.

Run it with::

    .venv/bin/python bench/bench_sandbox.py            # 200 runs of each
    .venv/bin/python bench/bench_sandbox.py --quick    # 30 runs of each

Each contestant runs ``true`` (the command does nothing, so all that is measured is
the cost of starting, isolating, limiting and reaping it) and, second, ``/usr/bin/python3
-c pass`` (what the ``run_python`` tool pays before the model's code runs):

* ``subprocess.run`` — the floor: fork/exec, no isolation, no limits;
* ``bwrap`` alone — the same namespaces and mounts toolwire asks for, with
  ``subprocess.run`` (what isolation itself costs);
* ``toolwire.Sandbox.run_sync`` — bwrap plus ``prlimit`` (and ``setpriv`` when root),
  the process count, the output reader, the wall clock;
* ``toolwire.Sandbox`` unisolated — the ``allow_unisolated`` fallback: limits only.

Reported: the median wall time per run and its ratio to the floor. Runs alternate
between contestants so that drift on a shared machine hits all of them alike.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import toolwire
from toolwire.safety import SandboxWarning, sandbox
from toolwire.safety import bwrap as layout


def contestants(workspace: Path, argv: list[str]) -> dict[str, Callable[[], object]]:
    """Name -> a function running ``argv`` once."""
    isolated = toolwire.Sandbox(workspace)
    found: dict[str, Callable[[], object]] = {
        "subprocess.run": lambda: subprocess.run(argv, check=True, capture_output=True),
    }
    bwrap_path = layout.find_tool("bwrap")
    if bwrap_path is not None:
        prefix = layout.bwrap_argv(bwrap_path, isolated._plan(isolated.env))
        found["bwrap alone"] = lambda: subprocess.run(
            [*prefix, "--", *argv], check=True, capture_output=True
        )
    found["toolwire.Sandbox"] = lambda: _check(isolated.run_sync(argv))
    original = sandbox._isolation
    sandbox._isolation = lambda as_root: (None, "benchmark: the fallback")  # type: ignore[assignment]
    try:
        fallback = toolwire.Sandbox(workspace, allow_unisolated=True)
    finally:
        sandbox._isolation = original
    found["toolwire unisolated"] = lambda: _check(fallback.run_sync(argv))
    return found


def _check(result: toolwire.SandboxResult) -> None:
    if not result.ok:
        raise SystemExit(f"the sandboxed command failed: {result}")


def measure(runs: dict[str, Callable[[], object]], count: int) -> dict[str, float]:
    """Median seconds per run of each contestant (interleaved)."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for function in runs.values():
        function()  # warm up: page cache, the sandbox's one-time checks
    for _ in range(count):
        for name, function in runs.items():
            started = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 runs instead of 200")
    args = parser.parse_args()
    count = 30 if args.quick else 200
    print(f"Python {platform.python_version()}, {platform.machine()}, {count} runs each")
    warnings.simplefilter("ignore", SandboxWarning)
    with tempfile.TemporaryDirectory() as folder:
        for label, argv in (
            ("true", ["true"]),
            ("python3 -c pass", ["/usr/bin/python3", "-c", "pass"]),
        ):
            medians = measure(contestants(Path(folder), argv), count)
            floor = medians["subprocess.run"]
            print(f"\n{label}:")
            print("| contestant | median per run | ratio to subprocess.run |")
            print("|---|---:|---:|")
            for name, seconds in medians.items():
                print(f"| {name} | {seconds * 1e3:.2f} ms | {seconds / floor:.2f}x |")


if __name__ == "__main__":
    sys.exit(main())
