"""Prompts for models driven as plain text: ChatML with Hermes-style tool calls.

The raw-completion provider and the embedded local model both send the model one text
prompt and read one text output, so toolwire renders the chat itself. The default
template is ChatML (``<|im_start|>role\\n...<|im_end|>``: SmolLM2, Qwen2.5/Qwen3,
Hermes) with tools described the Hermes way, the shape of the Qwen2.5 chat template
(``Qwen/Qwen2.5-7B-Instruct``, ``tokenizer_config.json``): definitions as JSON lines
inside ``<tools>``, each call written as ``<tool_call>{"name", "arguments"}</tool_call>``,
results sent back in a user turn inside ``<tool_response>``. The instruction wording is
toolwire's own, and so is its order: the tools' block is the same for every
``tool_choice`` and a choice's rule comes last, so that a run's next request begins with
the last one's prompt and a model that caches it evaluates only the new turns.

A template is any callable ``(messages, tools, tool_choice) -> Prompt``
(:data:`toolwire.prompts.PromptTemplate`); :mod:`toolwire.prompts` renders each model
family's own published template, which the raw-completion provider uses for every
family it knows. This one stays the embedded model's default (measured better there,
see ``LocalModel``) and the fallback for a model of no known family.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from ..prompts.prompt import Prompt

__all__ = ["CHATML_STOP", "chatml_hermes", "choice_rule", "tool_instructions"]

CHATML_STOP = ("<|im_end|>", "<|endoftext|>", "<|im_start|>")
"""Where a ChatML model's turn ends."""


DEFAULT_SYSTEM = "You are a helpful assistant."


def tool_instructions(tools: Sequence[Mapping[str, Any]]) -> str:
    """The system-prompt block that offers ``tools`` (empty when none).

    The block is the same whatever the ``tool_choice``: a run's requests then begin
    with the same text, and a model that caches its prompt (llama.cpp keeps the last
    one's evaluated tokens) evaluates only what a round added. The choice's own rule
    comes after the history (:func:`choice_rule`).
    """
    if not tools:
        return ""
    lines = [json.dumps(tool, ensure_ascii=False) for tool in tools]
    return (
        "# Tools\n\nThese tools are available, described in JSON inside <tools></tools>:\n"
        "<tools>\n" + "\n".join(lines) + "\n</tools>\n\n"
        "To call a tool, write one block per call:\n"
        '<tool_call>\n{"name": "TOOL_NAME", "arguments": {ARGUMENTS}}\n</tool_call>\n'
        "Several independent calls may be written one after another. "
        "Call a tool when it helps answer; otherwise answer directly."
    )


def choice_rule(tools: Sequence[Mapping[str, Any]], tool_choice: str = "auto") -> str:
    """The sentence that narrows the offered tools for one request (empty for ``auto``,
    whose rule the tools' block states, and when no tools are offered)."""
    if not tools or tool_choice == "auto":
        return ""
    return {
        "none": "Answer now in plain text, without calling a tool.",
        "required": "You must call at least one tool.",
    }.get(tool_choice, f"You must call the tool {tool_choice}.")


def chatml_hermes(
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]],
    tool_choice: str = "auto",
    *,
    offer_under_none: bool = False,
) -> Prompt:
    """Render a history as ChatML with Hermes tool calls (see the module docstring).

    The tools' block is the same for every ``tool_choice``; a choice other than
    ``auto`` is stated in a last system turn after the history, so each request of a run
    begins with the text of the one before, up to where that one's rule stood. Under
    ``none`` the tools are not offered, unless ``offer_under_none``: for a caller whose
    grammar allows a plain answer only (the local model), whose forced answer then
    begins as the run's earlier prompts did.
    """
    if tool_choice == "none" and not offer_under_none:
        tools = []
    out: list[str] = []
    system = [m.content for m in messages if isinstance(m, SystemMessage)]
    block = tool_instructions(tools)
    system_text = "\n\n".join(
        [*system, block] if system else [DEFAULT_SYSTEM, block] if block else []
    )
    if system_text:
        out.append(_turn("system", system_text))
    out += _history(messages)
    if rule := choice_rule(tools, tool_choice):
        out.append(_turn("system", rule))
    opening = "<|im_start|>assistant\n"
    return Prompt("".join(out) + opening, CHATML_STOP, opening)


def _history(messages: Sequence[Message]) -> list[str]:
    """The user and assistant turns, each run of tool results as one user turn."""
    out: list[str] = []
    pending: list[str] = []
    for message in messages:
        if isinstance(message, ToolResult):
            pending.append(f"<tool_response>\n{message.content}\n</tool_response>")
            continue
        if pending:
            out.append(_turn("user", "\n".join(pending)))
            pending = []
        if isinstance(message, UserMessage):
            out.append(_turn("user", message.content))
        elif isinstance(message, AssistantMessage):
            out.append(_turn("assistant", _assistant_text(message)))
    if pending:
        out.append(_turn("user", "\n".join(pending)))
    return out


def _turn(role: str, content: str) -> str:
    return f"<|im_start|>{role}\n{content}<|im_end|>\n"


def _assistant_text(message: AssistantMessage) -> str:
    pieces: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            pieces.append(part.text)
        elif isinstance(part, ToolCall):
            arguments = part.arguments.strip() or "{}"
            pieces.append(
                f'<tool_call>\n{{"name": {json.dumps(part.name)}, "arguments": {arguments}}}\n</tool_call>'
            )
    return "\n".join(piece.strip("\n") for piece in pieces if piece)
