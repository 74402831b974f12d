"""Workloads and the measuring harness shared by toolwire's benchmarks.

Everything here is deterministic: each workload is built from a seed derived from its
parameters, so every run (and the smoke test) sees the same streams.

Tool-call workloads (``bench_assembly.py``): ``calls`` parallel tool calls, each with
a realistic JSON object of about ``size`` bytes as arguments (keys, strings with
escapes and non-ASCII text, numbers, nested arrays and objects). Each call's text is
cut into 1-8 character fragments and the fragments of all calls are interleaved at
random, keeping each call's own order and starting the calls in index order (a call's
index is the order in which it appeared, as providers number them). The same schedule
is rendered three ways:

* OpenAI ``chat.completion.chunk`` dicts, one tool-call fragment per chunk, the first
  fragment of a call carrying its id and name;
* the equivalent Anthropic Messages events (``content_block_start`` for a ``tool_use``
  block, ``input_json_delta`` fragments, ``content_block_stop``);
* the OpenAI chunks serialised as SSE bytes (``data: {...}`` blocks ending with
  ``data: [DONE]``), delivered in reads of 64-4096 bytes.

Partial-JSON workloads (``bench_partial_json.py``): one document of about 1, 10 or
100 KB cut into 4-character deltas.

The harness (``measure``) runs contestants interleaved in one process: for each
repeat, every contestant takes one sample in turn, so drift in machine speed hits all
of them alike; the fastest sample counts. Fast operations are looped inside a sample
until it lasts about ``min_sample_ns``; slow ones are timed once; contestants that
report a partial run (they hit the time cap) give a lower bound instead.
"""

from __future__ import annotations

import gc
import json
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ASSEMBLY_CALLS",
    "ASSEMBLY_SIZES",
    "PARTIAL_SIZES",
    "CallSpec",
    "Measurement",
    "Run",
    "ToolWorkload",
    "build_tool_workload",
    "deltas",
    "growth_exponent",
    "json_document",
    "measure",
    "median_ratio",
    "sse_reads",
    "sse_stream",
    "time_once",
]

# The grid: 1, 4 and 16 parallel calls x ~100 B, ~2 KB and ~50 KB arguments.
ASSEMBLY_CALLS = (1, 4, 16)
ASSEMBLY_SIZES = (100, 2_000, 50_000)
# Partial-JSON documents of about 1, 10 and 100 KB.
PARTIAL_SIZES = (1_000, 10_000, 100_000)

_TOOL_NAMES = (
    "search_files",
    "get_weather",
    "write_file",
    "run_query",
    "send_email",
    "create_ticket",
)
_KEYS = (
    "path",
    "query",
    "content",
    "title",
    "city",
    "limit",
    "offset",
    "tags",
    "options",
    "filters",
    "since",
    "units",
    "recipients",
    "body",
    "priority",
    "labels",
    "notes",
    "threshold",
    "recursive",
    "language",
    "timezone",
    "metadata",
    "records",
    "score",
)
# Text with the characters that make JSON strings interesting: quotes, backslashes,
# control characters (escaped by json.dumps), accents, CJK and astral-plane emoji.
_TEXT_PIECES = (
    "hello",
    "world",
    "Zürich",
    "São Paulo",
    "naïve café",
    "日本語のテキスト",
    "中文",
    "emoji 🚀🔥",
    'say "hi"',
    "C:\\Users\\bob",
    "line\nbreak",
    "tab\tstop",
    "ok",
    "résumé",
    "Ωmega",
    "price: 12€",
    "a/b/c",
    "50% off",
    "<tag attr='x'>",
    "x = y + z",
)


# -- argument objects -----------------------------------------------------------------


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_TEXT_PIECES) for _ in range(words))


def _number(rng: random.Random) -> int | float:
    kind = rng.randrange(4)
    if kind == 0:
        return rng.randrange(-1000, 100_000)
    if kind == 1:
        return round(rng.uniform(-1000, 1000), rng.randrange(1, 6))
    if kind == 2:
        return rng.choice((0, 1, -1, 42, 2**53))
    return float(f"{rng.uniform(1, 9):.3f}e{rng.randrange(-12, 12)}")


def _small_value(rng: random.Random) -> Any:
    kind = rng.randrange(6)
    if kind == 0:
        return _text(rng, rng.randrange(1, 5))
    if kind == 1:
        return _number(rng)
    if kind == 2:
        return rng.choice((True, False, None))
    if kind == 3:
        return [_number(rng) for _ in range(rng.randrange(1, 5))]
    if kind == 4:
        return [[_number(rng), _text(rng, 1)], [rng.choice((True, None))]]
    return {"name": _text(rng, 1), "value": _number(rng), "ok": rng.random() < 0.5}


def _record(rng: random.Random, serial: int) -> dict[str, Any]:
    """A row of the kind tools get in bulk (search hits, file entries, tickets)."""
    return {
        "id": serial,
        "title": _text(rng, rng.randrange(2, 6)),
        "body": _text(rng, rng.randrange(5, 20)),
        "scores": [_number(rng) for _ in range(rng.randrange(1, 6))],
        "nested": [[_number(rng), [_number(rng), _text(rng, 1)]], {"deep": [None, True, False]}],
        "active": rng.random() < 0.5,
        "note": None,
    }


def json_object(size: int, seed: int) -> dict[str, Any]:
    """A realistic JSON object whose ``json.dumps`` text is about ``size`` characters."""
    rng = random.Random(seed)
    obj: dict[str, Any] = {}
    length = 2  # len(json.dumps(obj)), kept up to date without re-serialising
    # Small fields first (most tool calls are a handful of them), then bulk records
    # once the target is large; stop as soon as the text reaches the target.
    while length < size:
        if size >= 1000 and len(obj) >= 6:
            record = _record(rng, len(obj.get("records", ())))
            if "records" not in obj:
                obj["records"] = []
                length += len('"records": []') + (2 if len(obj) > 1 else 0)
            else:
                length += 2  # ", "
            obj["records"].append(record)
            length += _dumped_len(record)
        else:
            key = f"{rng.choice(_KEYS)}_{len(obj)}"
            value = _small_value(rng)
            length += _dumped_len(key) + 2 + _dumped_len(value) + (2 if obj else 0)
            obj[key] = value
    return obj


def _dumped_len(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def arguments_text(size: int, seed: int) -> str:
    """The arguments string a model would send (``json.dumps`` style, UTF-8 kept)."""
    return json.dumps(json_object(size, seed), ensure_ascii=False)


def json_document(size: int, seed: int = 7) -> str:
    """A partial-JSON benchmark document of about ``size`` characters."""
    return arguments_text(size, seed)


def deltas(text: str, width: int = 4) -> list[str]:
    """``text`` cut into ``width``-character deltas."""
    return [text[i : i + width] for i in range(0, len(text), width)]


# -- tool-call streams -----------------------------------------------------------------


@dataclass(frozen=True)
class CallSpec:
    """One tool call of a workload: what every contestant must reassemble."""

    index: int
    id: str
    name: str
    arguments: str
    fragments: tuple[str, ...]

    @property
    def input(self) -> Any:
        """The parsed arguments (the expected ``input``)."""
        return json.loads(self.arguments)


@dataclass
class ToolWorkload:
    """A set of parallel tool calls and their interleaved fragment schedule."""

    calls: tuple[CallSpec, ...]
    size: int
    schedule: list[tuple[int, int]]  # (call index, fragment number) in stream order
    seed: int
    _openai: list[dict[str, Any]] | None = field(default=None, repr=False)
    _anthropic: list[dict[str, Any]] | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        """A short label: ``16 x 2KB``."""
        return f"{len(self.calls)} x {_size_label(self.size)}"

    @property
    def argument_bytes(self) -> int:
        """Total UTF-8 size of all calls' arguments."""
        return sum(len(c.arguments.encode()) for c in self.calls)

    def expected(self) -> list[tuple[str, str, Any]]:
        """``(id, name, input)`` of every call, in index order."""
        return [(c.id, c.name, c.input) for c in self.calls]

    def openai_chunks(self) -> list[dict[str, Any]]:
        """The stream as decoded OpenAI ``chat.completion.chunk`` dicts (built once)."""
        if self._openai is None:
            self._openai = _openai_chunks(self)
        return self._openai

    def anthropic_events(self) -> list[dict[str, Any]]:
        """The stream as decoded Anthropic Messages events (built once)."""
        if self._anthropic is None:
            self._anthropic = _anthropic_events(self)
        return self._anthropic


def _size_label(size: int) -> str:
    return f"{size // 1000}KB" if size >= 1000 else f"{size}B"


def fragment(text: str, rng: random.Random, low: int = 1, high: int = 8) -> tuple[str, ...]:
    """``text`` cut into pieces of ``low``-``high`` characters (seeded)."""
    pieces = []
    pos = 0
    while pos < len(text):
        step = rng.randint(low, high)
        pieces.append(text[pos : pos + step])
        pos += step
    return tuple(pieces)


def interleave(counts: Sequence[int], rng: random.Random) -> list[tuple[int, int]]:
    """A random order of all fragments keeping each call's order; calls start in index order."""
    schedule: list[tuple[int, int]] = []
    nxt = [0] * len(counts)
    started = 0
    live: list[int] = []
    total = sum(counts)
    while len(schedule) < total:
        # The next unstarted call competes with the open ones, so starts stay ordered.
        choices = live + ([started] if started < len(counts) else [])
        call = rng.choice(choices)
        if call == started:
            started += 1
            live.append(call)
        schedule.append((call, nxt[call]))
        nxt[call] += 1
        if nxt[call] == counts[call]:
            live.remove(call)
    return schedule


def build_tool_workload(calls: int, size: int, seed: int | None = None) -> ToolWorkload:
    """The workload of ``calls`` parallel calls with ~``size``-byte arguments each."""
    seed = seed if seed is not None else calls * 1_000_003 + size
    rng = random.Random(seed)
    specs = []
    for i in range(calls):
        text = arguments_text(size, seed * 31 + i)
        specs.append(
            CallSpec(
                i,
                f"call_{seed % 100_000:05d}{i:03d}x",
                _TOOL_NAMES[i % len(_TOOL_NAMES)],
                text,
                fragment(text, rng),
            )
        )
    schedule = interleave([len(s.fragments) for s in specs], rng)
    return ToolWorkload(tuple(specs), size, schedule, seed)


def _openai_chunks(w: ToolWorkload) -> list[dict[str, Any]]:
    """OpenAI chunks: a role chunk, one chunk per fragment, a finish chunk."""
    base = {
        "id": f"chatcmpl-{w.seed}",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-4o-2024-08-06",
        "system_fingerprint": "fp_50cad350e4",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [choice]}

    out = [chunk({"role": "assistant", "content": None})]
    for call_index, k in w.schedule:
        spec = w.calls[call_index]
        entry: dict[str, Any] = {"index": call_index, "function": {"arguments": spec.fragments[k]}}
        if k == 0:
            entry = {
                "index": call_index,
                "id": spec.id,
                "type": "function",
                "function": {"name": spec.name, "arguments": spec.fragments[0]},
            }
        out.append(chunk({"tool_calls": [entry]}))
    out.append(chunk({}, "tool_calls"))
    return out


def _anthropic_events(w: ToolWorkload) -> list[dict[str, Any]]:
    """Anthropic events for the same schedule (``tool_use`` blocks indexed like the calls)."""
    out: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": f"msg_{w.seed}",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-sonnet-4-5",
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 120, "output_tokens": 1},
            },
        }
    ]
    for call_index, k in w.schedule:
        spec = w.calls[call_index]
        if k == 0:
            block = {"type": "tool_use", "id": spec.id, "name": spec.name, "input": {}}
            out.append({"type": "content_block_start", "index": call_index, "content_block": block})
        delta = {"type": "input_json_delta", "partial_json": spec.fragments[k]}
        out.append({"type": "content_block_delta", "index": call_index, "delta": delta})
        if k == len(spec.fragments) - 1:
            out.append({"type": "content_block_stop", "index": call_index})
    out.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": len(w.schedule)},
        }
    )
    out.append({"type": "message_stop"})
    return out


def sse_stream(chunks: Sequence[dict[str, Any]]) -> bytes:
    """Chunks serialised as an OpenAI SSE body (UTF-8 kept raw, as servers send it)."""
    parts = [
        b"data: " + json.dumps(c, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"
        for c in chunks
    ]
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def sse_reads(data: bytes, seed: int, low: int = 64, high: int = 4096) -> list[bytes]:
    """``data`` as socket reads of ``low``-``high`` bytes (seeded; splits UTF-8 sequences)."""
    rng = random.Random(seed)
    reads = []
    pos = 0
    while pos < len(data):
        step = rng.randint(low, high)
        reads.append(data[pos : pos + step])
        pos += step
    return reads


# -- measuring -------------------------------------------------------------------------


@dataclass
class Run:
    """What one timed run of a contestant reports.

    ``elapsed_ns`` counts only the timed region. ``done`` of ``total`` items were
    processed; ``done < total`` means the run hit its time cap and stopped early.
    ``output`` is the contestant's result (checked by the smoke test).
    """

    elapsed_ns: int
    done: int = 1
    total: int = 1
    output: Any = None

    @property
    def partial(self) -> bool:
        """True when the run stopped at its time cap."""
        return self.done < self.total


@dataclass
class Measurement:
    """A contestant's time per operation on one workload."""

    ns: float
    samples: int
    lower_bound: bool = False  # stopped at the cap: ``ns`` is extrapolated linearly (a floor)
    note: str = ""
    output: Any = field(default=None, repr=False)  # the first run's result, for checking

    def cell(self, unit_ns: float | None = None) -> str:
        """A Markdown table cell: ``1.23 ms (4.5x)``, with ``>=`` for lower bounds."""
        prefix = ">= " if self.lower_bound else ""
        text = prefix + format_ns(self.ns)
        if unit_ns:
            text += f" ({prefix}{format_ratio(self.ns / unit_ns)})"
        return text


def format_ns(ns: float) -> str:
    """Human units for a duration in nanoseconds."""
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def build_name() -> str:
    """Which build of toolwire's wire layer this process runs (scripts/build-compiled)."""
    import toolwire.wire

    return "compiled (mypyc)" if toolwire.wire.COMPILED else "pure Python"


def format_ratio(ratio: float) -> str:
    """``1.23x`` / ``45.6x`` / ``789x``."""
    if ratio >= 100:
        return f"{ratio:,.0f}x"
    if ratio >= 10:
        return f"{ratio:.1f}x"
    return f"{ratio:.2f}x"


def time_once(run: Callable[[int], Run], cap_ns: int) -> Run:
    """One run with the garbage collector off (as ``timeit`` does), collected after."""
    gc.disable()
    try:
        return run(cap_ns)
    finally:
        gc.enable()
        gc.collect()


def measure(
    contestants: dict[str, Callable[[int], Run]],
    *,
    repeats: int,
    min_sample_ns: int,
    cap_ns: int,
    single_run_ns: int = 1_000_000_000,
) -> dict[str, Measurement]:
    """Best time per operation of each contestant, sampled interleaved.

    Each contestant is a function ``run(cap_ns) -> Run``. A first run calibrates: an
    operation slower than ``single_run_ns`` is reported from that run alone, one that
    hit ``cap_ns`` as a lower bound; faster ones are looped ``number`` times per sample
    so a sample lasts about ``min_sample_ns``, and the fastest of ``repeats`` samples is
    reported: on a shared machine the minimum is the sample least disturbed by other
    processes, and every contestant gets the same treatment.
    """
    results: dict[str, Measurement] = {}
    loops: dict[str, int] = {}
    samples: dict[str, list[float]] = {}
    outputs: dict[str, Any] = {}
    for name, run in contestants.items():
        first = time_once(run, cap_ns)
        if first.partial:
            results[name] = Measurement(
                first.elapsed_ns * first.total / max(first.done, 1),
                1,
                True,
                f"stopped at the cap after {first.done:,} of {first.total:,} items",
            )
        elif first.elapsed_ns >= single_run_ns:
            results[name] = Measurement(first.elapsed_ns, 1, note="single run", output=first.output)
        else:
            outputs[name] = first.output
            loops[name] = max(1, min_sample_ns // max(first.elapsed_ns, 1))
            samples[name] = []
    for _ in range(repeats):
        for name, values in samples.items():
            values.append(_sample(contestants[name], loops[name], cap_ns))
        gc.collect()  # once per round: a full collection costs more than a fast sample
    for name, values in samples.items():
        results[name] = Measurement(min(values), len(values), output=outputs[name])
    return {name: results[name] for name in contestants}


def _sample(run: Callable[[int], Run], number: int, cap_ns: int) -> float:
    gc.disable()
    try:
        total = 0
        for _ in range(number):
            total += run(cap_ns).elapsed_ns
    finally:
        gc.enable()
    return total / number


def median_ratio(ratios: Sequence[float]) -> float:
    """The median of a list of ratios."""
    return statistics.median(ratios)


def growth_exponent(sizes: Sequence[float], times: Sequence[float]) -> float:
    """Log-log slope of total time against input size, first to last point."""
    return math.log(times[-1] / times[0]) / math.log(sizes[-1] / sizes[0])


def now_ns() -> int:
    """The benchmark clock (``time.perf_counter_ns``)."""
    return time.perf_counter_ns()


# -- non-streaming response bodies (bench_assembly.py --only bodies, count_assembly.py --bodies)


def response_bodies(w: ToolWorkload) -> dict[str, dict[str, Any]]:
    """The workload's calls as one non-streaming response body per provider."""
    calls = w.calls
    return {
        "OpenAI Chat": {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments},
                            }
                            for c in calls
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
        },
        "Anthropic": {
            "content": [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in calls
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 20},
        },
        "OpenAI Responses": {
            "status": "completed",
            "output": [
                {
                    "type": "function_call",
                    "call_id": c.id,
                    "name": c.name,
                    "arguments": c.arguments,
                }
                for c in calls
            ],
            "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30},
        },
    }


def body_floor(provider: str, body: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The unavoidable work: each call's id, name and parsed arguments, unchecked."""
    if provider == "OpenAI Chat":
        calls = body["choices"][0]["message"]["tool_calls"]
        return [
            (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls
        ]
    if provider == "Anthropic":  # the parsed input is there; a Turn holds it as text
        dumps = json.dumps
        return [
            (b["id"], b["name"], json.loads(dumps(b["input"], ensure_ascii=False)))
            for b in body["content"]
        ]
    return [(i["call_id"], i["name"], json.loads(i["arguments"])) for i in body["output"]]
