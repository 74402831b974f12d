"""Shared helpers for the wire-layer tests."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_bytes(name: str) -> bytes:
    """The raw SSE bytes of a recorded stream."""
    return (FIXTURES / name).read_bytes()


def fixture_items(name: str) -> list[dict]:
    """The decoded JSON payloads of a recorded stream (``[DONE]`` dropped)."""
    items = []
    for line in fixture_bytes(name).decode().splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            items.append(json.loads(line[6:]))
    return items
