"""ToolRouter: BM25 over names, descriptions and parameters."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire import CallerError, ToolRouter, tool
from toolwire.context.routing import terms


def definition(name: str, description: str, **params: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            # not valid JSON Schema ("dict"): routing reads only names and descriptions
            "parameters": {
                "type": "dict",
                "properties": {k: {"type": "str", "description": v} for k, v in params.items()},
            },
        },
    }


TOOLS = [
    definition("get_weather", "Current weather for a city.", city="The city name"),
    definition("sendEmail", "Send an email message.", to="Recipient address", body="Text"),
    definition("files.delete_all", "Delete every file in a folder.", folder="The folder"),
    definition("calendar-create-event", "Create a calendar event.", title="Event title"),
    definition("stock_price", "Latest stock price for a ticker symbol.", ticker="Ticker symbol"),
    definition(
        "stock_price_history",
        "Historical daily stock prices for a ticker.",
        ticker="Ticker symbol",
        days="How many days",
    ),
]


def test_names_are_split_on_separators_and_camel_case() -> None:
    assert terms("sendEmail files.delete_all calendar-create-event HTTPServer") == [
        "send",
        "email",
        "file",
        "delete",
        "all",
        "calendar",
        "create",
        "event",
        "http",
        "server",
    ]


def test_the_relevant_tool_ranks_first() -> None:
    router = ToolRouter(TOOLS)
    assert router.select("what's the weather in Paris?", k=1) == ["get_weather"]
    assert router.select("please email Bob the report", k=1) == ["sendEmail"]
    assert router.select("schedule an event in my calendar", k=1) == ["calendar-create-event"]
    assert router.select("show the stock prices of AAPL over the last 30 days", k=2) == [
        "stock_price_history",
        "stock_price",
    ]


def test_a_repeated_query_gets_the_same_ranking_as_a_fresh_router() -> None:
    # A router keeps its latest rankings (runs repeat their queries); what it hands
    # back is a copy, and every query still gets its own ranking.
    router = ToolRouter(TOOLS)
    queries = ["what's the weather in Paris?", "email Bob", "stock prices", "weather"] * 3
    for k in (1, 3):
        for query in queries:
            ranked = router.rank(query, k)
            assert ranked == ToolRouter(TOOLS).rank(query, k)
            ranked.clear()  # the caller's list: the router's next answer is whole
            assert router.rank(query, k) == ToolRouter(TOOLS).rank(query, k)
    for n in range(40):  # more queries than it keeps: still right after it forgets them
        assert router.rank(f"weather {n}", 2) == ToolRouter(TOOLS).rank(f"weather {n}", 2)


def test_parameter_descriptions_are_read() -> None:
    router = ToolRouter(TOOLS)
    assert router.select("who is the recipient address?", k=1) == ["sendEmail"]


def test_unmatched_tools_fill_the_list_in_registration_order() -> None:
    router = ToolRouter(TOOLS)
    assert router.select("zzz qqq", k=3) == ["get_weather", "sendEmail", "files.delete_all"]
    picked = router.select("weather", k=4)
    assert picked[0] == "get_weather"
    assert picked[1:] == ["sendEmail", "files.delete_all", "calendar-create-event"]


def test_k_larger_than_the_tools_gives_every_tool() -> None:
    assert sorted(ToolRouter(TOOLS).select("weather", k=50)) == sorted(
        d["function"]["name"] for d in TOOLS
    )


def test_tool_objects_are_accepted() -> None:
    @tool
    def convert_currency(amount: float, target: str) -> str:
        """Convert money between currencies.

        Args:
            amount: How much money.
            target: The currency code to convert to.
        """
        return ""

    @tool
    def translate(text: str) -> str:
        """Translate text into English."""
        return text

    assert ToolRouter([translate, convert_currency]).select(
        "how much is 5 euros in dollars, currency", 1
    ) == ["convert_currency"]


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "3"])
def test_k_must_be_a_positive_int(k: object) -> None:
    with pytest.raises(CallerError, match="k must be a positive int"):
        ToolRouter(TOOLS).select("weather", k=k)  # type: ignore[arg-type]


def test_an_unknown_method_is_a_clear_error() -> None:
    with pytest.raises(CallerError, match="unknown"):
        ToolRouter(TOOLS, method="tfidf")
    # without the embeddings extra: tests/context/test_embeddings.py


def test_bad_tools_are_clear_errors() -> None:
    with pytest.raises(CallerError, match="no name"):
        ToolRouter([{"type": "function", "function": {"description": "x"}}])
    with pytest.raises(CallerError, match="two tools"):
        ToolRouter([TOOLS[0], TOOLS[0]])
    with pytest.raises(CallerError, match="query"):
        ToolRouter(TOOLS).select(42)  # type: ignore[arg-type]


@given(st.text(max_size=80), st.integers(min_value=1, max_value=10))
def test_select_always_offers_min_k_distinct_tools(query: str, k: int) -> None:
    picked = ToolRouter(TOOLS).select(query, k)
    assert len(picked) == min(k, len(TOOLS)) == len(set(picked))
