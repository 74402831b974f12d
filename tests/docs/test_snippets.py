"""Every snippet of README.md and the docs site runs as written.

Each page's ``python`` and ``bash`` blocks run in order, each in a fresh interpreter
(or bash), in one working directory per page — as a reader pasting them one after
another into files in an empty folder would: a block may use a file an earlier block of
its page wrote, never a name it defined. No API key is set, and every proxy variable
points at a closed loopback port, so a block that would reach the network fails unless
its directive gives it a loopback server (snippets.py lists the directives).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolwire.safety import sandbox
from toolwire.testing import text_turn, tool_call_turn

from ..helpers.network import PROXY_VARIABLES
from ..providers.faultserver import FaultServer, sse
from .snippets import Block, blocks, pages

# The conversations an ``openai-server`` directive can ask the loopback server to play.
SCRIPTS: dict[str, list[list[dict[str, Any]]]] = {
    "weather": [
        tool_call_turn(
            ("get_weather", {"city": "Beijing", "day": "tomorrow"}),
            ("get_weather", {"city": "Shanghai", "day": "tomorrow"}),
            fragment=5,
        ),
        text_turn("Beijing: sunny; Shanghai: sunny.", pieces=4),
    ],
}
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, connections are refused
DUMMY_KEY = "sk-docs-snippet-test"
RUN_TIMEOUT = 300  # seconds: a local Ray instance starts in 7-15 s, far more when loaded
# The lock the Ray tests hold while their local instance is up (tests/integrations/test_ray.py).
RAY_LOCK = Path(tempfile.gettempdir()) / "toolwire-ray-tests.lock"


def _page_params() -> list[Any]:
    params = []
    for path in pages():
        page = blocks(path)
        if any(block.runs for block in page):
            marks = [
                getattr(pytest.mark, m) for b in page for args in b.options("mark") for m in args
            ]
            params.append(pytest.param(page, id=page[0].page, marks=marks))
    return params


def _environment(home: Path, page: list[Block]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith(("_API_KEY", "PROXY"))}
    for name in PROXY_VARIABLES:
        env[name] = CLOSED
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["XDG_DATA_HOME"] = str(home / "data")  # the CLI's default audit log stays here
    env.pop("TOOLWIRE_LOG", None)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    if _uses_ray(page):
        env.setdefault("RAY_AUTH_MODE", "token")
        env.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
    return env


def _uses_ray(page: list[Block]) -> bool:
    return any("ray" in args for block in page for args in block.options("mark"))


@contextlib.contextmanager
def _one_ray_instance(page: list[Block], env: dict[str, str]) -> Iterator[None]:
    """A Ray page's ``ray.init()`` starts a local instance unless one is named: never
    beside another test's. The Ray tests' instance up in this process (their session
    fixture holds the lock): the page connects to it through ``RAY_ADDRESS``, as the
    page says it does. Otherwise the page waits for the Ray tests' lock, held by a
    process whose instance is up, and holds it while its blocks run."""
    if not _uses_ray(page) or env.get("RAY_ADDRESS"):
        yield
        return
    ray: Any = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        env["RAY_ADDRESS"] = ray.get_runtime_context().gcs_address
        yield
        return
    with RAY_LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _sse(turn: list[dict[str, Any]]) -> bytes:
    lines = [b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in turn]
    return b"".join(lines) + b"data: [DONE]\n\n"


def _run(
    block: Block, code: str, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    if block.language == "python":
        script = cwd.parent / f"snippet_{block.line}.py"
        script.write_text(code, encoding="utf-8")
        argv = [sys.executable, str(script)]
    else:
        argv = ["bash", "-euo", "pipefail", "-c", code]
    return subprocess.run(
        argv, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT
    )


def _run_block(block: Block, cwd: Path, env: dict[str, str]) -> None:
    env = dict(env)
    for [name, *_] in block.options("key"):
        env[name] = DUMMY_KEY
    servers = block.options("openai-server")
    if not servers:
        done = _run(block, block.code, cwd, env)
    else:
        [[url, script]] = servers
        assert url in block.code, f"{block.where}: the block does not mention {url}"
        replies = [sse(_sse(turn), chunks=[97]) for turn in SCRIPTS[script]]
        with FaultServer(*replies) as server:
            env["OPENAI_API_KEY"] = DUMMY_KEY
            root = url.split("/", 3)[:3]
            done = _run(block, block.code.replace("/".join(root), server.url), cwd, env)
            assert server.requests, f"{block.where}: the block never asked the server at {url}"
    assert done.returncode == 0, (
        f"{block.where} failed (exit {done.returncode})\n--- stdout\n{done.stdout[-3000:]}"
        f"\n--- stderr\n{done.stderr[-3000:]}"
    )


def _require(page: list[Block]) -> None:
    needs = {need for block in page for args in block.options("needs") for need in args}
    assert needs <= {"sandbox"}, f"{page[0].page}: unknown needs {needs}"
    if "sandbox" not in needs:
        return
    problem = "not Linux" if not os.path.isdir("/proc") else None
    if problem is None:
        _, problem = sandbox._isolation(os.geteuid() == 0)
    if problem is not None:
        message = f"no isolated sandbox here: {problem} (apt-get install bubblewrap)"
        if os.environ.get("TOOLWIRE_REQUIRE_SANDBOX"):  # CI: every snippet must run
            pytest.fail(message)
        pytest.skip(message)


@pytest.mark.parametrize("page", _page_params())
def test_every_snippet_of_the_page_runs_as_written(page: list[Block], tmp_path: Path) -> None:
    _require(page)
    cwd = tmp_path / "work"
    cwd.mkdir()
    env = _environment(tmp_path, page)
    for block in page:
        for [name] in block.options("file"):
            (cwd / name).write_text(block.code, encoding="utf-8")
    with _one_ray_instance(page, env):
        for block in page:
            if block.runs:
                _run_block(block, cwd, env)


def test_every_page_with_code_has_runnable_snippets_and_skips_say_why() -> None:
    everything = [block for path in pages() for block in blocks(path)]
    runnable = [block for block in everything if block.language in ("python", "bash")]
    assert len([block for block in runnable if block.runs]) >= 20
    for block in runnable:
        for reason in block.options("skip"):
            assert len(reason) >= 4, f"{block.where}: say why it is skipped and what runs instead"
    for block in everything:
        for [script] in [args[1:] for args in block.options("openai-server")]:
            assert script in SCRIPTS, f"{block.where}: no conversation {script!r}"
    skipped = [block.where for block in runnable if block.options("skip")]
    assert len(skipped) <= len(runnable) // 10, f"too many skipped snippets: {skipped}"


def test_directives_are_checked(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- snippet: skipp typo -->\n```python\nprint(1)\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad snippet directive"):
        blocks(page)
