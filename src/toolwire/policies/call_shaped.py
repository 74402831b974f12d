# DeepSeek's markers are written with FULLWIDTH VERTICAL LINE (U+FF5C) and LOWER ONE
# EIGHTH BLOCK (U+2581) on purpose: that is what its tokenizer emits.
# ruff: noqa: RUF001
"""Answer text that looks like a tool call: said, never passed off as an answer.

A small model asked to answer without tools (``tool_choice="none"``, or a plain reply
under ``auto``) often writes the call it wanted as text: ``{"name": "get_weather",
"arguments": {...}}``, or a family's call marker (``<tool_call>``). Nothing parsed it
as a call, so no tool ran, and printed as the answer it looks like a bug. The loop
asks :func:`call_shape` of every turn without calls and, when it names a shape, adds a
``call_shaped_text`` notice (``toolwire.Notice``); ``toolwire run`` prints it and the
demo's verdict says it.

What counts as call-shaped: a JSON object (or a list of them) that starts the text, a
line, or a fenced block and has a ``name`` with ``arguments`` / ``parameters``
(any name: the generic call shape), names an offered tool (``name``, ``tool``,
``function.name``, or a tool name as its only key), or a family's opening call marker
anywhere in the text. The scan is linear: at most :data:`MAX_TRIES` JSON values are
decoded, each from one start, in at most :data:`MAX_SCAN` characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container
from typing import Any

__all__ = ["CALL_MARKERS", "MAX_SCAN", "MAX_TRIES", "call_shape"]

CALL_MARKERS = (
    "<tool_call>",  # Hermes / Qwen, Qwen3-Coder, GLM
    "<function=",  # Qwen3-Coder
    "<|python_tag|>",  # Llama 3.x JSON
    "<|python_start|>",  # Llama 4 pythonic
    "[TOOL_CALLS]",  # Mistral
    "<｜tool▁calls▁begin｜>",  # DeepSeek V3 / R1 / V3.1
    "<｜tool▁call▁begin｜>",
    "<|tool_calls_section_begin|>",  # Kimi K2
    "<|tool_call_begin|>",
    "<|open|>tools<|sep|>",  # Kimi K3
    "to=functions.",  # Harmony (gpt-oss): the recipient, and the call's end
    "<|call|>",
    "<|tool_call>",  # Gemma 4
    "<start_function_call>",  # FunctionGemma
)
"""Each family's opening call marker (``tests/policies/test_call_shaped.py`` checks
that every format in ``toolwire.formats`` has one here)."""

# DeepSeek V3.2 / V4 DSML: its bars are written several ways (see formats/deepseek.py).
_DSML = re.compile(r"<[｜|‖]{1,2}DSML[｜|‖]{1,2}\s?(?:function_calls|tool_calls|calls|invoke)")

MAX_SCAN = 65_536
"""Characters of the text looked at (a call written as an answer comes first)."""

MAX_TRIES = 8
"""JSON values decoded at most, one per candidate start."""

# One fixed prefix, then blanks: each start is scanned only up to its own line's end.
_STARTS = re.compile(r"(?:\A|\n|```(?:json)?\n?)[ \t]*(?=[\[{])")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
# What every shape above starts with: a marker's "<", "[" or its "to=functions.", the
# DSML's "<", a JSON value's "[" or "{". A text with none of them (most answers) is
# passed in one scan, without the markers' loop or a JSON decoder
# (tests/policies/test_call_shaped.py checks that every marker is caught by it).
_OPENERS = re.compile(r"[<\[{]|to=functions\.")


def call_shape(text: str, tools: Container[str]) -> str | None:
    """What makes ``text`` look like a tool call, in words, or ``None``.

    Args:
        text: A turn's answer text (one that was not parsed as a call).
        tools: The names of the tools the run offers (only tested for membership: a
            ``Toolset`` will do).
    """
    head = text[:MAX_SCAN]
    if _OPENERS.search(head) is None:
        return None
    for marker in CALL_MARKERS:
        if marker in head:
            return f"the call marker {marker}"
    dsml = _DSML.search(head)
    if dsml is not None:
        return f"the call marker {dsml.group()}"
    decoder = json.JSONDecoder()
    for tries, match in enumerate(_STARTS.finditer(head)):
        if tries >= MAX_TRIES:
            break
        try:
            value, _ = decoder.raw_decode(head, match.end())
        except (ValueError, RecursionError):
            continue
        name = _called(value, tools)
        if name is not None:
            return f"a JSON tool call to {name}"
    return None


def _called(value: Any, tools: Container[str]) -> str | None:
    """The tool a decoded JSON value calls, if it is call-shaped."""
    items = value if isinstance(value, list) else [value]
    for item in items[:MAX_TRIES]:
        if isinstance(item, dict):
            name = _object_call(item, tools)
            if name is not None:
                return name
    return None


def _object_call(item: dict[str, Any], tools: Container[str]) -> str | None:
    name = item.get("name")
    if isinstance(name, str) and (name in tools or any(k in item for k in _ARGUMENT_KEYS)):
        return name
    function = item.get("function")
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        return str(function["name"])
    for key in ("tool", "tool_name"):
        if isinstance(item.get(key), str) and item[key] in tools:
            return str(item[key])
    if len(item) == 1:
        (only,) = item
        if only in tools:
            return str(only)
    return None
