"""Footprint: the core install and what a plain ``import`` or ``--help`` costs.

The fast tests walk this environment; the slow one builds a fresh virtual environment,
installs toolwire from this checkout without extras (a real install by uv, which the dev
extra brings: toolwire built from this tree's files, its dependencies from uv's cache or
the package index, or from a wheelhouse named by ``UV_FIND_LINKS`` with ``UV_OFFLINE=1``
offline), and checks import, ``--help`` and Agent construction there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_footprint import AGENT, core_distributions  # noqa: E402

HEAVY = ("httpx", "toolwire.providers", "llama_cpp", "rich")


def _loaded_after(code: str, python: str = sys.executable) -> list[str]:
    probe = f"{code}\nimport sys\nprint(','.join(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))"
    out = subprocess.run(
        [python, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    return [m for m in out.strip().split(",") if m]


def test_core_install_is_at_most_15_distributions() -> None:
    distributions = core_distributions()
    assert "toolwire" in distributions
    assert len(distributions) <= 15, distributions


def test_import_toolwire_loads_no_provider_and_no_httpx() -> None:
    assert _loaded_after("import toolwire") == []


def test_building_a_hosted_model_imports_no_httpx() -> None:
    code = "import os; os.environ['OPENAI_API_KEY'] = 'x'\nfrom toolwire.providers import resolve\nresolve('openai:m')"
    assert "httpx" not in _loaded_after(code)


@pytest.mark.slow
def test_fresh_venv_install_without_extras(tmp_path: Path) -> None:
    # uv, not venv and pip: ensurepip and pip's resolver took ~20 of this test's 26 s of
    # CPU; uv makes the same kind of environment (a fresh venv, nothing in it) and installs
    # from its cache. --refresh-package: uv keys a local project's built wheel on
    # pyproject.toml, so without it a change under src/ could install a stale toolwire.
    uv = [sys.executable, "-m", "uv"]
    env_dir = tmp_path / "venv"
    subprocess.run([*uv, "venv", "--quiet", "--python", sys.executable, str(env_dir)], check=True)
    python = str(env_dir / "bin" / "python")
    install = subprocess.run(
        [
            *uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            python,
            "--refresh-package",
            "toolwire",
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if install.returncode != 0 and (
        "Failed to fetch" in install.stderr or "the network was disabled" in install.stderr
    ):
        pytest.skip(
            "the dependencies cannot be downloaded here (set UV_FIND_LINKS to a wheelhouse)"
        )
    assert install.returncode == 0, install.stderr[-2000:]
    listed = subprocess.run(
        [*uv, "pip", "list", "--python", python, "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {d["name"].lower() for d in json.loads(listed.stdout)} - {"pip", "setuptools", "wheel"}
    assert "toolwire" in names and len(names) <= 15, sorted(names)
    assert _loaded_after("import toolwire", python) == []
    helped = subprocess.run(
        [python, "-m", "toolwire", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "run" in helped.stdout
    env = {**os.environ, "OPENAI_API_KEY": "sk-dummy"}
    built = subprocess.run(
        [python, "-c", AGENT], capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert built.returncode == 0, built.stderr[-2000:]
    local = subprocess.run(
        [python, "-m", "toolwire", "run", "hi"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (
        local.returncode == 2
        and "toolwire[local]" in local.stderr
        and local.stderr.count("\n") == 1
    )
