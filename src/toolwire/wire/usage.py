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
from typing import Any

from ..messages import Usage

__all__ = [
    "ANTHROPIC_STOP_REASONS",
    "RESPONSES_INCOMPLETE_REASONS",
    "anthropic_counts",
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
    if type(value) is int:
        count: int = value
        return count
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


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
    """``anthropic_usage``'s counts, in ``Usage``'s field order, without the ``Usage``
    (the stream decoder reports them with ``UsageReported.of_counts``)."""
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
