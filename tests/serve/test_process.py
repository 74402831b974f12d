"""The real server process: ``python -m toolwire serve`` on a free port, ready when
``/v1/models`` answers, serving the openai SDK, stopped cleanly."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai

from .proxy import chat
from .recorded import RecordedUpstream, Reply

SRC = str(Path(__file__).resolve().parents[2] / "src")
HERMES = '<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>'


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(url: str, process: subprocess.Popen[str], limit: float = 60.0) -> None:
    """Until ``/v1/models`` answers (the documented readiness check)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1]
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)  # a process start has no event to wait on; polling is the contract
    raise AssertionError("toolwire serve did not answer /v1/models")


def test_python_m_toolwire_serve(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.db"
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with RecordedUpstream(lambda body: Reply(text=HERMES)) as upstream:
        command = [sys.executable, "-m", "toolwire", "serve", "--upstream", upstream.url,
                   "--host", "127.0.0.1", "--port", str(port), "--log", str(log)]  # fmt: skip
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            url = f"http://127.0.0.1:{port}/v1"
            wait_ready(url, process)
            client = openai.OpenAI(base_url=url, api_key="none", max_retries=0)
            tools = [
                {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}
            ]
            response = chat(client, "Qwen/Qwen3-8B", tools=tools).parse()
            (call,) = response.choices[0].message.tool_calls or []
            assert json.loads(call.function.arguments) == {"path": "a"}
        finally:
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        assert f"http://127.0.0.1:{port}/v1" in out
    assert log.exists()


def test_a_bad_upstream_is_one_line_and_exit_2() -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "serve", "--upstream", "ftp://x"],
        check=False, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert (
        done.stderr.startswith("toolwire: error: --upstream") and len(done.stderr.splitlines()) == 1
    )


def test_import_toolwire_does_not_load_the_proxy() -> None:
    code = (
        "import sys, toolwire; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('starlette', 'uvicorn') "
        "or m.startswith('toolwire.serve')))"
    )
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": SRC},
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    assert done.stdout.strip() == "[]"
