"""The compiled build (hatch_build.py) covers the whole wire layer, and a test run can
be told which build it must be testing (scripts/test runs the suite against both)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import toolwire.wire

ROOT = Path(__file__).resolve().parents[1]


def compiled_modules() -> set[str]:
    text = (ROOT / "hatch_build.py").read_text(encoding="utf-8")
    return set(re.findall(r'"toolwire/wire/(\w+)\.py"', text))


def test_every_wire_module_is_in_the_compiled_build() -> None:
    # A new wire module left out of the list would silently run interpreted, and be
    # imported from the compiled modules as a Python module: a slow, untested mix.
    wire = {p.stem for p in (ROOT / "src" / "toolwire" / "wire").glob("*.py")}
    assert compiled_modules() == wire - {"__init__"}


@pytest.mark.skipif(
    "TOOLWIRE_EXPECT_COMPILED" not in os.environ, reason="the run did not say which build"
)
def test_the_build_under_test_is_the_one_expected() -> None:
    expected = os.environ["TOOLWIRE_EXPECT_COMPILED"] == "1"
    assert toolwire.wire.COMPILED is expected
    for name in sorted(compiled_modules()):
        module = importlib.import_module(f"toolwire.wire.{name}")
        assert (module.__file__ or "").endswith(".py") is not expected, module.__file__


@pytest.mark.skipif(
    os.environ.get("TOOLWIRE_EXPECT_INSTALLED") != "1", reason="not a test of an installed wheel"
)
def test_the_installed_wheel_is_what_runs() -> None:
    # scripts/build-wheel and cibuildwheel test the installed wheel: a checkout's source
    # on the path would be tested in its place, and the run would prove nothing.
    import toolwire

    where = Path(toolwire.__file__).resolve()
    assert ROOT not in where.parents, where


class LinesDecoder(toolwire.wire.StreamDecoder):
    """A decoder of one's own: each item is a line of answer text; None ends the turn."""

    provider = "lines"

    def feed(self, item: object) -> list[toolwire.wire.Event]:
        def handle(data: dict[str, object]) -> None:
            if data["line"] is None:
                self._assembler.finish("stop")
                self._ended = True
            else:
                self._assembler.text(str(data["line"]))

        return self._decode_with(handle, item)


def test_a_decoder_of_ones_own_subclasses_stream_decoder() -> None:
    # Compiled classes cannot be subclassed from Python unless they say so; this one does.
    decoder = LinesDecoder()
    assert decoder.feed({"line": "hello "}) == [toolwire.wire.TextDelta("hello ")]
    decoder.feed({"line": "world"})
    decoder.feed({"line": None})
    assert decoder.close().text == "hello world"


def test_the_wire_layer_imports_without_mypy_extensions() -> None:
    # mypy_extensions comes with mypy, not with toolwire: stream.py must not need it.
    code = (
        "import sys; sys.modules['mypy_extensions'] = None\n"
        "import toolwire.wire as w\n"
        "class D(w.StreamDecoder):\n"
        "    def feed(self, item): return []\n"
        "print(type(D()).__name__)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "D"


def _hatch_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hatch_build", ROOT / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_c_optimisation_level_is_3_unless_the_build_asks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("hatchling")
    hatch_build = _hatch_build()
    monkeypatch.delenv("TOOLWIRE_COMPILE_OPT", raising=False)
    assert hatch_build.c_opt_level() == "3"  # release wheels
    monkeypatch.setenv("TOOLWIRE_COMPILE_OPT", "1")  # the test suite's build
    assert hatch_build.c_opt_level() == "1"
    monkeypatch.setenv("TOOLWIRE_COMPILE_OPT", "-O1")
    with pytest.raises(ValueError, match="choose 0, 1, 2 or 3"):
        hatch_build.c_opt_level()


def test_the_mypyc_build_analyses_only_what_the_compiled_modules_reach() -> None:
    pytest.importorskip("hatchling")
    hatch_build = _hatch_build()
    analysed = set(hatch_build.analysed_modules(ROOT / "src", hatch_build.COMPILED))
    compiled = {path.removesuffix(".py").replace("/", ".") for path in hatch_build.COMPILED}
    # The compiled modules, the message and error classes they build, and mypyc's
    # attributes; not the rest of the package nor its extras, which only the TYPE_CHECKING
    # imports of toolwire/__init__.py reach (~3,800 modules).
    assert compiled | {"toolwire.messages", "toolwire.errors", "mypy_extensions"} <= analysed
    assert not analysed & {"toolwire", "toolwire.run", "pydantic", "ray", "mcp", "httpx"}


def test_the_analysis_follows_imports_anywhere_and_refuses_other_packages(
    tmp_path: Path,
) -> None:
    pytest.importorskip("hatchling")
    hatch_build = _hatch_build()
    package = tmp_path / "toolwire"
    (package / "wire").mkdir(parents=True)
    files = {
        "__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .run import A\n",
        "wire/__init__.py": "",
        "wire/a.py": "import json\nfrom ..messages import Message\n",
        "messages.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .errors import E\n",
        "errors.py": "import os.path\n",
        "run.py": "import pydantic\n",
    }
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    assert hatch_build.analysed_modules(tmp_path, ["toolwire/wire/a.py"]) == [
        "json",
        "os",
        "toolwire.errors",
        "toolwire.messages",
        "toolwire.wire.a",
        "typing",
    ]
    # A package outside the standard library would be analysed without what it imports
    # in turn (Any, unnoticed): refused, here reached through the package's __init__.py.
    (package / "wire" / "a.py").write_text("from .. import A\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"toolwire/run\.py imports pydantic"):
        hatch_build.analysed_modules(tmp_path, ["toolwire/wire/a.py"])


def test_the_mypyc_builds_config_is_the_projects_plus_the_analysed_modules() -> None:
    pytest.importorskip("hatchling")
    tomllib = pytest.importorskip("tomllib")  # 3.11+; the build runs on the main Python
    hatch_build = _hatch_build()
    config = tomllib.loads(hatch_build.build_config(ROOT, hatch_build.COMPILED))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    *overrides, added = config["tool"]["mypy"].pop("overrides")
    assert config["tool"]["mypy"] == {
        k: v for k, v in project["tool"]["mypy"].items() if k != "overrides"
    }
    assert overrides == project["tool"]["mypy"]["overrides"]
    assert added["follow_imports"] == "normal"
    assert "toolwire.messages" in added["module"] and "mypy_extensions.*" in added["module"]
