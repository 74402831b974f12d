"""Suite-wide pytest hooks."""

from __future__ import annotations

import pytest

import toolwire.wire


def pytest_report_header() -> str:
    """Say which build of the wire layer the run tests (scripts/test runs both)."""
    build = "compiled (mypyc)" if toolwire.wire.COMPILED else "pure Python"
    return f"toolwire wire layer: {build}, from {toolwire.wire.__file__}"


@pytest.fixture(autouse=True)
def _audit_log_in_tmp(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI logs runs by default: never into the user's data directory from a test."""
    monkeypatch.setenv("TOOLWIRE_LOG", str(tmp_path_factory.mktemp("log") / "runs.db"))
