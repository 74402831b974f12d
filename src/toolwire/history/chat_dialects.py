"""What each OpenAI-compatible server accepts back in a Chat Completions request.

Servers that speak the Chat dialect agree on the request shape but not on what an
assistant message of the history may carry back. A :class:`ChatDialect` holds those
differences as settings, so that the encoder (:func:`~.openai_chat.to_openai_chat`)
has no special case per server. The one setting today is where an assistant message's
reasoning goes back in ``reasoning_content`` (``reasoning_echo``):

=================  ============================================================
dialect            reasoning sent back
=================  ============================================================
``openai``         ``"always"``: every assistant message with reasoning carries it
                   (the default; vLLM and SGLang read the field, OpenAI's own
                   models return no reasoning in Chat, so there is none to send)
``deepseek``       ``"tool_turns"``: DeepSeek's thinking mode (``deepseek-chat`` /
                   ``deepseek-reasoner`` since V3.1; V3.2, V4). Between two user
                   messages where the model made a tool call, every assistant
                   message carries ``reasoning_content``, empty if it had none,
                   in this and all later requests (without it the API answers
                   400); where it made none, the reasoning is left out (the API
                   would ignore it). https://api-docs.deepseek.com/guides/thinking_mode
                   ("Tool Calls")
``deepseek-r1``    ``"never"``: the original ``deepseek-reasoner`` (R1) rejects a
                   request whose input messages carry ``reasoning_content`` with a
                   400. https://api-docs.deepseek.com/guides/reasoning_model
=================  ============================================================

DeepSeek's V3.2 guide asked only for the current user turn's tool-call reasoning and
said the API ignores earlier turns'; the current guide (V4) requires every earlier
tool-call turn's too. ``tool_turns`` sends what the current guide requires, which the
earlier API accepts (and ignores in part), so one dialect serves both.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, count
from typing import Literal, cast, get_args

from ..errors import CallerError
from ..messages import IS_ASSISTANT, AssistantMessage, Message, UserMessage

__all__ = ["CHAT_DIALECTS", "ChatDialect", "ReasoningEcho", "chat_dialect", "echoed_reasoning"]

ReasoningEcho = Literal["always", "never", "tool_turns"]
"""Which assistant messages send their reasoning back (see the module's table)."""


@dataclass(frozen=True)
class ChatDialect:
    """The settings of one OpenAI-compatible server's Chat dialect.

    Attributes:
        name: The dialect's name (a key of :data:`CHAT_DIALECTS` for the built-in ones).
        reasoning_echo: Which assistant messages carry ``reasoning_content`` back.
    """

    name: str
    reasoning_echo: ReasoningEcho = "always"


CHAT_DIALECTS: dict[str, ChatDialect] = {
    "openai": ChatDialect("openai"),
    "deepseek": ChatDialect("deepseek", reasoning_echo="tool_turns"),
    "deepseek-r1": ChatDialect("deepseek-r1", reasoning_echo="never"),
}
"""The built-in dialects by name (see the module's table)."""

_ECHOES: tuple[str, ...] = get_args(ReasoningEcho)  # one list: the Literal's


def chat_dialect(dialect: str | ChatDialect) -> ChatDialect:
    """The dialect a name (or a ready :class:`ChatDialect`) stands for.

    Raises:
        CallerError: The name is not a built-in dialect, or the dialect's
            ``reasoning_echo`` is not one of ``always``, ``never``, ``tool_turns``.
    """
    if isinstance(dialect, ChatDialect):
        if dialect.reasoning_echo not in _ECHOES:
            raise CallerError(
                f"ChatDialect {dialect.name!r} has reasoning_echo {dialect.reasoning_echo!r}",
                hint=f"use one of {', '.join(_ECHOES)}",
            )
        return dialect
    found = CHAT_DIALECTS.get(dialect) if isinstance(dialect, str) else None
    if found is None:
        raise CallerError(
            f"unknown Chat dialect {dialect!r}",
            hint=f"use one of {', '.join(sorted(CHAT_DIALECTS))}, or a ChatDialect",
        )
    return found


def echoed_reasoning(messages: Sequence[Message], echo: ReasoningEcho) -> dict[int, str]:
    """The ``reasoning_content`` of each assistant message that sends one, by position.

    A position that is not in the result sends no ``reasoning_content`` field at all;
    one mapped to ``""`` sends the field empty (DeepSeek requires the field on every
    assistant message of a tool-call turn, reasoning or not).
    """
    if echo == "never":
        return {}
    if echo == "always":
        # Asked of every request's whole history, mostly tool results: the assistant
        # messages and their positions are picked out in C, and only they are read.
        flags = list(map(IS_ASSISTANT, messages))
        assistants = cast("Iterator[AssistantMessage]", compress(messages, flags))
        return {
            i: m.reasoning
            for i, m in zip(compress(count(), flags), assistants, strict=True)
            if m.reasoning
        }
    echoed: dict[int, str] = {}
    for turn in _user_turns(messages):
        replies = [(i, m) for i in turn if isinstance(m := messages[i], AssistantMessage)]
        if any(m.tool_calls for _, m in replies):
            echoed.update((i, m.reasoning) for i, m in replies)
    return echoed


def _user_turns(messages: Sequence[Message]) -> list[list[int]]:
    """The positions of ``messages`` cut before each user message (a user turn each)."""
    turns: list[list[int]] = [[]]
    for position, message in enumerate(messages):
        if isinstance(message, UserMessage) and turns[-1]:
            turns.append([])
        turns[-1].append(position)
    return turns
