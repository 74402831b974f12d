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


def calls_of_one_run(factory: bench_executor.Factory) -> list[int]:
    """The tools one run of ``factory``'s contestant at N=3 called, in order called."""
    seen: list[int] = []

    async def body(i: int) -> str:
        seen.append(i)
        return "ok"

    asyncio.run(factory(3, body)())
    return sorted(seen)


@pytest.mark.parametrize(
    ("label", "module", "factory"), bench_executor.AGENTS, ids=[a[0] for a in bench_executor.AGENTS]
)
def test_every_contestant_calls_each_tool_once(
    label: str, module: str | None, factory: bench_executor.Factory
) -> None:
    if module is not None and importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    assert calls_of_one_run(factory) == [0, 1, 2], label


def test_an_old_tree_runs_beside_this_toolwire(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--calibrate``'s rows: the tree before the context work, exported from git and
    renamed, imports beside this toolwire and runs each tool once. Skipped where git
    has not that commit (a shallow clone, an exported tarball)."""
    try:
        package = bench_executor.export_tree("cc122c2^", tmp_path)
    except bench_executor.TreeUnavailable as error:
        pytest.skip(f"no git history with cc122c2 here: {error}")
    assert package == "toolwire_43c6e36"
    sources = list((tmp_path / package).rglob("*.py"))
    assert sources
    assert not [f for f in sources if bench_executor.ABSOLUTE_IMPORT.search(f.read_bytes())]
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        factory = bench_executor.toolwire_agent(None, package)
        assert Path(sys.modules[f"{package}.run"].__file__ or "").is_relative_to(tmp_path)
        assert calls_of_one_run(factory) == [0, 1, 2]
    finally:
        for name in [m for m in sys.modules if m.partition(".")[0] == package]:
            del sys.modules[name]


def test_an_unknown_revision_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(bench_executor.TreeUnavailable, match="rev-parse"):
        bench_executor.export_tree("no-such-revision", tmp_path)


def test_in_units_scales_this_toolwire_by_each_reference() -> None:
    """A reference row that costs 5x here what it cost there scales this toolwire's rows
    by 1/5; a reference absent from the table is left out."""
    default, context_off = bench_executor.SCALED
    times = {
        default: {10: 1e-3, 100: 1e-3 + 90 * 20e-6},  # 20 µs per extra call
        context_off: {10: 1e-3, 100: 1e-3 + 90 * 30e-6},
        "old": {10: 2e-3, 100: 2e-3 + 90 * 100e-6},
        "peer": {10: 20e-3, 100: 60e-3},
    }
    rows = bench_executor.in_units(
        times,
        [("old", "per extra call", 20e-6), ("peer", "N=100", 12e-3), ("absent", "N=100", 1.0)],
    )
    assert [(row, measure) for row, measure, *_ in rows] == [
        ("old", "per extra call"),
        ("peer", "N=100"),
    ]
    (_, _, there, here, old), (_, _, _, _, peer) = rows
    assert (there, here) == (20e-6, pytest.approx(100e-6))
    assert old == {default: pytest.approx(4e-6), context_off: pytest.approx(6e-6)}
    assert peer == {default: pytest.approx(4e-6), context_off: pytest.approx(6e-6)}


def test_calibrate_args_name_trees_and_their_costs() -> None:
    parse = bench_executor.calibrate_args
    assert parse(["bench_executor.py", "--only", "agent"]) is None
    assert parse(["bench_executor.py", "--calibrate", "--only", "agent"]) == {
        "cc122c2^": 18e-6,
        "fed50f2": 44e-6,
    }
    assert parse(["--calibrate", "v0.1=12.5", "abc123", "--quick"]) == {
        "v0.1": pytest.approx(12.5e-6),
        "abc123": None,
    }


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
