"""Answering the items a turn owes an answer, whatever provider wrote them.

The history layer says which items of an assistant message the next request must
answer (:mod:`toolwire.history.owed`: MCP approval requests, client-executed built-in
calls) and how each answer is written; this module only asks the handlers. Every owed
item gets exactly one answer: without a handler, or when the handler raises, the item
is refused in the words its kind uses (not executed, denied). A sync handler runs in a
worker thread: it may run a shell command or wait on a person.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import CallerError
from ..history.owed import BUILTIN_HANDLER_KINDS, MCP_APPROVAL, OwedAnswer, owed_answers
from ..messages import AssistantMessage, ProviderPart

__all__ = ["Handlers", "answer_owed", "call_handler", "owed_handlers", "settle"]

Handlers = Mapping[str, Callable[[Any], Any]]
"""Handler by owed-answer kind."""


def owed_handlers(builtin_handlers: object, approve_mcp: object) -> dict[str, Callable[[Any], Any]]:
    """The handlers of ``Agent(builtin_handlers=..., approve_mcp=...)``, checked.

    Raises:
        CallerError: ``builtin_handlers`` is not a mapping of known kinds to functions,
            or ``approve_mcp`` is not a function.
    """
    if approve_mcp is not None and not callable(approve_mcp):
        raise CallerError(f"approve_mcp must be a function, not {approve_mcp!r}")
    handlers = dict(_builtin_handlers(builtin_handlers))
    if approve_mcp is not None:
        handlers[MCP_APPROVAL] = approve_mcp
    return handlers


def _builtin_handlers(handlers: object) -> Mapping[str, Callable[[Any], Any]]:
    if handlers is None:
        return {}
    if not isinstance(handlers, Mapping):
        raise CallerError(f"builtin_handlers must be a dict of kind -> function, not {handlers!r}")
    for kind, handler in handlers.items():
        if kind not in BUILTIN_HANDLER_KINDS:
            raise CallerError(
                f"builtin_handlers has an unknown kind {kind!r}",
                hint=f"use one of {', '.join(BUILTIN_HANDLER_KINDS)}",
            )
        if not callable(handler):
            raise CallerError(f"builtin_handlers[{kind!r}] must be a function, not {handler!r}")
    return handlers


async def answer_owed(
    message: AssistantMessage, handlers: Handlers, *, final: bool = False
) -> list[ProviderPart]:
    """Answer each item ``message`` still owes an answer once; append the answers.

    Args:
        message: The turn's assistant message (the answers are appended to its parts).
        handlers: Handler by kind (see :func:`owed_handlers`).
        final: The run's forced final turn: only the kinds that say so are asked.

    Returns:
        The answers appended (empty when nothing was owed).
    """
    answers = []
    for owed in owed_answers(message):
        asked = owed.ask_when_final or not final
        answer = await settle(owed, handlers.get(owed.kind) if asked else None)
        message.parts.append(answer)
        answers.append(answer)
    return answers


async def settle(owed: OwedAnswer, handler: Callable[[Any], Any] | None) -> ProviderPart:
    """The answer to one owed item: the handler's, or a refusal (no handler, or it raised)."""
    if handler is None:
        return owed.refuse(None)
    try:
        value = await call_handler(handler, owed.subject)
    except Exception as exc:
        return owed.refuse(exc)
    return owed.answer(value)


async def call_handler(handler: Callable[[Any], Any], subject: Any) -> Any:
    """Call a sync or async handler; a sync one runs in a worker thread."""
    if inspect.iscoroutinefunction(handler):
        return await handler(subject)
    value = await asyncio.to_thread(handler, subject)
    if inspect.isawaitable(value):
        value = await value
    return value
