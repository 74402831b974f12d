"""Fixtures for the integration tests: MCP servers started by the tests themselves."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVERS = Path(__file__).parent / "servers"
TOOL_SERVER = str(SERVERS / "tool_server.py")
RAW_SERVER = str(SERVERS / "raw_server.py")
ZYGOTE = str(SERVERS / "zygote.py")
LAUNCHER = str(SERVERS / "launcher.py")

_zygote: dict[str, subprocess.Popen[bytes] | str] = {}


def tool_server_command(*args: str) -> list[str]:
    """The command that starts the test tool server (``tool_server.py ARGS``), fresh.

    The server is a real, separate process on the command's stdio, but forked from a
    process that imported the mcp SDK once per test process (servers/zygote.py), where
    each start of ``tool_server.py`` spent 1.7-2 s of CPU importing it: the command is
    servers/launcher.py, which stands in for the server (see there).
    """
    if not _zygote:
        _start_zygote()
    return [sys.executable, "-I", "-S", LAUNCHER, str(_zygote["socket"]), *args]


def _start_zygote() -> None:
    pytest.importorskip("mcp")
    # Under /tmp: a Unix socket's path is limited to ~100 bytes.
    folder = tempfile.mkdtemp(prefix="toolwire-zygote-")
    path = os.path.join(folder, "socket")
    log = open(os.path.join(folder, "zygote.log"), "wb")  # noqa: SIM115 - kept open
    process = subprocess.Popen(
        [sys.executable, ZYGOTE, path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
    )
    log.close()
    assert process.stdout is not None
    if process.stdout.readline() != b"ready\n":
        process.kill()
        process.wait()
        raise AssertionError(Path(folder, "zygote.log").read_text(errors="replace"))
    _zygote.update(process=process, socket=path, folder=folder)


@pytest.fixture(scope="session", autouse=True)
def _stop_zygote() -> Iterator[None]:
    """Ends the zygote, if a test started it, with the session (its stdin closes)."""
    yield
    process = _zygote.pop("process", None)
    if isinstance(process, subprocess.Popen):
        assert process.stdin is not None and process.stdout is not None
        process.stdin.close()
        process.stdout.close()
        process.wait(30)
        shutil.rmtree(str(_zygote["folder"]), ignore_errors=True)
    _zygote.clear()


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
        tool_server_command("http", str(port)),
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
