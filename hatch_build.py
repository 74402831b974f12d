"""Wheel build hook: compile the wire layer with mypyc when ``TOOLWIRE_COMPILE=1``.

The wire layer (``src/toolwire/wire``) is the per-fragment hot path of every streamed
turn. It is ordinary, strictly typed Python; mypyc turns the same source into a C
extension that runs it about twice as fast (bench/README.md has the numbers). Release
wheels are built with ``TOOLWIRE_COMPILE=1``; a plain or editable install stays pure
Python, so a checkout never imports a stale compiled module in place of edited source.

The extension is built in a temporary directory, never next to the sources, and added
to the wheel beside the ``.py`` files it shadows (an extension module wins over a source
file of the same name at import).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# The modules on the hot path, compiled together (they call each other natively).
# turn.py: the per-call and per-turn classes the wire layer builds (ToolRequest, Turn,
# Notice), native classes with a compiled constructor there (see its comment).
COMPILED = [
    "toolwire/turn.py",
    "toolwire/wire/events.py",
    "toolwire/wire/jsonscan.py",
    "toolwire/wire/assembler.py",
    "toolwire/wire/sse.py",
    "toolwire/wire/usage.py",
    "toolwire/wire/fields.py",
    "toolwire/wire/stream.py",
    "toolwire/wire/openai_chat.py",
    "toolwire/wire/openai_chat_body.py",
    "toolwire/wire/content_calls.py",
    "toolwire/wire/openai_responses.py",
    "toolwire/wire/openai_responses_body.py",
    "toolwire/wire/anthropic.py",
    "toolwire/wire/anthropic_body.py",
]

# mypyc type-checks the compiled modules and, by default, every module they reach: through
# the package's __init__.py (its TYPE_CHECKING imports name the whole package) that was
# ray, mcp, opentelemetry, pydantic... ~3,800 modules, ~117 s of the build's CPU. The C
# it writes depends only on the types the compiled modules see: theirs and those of the
# modules they import, transitively (`analysed_modules`: 17 of toolwire's, and the
# standard library's stubs, which mypy always reads). The build's mypy configuration is
# the project's, with every other module skipped (--follow-imports=skip: its names are
# Any to the analysis, and only toolwire/__init__.py names them). Every file mypyc
# writes (the C, its headers, the IR listing) was compared byte for byte with the full
# analysis's: identical (docs/contributing.md has the numbers).
_SKIP_THE_REST = """

# Added by hatch_build.py for the mypyc build only: the modules whose types the compiled
# ones use are analysed; every other module is skipped (--follow-imports=skip).
[[tool.mypy.overrides]]
module = {modules}
follow_imports = "normal"
"""

# Run in a subprocess with the sources as working directory: mypyc names modules by
# their path, and setuptools keeps global state that should not leak into hatchling.
# The subprocess ends with os._exit once the extensions are written, as the mypy command
# does (its fast_exit): an ordinary exit frees mypy's heap object by object, CPU that
# builds nothing (~65 s for the 1.8 GB heap of the whole package's analysis). A failed
# build still exits through setup()'s SystemExit, with its status.
_BUILD = """
import os
import sys
from setuptools import setup
from mypyc.build import mypycify
config, out, tmp, opt_level, *paths = sys.argv[1:]
setup(
    name="toolwire-wire",
    ext_modules=mypycify(
        ["--config-file", config, "--follow-imports=skip", *paths],
        opt_level=opt_level,
        target_dir=tmp,
    ),
    script_args=["build_ext", "--build-lib", out, "--build-temp", tmp],
)
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
"""


def compile_requested() -> bool:
    """True when this build should compile the wire layer."""
    return os.environ.get("TOOLWIRE_COMPILE", "") == "1"


def c_opt_level() -> str:
    """The C compiler's optimisation level (``-O``): 3, unless ``TOOLWIRE_COMPILE_OPT`` says.

    Release wheels are built at 3. The test suite's build (scripts/build-compiled under
    scripts/test) asks for 1: the C that mypyc generates is the same at every level, and
    gcc's levels change only how fast the machine code runs, not what it does, for C that
    is well defined (mypyc's is; -Werror keeps gcc's warnings fatal at each level). Level
    0 also turns on the C asserts (-UNDEBUG), which is a different build, so 1 is the
    lowest the tests use.
    """
    level = os.environ.get("TOOLWIRE_COMPILE_OPT", "3")
    if level not in ("0", "1", "2", "3"):
        raise ValueError(f"TOOLWIRE_COMPILE_OPT={level!r}: choose 0, 1, 2 or 3")
    return level


# Outside toolwire, what the analysed modules may import: the standard library (stubs,
# which mypy reads whatever follow_imports says) and mypyc's attributes (mypy_extensions,
# standard library only itself). Another package would be analysed, but not the packages
# it imports in turn: its types could become Any unnoticed, so it is refused.
_OUTSIDE = frozenset(sys.stdlib_module_names) | {"mypy_extensions"}


def analysed_modules(src: Path, compiled: list[str]) -> list[str]:
    """The modules the compiled ones import (anywhere in their files), transitively.

    Within toolwire, followed module by module (the package's ``__init__.py`` only if a
    compiled module imports from it: then its imports, the whole package); outside it,
    the top-level module, which must be in ``_OUTSIDE``.
    """
    todo = [src / path for path in compiled]
    seen: set[Path] = set()
    found: set[str] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _imports(src, path):
            top = name.split(".")[0]
            if top not in _OUTSIDE | {"toolwire"}:
                raise ValueError(
                    f"{path.relative_to(src)} imports {name}: the mypyc build analyses "
                    "toolwire's modules and the standard library only (hatch_build.py)"
                )
            if top != "toolwire":
                found.add(top)
            elif (module := _module_file(src, name)) is not None:
                todo.append(module)
    found |= {_module_name(src, path) for path in seen}
    return sorted(found - {"__future__"})


def _module_name(src: Path, path: Path) -> str:
    parts = path.relative_to(src).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_file(src: Path, name: str) -> Path | None:
    stem = src.joinpath(*name.split("."))
    for path in (stem.with_suffix(".py"), stem / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(src: Path, path: Path) -> set[str]:
    """Every module ``path`` imports; ``from m import n`` gives m and m.n (n may be one).

    tests/subsets.py's ``imports`` walks a file the same way. Kept apart: this hook runs
    in a build environment that has no tests/, and the suite runs where hatchling is
    not installed (cibuildwheel's test environment), so neither can import the other.
    """
    package = _module_name(src, path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def build_config(root: Path, compiled: list[str]) -> str:
    """The build's mypy configuration: pyproject.toml's, plus the analysed modules' override."""
    modules = analysed_modules(root / "src", compiled)
    patterns = [m if m.startswith("toolwire") else f"{m}.*" for m in modules]
    listed = "[" + ", ".join(f'"{p}"' for p in patterns) + "]"
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    return text + _SKIP_THE_REST.format(modules=listed)


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Adds the mypyc-compiled wire layer to a (non-editable) wheel on request."""

    def dependencies(self) -> list[str]:
        if not compile_requested():
            return []
        # mypyc type-checks what it compiles, so the runtime dependencies' types too.
        return ["mypy>=1.15", "setuptools>=70", *self.metadata.core.dependencies]

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable" or not compile_requested():
            return
        root = Path(self.root)
        src = root / "src"
        # Removed in finalize(): hatchling reads the extensions after this returns.
        self._work = tempfile.TemporaryDirectory(prefix="toolwire-mypyc-")
        out, tmp = Path(self._work.name, "lib"), Path(self._work.name, "tmp")
        config = Path(self._work.name, "mypy.toml")
        config.write_text(build_config(root, COMPILED), encoding="utf-8")
        subprocess.run(
            [
                sys.executable,
                "-c",
                _BUILD,
                str(config),
                str(out),
                str(tmp),
                c_opt_level(),
                *COMPILED,
            ],
            cwd=src,
            check=True,
        )
        built = sorted(p for p in out.rglob("*") if p.is_file())
        if not built:
            raise RuntimeError("mypyc produced no extension modules")
        for path in built:
            build_data["force_include"][str(path)] = str(path.relative_to(out))
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        work = getattr(self, "_work", None)
        if work is not None:
            work.cleanup()
