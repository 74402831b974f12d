"""The narrower test runs of scripts/test's later stages, chosen from the code, not a list.

The whole suite runs once, on the main Python against the pure-Python build. Two later
stages run only what they can change (``pytest --subset=NAME``, tests/conftest.py):

* ``compiled`` — against the mypyc build (hatch_build.py's ``COMPILED`` modules). What a
  compiled module changes is how its own objects and functions behave at their edges:
  native classes (no ``__dict__``, a strict ``__init__``, so ``copy``/``pickle`` differ),
  declared types checked at run time (a malformed value that passed as ``Any`` in Python
  raises ``TypeError``). Those edges are reached by the tests that name a compiled module
  — build its events, feed its parsers, copy or inspect what it returns — so a test file
  runs when it, a test helper it imports, or a ``conftest.py`` over it (below tests/)
  imports a compiled module or its package. Tests that only drive the public API reach the same
  code through the paths the selected ``run/`` and ``providers/`` tests drive.
* ``versions`` — on the other declared CPython versions. Pure data handling (``json``,
  ``re``, ``str``) does not change between 3.10 and 3.13, and mypy already checks every
  line against 3.10's standard library (``python_version`` in pyproject.toml); what does
  change is the runtime of the standard modules in ``VERSION_SENSITIVE``: event loops
  and their executors, cancellation, threads, SQLite, subprocesses, signatures and
  annotations read at run time, the import machinery and metadata, argparse's output.
  A test file runs when it, a helper or conftest over it, or a toolwire module any of
  them names (one step: that module's own imports) imports one of them;
  ``tests/test_imports.py`` imports every module of the package on each version.

Only the standard modules listed here are kept by hand: they are facts about Python, not
about this tree, so a new test or module is placed by what it imports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SOURCE = ROOT / "src"

SUBSETS = ("compiled", "versions")

VERSION_SENSITIVE = frozenset(
    {
        "asyncio",
        "anyio",
        "concurrent",
        "threading",
        "sqlite3",
        "subprocess",
        "signal",
        "multiprocessing",
        "inspect",
        "selectors",
        "socket",
        "pickle",
        "tomllib",
        "argparse",
        "importlib",
    }
)
"""Standard (and anyio's) modules whose run-time behaviour differs across 3.10-3.13."""


def compiled_modules() -> frozenset[str]:
    """The module names mypyc compiles: hatch_build.py's ``COMPILED`` list."""
    tree = ast.parse((ROOT / "hatch_build.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "COMPILED" for t in node.targets
        ):
            paths = ast.literal_eval(node.value)
            return frozenset(p.removesuffix(".py").replace("/", ".") for p in paths)
    raise LookupError("hatch_build.py has no COMPILED list")


def module_name(path: Path) -> str:
    """The dotted name of a file under tests/ or src/."""
    base = SOURCE if path.is_relative_to(SOURCE) else ROOT
    parts = path.relative_to(base).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_path(name: str) -> Path | None:
    """The file of a toolwire or tests module, if it is one."""
    base = SOURCE if name.split(".", maxsplit=1)[0] == "toolwire" else ROOT
    stem = base.joinpath(*name.split("."))
    for path in (stem.with_suffix(".py"), stem / "__init__.py"):
        if path.is_file():
            return path
    return None


@cache
def imports(path: Path) -> frozenset[str]:
    """Every module ``path`` imports, anywhere in it; ``from m import n`` gives m and m.n."""
    package = module_name(path)
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
    return frozenset(found)


def closure(path: Path) -> set[Path]:
    """A test file, the ``conftest.py`` files over it, and the test helpers they import.

    Not tests/conftest.py: it is the same for every test (the suite's harness), so it
    says nothing about one file's reach.
    """
    todo = [path, *(d / "conftest.py" for d in path.parents if d.is_relative_to(TESTS))]
    todo.remove(TESTS / "conftest.py")
    seen: set[Path] = set()
    while todo:
        current = todo.pop()
        if current in seen or not current.is_file():
            continue
        seen.add(current)
        for name in imports(current):
            if name.split(".")[0] == "tests" and (helper := module_path(name)) is not None:
                todo.append(helper)
    return seen


def names_compiled(modules: Iterable[str], compiled: frozenset[str]) -> bool:
    """True if any of ``modules`` is a compiled module or a package under toolwire holding one."""
    packages = {c.rpartition(".")[0] for c in compiled} - {"toolwire"}
    return any(m in compiled or m in packages for m in modules)


def uses_version_sensitive(modules: Iterable[str]) -> bool:
    """True if any of ``modules`` is, or is inside, a version-sensitive standard module."""
    return any(m.split(".")[0] in VERSION_SENSITIVE for m in modules)


def one_step(modules: Iterable[str]) -> set[str]:
    """``modules`` and the imports of the toolwire modules among them (not ``toolwire``)."""
    found = set(modules)
    for name in modules:
        if name.startswith("toolwire.") and (path := module_path(name)) is not None:
            found |= imports(path)
    return found


@cache
def in_subset(subset: str, path: Path) -> bool:
    """True if the test file ``path`` belongs to ``subset`` (one of ``SUBSETS``)."""
    modules = set().union(*(imports(p) for p in closure(path)))
    if subset == "compiled":
        return names_compiled(modules, compiled_modules())
    if subset == "versions":
        return uses_version_sensitive(one_step(modules))
    raise ValueError(f"unknown test subset {subset!r}: choose one of {', '.join(SUBSETS)}")
