"""Every module of the package imports, on each declared Python version.

The other Python versions run only the tests of what differs by version (tests/subsets.py,
``--subset=versions``); this file is in that subset (it uses ``importlib``), so a module
that no selected test reaches still gets imported on 3.10 and 3.13: a syntax, an import
or a class-definition-time typing construct that one version lacks fails here.
"""

from __future__ import annotations

import importlib
from pathlib import Path

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
