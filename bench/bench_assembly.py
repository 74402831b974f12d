"""Benchmark: assembling streamed tool calls, toolwire against the libraries people use.

Run it with::

    .venv/bin/python bench/bench_assembly.py            # full run, a few minutes on 2 cores
    .venv/bin/python bench/bench_assembly.py --quick    # a smaller, noisier run
    .venv/bin/python bench/bench_assembly.py --json bench/results/assembly.json

That measures the wire layer the checkout runs, pure Python. For the compiled build
(hatch_build.py; what release wheels ship), build it once and put it first on the path::

    bash scripts/build-compiled
    PYTHONPATH=build/compiled .venv/bin/python bench/bench_assembly.py

Two benchmarks over the same nine workloads (1, 4, 16 parallel calls x ~100 B, ~2 KB,
~50 KB of JSON arguments, 1-8 character fragments interleaved across calls; see
``workloads.py``):

1. **Decoded chunks.** OpenAI ``chat.completion.chunk`` dicts into toolwire
   ``OpenAIChatStream``, the ``openai`` SDK's ``ChatCompletionStreamState``,
   langchain-core ``AIMessageChunk`` ``+`` merging and litellm
   ``stream_chunk_builder``; the equivalent Anthropic events into toolwire
   ``AnthropicStream`` and the ``anthropic`` SDK's ``accumulate_event``. Each is
   compared with a floor that does only the unavoidable work: a dict by index, list
   appends, one join and one ``json.loads`` per call. Every contestant ends with
   ``(id, name, parsed input)`` per call and is checked against the expected calls.
2. **Raw SSE bytes.** The OpenAI stream serialised as SSE and read in 64-4096-byte
   pieces: toolwire ``feed_bytes`` against a floor that splits lines and calls
   ``json.loads`` per data line before the same dict-by-index assembly.
3. **Per-turn assembly** (``--only turns``; issue 30). Short turns as the providers
   stream them (1 and 4 calls x ~100 B and ~2 KB, one call after another, OpenAI's
   arguments in token-sized pieces, Anthropic's in larger ones, with the events and
   usage each sends around them; ``provider_turn``), decoded by toolwire with
   ``deltas=False`` against the floor (a dict by index, one join and one
   ``json.loads`` per call) in the same process: each round times the floor and
   toolwire back to back (alternating which goes first), a cell's ratio is the median
   of its rounds' ratios. ``count_assembly.py --turns`` counts the same turns in
   instructions. Target: median <= 1.4x, no cell above 2x (goal 1.3x).
4. **Non-streaming bodies** (``--only bodies``; also after a full run). The same calls
   as one response body per provider (OpenAI Chat, Anthropic, OpenAI Responses),
   decoded by ``toolwire.wire``'s ``decode_*_response`` (the body decoders, compiled
   with the stream decoders) against a floor that reads each call's id, name and
   arguments and calls ``json.loads`` once per call (Anthropic's, whose body holds
   the parsed input: ``json.dumps`` and ``json.loads``, as a Turn keeps the text and
   its parse). One row per provider and workload.

Ratios are time / floor time of the same workload. Targets (issue 2): toolwire within
2x the floor on decoded chunks (median over the workloads, no workload above 3x), and
no slower than the floor on raw SSE bytes. ``--profile`` prints where toolwire spends
its time on one workload (cProfile).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import platform
import pstats
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers
from workloads import (
    ASSEMBLY_CALLS,
    ASSEMBLY_SIZES,
    Measurement,
    ToolWorkload,
    body_floor,
    build_name,
    build_tool_workload,
    format_ns,
    format_ratio,
    fragment,
    measure,
    median_ratio,
    response_bodies,
    sse_reads,
    sse_stream,
)

# (column, factory, peer module key or None for toolwire and the floors)
OPENAI_CONTESTANTS: list[tuple[str, Callable[[ToolWorkload], peers.Contestant], str | None]] = [
    ("floor", peers.floor_openai, None),
    ("toolwire", peers.toolwire_openai, None),
    ("openai SDK", peers.openai_sdk, "openai"),
    ("langchain-core", peers.langchain_merge, "langchain"),
    ("litellm", peers.litellm_builder, "litellm"),
]
ANTHROPIC_CONTESTANTS: list[tuple[str, Callable[[ToolWorkload], peers.Contestant], str | None]] = [
    ("floor", peers.floor_anthropic, None),
    ("toolwire", peers.toolwire_anthropic, None),
    ("anthropic SDK", peers.anthropic_sdk, "anthropic"),
]
PEER_DISTRIBUTIONS = (
    "openai",
    "anthropic",
    "langchain-core",
    "litellm",
    "jiter",
    "partial-json-parser",
)

TARGET_MEDIAN = 2.0
TARGET_MAX = 3.0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="fewer repeats and a lower cap for slow peers"
    )
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument(
        "--only",
        choices=("chunks", "sse", "turns", "bodies"),
        help="run one of the four benchmarks",
    )
    ap.add_argument(
        "--calls",
        type=int,
        nargs="+",
        default=list(ASSEMBLY_CALLS),
        help="parallel calls per workload",
    )
    ap.add_argument(
        "--sizes", type=int, nargs="+", default=list(ASSEMBLY_SIZES), help="argument sizes in bytes"
    )
    ap.add_argument("--repeats", type=int, help="samples per contestant (default 5, quick 3)")
    ap.add_argument(
        "--cap",
        type=float,
        help="seconds of timed work before a slow peer is stopped (default 2, quick 0.5)",
    )
    ap.add_argument("--no-peers", action="store_true", help="only toolwire and the floors")
    ap.add_argument(
        "--profile",
        metavar="CALLSxSIZE",
        help="cProfile toolwire on one workload, e.g. 16x2000, and exit",
    )
    args = ap.parse_args(argv)
    args.repeats = args.repeats or (3 if args.quick else 5)
    args.cap = args.cap if args.cap is not None else (0.5 if args.quick else 2.0)
    args.min_sample_ns = 10_000_000 if args.quick else 30_000_000
    # Operations slower than this are timed once; toolwire and the floors stay under it
    # at default settings, so they always get the full number of samples.
    args.single_run_ns = 1_000_000_000 if args.quick else 8_000_000_000
    return args


def peer_versions() -> dict[str, str]:
    """Installed versions of the peer libraries (``missing`` when not installed)."""
    out = {}
    for dist in PEER_DISTRIBUTIONS:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "missing"
    return out


def contestants_for(
    w: ToolWorkload,
    table: list[tuple[str, Callable[[ToolWorkload], peers.Contestant], str | None]],
    args: argparse.Namespace,
) -> dict[str, peers.Contestant]:
    """The contestants of one table that can run here, built for workload ``w``."""
    out = {}
    for column, factory, module in table:
        if module is not None and (args.no_peers or not peers.available(module)):
            continue
        out[column] = factory(w)
    return out


def run_chunks(w: ToolWorkload, args: argparse.Namespace) -> dict[str, dict[str, Measurement]]:
    """Benchmark 1 on one workload: both tables' contestants, interleaved."""
    openai = contestants_for(w, OPENAI_CONTESTANTS, args)
    anthropic = contestants_for(w, ANTHROPIC_CONTESTANTS, args)
    merged = {f"openai/{k}": v for k, v in openai.items()} | {
        f"anthropic/{k}": v for k, v in anthropic.items()
    }
    results = measure(
        merged,
        repeats=args.repeats,
        min_sample_ns=args.min_sample_ns,
        cap_ns=int(args.cap * 1e9),
        single_run_ns=args.single_run_ns,
    )
    expected = w.expected()
    for name, m in results.items():
        if not m.lower_bound and m.output != expected:
            m.note = (m.note + "; " if m.note else "") + "WRONG RESULT"
        m.output = None  # large outputs are not kept
    split: dict[str, dict[str, Measurement]] = {"openai": {}, "anthropic": {}}
    for name, m in results.items():
        table, column = name.split("/", 1)
        split[table][column] = m
    return split


def run_sse(w: ToolWorkload, args: argparse.Namespace) -> tuple[dict[str, Measurement], int, int]:
    """Benchmark 2 on one workload: toolwire ``feed_bytes`` against the SSE floor."""
    data = sse_stream(w.openai_chunks())
    reads = sse_reads(data, w.seed)
    contestants = {"floor": peers.floor_sse(reads), "toolwire": peers.toolwire_sse(reads)}
    results = measure(
        contestants,
        repeats=args.repeats,
        min_sample_ns=args.min_sample_ns,
        cap_ns=int(args.cap * 1e9),
        single_run_ns=args.single_run_ns,
    )
    expected = w.expected()
    for m in results.values():
        if m.output != expected:
            m.note = "WRONG RESULT"
        m.output = None
    return results, len(data), len(reads)


# -- report -------------------------------------------------------------------------------


def ratio_table(rows: list[dict[str, Any]], key: str, columns: list[str], items: str) -> list[str]:
    """Markdown table of time per operation and ratio to the floor, one row per workload."""
    lines = [
        f"| workload | {items} | " + " | ".join(columns) + " |",
        "|---|---:|" + "---:|" * len(columns),
    ]
    for row in rows:
        res = row[key]
        floor = res["floor"].ns
        cells = [
            res[c].cell(None if c == "floor" else floor) if c in res else "n/a" for c in columns
        ]
        lines.append(f"| {row['name']} | {row[key + '_items']:,} | " + " | ".join(cells) + " |")
    return lines


def summary_lines(
    rows: list[dict[str, Any]], key: str, columns: list[str]
) -> tuple[list[str], dict[str, Any]]:
    """Median and maximum ratio to the floor per contestant over all workloads."""
    lines = ["| contestant | median ratio | max ratio | workloads |", "|---|---:|---:|---:|"]
    summary: dict[str, Any] = {}
    for column in columns:
        if column == "floor":
            continue
        ratios = [row[key][column].ns / row[key]["floor"].ns for row in rows if column in row[key]]
        if not ratios:
            continue
        bound = any(row[key][column].lower_bound for row in rows if column in row[key])
        prefix = ">= " if bound else ""
        med, top = median_ratio(ratios), max(ratios)
        summary[column] = {"median_ratio": med, "max_ratio": top, "lower_bound": bound}
        lines.append(
            f"| {column} | {prefix}{format_ratio(med)} | {prefix}{format_ratio(top)} | {len(ratios)} |"
        )
    return lines, summary


def verdict(summary: dict[str, Any], what: str) -> str:
    """Whether toolwire meets the decoded-chunks targets."""
    tw = summary.get("toolwire")
    if tw is None:
        return ""
    ok = tw["median_ratio"] <= TARGET_MEDIAN and tw["max_ratio"] <= TARGET_MAX
    return (
        f"Target for {what} (median <= {TARGET_MEDIAN:g}x, max <= {TARGET_MAX:g}x): "
        f"{'MET' if ok else 'MISSED'} (median {format_ratio(tw['median_ratio'])}, max {format_ratio(tw['max_ratio'])})"
    )


def notes_lines(rows: list[dict[str, Any]], keys: list[str]) -> list[str]:
    """Footnotes for lower bounds, single runs and wrong results."""
    out = []
    for row in rows:
        for key in keys:
            for column, m in row.get(key, {}).items():
                if m.note and m.note != "single run":
                    out.append(f"- {row['name']}, {key} / {column}: {m.note}")
    return out


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    """Print the Markdown report; return the JSON summary."""
    summary: dict[str, Any] = {}
    print("# toolwire assembly benchmark\n")
    print(
        f"Python {platform.python_version()} on {platform.machine()}, peers: "
        + ", ".join(f"{k} {v}" for k, v in peer_versions().items())
    )
    print(f"toolwire wire layer: {build_name()}")
    print(
        f"Settings: repeats={args.repeats}, cap={args.cap:g} s per slow peer run, "
        f"samples of >= {args.min_sample_ns / 1e6:g} ms; cells are time per stream (ratio to the floor).\n"
    )
    if args.only in (None, "chunks"):
        oa_cols = [c for c, _, _ in OPENAI_CONTESTANTS]
        an_cols = [c for c, _, _ in ANTHROPIC_CONTESTANTS]
        print("## 1a. Decoded OpenAI chunks\n")
        print("\n".join(ratio_table(rows, "openai", oa_cols, "chunks")))
        lines, summary["openai"] = summary_lines(rows, "openai", oa_cols)
        print("\n" + "\n".join(lines))
        print("\n" + verdict(summary["openai"], "OpenAI chunks"))
        print("\n## 1b. Decoded Anthropic events\n")
        print("\n".join(ratio_table(rows, "anthropic", an_cols, "events")))
        lines, summary["anthropic"] = summary_lines(rows, "anthropic", an_cols)
        print("\n" + "\n".join(lines))
        print("\n" + verdict(summary["anthropic"], "Anthropic events"))
        print(
            "\nTimed: toolwire and the floors consume the decoded dicts; the SDK objects "
            "(ChatCompletionChunk, RawMessageStreamEvent, AIMessageChunk) are built outside the timed "
            "region with each SDK's own constructors, so only accumulation is timed. The openai SDK and "
            "litellm do not parse arguments: one json.loads per call is added, timed. litellm is given "
            "the whole chunk list and builds the full response (including its usage estimate). `>=` marks "
            "a peer stopped at the cap: its time is extrapolated linearly from the part it finished, a "
            "lower bound since its cost per chunk grows with the stream."
        )
    if args.only in (None, "sse"):
        print("\n## 2. Raw SSE bytes (64-4096-byte reads)\n")
        print("| workload | bytes | reads | floor | toolwire | ratio |")
        print("|---|---:|---:|---:|---:|---:|")
        ratios = []
        for row in rows:
            res = row["sse"]
            ratio = res["toolwire"].ns / res["floor"].ns
            ratios.append(ratio)
            print(
                f"| {row['name']} | {row['sse_bytes']:,} | {row['sse_reads']:,} | "
                f"{res['floor'].cell()} | {res['toolwire'].cell()} | {format_ratio(ratio)} |"
            )
        summary["sse"] = {"median_ratio": median_ratio(ratios), "max_ratio": max(ratios)}
        ok = max(ratios) <= 1.0
        print(
            f"\nTarget (toolwire no slower than the floor): {'MET' if ok else 'MISSED'} "
            f"(median {format_ratio(median_ratio(ratios))}, max {format_ratio(max(ratios))})"
        )
    notes = notes_lines(rows, ["openai", "anthropic", "sse"])
    if notes:
        print("\nNotes:\n" + "\n".join(notes))
    return summary


def to_json(
    rows: list[dict[str, Any]], summary: dict[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    """Everything measured, as plain data."""

    def cells(res: dict[str, Measurement]) -> dict[str, Any]:
        floor = res["floor"].ns
        return {
            k: {
                "ns": m.ns,
                "ratio": m.ns / floor,
                "samples": m.samples,
                "lower_bound": m.lower_bound,
                "note": m.note,
            }
            for k, m in res.items()
        }

    workloads = []
    for row in rows:
        entry = {k: v for k, v in row.items() if k not in ("openai", "anthropic", "sse")}
        for key in ("openai", "anthropic", "sse"):
            if key in row:
                entry[key] = cells(row[key])
        workloads.append(entry)
    return {
        "benchmark": "assembly",
        "python": platform.python_version(),
        "toolwire_build": build_name(),
        "peers": peer_versions(),
        "settings": {
            "repeats": args.repeats,
            "cap_s": args.cap,
            "min_sample_ns": args.min_sample_ns,
            "quick": args.quick,
        },
        "workloads": workloads,
        "summary": summary,
    }


# -- profile ------------------------------------------------------------------------------


def profile(spec: str) -> None:
    """cProfile toolwire's OpenAI chunk, Anthropic event and SSE paths on one workload."""
    calls, size = (int(x) for x in spec.lower().split("x"))
    w = build_tool_workload(calls, size)
    reads = sse_reads(sse_stream(w.openai_chunks()), w.seed)
    for label, run in (
        ("OpenAIChatStream.feed", peers.toolwire_openai(w)),
        ("AnthropicStream.feed", peers.toolwire_anthropic(w)),
        ("OpenAIChatStream.feed_bytes", peers.toolwire_sse(reads)),
    ):
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3):
            run(0)
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(15)
        print(f"## {label} on {w.name} (3 runs, by own time)\n```\n{out.getvalue().strip()}\n```\n")


def warm_up(args: argparse.Namespace) -> None:
    """Run every contestant once on a tiny workload: lazy imports and caches load here
    (litellm reads its tokenizer on first use), not in the first measured sample."""
    w = build_tool_workload(2, 100, seed=1)
    for table in (OPENAI_CONTESTANTS, ANTHROPIC_CONTESTANTS):
        for run in contestants_for(w, table, args).values():
            run(10**9)
    reads = sse_reads(sse_stream(w.openai_chunks()), 1)
    peers.floor_sse(reads)(10**9)
    peers.toolwire_sse(reads)(10**9)


# -- non-streaming bodies ---------------------------------------------------------------


def _best_ns(run: Callable[[], object], repeats: int, min_sample_ns: int) -> float:
    """Best time per call over ``repeats`` samples of at least ``min_sample_ns`` each."""
    number, elapsed = 1, 0
    while True:  # calibrate the loop count
        start = time.perf_counter_ns()
        for _ in range(number):
            run()
        elapsed = time.perf_counter_ns() - start
        if elapsed >= min_sample_ns:
            break
        number *= 2
    best = elapsed / number
    for _ in range(repeats - 1):
        start = time.perf_counter_ns()
        for _ in range(number):
            run()
        best = min(best, (time.perf_counter_ns() - start) / number)
    return best


def run_bodies(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Time the body decoders against the floor; print one Markdown row per provider."""
    from toolwire.wire import (
        COMPILED,
        decode_anthropic_response,
        decode_openai_chat_response,
        decode_responses_response,
    )

    decoders: dict[str, Callable[[Any], Any]] = {
        "OpenAI Chat": decode_openai_chat_response,
        "Anthropic": decode_anthropic_response,
        "OpenAI Responses": decode_responses_response,
    }
    build = "compiled" if COMPILED else "pure Python"
    print(f"\n### Non-streaming bodies ({build} wire layer)\n")
    print("| provider | workload | toolwire | floor | ratio |")
    print("|---|---|---:|---:|---:|")
    rows: list[dict[str, Any]] = []
    for calls in args.calls:
        for size in args.sizes:
            w = build_tool_workload(calls, size)
            for provider, body in response_bodies(w).items():
                decode = decoders[provider]
                turn = decode(body)
                got = [(c.id, c.name, json.loads(c.arguments or "{}")) for c in turn.tool_calls]
                if got != w.expected() or body_floor(provider, body) != w.expected():
                    raise SystemExit(f"{provider} {w.name}: wrong calls decoded")
                ns = _best_ns(lambda d=decode, b=body: d(b), args.repeats, args.min_sample_ns)
                floor = _best_ns(
                    lambda p=provider, b=body: body_floor(p, b), args.repeats, args.min_sample_ns
                )
                rows.append({"provider": provider, "workload": w.name, "ns": ns, "floor_ns": floor})
                print(
                    f"| {provider} | {w.name} | {format_ns(ns)} | {format_ns(floor)} "
                    f"| {ns / floor:.2f}x |",
                    flush=True,
                )
    return rows


# -- per-turn assembly, as the providers stream it (issue 30) ----------------------------

TURN_WORKLOADS = ((1, 100), (1, 2_000), (4, 100), (4, 2_000))
TURN_PROVIDERS = ("openai", "anthropic")
TURN_TARGET_MEDIAN = 1.4
TURN_TARGET_MAX = 2.0
TURN_GOAL = 1.3


def provider_turn(provider: str, calls: int, size: int) -> list[dict[str, Any]]:
    """One short turn as ``provider`` streams it, as decoded dicts.

    The calls come one after another (neither API interleaves them). OpenAI Chat: a
    role chunk, per call a first chunk with id, name and empty arguments, then one
    chunk per token-sized piece (1-7 characters), a finish chunk and the usage chunk
    (``stream_options.include_usage``: every chunk carries ``"usage": null`` before it).
    Anthropic: ``message_start``, a ``ping``, per call a ``content_block_start``, an
    empty first ``input_json_delta``, pieces of 4-24 characters and the block's stop,
    then ``message_delta`` with usage and ``message_stop``.
    """
    import random

    w = build_tool_workload(calls, size)
    rng = random.Random(w.seed)
    if provider == "openai":
        base = {
            "id": f"chatcmpl-{w.seed}",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": "gpt-4o-2024-08-06",
            "service_tier": "default",
            "system_fingerprint": "fp_50cad350e4",
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return {**base, "choices": [choice], "usage": None}

        out = [chunk({"role": "assistant", "content": None, "refusal": None})]
        for spec in w.calls:
            first = {
                "index": spec.index,
                "id": spec.id,
                "type": "function",
                "function": {"name": spec.name, "arguments": ""},
            }
            out.append(chunk({"tool_calls": [first]}))
            for piece in fragment(spec.arguments, rng, 1, 7):
                entry = {"index": spec.index, "function": {"arguments": piece}}
                out.append(chunk({"tool_calls": [entry]}))
        out.append(chunk({}, "tool_calls"))
        usage = {
            "prompt_tokens": 412,
            "completion_tokens": len(out),
            "total_tokens": 412 + len(out),
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }
        out.append({**base, "choices": [], "usage": usage})
        return out
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": f"msg_{w.seed}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 412,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 1,
                    "service_tier": "standard",
                },
            },
        },
        {"type": "ping"},
    ]
    for spec in w.calls:
        block = {"type": "tool_use", "id": spec.id, "name": spec.name, "input": {}}
        events.append({"type": "content_block_start", "index": spec.index, "content_block": block})
        for piece in ("", *fragment(spec.arguments, rng, 4, 24)):
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append({"type": "content_block_delta", "index": spec.index, "delta": delta})
        events.append({"type": "content_block_stop", "index": spec.index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": len(events)},
        }
    )
    events.append({"type": "message_stop"})
    return events


def turn_floor(provider: str, items: list[dict[str, Any]]) -> Callable[[], Any]:
    """The floor for one turn: a dict by index, one join and one ``json.loads`` per call."""
    if provider == "openai":
        return lambda: peers.assemble_openai_dicts(items)
    return lambda: peers.assemble_anthropic_dicts(items)


def turn_toolwire(provider: str, items: list[dict[str, Any]]) -> Callable[[], Any]:
    """toolwire's decoder for one turn, ``deltas=False``, ending with each call's parsed input."""
    from toolwire.wire import AnthropicStream, OpenAIChatStream

    decoder = OpenAIChatStream if provider == "openai" else AnthropicStream

    def run() -> Any:
        stream = decoder(deltas=False)
        feed = stream.feed
        for item in items:
            feed(item)
        return [(r.id, r.name, r.input) for r in stream.close().requests]

    return run


def _loop_ns(run: Callable[[], Any], number: int) -> float:
    """Time per call of ``number`` calls of ``run``, the collector off (as timeit)."""
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(number):
            run()
        return (time.perf_counter_ns() - start) / number
    finally:
        gc.enable()


def turn_ratio(
    floor: Callable[[], Any], tool: Callable[[], Any], rounds: int, sample_ns: int
) -> tuple[float, float, float]:
    """(floor ns, toolwire ns, ratio): the medians over ``rounds`` back-to-back rounds."""
    number = max(1, int(sample_ns // max(_loop_ns(floor, 20), 1.0)))
    floors, tools, ratios = [], [], []
    for i in range(rounds):
        if i % 2:
            t, f = _loop_ns(tool, number), _loop_ns(floor, number)
        else:
            f, t = _loop_ns(floor, number), _loop_ns(tool, number)
        floors.append(f)
        tools.append(t)
        ratios.append(t / f)
    return median_ratio(floors), median_ratio(tools), median_ratio(ratios)


def run_turns(args: argparse.Namespace) -> dict[str, Any]:
    """The per-turn table (issue 30): both providers, ``deltas=False``, against the floor."""
    rounds = 15 if args.quick else 41
    sample_ns = 2_000_000 if args.quick else 5_000_000
    print(f"### Per-turn assembly ({build_name()} wire layer, deltas=False)\n")
    print(f"{rounds} interleaved rounds of >= {sample_ns / 1e6:g} ms per contestant and cell\n")
    print("| provider | workload | items | floor | toolwire | ratio |")
    print("|---|---|---:|---:|---:|---:|")
    summary: dict[str, Any] = {}
    for provider in TURN_PROVIDERS:
        ratios = []
        for calls, size in TURN_WORKLOADS:
            items = provider_turn(provider, calls, size)
            floor, tool = turn_floor(provider, items), turn_toolwire(provider, items)
            if floor() != tool():
                raise SystemExit(f"{provider} {calls}x{size}: wrong calls decoded")
            f, t, ratio = turn_ratio(floor, tool, rounds, sample_ns)
            ratios.append(ratio)
            label = f"{calls} x {size // 1000}KB" if size >= 1000 else f"{calls} x {size}B"
            print(
                f"| {provider} | {label} | {len(items)} | {format_ns(f)} | {format_ns(t)} "
                f"| {format_ratio(ratio)} |",
                flush=True,
            )
        summary[provider] = {"median_ratio": median_ratio(ratios), "max_ratio": max(ratios)}
    print()
    for provider, s in summary.items():
        ok = s["median_ratio"] <= TURN_TARGET_MEDIAN and s["max_ratio"] <= TURN_TARGET_MAX
        print(
            f"{provider}: median {format_ratio(s['median_ratio'])}, worst "
            f"{format_ratio(s['max_ratio'])} — target (median <= {TURN_TARGET_MEDIAN:g}x, "
            f"none above {TURN_TARGET_MAX:g}x) {'MET' if ok else 'MISSED'}"
            f"{', goal ' + format_ratio(TURN_GOAL) + ' met' if s['median_ratio'] <= TURN_GOAL else ''}"
        )
    return summary


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print Markdown; optionally write JSON."""
    args = parse_args(argv)
    if args.profile:
        profile(args.profile)
        return 0
    if args.only == "bodies":
        run_bodies(args)
        return 0
    if args.only == "turns":
        run_turns(args)
        return 0
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    warm_up(args)
    gc.freeze()  # the peers' import-time objects: later collections need not scan them
    for calls in args.calls:
        for size in args.sizes:
            w = build_tool_workload(calls, size)
            row: dict[str, Any] = {
                "name": w.name,
                "calls": calls,
                "size": size,
                "argument_bytes": w.argument_bytes,
            }
            if args.only in (None, "chunks"):
                row["openai_items"] = len(w.openai_chunks())
                row["anthropic_items"] = len(w.anthropic_events())
                row.update(run_chunks(w, args))
            if args.only in (None, "sse"):
                row["sse"], row["sse_bytes"], row["sse_reads"] = run_sse(w, args)
            rows.append(row)
            print(
                f"[{time.monotonic() - started:6.1f} s] {w.name} done", file=sys.stderr, flush=True
            )
            del w
            gc.collect()
    summary = report(rows, args)
    if args.only is None:
        summary["bodies"] = run_bodies(args)
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(to_json(rows, summary, args), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
