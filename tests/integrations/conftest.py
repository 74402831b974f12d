"""Fixtures for the integration tests: MCP servers started by the tests themselves."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVERS = Path(__file__).parent / "servers"
TOOL_SERVER = str(SERVERS / "tool_server.py")
RAW_SERVER = str(SERVERS / "raw_server.py")


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder the test server leaves marker files in (passed through the environment)."""
    folder = tmp_path / "marks"
    folder.mkdir()
    monkeypatch.setenv("TOOL_SERVER_MARKS", str(folder))
    return folder


def wait_for(path: Path, seconds: float = 30.0) -> None:
    """Wait until the server leaves ``path`` (an event across processes)."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} never appeared")
        time.sleep(0.01)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server(marks: Path, tmp_path: Path) -> Iterator[str]:
    """The test tool server on streamable HTTP, loopback only; yields its URL."""
    pytest.importorskip("mcp")
    port = _free_port()
    log = (tmp_path / "http-server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, TOOL_SERVER, "http", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "TOOL_SERVER_MARKS": str(marks)},
    )
    try:
        deadline = time.monotonic() + 60
        while True:  # ready when it accepts connections
            if process.poll() is not None:
                raise AssertionError(f"the HTTP test server exited: {process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(30)
        log.close()
