"""Smoke test of bench/bench_executor.py: every contestant does the same job (no timing)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_executor


@pytest.mark.parametrize(("label", "module", "factory"), bench_executor.LOOPS)
def test_loops_run_the_calls_and_answer(label: str, module: str | None, factory: Any) -> None:
    if module and not bench_executor.available(module):
        pytest.skip(f"{module} is not installed")
    result = asyncio.run(factory(3)())
    text = getattr(result, "output", None) or getattr(result, "final_output", None)
    assert text == "done"


@pytest.mark.parametrize(("label", "module", "factory"), bench_executor.STEPS)
def test_steps_answer_every_call(label: str, module: str | None, factory: Any) -> None:
    if module and not bench_executor.available(module):
        pytest.skip(f"{module} is not installed")
    result = asyncio.run(factory(3)())
    answers = result if isinstance(result, list) else result["messages"][1:]
    assert len(answers) == 3
