"""Suite-wide pytest hooks."""

from __future__ import annotations

import toolwire.wire


def pytest_report_header() -> str:
    """Say which build of the wire layer the run tests (scripts/test runs both)."""
    build = "compiled (mypyc)" if toolwire.wire.COMPILED else "pure Python"
    return f"toolwire wire layer: {build}, from {toolwire.wire.__file__}"
