"""The public names: every one resolves, and ``import toolwire`` stays light."""

from __future__ import annotations

import subprocess
import sys

import toolwire


def test_every_exported_name_resolves() -> None:
    for name in toolwire.__all__:
        assert getattr(toolwire, name) is not None, name


def test_all_matches_the_lazy_table() -> None:
    assert sorted(toolwire.__all__) == sorted([*toolwire._EXPORTS, "__version__"])


def test_import_does_not_load_pydantic_httpx_or_providers() -> None:
    code = "import sys, toolwire; print(sorted(m for m in ('pydantic', 'httpx', 'toolwire.providers') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_fixed_names_exist() -> None:
    from toolwire import formats, testing, wire

    for obj in (
        wire.OpenAIChatStream,
        wire.OpenAIResponsesStream,
        wire.AnthropicStream,
        wire.PartialJSON,
        formats.for_model,
        formats.get,
        formats.to_openai_delta,
        testing.ScriptedModel,
        toolwire.Agent,
        toolwire.tool,
        toolwire.repair_json,
        toolwire.ToolRouter,
        toolwire.ContextPolicy,
        toolwire.count_tokens,
    ):
        assert callable(obj)
