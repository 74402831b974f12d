"""Record and replay: a logged run played back offline, deterministically.

:class:`ReplayModel` is a :class:`~toolwire.run.model.Model` whose turns come from the
audit log: each request gets the next logged turn (text, reasoning, a refusal, the tool
calls verbatim, usage, finish reason), streamed through the real OpenAI Chat decoder so that
assembly and early execution run as they did live. The tools run live (pass your own)
or come from the log too (:meth:`ReplayModel.tools`: each call answered with the
result it got then). :func:`assert_replays` turns a logged run into a regression test.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from ..errors import ReplayedToolError, ReplayMismatchError, ToolwireError
from ..messages import (
    TOOL_ERROR_PREFIX,
    AssistantMessage,
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
from ..run.model import ModelEvent, ModelRequest, TurnDone
from ..tools.error_results import FAILURE_ADVICE
from ..tools.tool import Tool
from ..wire.openai_chat import OpenAIChatStream
from .query import load_run
from .store import connect

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
        if not self._turns:
            prompt = self.run.get("prompt")
            return [UserMessage(prompt)] if prompt else []
        return messages_from_json(self._turns[0]["messages"])

    def tools(self) -> list[Tool]:
        """The logged run's tools, answering each call with its logged result.

        Calls are matched by tool and arguments, in the order they were logged; a
        call that failed fails again with the same text. A call the log has no
        answer for raises :class:`ReplayedToolError`.

        Raises:
            SchemaExtraMissingError: ``jsonschema`` is not installed (``toolwire[schema]``).
        """
        answers: dict[str, deque[tuple[str, str]]] = defaultdict(deque)
        custom = self._custom_tools()
        for call in self.run["calls"]:
            if call["status"] in ("ok", "error", "timeout"):
                key = _signature(call["tool"], call["arguments"], raw=call["tool"] in custom)
                answers[key].append((call["status"], call["result"]))
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
        """Play the next logged turn.

        Raises:
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
        decoder = OpenAIChatStream()
        for chunk in turn_chunks(logged, self._custom_tools()):
            for event in decoder.feed(chunk):
                yield event
        turn = decoder.close()
        # A refusal without words (Anthropic's stop_reason "refusal") has no Chat chunk
        # to carry it; a log written before refusals were kept has no such column.
        turn.refused = turn.refused or bool(logged.get("refused"))
        yield TurnDone(turn)


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


def _answerer(
    name: str, answers: dict[str, deque[tuple[str, str]]]
) -> Callable[[dict[str, Any]], str]:
    def answer(arguments: dict[str, Any]) -> str:
        queue = answers.get(call_signature(name, arguments))
        if not queue:
            raise ReplayedToolError(
                f"the log has no (further) result for {call_signature(name, arguments)}",
                hint="the agent called a tool differently from the logged run; run the tools live",
            )
        status, text = queue.popleft()
        if status != "ok":
            raise _logged_failure(name, text)
        return text

    return answer


def _logged_failure(name: str, text: str) -> Exception:
    """An exception that the executor turns into the logged error text again.

    The executor writes ``Tool error: the call to `NAME` failed: TYPE: MESSAGE`` (then
    the schema and advice); raising an exception of a class named ``TYPE`` with
    ``MESSAGE`` reproduces it exactly.
    """
    reason = text.removeprefix(f"{TOOL_ERROR_PREFIX}the call to `{name}` failed: ")
    for marker in (
        "\nExpected arguments (JSON Schema): ",
        "\nCorrect the call and try again",
        "\n" + FAILURE_ADVICE,
    ):
        reason = reason.split(marker, 1)[0]
    kind, colon, message = reason.partition(": ")
    if not colon or not kind.isidentifier() or reason == text:
        return ReplayedToolError(text)
    failure: Exception = type(kind, (Exception,), {})(message)
    return failure


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


def messages_from_json(text: str) -> list[Message]:
    """Neutral messages back from the log's JSON (see ``record.message_json``)."""
    messages: list[Message] = []
    for item in json.loads(text):
        role = item.get("role")
        if role == "system":
            messages.append(SystemMessage(item["content"]))
        elif role == "user":
            messages.append(UserMessage(item["content"]))
        elif role == "tool":
            messages.append(
                ToolResult(
                    item["call_id"], item["name"], item["content"], ToolStatus(item["status"])
                )
            )
        elif role == "assistant":
            messages.append(AssistantMessage([_part(p) for p in item["parts"]]))
    return messages


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
    arguments, in order), each with the same status, and end with the same output; with
    logged tools the results must match too. Use it as a pytest test body.

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
    try:
        result = agent.run_sync(history=model.history())
    except ToolwireError as exc:
        raise AssertionError(
            f"replay of run {model.run['run_id']} stopped ({model.run['outcome']} when logged): {exc}"
        ) from exc
    logged = [c for c in model.run["calls"] if c["status"] != "discarded"]
    replayed = [m for m in result.messages[len(model.history()) :] if isinstance(m, ToolResult)]
    calls = {
        c.id: c for m in result.messages if isinstance(m, AssistantMessage) for c in m.tool_calls
    }
    differences = []
    for position, (then, now) in enumerate(zip(logged, replayed, strict=False)):
        call = calls[now.call_id]
        pairs = [
            ("tool", then["tool"], now.name),
            ("arguments", then["arguments"], call.arguments),
            ("status", then["status"], now.status.value),
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
