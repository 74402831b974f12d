"""Shared fixtures for the history tests: the provider-shaped recordings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> dict[str, Any]:
    """One fixture file, parsed."""
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


@pytest.fixture
def chat_fixture() -> dict[str, Any]:
    return load("openai_chat.json")


@pytest.fixture
def responses_fixture() -> dict[str, Any]:
    return load("openai_responses.json")


@pytest.fixture
def anthropic_fixture() -> dict[str, Any]:
    return load("anthropic.json")
