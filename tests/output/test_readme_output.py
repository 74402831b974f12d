"""The structured-output and fallback snippets (docs/output.md) run as written (no network)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "output.md"


def test_the_snippets_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the fallback snippet builds, never sends
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 2
    for number, block in enumerate(blocks):
        namespace: dict[str, object] = {}
        exec(compile(block, f"docs/output.md:{number}", "exec"), namespace)
    assert type(namespace["model"]).__name__ == "FallbackModel"
