"""How often an embedded model gets the demo right: measured, not assumed.

Runs the demo prompts of ``toolwire run --demo`` (``toolwire.demo.verdict.DEMO_CASES``)
with the demo tools, configured as the demo is (``tool_choice="required"``, one round of
calls, then the forced answer; pass ``--tool-choice auto --max-rounds 3`` to let the
model decide), once greedily and ``--samples`` times with sampling (temperature
``--temperature``, seeds 0..N-1), and judges each run's first turn with the same
:func:`toolwire.demo.verdict.judge` the demo prints:

* ``well_formed`` — every call parsed and validated against its tool's schema (the
  grammar's promise: this should be 100%);
* ``right_tool`` — every call named the expected tool;
* ``right_calls`` — the first turn holds exactly the expected calls, in parallel;
* ``answered`` — the run ended with a non-empty answer (no error, no loop stop);
* ``success`` — ``right_calls`` and ``answered``.

Run: ``python scripts/demo_success_rate.py [--model local --model local:smollm2]
[--samples 3] [--readme docs/models.md] [--json]``. A local spec ending in ``+gguf`` (such as
``local+gguf``) renders the model's own chat template (``LocalModel(template="gguf")``).
``--readme`` rewrites the table between the ``demo-verdicts`` markers of that file, so
the docs page (docs/models.md, "The embedded models, measured") shows what this script
measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

FIELDS = ("well_formed", "right_tool", "right_calls", "answered", "success")
MARKERS = ("<!-- demo-verdicts:start -->", "<!-- demo-verdicts:end -->")


@dataclass
class Score:
    """One run's marks."""

    model: str
    prompt: str
    seed: int | None
    well_formed: bool = False
    right_tool: bool = False
    right_calls: bool = False
    answered: bool = False
    error: str | None = None
    first_calls: str = ""
    seconds: float = 0.0

    @property
    def success(self) -> bool:
        """The first turn was right and the run answered."""
        return self.right_calls and self.answered


async def score_run(
    spec: str, model: Any, case: Any, seed: int | None, *, max_rounds: int, tool_choice: str
) -> Score:
    """Run one prompt and mark it."""
    from toolwire.demo.tools import DEMO_TOOLS
    from toolwire.demo.verdict import first_calls, judge
    from toolwire.run import Agent
    from toolwire.tools import Toolset

    settings = {} if seed is None else {"seed": seed}
    agent = Agent(
        model, DEMO_TOOLS, max_rounds=max_rounds, tool_choice=tool_choice, settings=settings
    )
    score = Score(spec, case.key, seed)
    started = time.perf_counter()
    stream = agent.run_stream(case.prompt)
    try:
        async with stream:
            async for _ in stream:
                pass
        score.answered = bool(stream.result.output.strip())
    except Exception as exc:  # a failed run is a data point, not a crash of the script
        score.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
    score.seconds = time.perf_counter() - started
    calls, text = first_calls(stream.messages)
    toolset = Toolset(DEMO_TOOLS)
    score.well_formed = all(
        (tool := toolset.get(call.name)) is not None and tool.validate(call.arguments).ok
        for call in calls
    )
    verdict = judge(case, calls, text)
    score.right_tool, score.right_calls = verdict.right_tool, verdict.right_calls
    score.first_calls = verdict.calls
    return score


async def measure(
    spec: str, samples: int, temperature: float, max_rounds: int, tool_choice: str
) -> list[Score]:
    """Greedy runs, then sampled runs, of every demo prompt."""
    from toolwire.demo.verdict import DEMO_CASES
    from toolwire.providers import resolve

    base, _, variant = spec.partition("+")
    options: dict[str, Any] = {"template": "gguf"} if variant == "gguf" else {}
    greedy = resolve(base, **options)
    scores = [
        await score_run(spec, greedy, case, None, max_rounds=max_rounds, tool_choice=tool_choice)
        for case in DEMO_CASES
    ]
    sampled = resolve(base, settings={"temperature": temperature}, **options) if samples else None
    for seed in range(samples):
        for case in DEMO_CASES:
            scores.append(
                await score_run(
                    spec, sampled, case, seed, max_rounds=max_rounds, tool_choice=tool_choice
                )
            )
    return scores


def hits(scores: list[Score], field: str) -> str:
    """``k/n`` of scores whose ``field`` is true."""
    return f"{sum(bool(getattr(score, field)) for score in scores)}/{len(scores)}"


def report(scores: list[Score], temperature: float) -> str:
    """A plain table per model, prompt and mode, and the greedy first turns."""
    lines = [f"greedy = temperature 0; sampled = temperature {temperature}, seeds 0..N-1"]
    lines.append(f"{'model':16} {'prompt':12} {'mode':8} " + " ".join(f"{f:>12}" for f in FIELDS))
    for model in dict.fromkeys(s.model for s in scores):
        for prompt in dict.fromkeys(s.prompt for s in scores):
            mine = [s for s in scores if s.model == model and s.prompt == prompt]
            for mode, group in (
                ("greedy", [s for s in mine if s.seed is None]),
                ("sampled", [s for s in mine if s.seed is not None]),
            ):
                if group:
                    lines.append(
                        f"{model:16} {prompt:12} {mode:8} "
                        + " ".join(f"{hits(group, f):>12}" for f in FIELDS)
                    )
    lines.append("first turns (greedy):")
    lines += [
        f"  {s.model} {s.prompt}: {s.first_calls}" + (f"  [{s.error}]" if s.error else "")
        for s in scores
        if s.seed is None
    ]
    return "\n".join(lines)


def markdown(scores: list[Score], args: argparse.Namespace) -> str:
    """The README table: one row per model and prompt, greedy and sampled runs together."""
    from toolwire.demo.verdict import DEMO_CASES

    described = {case.key: case.expected for case in DEMO_CASES}
    lines = [
        f"Measured by `python scripts/demo_success_rate.py --samples {args.samples} --readme "
        f"{args.readme or 'docs/models.md'}` ({' '.join(f'--model {m}' for m in args.model)}; "
        f"tool_choice={args.tool_choice}, max_rounds={args.max_rounds}; per prompt one greedy "
        f"run and {args.samples} sampled at temperature {args.temperature}; "
        f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} at the end — "
        "seconds grow with the load):",
        "",
        "| model | prompt (right answer) | well-formed | right tool | right calls | answered | seconds per run |",
        "|---|---|---|---|---|---|---|",
    ]
    for model in dict.fromkeys(s.model for s in scores):
        for prompt in dict.fromkeys(s.prompt for s in scores):
            group = [s for s in scores if s.model == model and s.prompt == prompt]
            seconds = sum(s.seconds for s in group) / max(1, len(group))
            cells = " | ".join(hits(group, f) for f in FIELDS[:4])
            lines.append(f"| `{model}` | {prompt}: {described[prompt]} | {cells} | {seconds:.1f} |")
    return "\n".join(lines)


def write_readme(path: Path, table: str) -> None:
    """Replace the text between the ``demo-verdicts`` markers of ``path`` with ``table``."""
    text = path.read_text(encoding="utf-8")
    start, end = MARKERS
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(text):
        raise SystemExit(f"{path}: no {start} ... {end} markers")
    path.write_text(pattern.sub(lambda _: f"{start}\n{table}\n{end}", text), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", action="append", help="model spec, repeatable (default: local)")
    parser.add_argument("--samples", type=int, default=3, help="sampled runs per prompt")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-rounds", type=int, default=1, help="as --demo: 1")
    parser.add_argument("--tool-choice", default="required", help="as --demo: required")
    parser.add_argument("--readme", type=Path, help="write the table into this file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.model = args.model or ["local"]
    scores: list[Score] = []
    for spec in args.model:
        scores += asyncio.run(
            measure(spec, args.samples, args.temperature, args.max_rounds, args.tool_choice)
        )
    if args.json:
        print(json.dumps([{**asdict(s), "success": s.success} for s in scores], indent=2))
    else:
        print(f"tool_choice={args.tool_choice}, max_rounds={args.max_rounds}")
        print(report(scores, args.temperature))
    if args.readme:
        write_readme(args.readme, markdown(scores, args))
        print(f"wrote the table into {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
