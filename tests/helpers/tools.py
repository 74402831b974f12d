"""Tool definitions in OpenAI's Chat shape, for the tests of more than one area."""

from __future__ import annotations

import copy
from typing import Any

_WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "days": {"type": "integer"},
            },
            "required": ["city"],
        },
    },
}


def weather_tool() -> dict[str, Any]:
    """``get_weather(city, days?)``: a fresh copy each time (a test may change it)."""
    return copy.deepcopy(_WEATHER)
