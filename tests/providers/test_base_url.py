"""A hosted model's base URL is checked when the model is built; what the socket layer
raises for an address it cannot use is the provider's connection error."""

from __future__ import annotations

import pytest

from toolwire import Agent
from toolwire.errors import CallerError, ProviderConnectionError
from toolwire.providers.anthropic import AnthropicModel
from toolwire.providers.http import Retries
from toolwire.providers.openai_chat import OpenAIChatModel


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:99999/v1",  # port out of range: was an ExceptionGroup(OverflowError)
        "http://[::1/v1",  # malformed IPv6 host: was a bare ValueError
        "http://h:port/v1",
        "ftp://h/v1",
        "http:///v1",
        "localhost:8000/v1",
    ],
)
@pytest.mark.parametrize("model", [OpenAIChatModel, AnthropicModel])
def test_a_bad_base_url_is_the_callers_error_at_construction(url: str, model: type) -> None:
    with pytest.raises(CallerError, match="invalid base URL"):
        model("m", base_url=url, api_key="k")


def test_the_error_hides_a_password_in_the_url() -> None:
    with pytest.raises(CallerError) as caught:
        OpenAIChatModel("m", base_url="http://ann:hunter2-secret@127.0.0.1:99999/v1")
    assert "hunter2-secret" not in str(caught.value)


def test_a_socket_level_value_error_is_a_connection_error() -> None:
    model = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", retries=Retries(attempts=0))
    model.base_url = (
        "http://127.0.0.1:99999/v1"  # past the constructor's check, as a subclass might
    )
    with pytest.raises(ProviderConnectionError, match="cannot reach"):
        Agent(model, []).run_sync("hi")
