"""Every module of the package imports, on each declared Python version.

The other Python versions run only the tests of what differs by version (tests/subsets.py,
``--subset=versions``); this file is in that subset (it uses ``importlib``), so a module
that no selected test reaches still gets imported on 3.10 and 3.13: a syntax, an import
or a class-definition-time typing construct that one version lacks fails here.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"
# __main__ runs the CLI on import; the demo project is a sample user tree, not a module.
SKIP = {"toolwire.__main__"}


def modules() -> list[str]:
    names = []
    for path in sorted((SOURCE / "toolwire").rglob("*.py")):
        if "demo/project" in path.as_posix():
            continue
        parts = path.relative_to(SOURCE).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return [name for name in names if name not in SKIP]


def test_the_package_has_its_modules() -> None:
    names = modules()
    assert "toolwire.wire.assembler" in names and "toolwire.run.agent" in names


@pytest.mark.parametrize("name", modules())
def test_the_module_imports(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__name__ == name


# What one fresh interpreter loads: importing the agent; then a command run by the command
# line, then httpx (as `toolwire run -m openai:...` imports it for its first request).
PROBE = """
import json, sys
import toolwire.run
agent = sorted(m for m in sys.modules if m.startswith("toolwire.") or m == "json_repair")
from toolwire.cli import main
try:
    main(["formats"])
except SystemExit:
    pass
import httpx
cli = sorted(m for m in sys.modules if m.split(".")[0] in ("click", "pygments", "rich"))
print(json.dumps({"agent": agent, "cli": cli, "client": hasattr(httpx, "AsyncClient")}))
"""
# Each provider's request codec and stream or body decoder: the agent loop reads none.
PROVIDER_MODULES = {
    "toolwire.history.anthropic",
    "toolwire.history.openai_chat",
    "toolwire.history.openai_responses",
    "toolwire.history.openai_responses_decode",
    "toolwire.wire.anthropic",
    "toolwire.wire.anthropic_body",
    "toolwire.wire.openai_chat",
    "toolwire.wire.openai_chat_body",
    "toolwire.wire.openai_responses_body",
}


@pytest.fixture(scope="module")
def loaded() -> dict[str, Any]:
    """The modules the probe found loaded, in one fresh interpreter for both tests."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    result: dict[str, Any] = json.loads(out.splitlines()[-1])  # after the command's own lines
    return result


def test_importing_the_agent_loads_no_provider_codec_nor_json_repair(
    loaded: dict[str, Any],
) -> None:
    # wire/ and history/ load their names on first use (toolwire/_lazy.py), and
    # json_repair is imported by the repair fallback that needs it.
    assert "toolwire.run.agent" in loaded["agent"]
    assert not PROVIDER_MODULES & set(loaded["agent"])
    assert "json_repair" not in loaded["agent"]


def test_the_command_line_keeps_httpx_from_importing_its_own(loaded: dict[str, Any]) -> None:
    assert loaded["client"] and loaded["cli"] == []


@pytest.mark.parametrize(
    "name",
    [
        "toolwire.wire",
        "toolwire.history",
        "toolwire.formats",
        "toolwire.safety",
        "toolwire.providers",
        "toolwire.integrations",
    ],
)
def test_a_lazy_package_names_each_export_in_all_and_resolves_it(name: str) -> None:
    # A name its table maps to the wrong module, or one left out of __all__, would
    # fail only where it is first read.
    package = importlib.import_module(name)
    table = package._EXPORTS
    assert set(table) <= set(package.__all__)
    for export in table:
        assert getattr(package, export) is getattr(
            importlib.import_module(f"{name}.{table[export]}"), export
        )
