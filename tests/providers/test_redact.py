"""Secrets stay out of reprs and error text: request headers, URL user-info, echoes."""

from __future__ import annotations

import pytest

from toolwire.errors import ProviderAPIError, ProviderConnectionError
from toolwire.providers.anthropic import AnthropicModel
from toolwire.providers.http import Retries
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.providers.redact import redact_headers, redact_url, scrub, secrets_in

from .conftest import SleepRecorder, demo_request, run
from .faultserver import FaultServer, status

KEY = "sk-test-0123456789abcdef"


def test_a_built_request_repr_shows_no_key() -> None:
    for cls in (OpenAIChatModel, AnthropicModel):
        request = cls("m", api_key=KEY).build_request(demo_request())
        text = repr(request)
        assert KEY not in text and "***" in text


def test_base_url_user_info_is_masked_in_the_model_repr() -> None:
    model = OpenAIChatModel("m", base_url="https://alice:hunter2-secret@proxy.example/v1")
    assert "hunter2-secret" not in repr(model)
    assert "alice:***@proxy.example" in repr(model)


def test_a_401_that_echoes_the_authorization_header_does_not_leak_the_key(
    sleeps: SleepRecorder,
) -> None:
    echo = status(401, {"error": {"message": f"bad credentials: Authorization: Bearer {KEY}"}})
    with FaultServer(echo) as server:
        model = OpenAIChatModel("m", base_url=f"{server.url}/v1", api_key=KEY)
        model.options.sleep = sleeps
        with pytest.raises(ProviderAPIError) as info:
            run(model, demo_request())
    assert KEY not in str(info.value) and KEY not in repr(info.value.body)
    assert "Authorization: ***" in str(info.value)


def test_an_unreachable_url_with_user_info_does_not_leak_the_password(
    sleeps: SleepRecorder,
) -> None:
    model = OpenAIChatModel(
        "m", base_url="http://bob:pa55word-xyz@127.0.0.1:9/v1", retries=Retries(attempts=0)
    )
    model.options.sleep = sleeps
    with pytest.raises(ProviderConnectionError) as info:
        run(model, demo_request())
    assert "pa55word-xyz" not in str(info.value)


def test_redaction_helpers() -> None:
    assert redact_url("https://u:p4ssw0rd@h/x") == "https://u:***@h/x"
    assert redact_url("https://token-only@h") == "https://***@h"
    assert redact_url("https://h/x") == "https://h/x"
    assert redact_headers({"Authorization": "Bearer abc", "x-api-key": "k", "accept": "a"}) == {
        "Authorization": "Bearer ***",
        "x-api-key": "***",
        "accept": "a",
    }
    found = secrets_in("https://u:p4ssw0rd@h", {"authorization": f"Bearer {KEY}"})
    assert scrub(f"x Bearer {KEY} p4ssw0rd", found) == "x *** ***"
