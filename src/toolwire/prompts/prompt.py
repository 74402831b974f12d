"""What a rendered prompt is: the text, where the model's turn ends, and its opening."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import Message

__all__ = ["Prompt", "PromptTemplate"]


@dataclass(frozen=True, slots=True)
class Prompt:
    """A rendered prompt.

    Attributes:
        text: The whole prompt, ending with the assistant turn's opening.
        stop: Strings that end the model's output.
        generation_prompt: The text appended after the last message (the formats use it
            to know whether the output starts inside reasoning).
    """

    text: str
    stop: tuple[str, ...]
    generation_prompt: str


PromptTemplate = Callable[[Sequence[Message], Sequence[Mapping[str, Any]], str], Prompt]
"""``(messages, tools, tool_choice) -> Prompt``: ``tools`` as OpenAI function tools."""
