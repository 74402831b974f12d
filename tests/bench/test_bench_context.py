"""Smoke test of bench/bench_context.py: every policy's run answers every call; every
ranker returns k known tool names. Correctness only, never timing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench_context  # noqa: E402


@pytest.mark.parametrize("label", list(bench_context.POLICIES))
def test_every_policy_finishes_a_short_long_run_with_every_call_answered(label: str) -> None:
    totals, tools, answered = asyncio.run(
        bench_context.one_long_run(bench_context.POLICIES[label], 3)
    )
    assert answered and len(totals) == 4 and tools >= 1


def test_every_ranker_returns_k_known_names() -> None:
    data = bench_context.load_set()
    names = {t["name"] for t in data["tools"]}
    for select in bench_context.rankers(data["tools"]).values():
        picked = select(data["queries"][0]["query"], 15)
        assert len(picked) == 15 and set(picked) <= names
