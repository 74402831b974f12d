"""Model specs: every provider prefix, the errors, and no I/O while resolving."""

from __future__ import annotations

import pytest

from toolwire.errors import CallerError, MissingAPIKeyError, UnknownModelSpecError
from toolwire.providers import resolve
from toolwire.providers.anthropic import AnthropicModel
from toolwire.providers.completions import CompletionsModel
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.providers.openai_responses import OpenAIResponsesModel


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")


@pytest.mark.parametrize(
    ("spec", "cls", "name"),
    [
        ("openai:gpt-4.1-mini", OpenAIChatModel, "openai:gpt-4.1-mini"),
        ("responses:gpt-5-mini", OpenAIResponsesModel, "responses:gpt-5-mini"),
        ("anthropic:claude-sonnet-4-5", AnthropicModel, "anthropic:claude-sonnet-4-5"),
        ("OpenAI:gpt-4o", OpenAIChatModel, "openai:gpt-4o"),
    ],
)
def test_hosted_specs(spec: str, cls: type, name: str) -> None:
    model = resolve(spec)
    assert isinstance(model, cls)
    assert model.name == name


def test_base_url_goes_to_the_provider() -> None:
    model = resolve("openai:Qwen/Qwen3-8B", base_url="http://127.0.0.1:8000/v1")
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url == "http://127.0.0.1:8000/v1"


def test_completions_spec_picks_the_format_from_the_name() -> None:
    model = resolve("completions:Qwen/Qwen2.5-7B-Instruct", base_url="http://h/v1")
    assert isinstance(model, CompletionsModel)


def test_a_model_object_passes_through() -> None:
    model = resolve("openai:x")
    assert resolve(model) is model


@pytest.mark.parametrize("spec", ["gpt-4.1-mini", "mistral:large", "claude-3", ""])
def test_unknown_specs_are_one_line_caller_errors(spec: str) -> None:
    with pytest.raises(UnknownModelSpecError) as info:
        resolve(spec)
    assert info.value.fault == "caller"
    assert "\n" not in str(info.value)


def test_unknown_spec_suggests_the_prefix() -> None:
    with pytest.raises(UnknownModelSpecError, match=r"did you mean openai:gpt-4\.1-mini"):
        resolve("gpt-4.1-mini")


def test_a_prefix_without_a_model_name() -> None:
    with pytest.raises(UnknownModelSpecError, match="names no model"):
        resolve("anthropic:")


def test_missing_key_surfaces_from_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(MissingAPIKeyError, match="ANTHROPIC_API_KEY"):
        resolve("anthropic:claude-sonnet-4-5")


def test_base_url_with_local_is_refused() -> None:
    with pytest.raises(CallerError, match="in-process"):
        resolve("local", base_url="http://h/v1")


def test_not_a_model() -> None:
    with pytest.raises(CallerError, match="spec string or a Model"):
        resolve(42)  # type: ignore[arg-type]
