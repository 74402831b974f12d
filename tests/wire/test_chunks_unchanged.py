"""A Chat decoder only reads the chunks it is fed: each is as it was after the turn.

``ScriptedModel`` feeds its scripted chunk dicts to ``OpenAIChatStream`` as they are,
without a copy each (a copy was a measurable share of a scripted run's wire cost), so
that a second request, or the test that wrote them, sees them unchanged. These tests
hold every Chat stream the wire tests keep (each recorded server's, ``text_turn``'s
and ``tool_call_turn``'s turns, whole and in fragments), fed with and without
per-fragment events and log probabilities, to that: the chunks, deep-copied before, are
equal after the turn.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from toolwire.messages import UserMessage
from toolwire.run.model import ModelRequest, TurnDone
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.wire.openai_chat import OpenAIChatStream

RECORDED = Path(__file__).parent / "fixtures" / "recorded"


def _recorded(name: str) -> list[dict[str, Any]]:
    lines = (RECORDED / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _streams() -> dict[str, list[dict[str, Any]]]:
    streams = {p.name: _recorded(p.name) for p in sorted(RECORDED.glob("chat-*.chunks.txt"))}
    streams["scripted calls, whole"] = tool_call_turn(("f", {"a": 1}), ("g", {"b": [1, 2]}))
    streams["scripted calls, fragments"] = tool_call_turn(
        ("f", {"a": "x" * 20}), ("g", "{broken"), fragment=4, text="calling", usage={"a": 1}
    )
    streams["scripted answer"] = text_turn("an answer in pieces", pieces=4)
    return streams


STREAMS = _streams()


@pytest.mark.parametrize("name", sorted(STREAMS))
@pytest.mark.parametrize(("deltas", "logprobs"), [(True, True), (False, False)])
def test_a_decoder_leaves_its_chunks_as_they_were(name: str, deltas: bool, logprobs: bool) -> None:
    chunks = STREAMS[name]
    before = copy.deepcopy(chunks)
    decoder = OpenAIChatStream(deltas=deltas, keep_logprobs=logprobs)
    for chunk in chunks:
        decoder.feed(chunk)
    decoder.close()
    assert chunks == before


def test_a_scripted_model_leaves_its_turns_as_they_were() -> None:
    turns = [
        tool_call_turn(("f", {"a": 1}), ("g", {"b": 2}), fragment=3),
        tool_call_turn(("f", {"a": 1})),
        text_turn("done", pieces=2),
    ]
    before = copy.deepcopy(turns)
    model = ScriptedModel(turns)

    async def play() -> list[Any]:
        ends = []
        for deltas in (True, False, True):
            request = ModelRequest([UserMessage("go")], deltas=deltas)
            ends += [e async for e in model.stream(request) if isinstance(e, TurnDone)]
        return ends

    ends = asyncio.run(play())
    assert [len(end.turn.requests) for end in ends] == [2, 1, 0]
    assert turns == before
