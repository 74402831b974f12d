"""Smoke test of bench/bench_executor.py's agent rows: every contestant (the floor, the
toolwire agent with and without its context policy, and each installed peer) runs each
of the N tools exactly once per run. Correctness only, never timing."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_executor


@pytest.mark.parametrize(
    ("label", "module", "factory"), bench_executor.AGENTS, ids=[a[0] for a in bench_executor.AGENTS]
)
def test_every_contestant_calls_each_tool_once(
    label: str, module: str | None, factory: object
) -> None:
    if module is not None and importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    seen: list[int] = []

    async def body(i: int) -> str:
        seen.append(i)
        return "ok"

    make = factory(3, body)  # type: ignore[operator]
    asyncio.run(make())
    assert sorted(seen) == [0, 1, 2], label
