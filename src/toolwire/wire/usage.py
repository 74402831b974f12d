"""Token usage and finish reasons, mapped once for streaming and non-streaming decoders.

Every ``Usage`` follows OpenAI's convention: ``input_tokens`` includes cached input.
Anthropic reports cached input apart, so its ``input_tokens`` is the sum of
``input_tokens``, ``cache_read_input_tokens`` and ``cache_creation_input_tokens``.
Counts are informational: a missing or non-integer count reads as 0, never an error.
Finish reasons use the OpenAI Chat vocabulary (``stop``, ``tool_calls``, ``length``,
``content_filter``); a provider value not in a table passes through unchanged (e.g.
Anthropic's ``pause_turn``, which must not read as a finished answer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..messages import Usage

__all__ = [
    "ANTHROPIC_STOP_REASONS",
    "RESPONSES_INCOMPLETE_REASONS",
    "ANTHROPIC_UNREPORTED",
    "AnthropicReported",
    "anthropic_counts",
    "anthropic_merge",
    "anthropic_reported_counts",
    "anthropic_usage",
    "openai_usage",
    "responses_usage",
]

# Anthropic ``stop_reason`` -> finish reason (the anthropic SDK's ``StopReason`` values).
ANTHROPIC_STOP_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}

# Responses ``incomplete_details.reason`` -> finish reason.
RESPONSES_INCOMPLETE_REASONS: dict[str, str] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}


def _int(obj: Any, key: str) -> int:
    # Class tests first: a decoded payload is a dict of ints, or None where a detail
    # is absent, and an isinstance test against the Mapping ABC costs more than the
    # rest of the function (every turn reads usage twice or more; about 3,000
    # instructions each; bench/count_assembly.py).
    if type(obj) is dict:
        value = obj.get(key)
    elif obj is None or not isinstance(obj, Mapping):
        return 0
    else:
        value = obj.get(key)
    if type(value) is int:  # the common count, without a call (the pure build's usage)
        count: int = value
        return count
    return _count(value)


def openai_usage(usage: Mapping[str, Any]) -> Usage:
    """Chat Completions ``usage`` (``prompt_tokens`` already includes cached tokens)."""
    return Usage(
        input_tokens=_int(usage, "prompt_tokens"),
        output_tokens=_int(usage, "completion_tokens"),
        cache_read_tokens=_int(usage.get("prompt_tokens_details"), "cached_tokens"),
        reasoning_tokens=_int(usage.get("completion_tokens_details"), "reasoning_tokens"),
    )


def responses_usage(usage: Mapping[str, Any]) -> Usage:
    """Responses API ``usage``."""
    inputs = usage.get("input_tokens_details")
    return Usage(
        input_tokens=_int(usage, "input_tokens"),
        output_tokens=_int(usage, "output_tokens"),
        cache_read_tokens=_int(inputs, "cached_tokens"),
        cache_write_tokens=_int(inputs, "cache_write_tokens"),
        reasoning_tokens=_int(usage.get("output_tokens_details"), "reasoning_tokens"),
    )


def anthropic_usage(usage: Mapping[str, Any]) -> Usage:
    """Anthropic ``usage`` (a response's, or the merged ``message_start`` / ``message_delta``
    counts of a stream)."""
    input, output, read, write, reasoning = anthropic_counts(usage)
    return Usage(input, output, read, write, reasoning)


def anthropic_counts(usage: Mapping[str, Any]) -> tuple[int, int, int, int, int]:
    """``anthropic_usage``'s counts, in ``Usage``'s field order, without the ``Usage``."""
    if type(usage) is dict and "output_tokens_details" not in usage:
        # The common case, read inline: a call per count cost more than the rest of a
        # ``message_start`` (bench/count_assembly.py); anything else takes the path below.
        inputs = usage.get("input_tokens", 0)
        outputs = usage.get("output_tokens", 0)
        read = usage.get("cache_read_input_tokens", 0)
        write = usage.get("cache_creation_input_tokens", 0)
        if (
            type(inputs) is int
            and type(outputs) is int
            and type(read) is int
            and type(write) is int
        ):
            return (inputs + read + write, outputs, read, write, 0)
    read = _int(usage, "cache_read_input_tokens")
    write = _int(usage, "cache_creation_input_tokens")
    return (
        _int(usage, "input_tokens") + read + write,
        _int(usage, "output_tokens"),
        read,
        write,
        _int(usage.get("output_tokens_details"), "thinking_tokens"),
    )


AnthropicReported = tuple[Any, Any, Any, Any, Any]
"""What an Anthropic stream's usage reports said so far, as sent: ``input_tokens``,
``output_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens`` and
``output_tokens_details``, each the last non-null value sent (``None``: none yet)."""

ANTHROPIC_UNREPORTED: Final[AnthropicReported] = (None, None, None, None, None)
"""``AnthropicReported`` before the first report."""


def anthropic_merge(usage: dict[str, Any], so_far: AnthropicReported) -> AnthropicReported:
    """``so_far`` with one usage report (``message_start``'s, ``message_delta``'s) merged in:
    a count the report leaves out or sends as null keeps its earlier value.

    The stream decoder keeps these five values instead of merging every key of each
    report into a dict and reading the counts from it: the only keys read, looked up
    once each (a dict merge and its reading cost a short turn about 3,000 instructions,
    compiled; bench/README.md).
    """
    inputs = usage.get("input_tokens")
    outputs = usage.get("output_tokens")
    read = usage.get("cache_read_input_tokens")
    write = usage.get("cache_creation_input_tokens")
    details = usage.get("output_tokens_details")
    return (
        so_far[0] if inputs is None else inputs,
        so_far[1] if outputs is None else outputs,
        so_far[2] if read is None else read,
        so_far[3] if write is None else write,
        so_far[4] if details is None else details,
    )


def anthropic_reported_counts(reported: AnthropicReported) -> tuple[int, int, int, int, int]:
    """The counts of what a stream reported (``anthropic_merge``), read as
    ``anthropic_counts`` reads a usage object with those values."""
    inputs, outputs, read, write, details = reported
    if (
        type(inputs) is int
        and type(outputs) is int
        and type(read) is int
        and type(write) is int
        and details is None
    ):
        # Every count sent, as integers (the common case), without a call per count:
        # calls are most of this function's cost in the pure build.
        return (inputs + read + write, outputs, read, write, 0)
    read_count = _count(read)
    write_count = _count(write)
    return (
        _count(inputs) + read_count + write_count,
        _count(outputs),
        read_count,
        write_count,
        _int(details, "thinking_tokens"),
    )


def _count(value: Any) -> int:
    """A count as ``_int`` reads it: an integer (not a bool), else 0 (``None`` too)."""
    if type(value) is int:
        count: int = value
        return count
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
