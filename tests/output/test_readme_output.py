"""The structured-output and fallback snippets (docs/output.md) run as written (no network)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ..helpers.network import PROXY_VARIABLES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "output.md"


def test_the_snippets_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the fallback snippet's hosted model gets a key and no network: its request fails to
    # connect (every proxy is a closed loopback port), and the scripted model answers
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 2
    for number, block in enumerate(blocks):
        namespace: dict[str, object] = {}
        exec(compile(block, f"docs/output.md:{number}", "exec"), namespace)
    assert type(namespace["model"]).__name__ == "FallbackModel"
    assert capsys.readouterr().out.splitlines()[-1] == "offline answer"
