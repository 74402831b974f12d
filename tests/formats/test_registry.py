"""Tests of the family table and model-id resolution."""

from __future__ import annotations

import importlib
import re

import pytest

from toolwire.errors import CallerError
from toolwire.formats import Format, families, for_model, get
from toolwire.formats.registry import FAMILIES, normalize_model_id, resolve_model

MODELS = {
    # Qwen / Hermes
    "Qwen/Qwen3-8B": ("hermes", "qwen3"),
    "Qwen/Qwen3-235B-A22B-Instruct-2507": ("hermes", "qwen3"),
    "Qwen/Qwen3-30B-A3B-Thinking-2507": ("hermes", "qwen3-thinking"),
    "Qwen/QwQ-32B": ("hermes", "qwq"),
    "Qwen/Qwen2.5-7B-Instruct": ("hermes", "qwen2.5"),
    "Qwen/Qwen2.5-Coder-32B-Instruct": ("hermes", "qwen2.5"),
    "NousResearch/Hermes-3-Llama-3.1-8B": ("hermes", "hermes"),
    "NousResearch/Hermes-2-Pro-Llama-3-8B": ("hermes", "hermes"),
    "NousResearch/Hermes-4-14B": ("hermes", "hermes"),
    # Qwen3-Coder XML
    "Qwen/Qwen3-Coder-30B-A3B-Instruct": ("qwen3_coder", "qwen3-coder"),
    "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8": ("qwen3_coder", "qwen3-coder"),
    "Qwen/Qwen3.5-27B": ("qwen3_coder", "qwen3.5"),
    # Llama
    "meta-llama/Llama-3.1-8B-Instruct": ("llama", "llama3-json"),
    "meta-llama/Meta-Llama-3.1-70B-Instruct": ("llama", "llama3-json"),
    "meta-llama/Llama-3.2-3B-Instruct": ("llama", "llama3-json"),
    "meta-llama/Llama-3.3-70B-Instruct": ("llama", "llama3-json"),
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": ("llama", "llama4-pythonic"),
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8": ("llama", "llama4-pythonic"),
    "google/gemma-3-27b-it": ("llama", "pythonic"),
    # Gemma
    "google/gemma-4-31B-it": ("gemma", "gemma4"),
    "google/functiongemma-270m-it": ("gemma", "functiongemma"),
    # Mistral
    "mistralai/Mistral-Small-3.2-24B-Instruct-2506": ("mistral", "v11"),
    "mistralai/Mistral-7B-Instruct-v0.3": ("mistral", "v3"),
    "mistralai/Mixtral-8x22B-Instruct-v0.1": ("mistral", "v3"),
    "mistralai/Mistral-Nemo-Instruct-2407": ("mistral", "v3"),
    "mistralai/Ministral-8B-Instruct-2410": ("mistral", "v3"),
    "mistralai/Magistral-Small-2506": ("mistral", "v11"),
    "mistralai/Magistral-Small-2509": ("mistral", "v13"),
    "mistralai/Devstral-Small-2507": ("mistral", "v11"),
    "mistralai/Devstral-Small-2-24B-Instruct-2512": ("mistral", "v13"),
    "mistralai/Ministral-3-8B-Instruct-2512": ("mistral", "v13"),
    # DeepSeek
    "deepseek-ai/DeepSeek-V3": ("deepseek", "v3"),
    "deepseek-ai/DeepSeek-V3-0324": ("deepseek", "v3"),
    "deepseek-ai/DeepSeek-V3.1": ("deepseek", "v3.1"),
    "deepseek-ai/DeepSeek-V3.1-Terminus": ("deepseek", "v3.1"),
    "deepseek-ai/DeepSeek-V3.2-Exp": ("deepseek", "v3.2"),
    "deepseek-ai/DeepSeek-V3.2": ("deepseek", "v3.2"),
    "deepseek-ai/DeepSeek-R1": ("deepseek", "r1"),
    "deepseek-ai/DeepSeek-R1-0528": ("deepseek", "r1"),
    "deepseek-ai/DeepSeek-V4-Flash": ("deepseek", "v4"),
    # GLM
    "zai-org/GLM-4.5": ("glm", "glm-4.5"),
    "zai-org/GLM-4.5-Air": ("glm", "glm-4.5"),
    "zai-org/GLM-4.6": ("glm", "glm-4.5"),
    "zai-org/GLM-4.7": ("glm", "glm-4.7"),
    # Kimi
    "moonshotai/Kimi-K2-Instruct": ("kimi", "k2"),
    "moonshotai/Kimi-K2-Thinking": ("kimi", "k2"),
    "moonshotai/Kimi-K3": ("kimi", "k3"),
    # gpt-oss
    "openai/gpt-oss-20b": ("harmony", "gpt-oss"),
    "openai/gpt-oss-120b": ("harmony", "gpt-oss"),
}


@pytest.mark.parametrize(("model", "expected"), sorted(MODELS.items()))
def test_model_ids_resolve(model: str, expected: tuple[str, str]) -> None:
    assert resolve_model(model) == expected


@pytest.mark.parametrize(("model", "expected"), sorted(MODELS.items()))
def test_resolution_ignores_case_and_org(model: str, expected: tuple[str, str]) -> None:
    bare = model.split("/", 1)[1]
    assert resolve_model(bare.lower()) == expected
    assert resolve_model(bare.upper()) == expected
    assert resolve_model(f"/models/{bare}/") == expected


def test_normalize_model_id() -> None:
    assert normalize_model_id("Qwen/Qwen3-8B") == "qwen3-8b"
    assert normalize_model_id(r"C:\models\Qwen_Qwen3 8B") == "qwen-qwen3-8b"


@pytest.mark.parametrize("model", ["openai/gpt-4o", "bert-base-uncased", "qwen30-x"])
def test_unknown_model_lists_families(model: str) -> None:
    with pytest.raises(CallerError) as caught:
        for_model(model)
    for info in FAMILIES:
        assert info.name in str(caught.value)


@pytest.mark.parametrize("bad", ["", "   ", None, 3])
def test_model_must_be_a_string(bad: object) -> None:
    with pytest.raises(CallerError):
        for_model(bad)  # type: ignore[arg-type]


def test_for_model_builds_the_format() -> None:
    fmt = for_model("Qwen/Qwen3-8B", generation_prompt="<|im_start|>assistant\n<think>\n")
    assert isinstance(fmt, Format)
    assert (fmt.family, fmt.variant) == ("hermes", "qwen3")
    assert fmt.parse("x</think>y").reasoning == "x"


def test_get_by_family_and_default_variant() -> None:
    assert get("hermes").variant == "qwen3"
    assert get("Qwen3-Coder").family == "qwen3_coder"
    with pytest.raises(CallerError, match="known families"):
        get("nope")
    with pytest.raises(CallerError, match="known variants"):
        get("hermes", "v99")


def test_families_table() -> None:
    rows = families()
    assert [r.name for r in rows] == [
        "hermes",
        "qwen3_coder",
        "llama",
        "mistral",
        "deepseek",
        "glm",
        "kimi",
        "harmony",
        "gemma",
    ]
    for row in rows:
        assert row.variants and row.model_patterns and row.description


@pytest.mark.parametrize("info", FAMILIES, ids=lambda i: i.name)
def test_modules_match_the_table(info: object) -> None:
    from toolwire.formats.registry import FamilyInfo

    assert isinstance(info, FamilyInfo)
    module = importlib.import_module(f"toolwire.formats.{info.module}")
    # The table is the one list of variants and default prompts: no family keeps a copy.
    assert not hasattr(module, "VARIANTS") and not hasattr(module, "DEFAULT_GENERATION_PROMPTS")
    with pytest.raises(CallerError, match=re.escape("known variants: " + ", ".join(info.variants))):
        module.make("no-such-variant")
    for variant in info.variants:
        fmt = get(info.name, variant)
        assert (fmt.family, fmt.variant) == (info.name, variant)
        assert fmt.markers, "every format lists its markers"
        # The variant's default prompt when the caller gives none, the caller's otherwise.
        assert fmt.generation_prompt is None and fmt.prompt == info.default_prompt(variant)
        assert get(info.name, variant, generation_prompt="").prompt == ""
