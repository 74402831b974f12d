"""Audit-log and tracing overhead per tool call.

Run: ``.venv/bin/python bench/bench_observe.py`` (prints a Markdown table; ``--quick``
for a smoke run). Offline: the model is scripted.

A full agent run whose first turn makes N calls to an async no-op tool and whose
second answers, timed with and without an observer; the overhead per call is the
difference divided by N (it includes the run's own rows: the run, two requests, the
end, and the waits for the writer before the second request and at the end). The
observers:

* ``AuditLog`` with grouped commits (the default): rows queued to a writer thread,
  committed together;
* ``AuditLog(group_commits=False)``: what a straightforward logger does, one commit
  per row in the run's own thread;
* OpenTelemetry (``instrument=True``) with the SDK's ``BatchSpanProcessor`` and an
  in-memory exporter, what users would otherwise reach for (when installed).

The log files live in a temporary directory on the same disk as the checkout's /tmp.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolwire.observe import AuditLog
from toolwire.run import Agent
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import tool

warnings.simplefilter("ignore")


@tool(concurrency_safe=True, side_effects=False)
async def noop(i: int) -> str:
    """Does nothing."""
    return "ok"


def script(n: int) -> list[Any]:
    """The model's turns: N calls, then the answer (chunks built once)."""
    return [tool_call_turn(*[("noop", {"i": i}, f"c{i}") for i in range(n)]), text_turn("done")]


def median_run(make_agent: Callable[[], Agent], turns: list[Any], repeat: int) -> float:
    """Median seconds of one run, over ``repeat`` runs in one event loop."""
    agent = make_agent()

    async def main() -> list[float]:
        samples = []
        for i in range(repeat + 1):
            agent.model = ScriptedModel(turns)
            start = time.perf_counter()
            await agent.run("go")
            if i:  # the first run warms up
                samples.append(time.perf_counter() - start)
        return samples

    return statistics.median(asyncio.run(main()))


def otel_agent() -> Callable[[], Agent] | None:
    """An agent with OpenTelemetry spans going to an SDK pipeline, if the SDK is here."""
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError:
        return None
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(InMemorySpanExporter(), max_queue_size=1 << 20))
    trace.set_tracer_provider(provider)
    return lambda: Agent(ScriptedModel([]), [noop], instrument=True)


def main(quick: bool = False) -> None:
    sizes = (10,) if quick else (1, 10, 100)
    repeat = 5 if quick else 41
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        observers: dict[str, Callable[[], Agent] | None] = {
            "AuditLog, grouped commits (writer thread)": lambda: Agent(
                ScriptedModel([]), [noop], log=AuditLog(root / "grouped.db")
            ),
            "AuditLog, one commit per row": lambda: Agent(
                ScriptedModel([]), [noop], log=AuditLog(root / "each.db", group_commits=False)
            ),
            "AuditLog, `:memory:`, grouped": lambda: Agent(
                ScriptedModel([]), [noop], log=AuditLog(":memory:")
            ),
            "OpenTelemetry SDK (BatchSpanProcessor)": otel_agent(),
        }
        base = {
            n: median_run(lambda: Agent(ScriptedModel([]), [noop]), script(n), repeat)
            for n in sizes
        }
        print(f"| µs per call | {' | '.join(f'N={n}' for n in sizes)} |")
        print(f"|---|{'---:|' * len(sizes)}")
        print(
            "| run without an observer (whole loop) | "
            + " | ".join(f"{base[n] / n * 1e6:,.1f}" for n in sizes)
            + " |"
        )
        for label, make in observers.items():
            if make is None:
                print(f"| {label} | " + " | ".join("—" for _ in sizes) + " |")
                continue
            cells = []
            for n in sizes:
                with_observer = median_run(make, script(n), repeat)
                cells.append(f"+{(with_observer - base[n]) / n * 1e6:,.1f}")
            print(f"| {label} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
