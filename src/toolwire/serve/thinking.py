"""Whether the served template leaves a reasoning block open, and ``chat_template_kwargs``.

A served reasoning model's chat template may end the prompt inside ``<think>`` (DeepSeek
R1, GLM 4.7, the Qwen3 thinking releases): the model's output then starts with reasoning
and only its ``</think>`` shows, so a server without a reasoning parser returns that
reasoning as ``content``. The family's format knows each variant's generation prompt
(:data:`toolwire.formats.registry.FAMILIES`); this module only adjusts it for the
request's ``chat_template_kwargs`` (as vLLM takes them): ``enable_thinking`` (Qwen3,
GLM) or ``thinking`` (DeepSeek V3.1 and later) switch the block the template opens.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["generation_prompt"]

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
# Qwen3's template with enable_thinking=false ends the prompt with an empty, closed block.
QWEN3_NO_THINKING = "<think>\n\n</think>\n\n"


def generation_prompt(
    family: tuple[str, str | None] | None, kwargs: Mapping[str, Any]
) -> str | None:
    """The generation prompt the family's format should assume (``None``: its default).

    Args:
        family: The (family, variant) of the served model, or ``None``.
        kwargs: The request's ``chat_template_kwargs``.
    """
    flag = kwargs.get("enable_thinking", kwargs.get("thinking"))
    if family is None or not isinstance(flag, bool):
        return None
    from ..formats.registry import family_info

    info = family_info(family[0])
    variant = family[1] or info.default_variant
    default = info.default_prompt(variant)
    if not flag:
        if info.name == "hermes":
            return QWEN3_NO_THINKING
        if default is not None and default.rstrip().endswith(THINK_OPEN):
            return default + THINK_CLOSE
        return default
    if default is not None and default.endswith(THINK_CLOSE):
        return default[: -len(THINK_CLOSE)] + THINK_OPEN
    return default
