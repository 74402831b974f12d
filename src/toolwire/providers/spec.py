"""Model specs: the strings users write for a model, and the one function that reads them.

==============================  ======================================================
spec                            model
==============================  ======================================================
``local`` (the default)         Qwen2.5-Coder-0.5B-Instruct, in-process (local extra)
``local:smollm2``               SmolLM2-135M-Instruct, in-process (local extra)
``local:PATH.gguf``             any GGUF file, in-process
``local:ORG/REPO[:GLOB]``       a GGUF from the Hugging Face Hub, in-process
``openai:NAME``                 Chat Completions (``base_url`` for vLLM, Ollama...)
``responses:NAME``              the OpenAI Responses API
``anthropic:NAME``              Anthropic Messages
``completions:NAME``            raw text completions parsed with ``toolwire.formats``
==============================  ======================================================

Provider modules are imported only for the spec being resolved, and building a model
does no I/O (a hosted model checks its key, nothing more), so an Agent is cheap to build.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import CallerError, UnknownModelSpecError
from ..run.model import Model

__all__ = ["DEFAULT_SPEC", "PROVIDERS", "resolve"]

DEFAULT_SPEC = "local"

# prefix -> (module, class); imported on use.
PROVIDERS: dict[str, tuple[str, str]] = {
    "local": ("local", "LocalModel"),
    "openai": ("openai_chat", "OpenAIChatModel"),
    "responses": ("openai_responses", "OpenAIResponsesModel"),
    "anthropic": ("anthropic", "AnthropicModel"),
    "completions": ("completions", "CompletionsModel"),
}

_GUESSES = (
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
)


def resolve(spec: str | Model | None = None, base_url: str | None = None, **options: Any) -> Model:
    """Build the model a spec names.

    Args:
        spec: A spec string (see the module docstring), a ready ``Model`` (returned as
            it is), or ``None`` for :data:`DEFAULT_SPEC`.
        base_url: The API root of a served model (``http://localhost:8000/v1``).
        **options: Passed to the provider class (``api_key``, ``timeouts``,
            ``settings``...).

    Raises:
        UnknownModelSpecError: The spec names no provider.
        MissingAPIKeyError: A hosted provider's key is not set.
        CallerError: Other bad arguments (``base_url`` with ``local``...).
    """
    if spec is None:
        spec = DEFAULT_SPEC
    if not isinstance(spec, str):
        if isinstance(spec, Model):
            return spec
        raise CallerError(f"model must be a spec string or a Model, got {type(spec).__name__}")
    prefix, _, name = spec.strip().partition(":")
    prefix = prefix.lower()
    if prefix not in PROVIDERS:
        raise UnknownModelSpecError(f"unknown model spec {spec!r}{_guess(spec)}")
    if prefix == "local":
        if base_url:
            raise CallerError(
                "--base-url is for served models; the local model runs in-process",
                hint="use --model openai:NAME --base-url URL for an OpenAI-compatible server",
            )
        return _provider(prefix)(name or None, **options)  # type: ignore[no-any-return]
    if not name:
        raise UnknownModelSpecError(
            f"model spec {spec!r} names no model", hint=f"write {prefix}:MODEL_NAME"
        )
    return _provider(prefix)(name, base_url=base_url, **options)  # type: ignore[no-any-return]


def _provider(prefix: str) -> Any:
    module, cls = PROVIDERS[prefix]
    return getattr(importlib.import_module(f"{__package__}.{module}"), cls)


def _guess(spec: str) -> str:
    lowered = spec.strip().lower()
    for start, prefix in _GUESSES:
        if lowered.startswith(start):
            return f"; did you mean {prefix}:{spec.strip()}?"
    return ""
