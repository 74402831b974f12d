"""Fixtures for the sandbox tests: a workspace, and a skip where isolation is impossible."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolwire import Sandbox
from toolwire.safety import sandbox


def _isolation_problem() -> str | None:
    if not os.path.isdir("/proc"):
        return "not Linux"
    _, problem = sandbox._isolation(os.geteuid() == 0)
    return problem


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def isolated() -> None:
    """Skip (saying why) where bubblewrap cannot create namespaces; fail instead when
    ``TOOLWIRE_REQUIRE_SANDBOX`` is set."""
    problem = _isolation_problem()
    if problem is None:
        return
    message = f"no isolated sandbox here: {problem} (apt-get install bubblewrap)"
    if os.environ.get("TOOLWIRE_REQUIRE_SANDBOX"):  # CI: the escape tests must run
        pytest.fail(message)
    pytest.skip(message)


MakeSandbox = Callable[..., Sandbox]


@pytest.fixture
def make_sandbox(workspace: Path, isolated: None) -> MakeSandbox:
    """``Sandbox`` with the test's workspace as its default."""

    def build(**kwargs: Any) -> Sandbox:
        return Sandbox(kwargs.pop("workspace", workspace), **kwargs)

    return build


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make bubblewrap look uninstalled (the one thing a test cannot uninstall)."""
    monkeypatch.setattr(sandbox, "_find_bwrap", lambda: None)
    sandbox._isolation.cache_clear()
    yield
    sandbox._isolation.cache_clear()


def unique_marker(prefix: str) -> str:
    """A sleep length no other test run on this machine uses (runs in other checkouts
    execute the same tests at the same time; a pid-derived marker could collide)."""
    return f"{prefix}{secrets.randbelow(10**9):09d}"


def processes_with(marker: str) -> list[str]:
    """Host processes whose command line contains ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(entry)
    return found
