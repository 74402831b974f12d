"""``toolwire run --chat-template PATH``: a completions model renders the model's own
template; any other model refuses the option in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire.cli import build_parser, main

pytest.importorskip("jinja2")


def test_a_completions_model_renders_the_given_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolwire.cli.run_cmd import build_agent

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    (tmp_path / "chat_template.jinja").write_text(
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}<model>",
        encoding="utf-8",
    )
    words = ["--model", "completions:Qwen/Qwen3-8B", "--base-url", "http://h/v1"]
    args = build_parser().parse_args(["run", "hi", *words, "--chat-template", str(tmp_path)])
    model = build_agent(args).model
    prompt = model.template([], [], "auto")  # type: ignore[attr-defined]
    assert prompt.text == "<model>"


def test_another_model_refuses_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    words = ["--model", "openai:m", "--base-url", "http://h/v1", "--chat-template", "x"]
    assert main(["run", "hi", *words]) == 2
    assert "--chat-template is for completions:NAME models" in capsys.readouterr().err
