"""The official SDKs' request types, imported by the tests that use them and no sooner.

``import anthropic.types`` runs the whole ``anthropic`` package (its clients, the Bedrock
and Vertex ones too) and ``import openai.types.chat`` the whole ``openai`` one: about
half of what a pytest process spent importing while it collected the suite. At the top
of a test module, every process paid it, also the xdist worker and the later stages that
run none of that module's tests. As fixtures (tests/conftest.py registers this module as
a plugin) they are imported once, by a process that runs such a test. Each fixture skips
its test where its SDK is not installed, as the modules' ``importorskip`` did.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest


@pytest.fixture(scope="session")
def anthropic_types() -> Any:
    """``anthropic.types``: the Messages API's request and response types."""
    return pytest.importorskip("anthropic.types")


@pytest.fixture(scope="session")
def chat_types() -> Any:
    """``openai.types.chat``: the Chat Completions API's types."""
    return pytest.importorskip("openai.types.chat")


@pytest.fixture(scope="session")
def responses_types() -> Any:
    """``openai.types.responses``: the Responses API's types."""
    return pytest.importorskip("openai.types.responses")


@functools.cache
def _adapter(kind: Any) -> Any:
    import pydantic

    return pydantic.TypeAdapter(kind)


def conforms(kind: Any, data: Any) -> None:
    """Validate ``data`` as ``kind``, forcing the lazily validated iterables.

    The SDKs type content lists ``Iterable``, which pydantic validates lazily, so the
    validated result is walked to force every nested iterator. The adapter must outlive
    the iteration (pydantic-core panics when the schema of a lazy iterator is freed
    first), hence the cache.
    """
    _force(_adapter(kind).validate_python(data))


def _force(value: Any) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _force(item)
    elif isinstance(value, (list, tuple)) or type(value).__name__ == "ValidatorIterator":
        for item in value:
            _force(item)
