"""Token accounting: what one request costs, by part, without sending it.

Exact counts need the model's own tokenizer. The embedded model carries one (a model
object with a ``count_text_tokens(text) -> int`` method, which
:class:`toolwire.providers.local.LocalModel` has); for everything else the count is an
estimate from character classes, fitted once against OpenAI's ``cl100k_base``
tokenizer on prose, source code, JSON and Chinese text (``bench/bench_context.py``
measures its error; bench/README.md states it). The estimate reads the text with a few
C-level regular-expression scans and no Python loop per character. Within a run each
distinct string is counted once (:func:`memoised`; ``str`` caches its hash, so a
later request costs one dict lookup per message it repeats).

Per message the chat framing adds a few tokens (role markers, separators): the
constants below are OpenAI's documented overhead, used for every model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, runtime_checkable

from ..errors import CallerError
from ..history.tool_defs import chat_tool
from ..messages import AssistantMessage, Message, SystemMessage, ToolResult, UserMessage
from ..tooldef import ToolDef
from .images import IMAGE_TOKENS

__all__ = [
    "MAX_TOKENS_PER_CHAR",
    "LazyTokens",
    "RequestTokens",
    "TokenCounter",
    "account",
    "definition_tokens",
    "memoised",
    "message_tokens",
    "count_tokens",
    "estimate_text_tokens",
    "text_counter",
]

PER_MESSAGE = 3
"""Framing tokens per message (role and separators)."""
PER_CALL = 3
"""Framing tokens per tool call in an assistant message."""
PER_TOOL = 8
"""Framing tokens per tool definition."""
PER_REQUEST = 3
"""Tokens that prime the reply."""
MAX_TOKENS_PER_CHAR = 4
"""No count exceeds this many tokens per character: a byte-level tokenizer spends at
most one token per UTF-8 byte (at most four per character), and the estimate's
heaviest character (a non-ASCII one outside CJK) weighs 2. A text shorter than a cap over
this is under the cap without being counted."""

# (pattern, weight): a least-squares fit of cl100k_base token counts (relative error, each
# class of text weighted alike) on prose, source code, tool-schema JSON, API-record JSON,
# JSON carrying base64, hex digests and Chinese text (``bench/fit_tokens.py``). Each
# pattern is counted with one C-level findall.
_FEATURES: tuple[tuple[re.Pattern[str], float], ...] = (
    (re.compile(r"[A-Za-z]+"), 1.047),  # a word is about one token ...
    (re.compile(r"[A-Za-z]{7,}"), 0.370),  # ... long words sometimes two ...
    (re.compile(r"[A-Za-z]{12,}"), 2.752),  # ... and identifiers more
    (re.compile(r"[0-9]{1,3}"), 1.675),  # digits go in groups of up to three
    (re.compile(r"[!-/:-@\[-`{-~]"), 0.496),  # ASCII punctuation often merges ...
    (re.compile(r"\"[,:]"), -0.272),  # ... as JSON's quote-comma and quote-colon do
    (re.compile(r"[^\x00-\x7f\u3000-\u9fff\uff00-\uffef]"), 2.0),  # other non-ASCII: bytes
    (re.compile(r"[\u3000-\u9fff\uff00-\uffef]"), 1.241),  # CJK: common ones one, rare two
    (re.compile(r"\n"), 0.479),
    (re.compile(r"  +"), 0.709),  # indentation runs
)
# Opaque runs (base64, hex digests, keys: 20+ letters and digits mixed) are counted by
# their length and taken out before the classes above, which are fitted on words.
_OPAQUE = re.compile(r"[A-Za-z0-9+/]{20,}={0,2}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_BASE64_PER_CHAR = 0.722
_HEX_PER_CHAR = 0.587
# Past the fit: a letter run longer than any word (a repeated character) costs tokens in
# proportion to its length, whatever the fit says about short runs — a 5,000-letter run
# must not count as three tokens, or it would never be truncated.
_LONG_RUN = re.compile(r"[A-Za-z]{25,}")
_LONG_RUN_CHARS_PER_TOKEN = 4


@runtime_checkable
class TokenCounter(Protocol):
    """A model that can count tokens exactly with its own tokenizer."""

    def count_text_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's vocabulary."""
        ...


def estimate_text_tokens(text: str) -> int:
    """The estimated token count of ``text`` (see the module docstring)."""
    if not text:
        return 0
    total = 0.0
    if _OPAQUE.search(text) is not None:
        text, total = _without_opaque_runs(text)
    for pattern, weight in _FEATURES:
        total += weight * len(pattern.findall(text))
    for run in _LONG_RUN.findall(text):
        total += (len(run) - 24) / _LONG_RUN_CHARS_PER_TOKEN
    return max(1, round(total))


def _without_opaque_runs(text: str) -> tuple[str, float]:
    """``text`` with its opaque runs (letters and digits mixed) blanked, and their tokens."""
    tokens = 0.0

    def blank(match: re.Match[str]) -> str:
        nonlocal tokens
        run = match.group()
        if not any(c.isdigit() for c in run) or not any(c.isalpha() for c in run):
            return run  # words, a path, a number: the classes count them
        tokens += len(run) * (_HEX_PER_CHAR if _HEX.fullmatch(run) else _BASE64_PER_CHAR)
        return " "

    return _OPAQUE.sub(blank, text), tokens


def text_counter(model: object = None) -> Callable[[str], int]:
    """The function that counts a string's tokens for ``model``.

    A model with a tokenizer (:class:`TokenCounter`) counts exactly; anything else
    (``None``, a spec string, a hosted model) gets the estimate.
    """
    # What isinstance(model, TokenCounter) checks, without the protocol machinery's cost
    counter: Callable[[str], int] | None = getattr(model, "count_text_tokens", None)
    if counter is not None:
        return counter
    if model is not None and not isinstance(model, str) and not hasattr(model, "stream"):
        raise CallerError(
            f"model={model!r} is neither a model spec string nor a Model",
            hint="pass e.g. 'openai:gpt-4.1-mini', a Model object, or None for the estimate",
        )
    return estimate_text_tokens


def memoised(count: Callable[[str], int]) -> Callable[[str], int]:
    """``count`` with a memo of its own (one per run: it lives as long as the history):
    ``partial(_count_once, {}, count)``, with ``exact`` set (whether ``count`` is a
    model's own tokenizer, not the estimate)."""
    counted = partial(_count_once, {}, count)
    counted.exact = count is not estimate_text_tokens  # type: ignore[attr-defined]
    return counted


def _count_once(memo: dict[str, int], count: Callable[[str], int], text: str) -> int:
    """``count(text)``, kept in ``memo`` (each text counted once): what a
    :func:`memoised` counter calls."""
    found = memo.get(text)
    if found is None:
        found = memo[text] = count(text)
    return found


@dataclass(frozen=True, slots=True)
class RequestTokens:
    """The tokens of one request, by part.

    Attributes:
        tools: The tool definitions offered.
        calls: Tool calls in assistant messages (names and arguments).
        results: Tool results.
        other: Everything else: system prompt, user and assistant text, framing.
        exact: Whether the model's own tokenizer counted (else the estimate).
    """

    tools: int
    calls: int
    results: int
    other: int
    exact: bool = False

    @property
    def total(self) -> int:
        """All input tokens of the request."""
        return self.tools + self.calls + self.results + self.other

    def as_dict(self) -> dict[str, int | bool]:
        """A JSON-ready record."""
        return {
            "tools": self.tools,
            "calls": self.calls,
            "results": self.results,
            "other": self.other,
            "total": self.total,
            "exact": self.exact,
        }


class LazyTokens:
    """A request's tokens, counted on first :meth:`get` (given counted, or as the
    function that counts them); shared by a request's record and its event."""

    __slots__ = ("_count", "_tokens")

    def __init__(self, tokens: RequestTokens | Callable[[], RequestTokens]) -> None:
        self._tokens = tokens if isinstance(tokens, RequestTokens) else None
        self._count = None if isinstance(tokens, RequestTokens) else tokens

    def get(self) -> RequestTokens:
        """The tokens (counted now if they were not yet)."""
        if self._tokens is None:
            assert self._count is not None  # one of the two is always set
            self._tokens, self._count = self._count(), None
        return self._tokens

    def __reduce__(self) -> tuple[type[LazyTokens], tuple[RequestTokens]]:
        """Pickled counted: the counting function needs the run's live counter, which
        stays in the process that made it (an event relayed from a Ray worker)."""
        return (LazyTokens, (self.get(),))


def account(
    messages: Sequence[Message],
    tools: Sequence[ToolDef | dict[str, Any]] = (),
    *,
    model: object = None,
    count: Callable[[str], int] | None = None,
) -> RequestTokens:
    """Count one request's tokens by part (see :class:`RequestTokens`).

    ``count`` (a string's tokens) wins over ``model``, whose tokenizer is used otherwise.
    """
    count = count or text_counter(model)
    calls = results = 0
    other = PER_REQUEST
    for message in messages:
        c, r, o = message_tokens(message, count)
        calls += c
        results += r
        other += o
    tool_tokens = sum(definition_tokens(d, count) for d in tools)
    exact = getattr(count, "exact", count is not estimate_text_tokens)
    return RequestTokens(tool_tokens, calls, results, other, exact=bool(exact))


def message_tokens(message: Message, count: Callable[[str], int]) -> tuple[int, int, int]:
    """One message's ``(calls, results, other)`` tokens, its framing included."""
    if isinstance(message, ToolResult):
        images = len(message.images) * IMAGE_TOKENS if message.parts else 0
        return 0, count(message.content) + count(message.name) + images, PER_MESSAGE
    if not isinstance(message, AssistantMessage):
        images = (
            len(message.images) * IMAGE_TOKENS
            if isinstance(message, UserMessage) and message.parts
            else 0
        )
        return 0, 0, PER_MESSAGE + count(message.content) + images
    calls = 0
    other = PER_MESSAGE
    for part in message.parts:
        if part.kind == "tool_call":
            calls += PER_CALL + count(part.name) + count(part.arguments)
        elif part.kind == "provider":  # a server tool block, sent back verbatim
            other += count(json.dumps(part.data, ensure_ascii=False))
        else:
            other += count(part.text)
    return calls, 0, other


def definition_tokens(definition: ToolDef | dict[str, Any], count: Callable[[str], int]) -> int:
    """One tool definition's tokens, its framing included."""
    return PER_TOOL + count(definition_text(definition))


def definition_text(definition: ToolDef | dict[str, Any]) -> str:
    """A tool definition as the stable JSON text that is counted (and cached): its
    OpenAI Chat form, whichever provider the request goes to."""
    if isinstance(definition, ToolDef):
        definition = chat_tool(definition, copied=False)
    return json.dumps(definition, ensure_ascii=False, separators=(",", ":"))


def count_tokens(
    messages: str | Sequence[Any], tools: Sequence[Any] | None = None, *, model: object = None
) -> int:
    """The input tokens of a request: its messages and tool definitions.

    Args:
        messages: A string, a list of neutral messages, or a list of OpenAI Chat
            message dicts.
        tools: ``Tool`` or ``ToolDef`` objects, or OpenAI Chat tool dicts.
        model: A model spec string or a ``Model``. A model with its own tokenizer
            (the embedded one) counts exactly; without one, the documented estimate.

    Returns:
        The token count.

    Raises:
        CallerError: ``messages``, ``tools`` or ``model`` has the wrong type.
        HistoryError: An OpenAI Chat message is malformed.
    """
    count = text_counter(model)
    definitions = _definitions(tools)
    if isinstance(messages, str):
        tool_tokens = sum(definition_tokens(d, count) for d in definitions)
        return int(count(messages)) + tool_tokens
    return account(_neutral(messages), definitions, model=model).total


def _neutral(messages: object) -> list[Message]:
    if not isinstance(messages, Sequence) or isinstance(messages, (bytes, bytearray)):
        raise CallerError(
            f"messages must be a str or a list of messages, not {type(messages).__name__}",
            hint="pass neutral messages (toolwire.UserMessage, ...) or OpenAI Chat dicts",
        )
    items = list(messages)
    if all(
        isinstance(m, (SystemMessage, UserMessage, AssistantMessage, ToolResult)) for m in items
    ):
        return items
    if all(isinstance(m, dict) for m in items):
        from ..history import from_openai_chat

        return from_openai_chat(items)
    raise CallerError(
        "messages mixes types or holds something that is not a message",
        hint="pass only neutral messages, or only OpenAI Chat message dicts",
    )


def _definitions(tools: object) -> list[ToolDef | dict[str, Any]]:
    if tools is None:
        return []
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        raise CallerError(f"tools must be a list, not {type(tools).__name__}")
    out: list[ToolDef | dict[str, Any]] = []
    for entry in tools:
        definition = getattr(entry, "definition", None)
        if callable(definition):
            out.append(definition())
        elif isinstance(entry, (ToolDef, dict)):
            out.append(entry)
        else:
            raise CallerError(
                f"tools holds {entry!r}, neither a Tool nor a tool definition",
                hint="pass Tool or ToolDef objects, or "
                '{"type": "function", "function": {...}} dicts',
            )
    return out
