"""The one place where the proxy picks how a raw completions upstream's prompt is rendered.

A ``completions:URL`` upstream gets the prompt the model family's own chat template
renders (:func:`toolwire.prompts.prompt_template`: Mistral's ``[AVAILABLE_TOOLS]``,
Llama 3's ``ipython`` environment, gpt-oss's developer message...), for the family and
variant the request's ``model`` (or ``--format``) selects; a model of no known family
gets ChatML with Hermes-style ``<tools>``, read back as Hermes calls (as the
completions provider does).
"""

from __future__ import annotations

from ..prompts import PromptTemplate, prompt_template
from ..providers.prompt import chatml_hermes

__all__ = ["completion_prompt"]


def completion_prompt(family: tuple[str, str | None] | None) -> PromptTemplate:
    """The prompt renderer for a model of ``family`` (``None``: no family known)."""
    if family is None:
        return chatml_hermes
    return prompt_template(*family)
