"""How often the embedded model gets the demo right: measured, not assumed.

Runs the two demo prompts of ``toolwire run --demo`` on a local model (default: the
shipped SmolLM2-135M-Instruct) with the demo tools, configured as the demo is
(``tool_choice="required"``, one round of calls, then the forced answer; pass
``--tool-choice auto --max-rounds 3`` to let the model decide), once greedily and ``--samples`` times
with sampling (temperature ``--temperature``, seeds 0..N-1), and scores each run's first
turn and its end:

* ``well_formed`` — every call parsed and validated against its tool's schema (the
  grammar's promise: this should be 100%);
* ``called_tool`` — the first turn called the expected tool at all;
* ``right_calls`` — the first turn holds exactly the expected calls, in parallel
  (``explore_code`` for "login" and "session"; ``get_weather`` for Beijing and Shanghai,
  tomorrow);
* ``answered`` — the run ended with a non-empty answer (no error, no loop stop);
* ``success`` — ``right_calls`` and ``answered``.

Run: ``python scripts/demo_success_rate.py [--model local] [--samples 10] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

PROMPTS = {
    "code_search": 'Search the code for "login" and for "session" at the same time.',
    "weather": "What's tomorrow's weather in Beijing and Shanghai?",
}


@dataclass
class Score:
    """One run's marks."""

    prompt: str
    seed: int | None
    well_formed: bool = False
    called_tool: bool = False
    right_calls: bool = False
    answered: bool = False
    error: str | None = None
    first_calls: str = ""
    seconds: float = 0.0

    @property
    def success(self) -> bool:
        """The first turn was right and the run answered."""
        return self.right_calls and self.answered


def expected(prompt: str, calls: list[tuple[str, Any]]) -> tuple[bool, bool]:
    """(called the expected tool, made exactly the expected parallel calls)."""
    if prompt == "code_search":
        names = {name for name, _ in calls}
        queries = sorted(
            str(args.get("query", "")).lower() for name, args in calls if isinstance(args, dict)
        )
        return "explore_code" in names, names == {"explore_code"} and queries == [
            "login",
            "session",
        ]
    cities = sorted(
        (str(args.get("city", "")).strip().lower(), str(args.get("day", "today")))
        for name, args in calls
        if name == "get_weather" and isinstance(args, dict)
    )
    called = any(name == "get_weather" for name, _ in calls)
    return called, len(calls) == 2 and cities == [("beijing", "tomorrow"), ("shanghai", "tomorrow")]


async def score_run(
    model: Any, prompt_key: str, seed: int | None, max_rounds: int, tool_choice: str
) -> Score:
    """Run one prompt and mark it."""
    from toolwire.demo.tools import DEMO_TOOLS
    from toolwire.messages import AssistantMessage
    from toolwire.run import Agent
    from toolwire.tools import Toolset

    settings = {} if seed is None else {"seed": seed}
    agent = Agent(
        model, DEMO_TOOLS, max_rounds=max_rounds, tool_choice=tool_choice, settings=settings
    )
    score = Score(prompt_key, seed)
    started = time.perf_counter()
    stream = agent.run_stream(PROMPTS[prompt_key])
    try:
        async with stream:
            async for _ in stream:
                pass
        score.answered = bool(stream.result.output.strip())
    except Exception as exc:  # a failed run is a data point, not a crash of the script
        score.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
    score.seconds = time.perf_counter() - started
    first = next((m for m in stream.messages if isinstance(m, AssistantMessage)), None)
    calls = first.tool_calls if first else []
    toolset = Toolset(DEMO_TOOLS)
    parsed: list[tuple[str, Any]] = []
    score.well_formed = True
    for call in calls:
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            score.well_formed = False
            continue
        parsed.append((call.name, args))
        tool = toolset.get(call.name)
        if tool is None or not tool.validate(call.arguments).ok:
            score.well_formed = False
    score.called_tool, score.right_calls = expected(prompt_key, parsed)
    score.first_calls = "; ".join(f"{call.name}({call.arguments})" for call in calls) or (
        f"text: {' '.join((first.text if first else '').split())[:80]!r}"
    )
    return score


def rate(scores: list[Score], field: str) -> str:
    """``k/n (p%)`` of scores whose ``field`` is true."""
    hits = sum(bool(getattr(score, field)) for score in scores)
    return f"{hits}/{len(scores)} ({100 * hits / max(1, len(scores)):.0f}%)"


async def measure(
    spec: str, samples: int, temperature: float, max_rounds: int, tool_choice: str
) -> list[Score]:
    """Greedy runs, then sampled runs, of both prompts."""
    from toolwire.providers import resolve

    greedy = resolve(spec)
    scores = [await score_run(greedy, key, None, max_rounds, tool_choice) for key in PROMPTS]
    sampled = resolve(spec, settings={"temperature": temperature}) if samples else None
    for seed in range(samples):
        for key in PROMPTS:
            scores.append(await score_run(sampled, key, seed, max_rounds, tool_choice))
    return scores


def report(scores: list[Score], spec: str, temperature: float) -> str:
    """A table per prompt and mode."""
    lines = [
        f"model {spec}; greedy = temperature 0; sampled = temperature {temperature}, seeds 0..N-1"
    ]
    fields = ("well_formed", "called_tool", "right_calls", "answered", "success")
    lines.append(f"{'prompt':12} {'mode':8} " + " ".join(f"{f:>14}" for f in fields))
    for key in PROMPTS:
        for mode, group in (
            ("greedy", [s for s in scores if s.prompt == key and s.seed is None]),
            ("sampled", [s for s in scores if s.prompt == key and s.seed is not None]),
        ):
            if group:
                lines.append(
                    f"{key:12} {mode:8} " + " ".join(f"{rate(group, f):>14}" for f in fields)
                )
    lines.append("first turns (greedy):")
    for score in scores:
        if score.seed is None:
            lines.append(
                f"  {score.prompt}: {score.first_calls}"
                + (f"  [{score.error}]" if score.error else "")
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local", help="model spec (default: local)")
    parser.add_argument("--samples", type=int, default=10, help="sampled runs per prompt")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-rounds", type=int, default=1, help="as --demo: 1")
    parser.add_argument("--tool-choice", default="required", help="as --demo: required")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    scores = asyncio.run(
        measure(args.model, args.samples, args.temperature, args.max_rounds, args.tool_choice)
    )
    if args.json:
        print(json.dumps([{**asdict(s), "success": s.success} for s in scores], indent=2))
    else:
        print(f"tool_choice={args.tool_choice}, max_rounds={args.max_rounds}")
        print(report(scores, args.model, args.temperature))
    return 0


if __name__ == "__main__":
    sys.exit(main())
