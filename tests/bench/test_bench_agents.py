"""Smoke test of bench/bench_executor.py's agent rows: every contestant (the floor, the
toolwire agent with and without its context policy, and each installed peer) runs each
of the N tools exactly once per run. Correctness only, never timing."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Awaitable, Callable
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


@pytest.mark.parametrize("between", bench_executor.BETWEEN)
def test_interleaved_times_each_contestant_repeat_times(
    between: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever precedes each run (a shuffled neighbour, a cache flush, itself), every
    contestant is warmed once and timed ``repeat`` times, and gets its own median."""
    monkeypatch.setattr(bench_executor, "FLUSH_BYTES", 4096)  # the flush's code, not its size
    runs: dict[str, int] = {"a": 0, "b": 0, "c": 0}

    def contestant(label: str) -> Callable[[], Awaitable[None]]:
        async def make() -> None:
            runs[label] += 1

        return make

    medians = bench_executor.interleaved(
        {label: contestant(label) for label in runs},
        5,
        between=between,
    )
    assert runs == {"a": 6, "b": 6, "c": 6}
    assert set(medians) == {"a", "b", "c"}
    assert all(m >= 0 for m in medians.values())


def test_shuffled_order_varies_the_neighbour() -> None:
    """``shuffle`` gives the contestants more than one order (a fixed order always put the
    same contestant first after the floor, which paid the cold caches for the next)."""
    order: list[str] = []

    def contestant(label: str) -> Callable[[], Awaitable[None]]:
        async def make() -> None:
            order.append(label)

        return make

    bench_executor.interleaved(
        {label: contestant(label) for label in "abcd"},
        8,
        between="shuffle",
    )
    rounds = {tuple(order[i : i + 4]) for i in range(4, len(order), 4)}  # past the warm-up
    assert len(rounds) > 1


def test_interleaved_rejects_an_unknown_between() -> None:
    with pytest.raises(ValueError, match="choose one of"):
        bench_executor.interleaved({}, 1, between="sometimes")
