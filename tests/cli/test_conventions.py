"""The CLI's conventions a user of ``llm`` expects (issue 31, item 6), run as a user would:
a real subprocess, a real audit log, a loopback server for the model. What a command
prints and returns, where the process adds nothing (``-m``, ``models``, ``log -n``),
runs through ``main`` in this process (tests/helpers/cli.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolwire as toolwire_package
from toolwire import Agent
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from ..helpers.cli import toolwire_here
from ..observe.helpers import search
from ..providers.faultserver import FaultServer, sse
from .test_first_hour import _agent_tools

SOURCE = str(Path(toolwire_package.__file__).parents[1])


def toolwire(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess whose standard input is no terminal."""
    return subprocess.run(
        [sys.executable, "-m", "toolwire", *args],
        check=False,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env or _env(),
        cwd=cwd,
        timeout=120,
    )


def _env(**extra: str) -> dict[str, str]:
    """No keys; the toolwire under test first on the path (the subprocess may run
    elsewhere than the current directory)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    path = os.pathsep.join([SOURCE, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {**env, "PYTHONPATH": path, **extra}


# -- -m, toolwire models ----------------------------------------------------------------


def test_m_is_short_for_model(capsys: pytest.CaptureFixture[str]) -> None:
    result = toolwire_here(capsys, "run", "hi", "-m", "nosuch:thing", "--no-log")
    assert result.returncode == 2
    assert "unknown model spec 'nosuch:thing'" in result.stderr


def test_models_lists_the_specs_and_which_need_a_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(name)
    rows = json.loads(toolwire_here(capsys, "models", "--json").stdout)
    specs = [r["spec"] for r in rows]
    assert specs[0] == "local" and {"local:smollm2", "openai:NAME", "anthropic:NAME"} <= set(specs)
    anthropic = next(r for r in rows if r["spec"] == "anthropic:NAME")
    assert not anthropic["ready"] and "ANTHROPIC_API_KEY" in anthropic["status"]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    keyed = json.loads(toolwire_here(capsys, "models", "--json").stdout)
    anthropic = next(r for r in keyed if r["spec"] == "anthropic:NAME")
    assert anthropic["ready"] and "key set" in anthropic["status"]
    local = next(r for r in rows if r["spec"] == "local")
    assert local["status"].startswith("installed" if local["ready"] else "not installed")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    table = toolwire_here(capsys, "models")
    assert table.returncode == 0 and "openai:NAME" in table.stdout and "status" in table.stdout


# -- toolwire log -n, requests, a closed pipe -------------------------------------------


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Two runs: one round of calls (two model requests), then a plain answer."""
    path = tmp_path / "runs.db"
    model = ScriptedModel([tool_call_turn(("search", {"q": "a"})), text_turn("found")])
    Agent(model, [search], log=str(path)).run_sync("with a round")
    Agent(ScriptedModel([text_turn("hello")]), [], log=str(path)).run_sync("plain")
    return path


def test_log_n_is_limit_and_shows_requests(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = json.loads(toolwire_here(capsys, "log", "--db", str(db), "-n", "1", "--json").stdout)
    assert [r["prompt"] for r in runs] == ["plain"]
    runs = json.loads(toolwire_here(capsys, "log", "--db", str(db), "--json").stdout)
    assert [(r["requests"], r["rounds"]) for r in runs] == [(1, 0), (2, 1)]
    header, *rows = toolwire_here(capsys, "log", "--db", str(db), "-n", "5").stdout.splitlines()
    assert "requests  rounds" in header
    assert rows[1].split()[4:6] == ["2", "1"]  # after the id, date, time and model


@pytest.mark.parametrize("command", [["inspect", "last", "--json"], ["log", "--json"]])
def test_a_closed_pipe_ends_quietly(db: Path, command: list[str]) -> None:
    # `toolwire inspect --json | head -1`: the reader goes away after one line.
    shell = (
        f"{sys.executable} -m toolwire {' '.join(command)} --db {db} | head -c 1 >/dev/null; "
        "echo ${PIPESTATUS[0]}"
    )
    result = subprocess.run(
        ["bash", "-c", shell], capture_output=True, text=True, check=False, timeout=120
    )
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr
    assert result.stderr == ""
    assert result.stdout.strip() in ("0", "141")  # 0: the output fitted the pipe's buffer


def test_a_closed_pipe_on_a_long_output_exits_141(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    model = ScriptedModel([text_turn("x" * 200_000)])
    Agent(model, [], log=str(path)).run_sync("long")
    shell = (
        f"{sys.executable} -m toolwire inspect last --json --db {path} | head -c 1 >/dev/null; "
        "echo ${PIPESTATUS[0]}"
    )
    result = subprocess.run(
        ["bash", "-c", shell], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.stderr == ""
    assert result.stdout.strip() == "141"


# -- --tools FILE.py, a denied call's hint ------------------------------------------------

TOOLS_FILE = '''
from toolwire import tool

@tool
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"

@tool(side_effects=False)
def double(x: int) -> int:
    """Double a number."""
    return 2 * x

also_delete = delete
HELPER = len
'''


def test_tools_from_a_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "whole_file_tools.py"
    path.write_text(TOOLS_FILE)
    listed = tmp_path / "listed_file_tools.py"
    listed.write_text(TOOLS_FILE + "TOOLS = [double]\n")
    try:
        assert _agent_tools("--tools", str(path)) == ["delete", "double"]  # each once
        assert _agent_tools("--tools", str(listed)) == ["double"]  # TOOLS wins
    finally:
        sys.modules.pop("whole_file_tools", None)
        sys.modules.pop("listed_file_tools", None)


def test_a_file_without_tools_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "empty_tools.py").write_text("X = 1\n")
    result = toolwire(
        "run", "hi", "-m", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
        "--tools", "empty_tools.py", "--no-log", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "defines no TOOLS and holds no @tool" in result.stderr


def _stream(*chunks: dict[str, object]) -> bytes:
    lines = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks]
    return b"".join(lines) + b"data: [DONE]\n\n"


def _delta(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_a_denied_call_tells_the_user_to_use_yes(tmp_path: Path) -> None:
    (tmp_path / "mytools.py").write_text(TOOLS_FILE)
    call = {"index": 0, "id": "c1", "type": "function",
            "function": {"name": "delete", "arguments": '{"path": "a.txt"}'}}  # fmt: skip
    replies = (
        sse(_stream(_delta({"role": "assistant", "tool_calls": [call]}), _delta({}, "tool_calls"))),
        sse(_stream(_delta({"role": "assistant", "content": "Not deleted."}), _delta({}, "stop"))),
    )
    with FaultServer(*replies) as server:
        result = toolwire(
            "run", "delete a.txt", "-m", "openai:m", "--base-url", f"{server.url}/v1",
            "--tools", "mytools.py", "--no-log", cwd=tmp_path, env=_env(),
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "needs approval" in result.stderr and "--yes" in result.stderr
    assert "deleted a.txt" not in result.stdout + result.stderr  # it never ran


def test_models_counts_the_assembled_default_model_without_its_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # After the first run the cached GGUF is all a run reads, so a user may uninstall the
    # six packages to save 491 MB (docs/models.md); a distribution that is really not
    # installed stands in for them.
    if importlib.util.find_spec("llama_cpp") is None:  # not imported: its import leaks files
        pytest.skip("llama-cpp-python is not installed")
    from toolwire.cli.models_cmd import _local_status
    from toolwire.providers import local

    monkeypatch.setattr(local, "EMBEDDED_PARTS", ("toolwire-no-such-distribution",))
    monkeypatch.setenv("TOOLWIRE_CACHE_DIR", str(tmp_path))
    ready, status = _local_status("local")
    assert not ready and status.startswith("not installed (toolwire-no-such-distribution)")
    (tmp_path / local.EMBEDDED_FILE).write_bytes(b"GGUF")
    assert _local_status("local") == (
        True,
        "installed (assembled in the cache; its packages were removed)",
    )
