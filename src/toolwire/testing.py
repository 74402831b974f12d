"""Test helpers for code built on toolwire: a scripted model, no network.

``ScriptedModel`` plays back OpenAI Chat Completions stream chunks, one list of chunks
per model request, through the real :class:`~toolwire.wire.OpenAIChatStream` decoder —
so a test exercises the same assembly, early execution and history code as a live
run. The helpers ``text_turn`` and ``tool_call_turn`` build chunk lists for the common
cases.

``ReplayModel`` plays back a run recorded in an audit log (``Agent(log=...)``), and
``assert_replays`` turns such a run into a regression test
(:mod:`toolwire.observe.replay`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from .checks import check_number
from .errors import CallerError
from .history import to_openai_chat
from .history.tool_defs import shared_chat_tools, tool_defs
from .messages import Message
from .observe.replay import ReplayModel, assert_replays
from .run.model import ModelEvent, ModelRequest, TurnDone
from .tooldef import ToolChoice, ToolDef
from .wire.openai_chat import OpenAIChatStream

__all__ = ["ReplayModel", "ScriptedModel", "assert_replays", "text_turn", "tool_call_turn"]

_ids = itertools.count(1)


class ScriptedModel:
    """A :class:`~toolwire.run.model.Model` that replays scripted turns.

    Args:
        turns: One entry per model request: a list of ``chat.completion.chunk`` dicts.
        chunk_delay: Seconds to sleep between chunks (a paced stream).
        name: The model name.

    Attributes:
        requests: Every request received, as ``{"messages": [...OpenAI Chat
            messages...], "tools": [...definitions...], "tool_choice": ...,
            "parallel_tool_calls": ..., "settings": {...}}``. A request's list of
            messages and its settings are copied when it is made, and encoded when
            ``requests`` is next read (a message object changed in place in between
            shows changed); each read returns the same list, with the requests made
            since added.
    """

    def __init__(
        self,
        turns: Sequence[Sequence[Mapping[str, Any]]],
        chunk_delay: float = 0.0,
        *,
        name: str = "scripted",
    ) -> None:
        if isinstance(turns, (str, bytes)) or not all(
            isinstance(t, Sequence) and not isinstance(t, (str, bytes)) for t in turns
        ):
            raise CallerError("ScriptedModel(turns): turns must be a list of lists of chunk dicts")
        check_number("ScriptedModel: chunk_delay", chunk_delay, positive=False)
        self._turns = [list(t) for t in turns]
        self._next = 0
        self.chunk_delay = float(chunk_delay)
        self._name = name
        self._records: list[dict[str, Any]] = []
        self._unread: list[_Received] = []  # requests received, not encoded yet

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request received, in order (see the class's ``requests``).

        A request's messages are encoded as Chat messages here, when the record is first
        read, not when the request is made: most runs never read it, and encoding the
        whole history at every request was about 45 bytecodes a call of a scripted
        100-tool run (bench/README.md, twelfth pass). Encoded from the request's own
        list of messages, copied when it came, so a history that grew since does not
        show (toolwire never changes a message once sent).
        """
        if self._unread:
            unread, self._unread = self._unread, []
            self._records += map(_record, unread)
        return self._records

    @property
    def name(self) -> str:
        """The model name."""
        return self._name

    @property
    def remaining(self) -> int:
        """Turns not consumed yet."""
        return len(self._turns) - self._next

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Consume the next scripted turn and stream it through the real decoder.

        Raises:
            CallerError: No scripted turn is left (raised at the first iteration).
            ToolMappingError: A tool definition is malformed (checked here, as sent).
        """
        # What the record needs, copied now (the history list and settings are the
        # caller's, and may change after); encoded when read (``requests``).
        self._unread.append(
            (
                tuple(request.messages),
                tool_defs(request.tools),
                request.tool_choice,
                request.parallel_tool_calls,
                dict(request.settings),
            )
        )
        number = self._next
        self._next += 1
        return self._play(number, request.deltas)

    async def _play(self, number: int, deltas: bool = True) -> AsyncIterator[ModelEvent]:
        if number >= len(self._turns):
            raise CallerError(
                f"ScriptedModel ran out of turns: request {number + 1} was made, but only "
                f"{len(self._turns)} turn(s) were scripted",
                hint="add a turn for every model request the test makes",
            )
        decoder = OpenAIChatStream(deltas=deltas)  # none when nobody reads them
        feed = decoder.feed
        delay = self.chunk_delay
        # Each scripted chunk is fed as it is, not copied: a decoder only reads what it
        # is fed (tests/wire/test_chunks_unchanged.py), and a copy of each was about 800
        # instructions of a whole call's wire cost (bench/README.md, ninth pass).
        for position, chunk in enumerate(self._turns[number]):
            if delay and position:
                await asyncio.sleep(delay)
            for event in feed(chunk):
                yield event
        yield TurnDone(decoder.close())


# A request as received: its messages, tool definitions, tool choice, parallel calls
# and settings, each copied or frozen when it came.
_Received = tuple[tuple[Message, ...], list[ToolDef], ToolChoice, bool | None, dict[str, Any]]


def _record(received: _Received) -> dict[str, Any]:
    """A request's record (``ScriptedModel.requests``): its messages as OpenAI Chat
    messages, its tools' Chat definitions."""
    messages, defs, tool_choice, parallel_tool_calls, settings = received
    return {
        "messages": to_openai_chat(messages),
        # Shared, not copied: a request's definitions are frozen, and a deep copy per
        # request was a fifth of a scripted 100-tool run's cost; each definition's Chat
        # form is made once (read these dicts, never edit them).
        "tools": shared_chat_tools(defs),
        "tool_choice": tool_choice,
        "parallel_tool_calls": parallel_tool_calls,
        "settings": settings,
    }


def text_turn(
    text: str, *, pieces: int = 1, usage: Mapping[str, int] | None = None
) -> list[dict[str, Any]]:
    """Chunks of a turn that answers with ``text`` (split into ``pieces`` deltas).

    Args:
        text: The answer.
        pieces: How many content chunks to split it into.
        usage: An OpenAI ``usage`` object for the final chunk
            (``{"prompt_tokens": .., "completion_tokens": ..}``).
    """
    size = max(1, -(-len(text) // max(1, pieces)))
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"content": text[i : i + size]}) for i in range(0, len(text), size)]
    chunks.append(_chunk({}, finish_reason="stop", usage=usage))
    return chunks


def tool_call_turn(
    *calls: tuple[str, Any] | tuple[str, Any, str],
    fragment: int = 0,
    text: str = "",
    usage: Mapping[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Chunks of a turn that calls tools, in the shape OpenAI streams them.

    Args:
        *calls: ``(name, arguments)`` or ``(name, arguments, call_id)``; ``arguments``
            is a dict (sent as JSON) or a str (sent verbatim, so it may be broken).
            Ids default to ``call_<n>`` with ``n`` counting up across the process, so
            that scripted turns never repeat an id (a history must not).
        fragment: Split each call's arguments into fragments of this many characters
            (0: one fragment).
        text: Answer text before the calls.
        usage: An OpenAI ``usage`` object for the final chunk.
    """
    chunks = [_chunk({"role": "assistant", "content": text or None})]
    for index, call in enumerate(calls):
        name, arguments = call[0], call[1]
        call_id = call[2] if len(call) > 2 else f"call_{next(_ids)}"
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        step = fragment or max(1, len(raw))
        parts = [raw[i : i + step] for i in range(0, len(raw), step)] or [""]
        head = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": parts[0]},
        }
        chunks.append(_chunk({"tool_calls": [head]}))
        chunks += [
            _chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
            for p in parts[1:]
        ]
    chunks.append(_chunk({}, finish_reason="tool_calls", usage=usage))
    return chunks


def _chunk(
    delta: dict[str, Any],
    *,
    finish_reason: str | None = None,
    usage: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    chunk: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
    if usage is not None:
        chunk["usage"] = dict(usage)
    return chunk
