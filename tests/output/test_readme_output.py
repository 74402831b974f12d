"""The README's structured-output and fallback snippets run as written (no network)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_snippets_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the fallback snippet builds, never sends
    text = README.read_text(encoding="utf-8")
    start = text.index("## Structured output and fallback models\n")
    section = text[start : text.index("\n## ", start + 1)]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 2
    for number, block in enumerate(blocks):
        namespace: dict[str, object] = {}
        exec(compile(block, f"README:output:{number}", "exec"), namespace)
    assert type(namespace["model"]).__name__ == "FallbackModel"
