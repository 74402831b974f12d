"""The README's agent-loop snippets run as written (no network, no key)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_the_agent_loop_snippets_define_their_model_and_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    blocks = re.findall(r"```python\n(.*?)```", _section("The agent loop"), re.DOTALL)
    assert len(blocks) == 3
    define, stream, scripted = blocks
    assert "async for event in stream" in stream
    namespace: dict[str, object] = {}
    # the first block builds a served model but must not reach it: run it without the
    # run_sync line, then the ScriptedModel block, which runs the loop for real
    offline = "\n".join(
        line for line in define.splitlines() if not line.startswith(("result", "result."))
    )
    exec(compile(offline, "README:agent", "exec"), namespace)
    exec(compile(scripted, "README:scripted", "exec"), namespace)
    assert namespace["result"].output == "Beijing: sunny; Shanghai: sunny."  # type: ignore[attr-defined]


def test_the_readme_table_is_the_scripts_output() -> None:
    text = README.read_text(encoding="utf-8")
    table = text.split("<!-- demo-verdicts:start -->")[1].split("<!-- demo-verdicts:end -->")[0]
    assert "Measured by `python scripts/demo_success_rate.py" in table
    assert "| `local` |" in table and "| `local:smollm2` |" in table
