"""How often an embedded model gets the demo right: measured, not assumed.

Runs the demo prompts of ``toolwire run --demo`` (``toolwire.demo.verdict.DEMO_CASES``)
with the demo tools, configured as the demo is (``tool_choice="required"`` for the
first round, ``auto`` after it, up to three rounds of calls, then the forced answer;
pass ``--tool-choice auto`` to let the model decide from the start, ``--max-rounds 1``
for the old one-round demo), once greedily and ``--samples`` times with sampling
(temperature ``--temperature``, seeds 0..N-1), and judges each whole run with the same
:func:`toolwire.demo.verdict.judge_run` the demo prints:

* ``well_formed`` — every call of the run parsed and validated against its tool's
  schema (the grammar's promise: this should be 100%);
* ``right_tool`` — every call named the expected tool;
* ``all_calls`` — every expected call was made and nothing else, in any turns;
* ``in_one_turn`` — ... and all of them in the first turn with calls (in parallel);
* ``answered`` — the run ended with answer text (no error, no loop stop) that is not
  a tool call written as text;
* ``call_shaped`` — the last turn's text was a tool call written as text
  (``call_shaped_text``);
* ``success`` — ``all_calls`` and ``answered``.

Run: ``python scripts/demo_success_rate.py [--model local --model local:smollm2]
[--samples 3] [--readme docs/models.md] [--json]``. A local spec ending in ``+gguf`` (such
as ``local+gguf``) renders the model's own chat template (``LocalModel(template="gguf")``).
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

FIELDS = (
    "well_formed",
    "right_tool",
    "all_calls",
    "in_one_turn",
    "answered",
    "call_shaped",
    "success",
)
LABELS = (
    "well-formed",
    "right tool",
    "all calls (any turns)",
    "in one turn",
    "answered",
    "call as text",
    "success",
)
MARKERS = ("<!-- demo-verdicts:start -->", "<!-- demo-verdicts:end -->")


@dataclass
class Score:
    """One run's marks."""

    model: str
    prompt: str
    seed: int | None
    well_formed: bool = False
    right_tool: bool = False
    all_calls: bool = False
    in_one_turn: bool = False
    answered: bool = False
    call_shaped: bool = False
    error: str | None = None
    calls: str = ""
    seconds: float = 0.0

    @property
    def success(self) -> bool:
        """The run made the right calls and answered."""
        return self.all_calls and self.answered


async def score_run(
    spec: str, model: Any, case: Any, seed: int | None, *, max_rounds: int, tool_choice: str
) -> Score:
    """Run one prompt and mark the whole run."""
    from toolwire.demo.tools import DEMO_TOOLS
    from toolwire.demo.verdict import judge_run, run_calls
    from toolwire.run import Agent
    from toolwire.tools import Toolset

    settings = {} if seed is None else {"seed": seed}
    agent = Agent(
        model, DEMO_TOOLS, max_rounds=max_rounds, tool_choice=tool_choice, settings=settings
    )
    score = Score(spec, case.key, seed)
    started = time.perf_counter()
    stream = agent.run_stream(case.prompt)
    ended = False
    try:
        async with stream:
            async for _ in stream:
                pass
        ended = True
    except Exception as exc:  # a failed run is a data point, not a crash of the script
        score.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
    score.seconds = time.perf_counter() - started
    toolset = Toolset(DEMO_TOOLS)
    score.well_formed = all(
        (tool := toolset.get(call.name)) is not None and tool.validate(call.arguments).ok
        for turn in run_calls(stream.messages)
        for call in turn
    )
    verdict = judge_run(case, stream.messages, toolset.names)
    score.right_tool, score.all_calls = verdict.right_tool, verdict.right_calls
    score.in_one_turn, score.call_shaped = verdict.in_one_turn, bool(verdict.call_shaped)
    score.answered = ended and verdict.answered
    score.calls = verdict.calls
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
    lines.append("calls by round (greedy):")
    lines += [
        f"  {s.model} {s.prompt}: {s.calls}" + (f"  [{s.error}]" if s.error else "")
        for s in scores
        if s.seed is None
    ]
    return "\n".join(lines)


def markdown(scores: list[Score], args: argparse.Namespace) -> str:
    """The success table: one row per model and prompt, greedy and sampled runs together."""
    from toolwire.demo.verdict import DEMO_CASES

    described = {case.key: case.expected for case in DEMO_CASES}
    lines = [
        f"Measured by `python scripts/demo_success_rate.py --samples {args.samples} --readme "
        f"{args.readme or 'docs/models.md'}` ({' '.join(f'--model {m}' for m in args.model)}; "
        f"tool_choice={args.tool_choice} for the first round, max_rounds={args.max_rounds}; "
        f"each run judged whole; per prompt one greedy run and {args.samples} sampled at "
        f"temperature {args.temperature}; {os.cpu_count()} CPU cores, load average "
        f"{os.getloadavg()[0]:.1f} at the end — seconds grow with the load):",
        "",
        "| model | prompt (right answer) | " + " | ".join(LABELS) + " | seconds per run |",
        "|---|---|" + "---|" * len(LABELS) + "---|",
    ]
    for model in dict.fromkeys(s.model for s in scores):
        for prompt in dict.fromkeys(s.prompt for s in scores):
            group = [s for s in scores if s.model == model and s.prompt == prompt]
            seconds = sum(s.seconds for s in group) / max(1, len(group))
            cells = " | ".join(hits(group, f) for f in FIELDS)
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
    parser.add_argument("--max-rounds", type=int, default=3, help="as --demo: 3")
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
