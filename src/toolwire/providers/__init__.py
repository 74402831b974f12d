"""Model providers: the only code in toolwire that talks to a model.

* :func:`resolve` turns a spec (``local``, ``openai:gpt-4.1-mini``,
  ``anthropic:claude-sonnet-4-5``, ``responses:NAME``, ``completions:NAME``) into a
  :class:`~toolwire.run.model.Model`.
* Hosted models speak HTTP through httpx (:mod:`.http`: retries, timeouts, the
  no-silent-retry rule): :class:`OpenAIChatModel` (any OpenAI-compatible server),
  :class:`OpenAIResponsesModel`, :class:`AnthropicModel`, and :class:`CompletionsModel`
  (raw text completions parsed by :mod:`toolwire.formats`).
* :class:`FallbackModel` hands a request that failed before any output to the next
  model (:mod:`.fallback`).
* :class:`LocalModel` runs a GGUF model in-process with llama.cpp (``toolwire[local]``),
  with grammar-constrained tool calls.

Classes are imported on first use, so ``import toolwire.providers`` stays cheap.
"""

from __future__ import annotations

from .._lazy import lazy_exports
from .spec import DEFAULT_SPEC, resolve

__all__ = [
    "DEFAULT_SPEC",
    "AnthropicModel",
    "CompletionsModel",
    "FallbackModel",
    "HTTPOptions",
    "LocalModel",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "Retries",
    "Timeouts",
    "resolve",
]

_EXPORTS = {
    "AnthropicModel": "anthropic",
    "CompletionsModel": "completions",
    "FallbackModel": "fallback",
    "HTTPOptions": "http",
    "LocalModel": "local",
    "OpenAIChatModel": "openai_chat",
    "OpenAIResponsesModel": "openai_responses",
    "Retries": "http",
    "Timeouts": "http",
}


__getattr__ = lazy_exports(globals(), _EXPORTS)
