"""What a durable run's start rows cost: the commit before each call that may not run twice.

Run: ``.venv/bin/python bench/bench_durable.py`` (prints a Markdown table; ``--quick``
for a smoke run). Offline: the model is scripted.

With a run store (``Agent(log=AuditLog(...))``), a call whose tool has side effects and
is not idempotent has its start row committed before it runs, awaited off the event
loop (``asyncio.to_thread``), so that after a crash a call with a start row and no
result is known to have maybe taken effect (``interrupted``), never run twice. A
harmless call (``side_effects=False`` or ``idempotent=True``) needs no start row. The
table times a logged run whose first turn makes N parallel calls to an async no-op
tool, once with a harmless tool and once with a side-effecting one, alternated in one
event loop (:func:`bench_observe.paired_runs`); the difference per call is the start
row's cost (a WAL commit with ``synchronous=NORMAL`` plus the thread hop).
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from bench_observe import paired_runs
from toolwire.observe import AuditLog
from toolwire.run import Agent
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import tool

warnings.simplefilter("ignore")


@tool(name="op", concurrency_safe=True, side_effects=False)
async def harmless(i: int) -> str:
    """Does nothing, and says so (no side effects)."""
    return "ok"


@tool(name="op", concurrency_safe=True)
async def effectful(i: int) -> str:
    """Does nothing, but declares side effects (a start row before each call)."""
    return "ok"


def script(n: int) -> list[Any]:
    """The model's turns: N calls, then the answer."""
    return [tool_call_turn(*[("op", {"i": i}, f"c{i}") for i in range(n)]), text_turn("done")]


def main(quick: bool = False) -> None:
    sizes = (10,) if quick else (1, 10, 100)
    repeat = 5 if quick else 31
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print("µs per call, wall time / CPU time of the process (all threads), whole loop.\n")
        print(f"| µs per call | {' | '.join(f'N={n}' for n in sizes)} |")
        print(f"|---|{'---:|' * len(sizes)}")
        base_row, durable_row = [], []
        for n in sizes:
            base_wall, base_cpu, wall, cpu = paired_runs(
                lambda: Agent(ScriptedModel([]), [harmless], log=AuditLog(root / "a.db")),
                lambda: Agent(ScriptedModel([]), [effectful], log=AuditLog(root / "b.db")),
                script(n),
                repeat,
            )
            base_row.append(f"{base_wall / n * 1e6:,.1f} / {base_cpu / n * 1e6:,.1f}")
            durable_row.append(
                f"+{(wall - base_wall) / n * 1e6:,.1f} / +{(cpu - base_cpu) / n * 1e6:,.1f}"
            )
        print(f"| logged run, harmless tool (no start rows) | {' | '.join(base_row)} |")
        print(f"| side-effecting tool: start row committed first | {' | '.join(durable_row)} |")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
