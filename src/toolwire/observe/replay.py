"""Record and replay: a logged run played back offline, deterministically.

:class:`ReplayModel` is a :class:`~toolwire.run.model.Model` whose turns come from the
audit log: each request gets the next logged turn (text, reasoning, a refusal, the tool
calls verbatim, usage, finish reason), streamed through the real OpenAI Chat decoder so that
assembly and early execution run as they did live. The tools run live (pass your own)
or come from the log too (:meth:`ReplayModel.tools`: each call answered with the
result it got then). :func:`assert_replays` turns a logged run into a regression test.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from ..errors import (
    CallerError,
    ProviderAPIError,
    ReplayedToolError,
    ReplayMismatchError,
    ToolwireError,
)
from ..messages import (
    AssistantMessage,
    ContentPart,
    Image,
    Message,
    Part,
    ProviderPart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    UserMessage,
)
from ..policies.loops import call_signature
from ..run.agent import Agent, RunResult
from ..run.events import RequestFailed, ToolResultReady
from ..run.model import ModelEvent, ModelRequest, TurnDone
from ..tools.outcomes import failure_class
from ..tools.tool import Tool
from ..wire.openai_chat import OpenAIChatStream
from .query import load_run
from .store import connect, log_errors

__all__ = [
    "ReplayModel",
    "assert_replays",
]


class ReplayModel:
    """A model that plays back the turns of a logged run.

    Build it with :meth:`from_log`. It needs no network and no key, and gives the
    same turns whatever the agent sends (its requests are kept in ``requests``).

    Attributes:
        run: The logged run (its row, requests and calls), as :func:`load_run` gives it.
        requests: The requests received.
    """

    def __init__(self, run: dict[str, Any]) -> None:
        self.run = run
        self._turns = list(run["requests"])
        self._next = 0
        self.requests: list[ModelRequest] = []

    @classmethod
    def from_log(cls, path: str | os.PathLike[str], run_id: str) -> ReplayModel:
        """The model of a logged run.

        Args:
            path: The audit log's SQLite file.
            run_id: A full run id, an unambiguous prefix, or ``last``.

        Raises:
            AuditLogError: The file cannot be read.
            RunNotFoundError: No run matches ``run_id``.
        """
        name = os.fspath(path)
        conn = connect(name, readonly=True)
        try:
            with log_errors(name):
                return cls(load_run(conn, run_id, name))
        finally:
            conn.close()

    @property
    def name(self) -> str:
        """``replay:`` and the logged model's name."""
        return f"replay:{self.run['model']}"

    @property
    def remaining(self) -> int:
        """Logged turns not played yet."""
        return len(self._turns) - self._next

    def history(self) -> list[Message]:
        """The history the logged run started from (system prompt, user prompt, ...)."""
        answered = [t for t in self._turns if not t.get("error")]  # a failed one holds none
        if not answered:
            prompt = self.run.get("prompt")
            return [UserMessage(prompt)] if prompt else []
        return messages_from_json(answered[0]["messages"], self.run.get("images"))

    def tools(self) -> list[Tool]:
        """The logged run's tools, answering each call with its logged result.

        Calls are matched by tool and arguments, in the order they were logged; a
        call that ran and failed (failure class ``tool_error`` or ``timeout``) fails
        again with the same text and status. A call the log has no answer for raises
        :class:`ReplayedToolError`.

        Raises:
            SchemaExtraMissingError: ``jsonschema`` is not installed (``toolwire[schema]``).
        """
        answers: dict[str, deque[tuple[str, Answer]]] = defaultdict(deque)
        custom = self._custom_tools()
        images = self.run.get("images") or {}
        for call in self.run["calls"]:
            if _ran(call):
                key = _signature(call["tool"], call["arguments"], raw=call["tool"] in custom)
                answer: Answer = call["result"]
                if call.get("parts"):  # a result with images: its parts, images restored
                    answer = list(parts_from_json(json.loads(call["parts"]), images))
                # Images a provider refused: the tool returned them (its parts), the
                # row holds the error result that replaced them, which the loop makes again.
                status = "ok" if call.get("images_refused") else call["status"]
                answers[key].append((status, answer))
        tools = []
        for definition in json.loads(self.run["tools"]):
            custom = definition.get("custom")  # a free-form tool: {"type": "custom", ...}
            function = custom or definition.get("function", definition)
            tools.append(
                Tool.from_schema(
                    function["name"],
                    function.get("description", ""),
                    function.get("parameters") or {"type": "object", "properties": {}},
                    _answerer(function["name"], answers),
                    concurrency_safe=True,
                    side_effects=False,
                    retries=0,
                    freeform=custom.get("format") or True if custom else False,
                )
            )
        return tools

    def _custom_tools(self) -> frozenset[str]:
        """The names of the logged run's free-form (custom) tools."""
        definitions = json.loads(self.run.get("tools") or "[]")
        return frozenset(
            str(d["custom"].get("name"))
            for d in definitions
            if isinstance(d, dict) and isinstance(d.get("custom"), dict)
        )

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Play the next logged turn (a request that failed fails again).

        Raises:
            ProviderAPIError: The logged request failed (its message and HTTP status).
            ReplayMismatchError: Every logged turn was played (raised at the first iteration).
        """
        self.requests.append(request)
        number = self._next
        self._next += 1
        return self._play(number)

    async def _play(self, number: int) -> AsyncIterator[ModelEvent]:
        if number >= len(self._turns):
            raise ReplayMismatchError(
                f"request {number + 1} was made, but run {self.run['run_id']} logged "
                f"{len(self._turns)} model turn(s)"
            )
        logged = self._turns[number]
        if logged.get("error"):  # the request failed: it fails again, as it was logged
            raise ProviderAPIError(logged["error"], status=logged.get("error_status"))
        decoder = OpenAIChatStream()
        for chunk in turn_chunks(logged, self._custom_tools()):
            for event in decoder.feed(chunk):
                yield event
        turn = decoder.close()
        # A refusal without words (Anthropic's stop_reason "refusal") has no Chat chunk
        # to carry it; a log written before refusals were kept has no such column.
        turn.refused = turn.refused or bool(logged.get("refused"))
        yield TurnDone(turn)


def _ran(call: dict[str, Any]) -> bool:
    """Whether a logged call reached its tool and ended: ``ok``, or failed in the tool."""
    if call["status"] == "ok":
        return True
    return call["status"] in ("error", "timeout") and call["failure_class"] in (
        "tool_error",
        "timeout",
    )


def _signature(tool: str, arguments: str, *, raw: bool = False) -> str:
    """The logged call's signature, as the replayed call will have it: a free-form
    tool (``raw``) gets its input text as is, even when that text parses as JSON."""
    if raw:
        return call_signature(tool, arguments)
    try:
        value: Any = json.loads(arguments)
    except ValueError:
        value = arguments
    return call_signature(tool, value)


Answer = str | list[ContentPart]
"""A logged call's answer: its text, or its content parts when it returned images."""


def _answerer(
    name: str, answers: dict[str, deque[tuple[str, Answer]]]
) -> Callable[[dict[str, Any]], Answer]:
    def answer(arguments: dict[str, Any]) -> Answer:
        queue = answers.get(call_signature(name, arguments))
        if not queue:
            raise ReplayedToolError(
                f"the log has no (further) result for {call_signature(name, arguments)}",
                hint="the agent called a tool differently from the logged run; run the tools live",
            )
        status, text = queue.popleft()
        if status != "ok":
            # The executor answers it with the logged text and status, word for word
            # (toolwire.tools.outcomes): nothing is read back out of the text.
            raise ReplayedToolError(
                f"the logged call {call_signature(name, arguments)} failed ({status})",
                result=text if isinstance(text, str) else "",
                timed_out=status == "timeout",
            )
        return text

    return answer


def turn_chunks(
    turn: dict[str, Any], custom_tools: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """OpenAI Chat stream chunks that decode to the logged turn.

    A free-form call (logged with ``"freeform": true``; in a log written before the
    flag, a call to one of ``custom_tools``) is replayed as a Chat ``custom`` call, so
    it decodes as free-form again, its raw input unchanged. A refusal's text is a
    ``refusal`` delta, so it decodes as a ``RefusalPart`` again (a log written before
    refusals were kept has none).
    """

    def chunk(delta: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {
            "id": "chatcmpl-replay",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
            **extra,
        }

    chunks = [chunk({"role": "assistant"})]
    if turn["reasoning"]:
        chunks.append(chunk({"reasoning_content": turn["reasoning"]}))
    if turn["text"]:
        chunks.append(chunk({"content": turn["text"]}))
    if turn.get("refusal"):
        chunks.append(chunk({"refusal": turn["refusal"]}))
    for index, call in enumerate(json.loads(turn["tool_calls"])):
        entry: dict[str, Any] = {"index": index, "id": call["id"]}
        if call.get("freeform", call["name"] in custom_tools):
            entry |= {
                "type": "custom",
                "custom": {"name": call["name"], "input": call["arguments"]},
            }
        else:
            head = {"name": call["name"], "arguments": call["arguments"]}
            entry |= {"type": "function", "function": head}
        chunks.append(chunk({"tool_calls": [entry]}))
    calls = json.loads(turn["tool_calls"])
    last = chunk({})
    last["choices"][0]["finish_reason"] = turn["finish_reason"] or (
        "tool_calls" if calls else "stop"
    )
    last["usage"] = {
        "prompt_tokens": turn["input_tokens"],
        "completion_tokens": turn["output_tokens"],
        "prompt_tokens_details": {"cached_tokens": turn.get("cache_read_tokens") or 0},
        "completion_tokens_details": {"reasoning_tokens": turn.get("reasoning_tokens") or 0},
    }
    chunks.append(last)
    return chunks


def messages_from_json(
    text: str, images: dict[str, tuple[str, bytes]] | None = None
) -> list[Message]:
    """Neutral messages back from the log's JSON (see ``record.message_json``).

    ``images`` holds the run's logged images by hash (``load_run``'s ``images``): the
    image parts of tool results and user messages get their bytes back from it.
    """
    messages: list[Message] = []
    for item in json.loads(text):
        role = item.get("role")
        held = item.get("parts") if role in ("user", "tool") else None  # content parts
        parts = parts_from_json(held, images or {}) if held else ()
        if role == "system":
            messages.append(SystemMessage(item["content"]))
        elif role == "user":
            messages.append(UserMessage(item["content"], parts=parts))
        elif role == "tool":
            status = ToolStatus(item["status"])
            messages.append(
                ToolResult(item["call_id"], item["name"], item["content"], status, parts=parts)
            )
        elif role == "assistant":
            messages.append(AssistantMessage([_part(p) for p in item["parts"]]))
    return messages


def parts_from_json(
    items: list[dict[str, Any]], images: dict[str, tuple[str, bytes]]
) -> tuple[ContentPart, ...]:
    """Logged content parts back (see ``record.parts_json``), each image from ``images``.

    Raises:
        ReplayMismatchError: An image the parts name is not in the log.
    """
    parts: list[ContentPart] = []
    for item in items:
        if item.get("kind") != "image":
            parts.append(TextPart(item["text"]))
            continue
        stored = images.get(item["sha256"])
        if stored is None:
            raise ReplayMismatchError(
                f"the log names image {item['sha256'][:12]}... but does not hold it",
                hint="the log's images table is missing rows; replay from an intact log",
            )
        parts.append(Image(stored[1], stored[0]))
    return tuple(parts)


def _part(item: dict[str, Any]) -> Part:
    kind = item.get("kind")
    if kind == "tool_call":
        call = ToolCall(item["id"], item["name"], item["arguments"], caller=item.get("caller"))
        call.freeform = bool(item.get("freeform", False))  # a custom (free-form) call
        return call
    if kind == "refusal":
        return RefusalPart(item["text"], item.get("id"))
    if kind == "provider":
        return ProviderPart(item["provider"], item["type"], item["data"])
    if kind == "reasoning":
        return ReasoningPart(
            item["text"], item.get("signature"), item.get("redacted"), item.get("id")
        )
    return TextPart(item["text"])


def assert_replays(
    path: str | os.PathLike[str],
    run_id: str = "last",
    *,
    tools: Sequence[Tool | Callable[..., Any]] | None = None,
    **agent_options: Any,
) -> RunResult:
    """Replay a logged run and check that the agent still does what it did then.

    The model's turns come from the log; the tools are ``tools`` (run live) or, when
    omitted, the logged results. The replay must make the same calls (tool and
    arguments, in order), each with the same status and failure class, and end with the
    same output; with logged tools the results must match too. Use it as a pytest test
    body.

    Args:
        path: The audit log.
        run_id: A full run id, an unambiguous prefix, or ``last``.
        tools: Live tools (``None``: answer from the log).
        **agent_options: Passed to :class:`~toolwire.run.agent.Agent`.

    Returns:
        The replayed run's result.

    Raises:
        AssertionError: The replay differs from the log (the message says where).
    """
    model = ReplayModel.from_log(path, run_id)
    agent = Agent(model, model.tools() if tools is None else tools, **agent_options)
    _outside_event_loop()
    try:
        result, classes, swapped = asyncio.run(_replayed(agent, model.history()))
    except ToolwireError as exc:
        raise AssertionError(
            f"replay of run {model.run['run_id']} stopped ({model.run['outcome']} when logged): {exc}"
        ) from exc
    logged = [c for c in model.run["calls"] if c["status"] != "discarded"]
    replayed = _paired(result.messages[len(model.history()) :])
    differences = []
    for position, (then, (result_now, call)) in enumerate(zip(logged, replayed, strict=False)):
        # A log from before schema 12 kept the tool's own result for a call whose images
        # the provider refused; a newer one, the error result that replaced it.
        now = result_now if then.get("images_refused") else swapped.get(id(result_now), result_now)
        pairs = [
            ("tool", then["tool"], now.name),
            ("arguments", then["arguments"], call.arguments),
            ("status", then["status"], now.status.value),
            ("failure class", then["failure_class"], classes.get(id(now))),
        ]
        if tools is None and now.status is ToolStatus.OK:
            pairs.append(("result", then["result"], now.content))
        for what, before, after in pairs:
            if before != after:
                differences.append(
                    f"call {position + 1} ({then['tool']}): {what} was {before!r}, now {after!r}"
                )
    if len(logged) != len(replayed):
        differences.append(f"{len(logged)} call(s) were logged, {len(replayed)} replayed")
    if (model.run["output"] or "") != result.output and model.run["outcome"] == "ok":
        differences.append(f"output was {model.run['output']!r}, now {result.output!r}")
    if differences:
        raise AssertionError(
            f"replay of run {model.run['run_id']} differs from the log:\n  "
            + "\n  ".join(differences)
        )
    return result


def _outside_event_loop() -> None:
    """``assert_replays`` runs its own event loop, so it cannot run inside one.

    Raises:
        CallerError: Called from inside a running event loop.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise CallerError(
        "assert_replays() was called inside a running event loop",
        hint="call it from a synchronous test",
    )


async def _replayed(
    agent: Agent, history: list[Message]
) -> tuple[RunResult, dict[int, str | None], dict[int, ToolResult]]:
    """Run the replay; also the failure class of each result (by ``id`` of the result),
    as the executor's call records give it, and the tool's own result of each call whose
    images a provider's 400 refused (by ``id`` of the error result that replaced it)."""
    classes: dict[int, str | None] = {}
    swapped: dict[int, ToolResult] = {}
    async with agent.run_stream(history=history) as stream:
        async for event in stream:
            if isinstance(event, ToolResultReady) and event.call is not None:
                classes[id(event.result)] = event.call.failure_class
            elif isinstance(event, RequestFailed):  # a result the provider's 400 replaced
                for ran, answer in event.answered:
                    swapped[id(answer)] = ran
                    classes[id(answer)] = failure_class(None, answer.status)
    return stream.result, classes, swapped


def _paired(messages: Sequence[Message]) -> list[tuple[ToolResult, ToolCall]]:
    """Each tool result with its call: by position in the assistant message before it,
    never by id alone (ids repeat across turns, and within one on some servers)."""
    pairs: list[tuple[ToolResult, ToolCall]] = []
    waiting: list[ToolCall] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            waiting = list(message.tool_calls)
        elif isinstance(message, ToolResult):
            index = next((i for i, c in enumerate(waiting) if c.id == message.call_id), None)
            if index is not None:
                pairs.append((message, waiting.pop(index)))
    return pairs
