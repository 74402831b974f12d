"""JSON repair: exact recovery on malformed tool arguments, and cost on valid ones.

Run: ``python bench/bench_repair.py`` (prints Markdown tables).

Contestants, each given the malformed text and nothing else:

* ``toolwire.repair_json``;
* ``json_repair.loads`` (the json-repair library toolwire falls back on);
* ``partial_json_parser.loads`` (completes truncated JSON; repairs little else);
* langchain-core's ``parse_json_markdown`` (strips a Markdown fence, then parses
  partial JSON).

A case counts as recovered only when the result equals the known-good object exactly
(canonical JSON: types and string contents included). Contestants that are not
installed are skipped. The corpus is ``repair_corpus.build_corpus()``: deterministic,
built from known-good objects (see that module for the defect kinds).

Speed: the median time per call over the valid JSON texts, for ``json.loads`` and for
each contestant, sampled interleaved so machine drift hits all alike.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from repair_corpus import KINDS, Case, build_corpus, exact, good_texts
from toolwire.tools import repair_json

Parser = Callable[[str], Any]


def contestants() -> dict[str, Parser]:
    """Every installed parser, toolwire first."""
    found: dict[str, Parser] = {"toolwire": repair_json}
    try:
        import json_repair

        found["json_repair"] = json_repair.loads
    except ImportError:
        pass
    try:
        import partial_json_parser

        found["partial_json_parser"] = partial_json_parser.loads
    except ImportError:
        pass
    try:
        from langchain_core.utils.json import parse_json_markdown

        found["langchain parse_json_markdown"] = parse_json_markdown
    except ImportError:
        pass
    return found


def recovered(parse: Parser, case: Case) -> bool:
    """Whether ``parse`` recovers the case exactly (any exception is a miss)."""
    try:
        return exact(parse(case.text), case.good)
    except Exception:
        return False


def score(parsers: dict[str, Parser], corpus: list[Case]) -> dict[str, Counter[str]]:
    """Parser → defect kind → cases recovered."""
    table: dict[str, Counter[str]] = {name: Counter() for name in parsers}
    for case in corpus:
        for name, parse in parsers.items():
            if recovered(parse, case):
                table[name][case.kind] += 1
    return table


def time_per_call(parse: Parser, texts: list[str], repeats: int = 15) -> float:
    """Median nanoseconds per call over ``texts``."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for text in texts:
            parse(text)
        samples.append((time.perf_counter_ns() - start) / len(texts))
    return statistics.median(samples)


def speed(parsers: dict[str, Parser], texts: list[str]) -> dict[str, float]:
    """Median ns per valid text, ``json.loads`` included, interleaved over rounds."""
    everyone: dict[str, Parser] = {"json.loads": json.loads, **parsers}
    rounds: dict[str, list[float]] = {name: [] for name in everyone}
    for _ in range(5):
        for name, parse in everyone.items():
            rounds[name].append(time_per_call(parse, texts, repeats=3))
    return {name: statistics.median(values) for name, values in rounds.items()}


def percent(hits: int, total: int) -> str:
    return f"{100 * hits / total:.1f}%"


def recovery_table(table: dict[str, Counter[str]], corpus: list[Case]) -> str:
    """Markdown: overall and per-kind exact recovery."""
    names = list(table)
    per_kind = Counter(case.kind for case in corpus)
    lines = [
        "| defect kind | cases | " + " | ".join(names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for kind in KINDS:
        cells = [percent(table[n][kind], per_kind[kind]) for n in names]
        lines.append(f"| {kind} | {per_kind[kind]} | " + " | ".join(cells) + " |")
    totals = [f"**{percent(sum(table[n].values()), len(corpus))}**" for n in names]
    lines.append(f"| **all** | {len(corpus)} | " + " | ".join(totals) + " |")
    return "\n".join(lines)


def speed_table(times: dict[str, float]) -> str:
    """Markdown: time per valid input, relative to ``json.loads``."""
    base = times["json.loads"]
    lines = ["| parser | per valid call | vs json.loads |", "|---|---:|---:|"]
    for name, ns in times.items():
        lines.append(f"| {name} | {ns / 1000:.2f} µs | {ns / base:.2f}x |")
    return "\n".join(lines)


def main() -> None:
    corpus = build_corpus()
    parsers = contestants()
    print(f"## Exact recovery: {len(corpus)} malformed cases, {len(KINDS)} defect kinds\n")
    print(recovery_table(score(parsers, corpus), corpus))
    texts = good_texts()
    mean_len = sum(map(len, texts)) / len(texts)
    print(f"\n## Valid input: {len(texts)} argument objects, {mean_len:.0f} bytes on average\n")
    print(speed_table(speed(parsers, texts)))


if __name__ == "__main__":
    main()
