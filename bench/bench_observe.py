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


def paired_runs(
    make_base: Callable[[], Agent],
    make_observed: Callable[[], Agent],
    turns: list[Any],
    repeat: int,
) -> tuple[float, float, float, float]:
    """Median wall and CPU seconds of a run without and with the observer.

    The two agents run alternately in one event loop, so that a burst of load on this
    shared machine hits both sides alike. CPU time is the process's (every thread:
    the writer's work counts), and moves much less with other processes' load.
    """
    agents = (make_base(), make_observed())

    async def main() -> list[list[tuple[float, float]]]:
        samples: list[list[tuple[float, float]]] = [[], []]
        for i in range(repeat + 1):
            for side, agent in enumerate(agents):
                agent.model = ScriptedModel(turns)
                wall, cpu = time.perf_counter(), time.process_time()
                await agent.run("go")
                if i:  # the first round warms up
                    samples[side].append((time.perf_counter() - wall, time.process_time() - cpu))
        return samples

    base, observed = asyncio.run(main())
    return (
        statistics.median(s[0] for s in base),
        statistics.median(s[1] for s in base),
        statistics.median(s[0] for s in observed),
        statistics.median(s[1] for s in observed),
    )


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
        print("µs per call, wall time / CPU time of the process (all threads), whole loop;")
        print("for the observers, the difference from the run without one.\n")
        print(f"| µs per call | {' | '.join(f'N={n}' for n in sizes)} |")
        print(f"|---|{'---:|' * len(sizes)}")
        rows: dict[str, list[str]] = {"run without an observer": []}
        for label, make in observers.items():
            rows[label] = []
            for n in sizes:
                if make is None:
                    rows[label].append("—")
                    continue
                base_wall, base_cpu, wall, cpu = paired_runs(plain, make, script(n), repeat)
                if len(rows["run without an observer"]) < len(sizes):
                    rows["run without an observer"].append(
                        f"{base_wall / n * 1e6:,.1f} / {base_cpu / n * 1e6:,.1f}"
                    )
                rows[label].append(
                    f"+{(wall - base_wall) / n * 1e6:,.1f} / +{(cpu - base_cpu) / n * 1e6:,.1f}"
                )
        for label, cells in rows.items():
            print(f"| {label} | {' | '.join(cells)} |")


def plain() -> Agent:
    """The agent without an observer."""
    return Agent(ScriptedModel([]), [noop])


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
