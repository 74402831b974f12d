"""The CLI's offline subcommands: the entry point as a user runs it (a real subprocess),
and what each command prints and returns through ``main``, in this process
(tests/helpers/cli.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolwire.cli import main
from toolwire.cli.pipeline_cmd import render
from toolwire.demo import recorded_stream

from ..helpers.cli import toolwire_here


def toolwire(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolwire", *args],
        check=False,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
    )


def test_help_lists_the_subcommands() -> None:
    result = toolwire("--help")
    assert result.returncode == 0
    for name in ("pipeline", "parse", "formats"):
        assert name in result.stdout


def test_help_imports_only_the_command_line() -> None:
    # Every command registers every subcommand: what a module imports at its top, every
    # command pays (pathlib, json and getpass were ~10 ms of --help's ~50). In a fresh
    # process: what --help adds to `import toolwire` and argparse's own help output.
    code = (
        "import argparse, sys, toolwire\n"
        "argparse.ArgumentParser().format_help()\n"
        "before = set(sys.modules)\n"
        "from toolwire.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(*sorted(set(sys.modules) - before), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    added = result.stderr.split()
    assert "toolwire.cli.run_cmd" in added
    # arguments.py (the option checks, file_path) and what it imports: small, no I/O.
    others = {n for n in added if n != "toolwire.cli" and not n.startswith("toolwire.cli.")}
    assert others <= {"toolwire.checks", "toolwire.errors", "math"}, others


@pytest.mark.parametrize("provider", ["openai", "anthropic", "responses"])
def test_pipeline_prints_the_four_layers(provider: str, capsys: pytest.CaptureFixture[str]) -> None:
    result = toolwire_here(capsys, "pipeline", "--provider", provider, "--read", "17")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for layer in ("== 1. wire", "== 2. assembly", "== 3. two shapes", "== 4. history"):
        assert layer in out
    assert "can start now" in out  # a call reported complete before the stream ended


@pytest.mark.parametrize("read", [1, 7, 4096])
def test_pipeline_output_does_not_depend_on_read_size(read: int) -> None:
    data = recorded_stream("openai")
    # Line 1 names the read size; everything after it must be identical.
    assert render("openai", data, read)[1:] == render("openai", data, 64)[1:]


def test_pipeline_answers_every_call_once() -> None:
    lines = render("anthropic", recorded_stream("anthropic"), 64)
    layer4 = next(i for i, line in enumerate(lines) if line.startswith("== 4"))
    history = [json.loads(line) for line in lines[layer4 + 1 :] if line.startswith("  {")]
    calls = [b["id"] for b in history[0]["content"] if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for b in history[1]["content"] if b["type"] == "tool_result"]
    assert calls == results == ["toolu_01A", "toolu_01B", "toolu_01C"]
    # The hallucinated parameter and the unknown tool get error results, not a crash.
    assert [b.get("is_error", False) for b in history[1]["content"]] == [False, True, True]


def test_parse_and_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.txt"
    out.write_text(
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>'
    )
    result = toolwire_here(capsys, "parse", "--model", "Qwen/Qwen2.5-7B-Instruct", str(out))
    assert result.returncode == 0, result.stderr
    parsed = json.loads(result.stdout)
    assert parsed["tool_calls"][0]["name"] == "get_weather"
    assert json.loads(parsed["tool_calls"][0]["arguments"]) == {"city": "Beijing"}
    listing = toolwire_here(capsys, "formats").stdout
    for family in ("hermes", "deepseek", "harmony", "mistral", "gemma"):
        assert family in listing


def test_errors_are_one_line_and_nonzero(tmp_path: Path) -> None:
    # In a subprocess: the one line is all the process prints, nothing at its exit.
    result = toolwire("parse", "--model", "no-such/model", str(tmp_path / "missing.txt"))
    assert result.returncode == 2
    assert result.stderr.startswith("toolwire: error:") and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(Exception, match="no tool-call format known"):
        main(["--debug", "parse", "--model", "no-such/model", str(tmp_path / "x.txt")])
