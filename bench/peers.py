"""The contestants: toolwire, the libraries users would otherwise use, and the floors.

Every contestant is built from a workload by a factory and is a function
``run(cap_ns) -> Run`` doing one whole operation: assemble every tool call of one
streamed response and produce ``(id, name, input)`` per call, ``input`` being the parsed
arguments. Contestants that do not parse arguments themselves (the ``openai`` SDK
without strict tools, litellm) get one ``json.loads`` per call, inside the timed
region, so all of them do the same job.

What is timed:

* toolwire and the floors consume the decoded dicts (or the raw reads) directly.
* The SDK accumulators need their own objects (``ChatCompletionChunk``, Anthropic
  ``RawMessageStreamEvent``, langchain ``AIMessageChunk``). Those are built outside the
  timed region, the way each SDK builds them when it reads a stream
  (``construct_type``), so only accumulation is timed. Large streams are converted in
  batches between timed stretches to bound memory.
* Peers whose cost grows quadratically are stopped once their timed work passes
  ``cap_ns``; the run reports how far it got and the harness extrapolates linearly,
  which is a lower bound for them.

Peers are imported lazily; ``available(name)`` says whether one is installed.
"""

from __future__ import annotations

import importlib
import json
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from toolwire.wire import AnthropicStream, OpenAIChatStream, PartialJSON
from workloads import Run, ToolWorkload

__all__ = [
    "Contestant",
    "anthropic_sdk",
    "available",
    "floor_anthropic",
    "floor_openai",
    "floor_sse",
    "jiter_partial",
    "json_loads_unit",
    "langchain_merge",
    "litellm_builder",
    "openai_sdk",
    "partial_json_parser_partial",
    "toolwire_anthropic",
    "toolwire_nodeltas_anthropic",
    "toolwire_nodeltas_openai",
    "toolwire_openai",
    "toolwire_partial",
    "toolwire_sse",
]

Contestant = Callable[[int], Run]
Calls = list[tuple[str, str, Any]]

# litellm fetches its model price map over the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_PEER_MODULES = {
    "openai": "openai.lib.streaming.chat",
    "anthropic": "anthropic.lib.streaming._messages",
    "langchain": "langchain_core.messages",
    "litellm": "litellm",
    "jiter": "jiter",
    "partial_json_parser": "partial_json_parser",
}
# SDK objects are fed this many at a time (converted outside the timed region when not
# prebuilt), and the time cap is checked between batches; streams up to PREBUILD items
# are converted once per contestant and reused by every run.
BATCH = 500
PREBUILD = 20_000

_clock = time.perf_counter_ns


def _import(name: str) -> Any:
    # Peers' own deprecation warnings are theirs, not the benchmark's (pytest runs
    # with warnings as errors).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(_PEER_MODULES[name])


def _quiet(run: Contestant) -> Contestant:
    """Run a peer with its warnings silenced (outside its timed region)."""

    def quiet_run(cap_ns: int) -> Run:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run(cap_ns)

    return quiet_run


def available(name: str) -> bool:
    """Whether the peer library ``name`` (a key of the adapters below) is installed."""
    try:
        _import(name)
    except ImportError:
        return False
    return True


# -- floors ------------------------------------------------------------------------------


def assemble_openai_dicts(chunks: Sequence[dict[str, Any]]) -> Calls:
    """The floor's job: a dict by index, list appends, one join and one json.loads per call."""
    calls: dict[int, list[Any]] = {}
    for chunk in chunks:
        for choice in chunk["choices"]:
            for tc in choice["delta"].get("tool_calls") or ():
                _floor_fragment(calls, tc)
    return _floor_result(calls)


def _floor_fragment(calls: dict[int, list[Any]], tc: dict[str, Any]) -> None:
    entry = calls.get(tc["index"])
    if entry is None:
        entry = calls[tc["index"]] = [tc.get("id"), "", []]
    fn = tc.get("function")
    if fn:
        if fn.get("name"):
            entry[1] += fn["name"]
        if fn.get("arguments"):
            entry[2].append(fn["arguments"])


def _floor_result(calls: dict[int, list[Any]]) -> Calls:
    return [(e[0], e[1], json.loads("".join(e[2]))) for _, e in sorted(calls.items())]


def floor_openai(w: ToolWorkload) -> Contestant:
    """Floor for OpenAI chunk dicts."""
    chunks = w.openai_chunks()

    def run(cap_ns: int) -> Run:
        t0 = _clock()
        out = assemble_openai_dicts(chunks)
        return Run(_clock() - t0, output=out)

    return run


def floor_anthropic(w: ToolWorkload) -> Contestant:
    """Floor for Anthropic event dicts (the same dict-by-index assembly)."""
    events = w.anthropic_events()

    def run(cap_ns: int) -> Run:
        t0 = _clock()
        out = assemble_anthropic_dicts(events)
        return Run(_clock() - t0, output=out)

    return run


def assemble_anthropic_dicts(events: Sequence[dict[str, Any]]) -> Calls:
    """The floor's job on Anthropic events: the same dict-by-index assembly."""
    calls: dict[int, list[Any]] = {}
    for ev in events:
        kind = ev["type"]
        if kind == "content_block_delta":
            delta = ev["delta"]
            if delta["type"] == "input_json_delta":
                calls[ev["index"]][2].append(delta["partial_json"])
        elif kind == "content_block_start":
            block = ev["content_block"]
            if block["type"] == "tool_use":
                calls[ev["index"]] = [block["id"], block["name"], []]
    return _floor_result(calls)


def floor_sse(reads: Sequence[bytes]) -> Contestant:
    """Floor for raw SSE: buffer + ``split(b"\\n")``, ``json.loads`` per data line, then assemble."""

    def run(cap_ns: int) -> Run:
        t0 = _clock()
        calls: dict[int, list[Any]] = {}
        buf = b""
        for data in reads:
            lines = (buf + data).split(b"\n")
            buf = lines.pop()
            for line in lines:
                if line.startswith(b"data: ") and line != b"data: [DONE]":
                    for choice in json.loads(line[6:])["choices"]:
                        for tc in choice["delta"].get("tool_calls") or ():
                            _floor_fragment(calls, tc)
        out = _floor_result(calls)
        return Run(_clock() - t0, output=out)

    return run


# -- toolwire ----------------------------------------------------------------------------


def _requests(turn: Any) -> Calls:
    """Touch every request's parsed input (what an executor would read)."""
    return [(r.id, r.name, r.input) for r in turn.requests]


def toolwire_openai(w: ToolWorkload, deltas: bool = True) -> Contestant:
    """toolwire ``OpenAIChatStream.feed`` on every chunk dict, then ``close``."""
    chunks = w.openai_chunks()

    def run(cap_ns: int) -> Run:
        t0 = _clock()
        stream = OpenAIChatStream(deltas=deltas)
        for chunk in chunks:
            stream.feed(chunk)
        out = _requests(stream.close())
        return Run(_clock() - t0, output=out)

    return run


def toolwire_anthropic(w: ToolWorkload, deltas: bool = True) -> Contestant:
    """toolwire ``AnthropicStream.feed`` on every event dict, then ``close``."""
    events = w.anthropic_events()

    def run(cap_ns: int) -> Run:
        t0 = _clock()
        stream = AnthropicStream(deltas=deltas)
        for ev in events:
            stream.feed(ev)
        out = _requests(stream.close())
        return Run(_clock() - t0, output=out)

    return run


def toolwire_nodeltas_openai(w: ToolWorkload) -> Contestant:
    """``toolwire_openai`` with ``deltas=False`` (no ``ToolCallDelta`` per fragment)."""
    return toolwire_openai(w, deltas=False)


def toolwire_nodeltas_anthropic(w: ToolWorkload) -> Contestant:
    """``toolwire_anthropic`` with ``deltas=False`` (no ``ToolCallDelta`` per fragment)."""
    return toolwire_anthropic(w, deltas=False)


def toolwire_sse(reads: Sequence[bytes]) -> Contestant:
    """toolwire ``OpenAIChatStream.feed_bytes`` on every read, then ``close``."""

    def run(cap_ns: int) -> Run:
        t0 = _clock()
        stream = OpenAIChatStream()
        for data in reads:
            stream.feed_bytes(data)
        out = _requests(stream.close())
        return Run(_clock() - t0, output=out)

    return run


# -- SDK accumulators --------------------------------------------------------------------


class _Converted:
    """A peer's objects for a stream: all prebuilt, or converted batch by batch."""

    def __init__(self, items: Sequence[Any], convert: Callable[[Any], Any]) -> None:
        self._items = items
        self._convert = convert
        self._prebuilt = self._convert_all(items) if len(items) <= PREBUILD else None

    def __len__(self) -> int:
        return len(self._items)

    def _convert_all(self, items: Sequence[Any]) -> list[Any]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [self._convert(x) for x in items]

    def batches(self) -> Iterator[list[Any]]:
        """Lists of converted objects, in stream order (conversion happens here, untimed)."""
        for start in range(0, len(self._items), BATCH):
            if self._prebuilt is not None:
                yield self._prebuilt[start : start + BATCH]
            else:
                yield self._convert_all(self._items[start : start + BATCH])


def _timed_batches(
    objs: _Converted, feed: Callable[[list[Any]], None], cap_ns: int
) -> tuple[int, int]:
    """Feed batch after batch, timing only ``feed``; stop once the timed total passes the cap."""
    elapsed = done = 0
    for batch in objs.batches():
        t0 = _clock()
        feed(batch)
        elapsed += _clock() - t0
        done += len(batch)
        if elapsed > cap_ns and done < len(objs):
            break
    return elapsed, done


def openai_sdk(w: ToolWorkload) -> Contestant:
    """``openai`` ``ChatCompletionStreamState.handle_chunk`` on ``ChatCompletionChunk`` objects."""
    stream_chat = _import("openai")
    from openai._models import construct_type
    from openai.types.chat import ChatCompletionChunk

    objs = _Converted(
        w.openai_chunks(), lambda c: construct_type(type_=ChatCompletionChunk, value=c)
    )

    def run(cap_ns: int) -> Run:
        state = stream_chat.ChatCompletionStreamState()

        def feed(batch: list[Any]) -> None:
            for chunk in batch:
                state.handle_chunk(chunk)

        elapsed, done = _timed_batches(objs, feed, cap_ns)
        if done < len(objs):
            return Run(elapsed, done, len(objs))
        t0 = _clock()
        message = state.get_final_completion().choices[0].message
        out = [
            (tc.id, tc.function.name, json.loads(tc.function.arguments))
            for tc in message.tool_calls or ()
        ]
        return Run(elapsed + _clock() - t0, done, len(objs), out)

    return _quiet(run)


def anthropic_sdk(w: ToolWorkload) -> Contestant:
    """The ``anthropic`` SDK's ``accumulate_event`` on ``RawMessageStreamEvent`` objects."""
    messages = _import("anthropic")
    from anthropic._models import construct_type_unchecked
    from anthropic.types import RawMessageStreamEvent

    event_type: Any = RawMessageStreamEvent  # a Union alias, which the stubs do not accept
    objs = _Converted(
        w.anthropic_events(),
        lambda e: construct_type_unchecked(type_=event_type, value=e),
    )

    def run(cap_ns: int) -> Run:
        json_bufs: dict[int, bytes] = {}
        snapshot: list[Any] = [None]

        def feed(batch: list[Any]) -> None:
            current = snapshot[0]
            for event in batch:
                current = messages.accumulate_event(
                    event=event, current_snapshot=current, json_bufs=json_bufs
                )
            snapshot[0] = current

        elapsed, done = _timed_batches(objs, feed, cap_ns)
        if done < len(objs):
            return Run(elapsed, done, len(objs))
        t0 = _clock()
        out = [(b.id, b.name, b.input) for b in snapshot[0].content if b.type == "tool_use"]
        return Run(elapsed + _clock() - t0, done, len(objs), out)

    return _quiet(run)


def _langchain_chunk(lc: Any, chunk: dict[str, Any]) -> Any:
    """One OpenAI chunk as the ``AIMessageChunk`` langchain-openai would make of it."""
    from langchain_core.messages.tool import tool_call_chunk

    tool_chunks = []
    for choice in chunk["choices"]:
        for tc in choice["delta"].get("tool_calls") or ():
            fn = tc.get("function") or {}
            tool_chunks.append(
                tool_call_chunk(
                    name=fn.get("name"),
                    args=fn.get("arguments"),
                    id=tc.get("id"),
                    index=tc["index"],
                )
            )
    return lc.AIMessageChunk(content="", tool_call_chunks=tool_chunks)


def langchain_merge(w: ToolWorkload) -> Contestant:
    """langchain-core: ``AIMessageChunk`` objects summed with ``+``, then ``.tool_calls``."""
    lc = _import("langchain")
    objs = _Converted(w.openai_chunks(), lambda c: _langchain_chunk(lc, c))

    def run(cap_ns: int) -> Run:
        acc: list[Any] = [None]

        def feed(batch: list[Any]) -> None:
            total = acc[0]
            for chunk in batch:
                total = chunk if total is None else total + chunk
            acc[0] = total

        elapsed, done = _timed_batches(objs, feed, cap_ns)
        if done < len(objs):
            return Run(elapsed, done, len(objs))
        t0 = _clock()
        out = [(tc["id"], tc["name"], tc["args"]) for tc in acc[0].tool_calls]
        return Run(elapsed + _clock() - t0, done, len(objs), out)

    return _quiet(run)


def litellm_builder(w: ToolWorkload) -> Contestant:
    """litellm ``stream_chunk_builder`` on the list of chunk dicts (builds the whole response)."""
    litellm = _import("litellm")
    chunks = w.openai_chunks()

    def run(cap_ns: int) -> Run:
        # stream_chunk_builder may annotate the chunks it gets; give it its own copies.
        # (shallow: it replaces top-level keys, never edits the nested deltas)
        mine = [dict(c) for c in chunks]
        t0 = _clock()
        message = litellm.stream_chunk_builder(mine).choices[0].message
        out = [
            (tc.id, tc.function.name, json.loads(tc.function.arguments))
            for tc in message.tool_calls or ()
        ]
        return Run(_clock() - t0, output=out)

    return _quiet(run)


# -- partial JSON --------------------------------------------------------------------------


def toolwire_partial(pieces: Sequence[str]) -> Contestant:
    """toolwire ``PartialJSON``: feed each delta, read ``.value`` after every one."""

    def run(cap_ns: int) -> Run:
        t0 = _clock()
        parser = PartialJSON()
        value = None
        for piece in pieces:
            parser.feed(piece)
            value = parser.value
        return Run(_clock() - t0, output=value)

    return run


def _sampled_reparse(
    pieces: Sequence[str], stride: int, parse: Callable[[Any], Any], encode: bool
) -> Contestant:
    """Re-parse the growing buffer after every ``stride``-th delta; extrapolate the total.

    The buffer after delta ``i`` is a slice of the whole text, cut outside the timed
    region (so the peers are not charged for growing it). With ``stride > 1`` only the
    buffers after deltas ``stride-1, 2*stride-1, ...`` are parsed and each parse counts
    ``stride`` times: neighbouring buffers cost about the same, so this estimates the
    full run without spending minutes on it. The final buffer is always parsed (it
    gives the output) and counts once when it falls outside the sample.
    """
    text = "".join(pieces)
    whole: str | bytes = text.encode() if encode else text
    ends: list[int] = []
    pos = 0
    for piece in pieces:
        # Deltas are cut in characters, so every prefix is valid UTF-8 as bytes too.
        pos += len(piece.encode()) if encode else len(piece)
        ends.append(pos)
    sampled = [(ends[i], stride) for i in range(stride - 1, len(ends), stride)]
    if not sampled or sampled[-1][0] != ends[-1]:
        sampled.append((ends[-1], 1))

    def run(cap_ns: int) -> Run:
        elapsed = 0
        value = None
        for end, weight in sampled:
            buffer = whole[:end]
            t0 = _clock()
            value = parse(buffer)
            elapsed += (_clock() - t0) * weight
        return Run(elapsed, output=value)

    return _quiet(run)


def jiter_partial(pieces: Sequence[str], stride: int = 1) -> Contestant:
    """jiter ``from_json(buffer, partial_mode="trailing-strings")`` after every delta."""
    jiter = _import("jiter")
    return _sampled_reparse(
        pieces, stride, lambda b: jiter.from_json(b, partial_mode="trailing-strings"), True
    )


def partial_json_parser_partial(pieces: Sequence[str], stride: int = 1) -> Contestant:
    """``partial_json_parser.loads`` on the growing buffer after every delta."""
    pjp = _import("partial_json_parser")
    return _sampled_reparse(pieces, stride, pjp.loads, False)


def json_loads_unit(text: str) -> Contestant:
    """One ``json.loads`` of the final text: the unit of the partial-JSON table."""

    def run(cap_ns: int) -> Run:
        t0 = _clock()
        value = json.loads(text)
        return Run(_clock() - t0, output=value)

    return run
