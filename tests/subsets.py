"""The narrower test runs of scripts/test's later stages, chosen from the code, not a list.

The whole suite runs once, on the main Python against the pure-Python build. Two later
stages run only what they can change (``pytest --subset=NAME``, tests/conftest.py):

* ``compiled`` — against the mypyc build (hatch_build.py's ``COMPILED`` modules). What a
  compiled module changes is how its own objects and functions behave at their edges:
  native classes (no ``__dict__``, a strict ``__init__``, so ``copy``/``pickle`` differ),
  declared types checked at run time (a malformed value that passed as ``Any`` in Python
  raises ``TypeError``). Those edges are reached by the tests that name a compiled module
  — build its events, feed its parsers, copy or inspect what it returns — so a test file
  runs when it imports a compiled module or its package itself. Not through a test
  helper or a ``conftest.py``: a file that only drives the agent, the audit log or a
  format parser through a helper that scripts a stream runs the same compiled code by
  the same paths as the ``run/``, ``formats/`` and ``providers/`` tests that name the
  wire layer (and run here), and adds what the compiled build cannot change — SQLite,
  subprocesses, a browser (the audit log's tests: half this stage's time, and nothing
  of theirs is compiled). Within the subset, the Hypothesis properties of the files that
  test code that is not compiled (a format parser, a history codec: they reach the
  compiled modules through it) run at the ``fast`` profile's count, the same count the
  other Pythons run; the files that test the compiled code itself (tests/wire/,
  tests/test_turn_classes.py: ``is_a_test_of_compiled_code``) keep their full counts, since
  what mypyc changes there is the data handling their examples vary, and so do the
  history codecs' fuzz properties, which alone take a few compiled paths
  (tests/conftest.py's ``FULL_WHEN_COMPILED``).
* ``versions`` — on the ends of the declared range, 3.10 and 3.13 (the main run is on
  3.11; what changed in 3.12 is still there in 3.13 or was removed there, which fails
  louder). Pure data handling (``json``, ``re``, ``str``) does not change between 3.10
  and 3.13, and mypy already checks every line against 3.10's standard library
  (``python_version`` in pyproject.toml); what does change is the run-time behaviour of
  a few standard modules. A test file runs when:

  - it, a helper or a conftest over it imports one of ``VERSION_SENSITIVE`` itself —
    event loops and their executors, cancellation, threads, SQLite, subprocesses and
    signals, sockets, signatures read at run time, ``tomllib``: the test drives that
    runtime directly. The agent loop, which every ``run/`` test goes through, is such a
    runtime user, so those tests run; a test that only calls ``run_sync`` goes through
    the same loop code by the same paths and does not add a version difference;
  - or a toolwire module it names uses one of ``SENSITIVE_THROUGH``, whose differences
    show in what such a test checks without the test touching the module: argparse's
    help and error text, the signatures and type hints a tool's schema is read from
    (``get_type_hints`` changed in 3.11), the SQLite library behind the audit log,
    subprocesses and signals behind the sandbox and MCP's stdio servers;
  - or it is ``tests/test_imports.py``, which imports every module of the package;

  and it is not a test of the benchmark harness (tests/bench/): bench/ runs in the main
  venv only, where its peers are installed.

  Not ``importlib`` (tests use it to look for optional packages) nor ``pickle`` (its
  protocols are the same on every declared version): with them, and with "reaches
  asyncio through any toolwire module", the subset was 2,452 of 4,471 tests — the
  format parsers and the error classes among them.

* ``ray`` — the files whose tests carry the ``ray`` marker, for the Ray stage
  (``-m ray``, one Ray instance in one process): a file that applies the marker
  (``pytest.mark.ray``), and the snippets' test when a page's ``mark`` directive names
  it (tests/docs/snippets.py). Only so that stage does not import and collect the whole
  suite (14 s of CPU) to keep 31 tests; ``-m ray`` still picks the tests in them.

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

SUBSETS = ("compiled", "versions", "ray")

SNIPPETS = TESTS / "docs" / "test_snippets.py"
"""The test of the documentation's snippets, whose marks come from the pages."""

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
        "tomllib",
    }
)
"""Standard (and anyio's) modules whose run-time behaviour differs across 3.10-3.13:
a test file that imports one drives it."""

SENSITIVE_THROUGH = frozenset(
    {"argparse", "inspect", "sqlite3", "subprocess", "signal", "multiprocessing"}
)
"""Those whose differences show through a toolwire module that uses them (help text, tool
schemas from signatures and type hints read at run time, the audit log's SQLite, the
sandbox's and MCP's child processes)."""

EVERY_MODULE = TESTS / "test_imports.py"
"""The file that imports every module of the package: on every version."""

MAIN_PYTHON_ONLY = TESTS / "bench"
"""The benchmark harness's tests: bench/ runs in the main venv only (its peers are
installed there, bench/README.md), so no other version runs what they check; they were
~11 s of CPU on each other version (the Anthropic SDK's contestant alone 4-5 s)."""


@cache
def compiled_modules() -> frozenset[str]:
    """The module names mypyc compiles: hatch_build.py's ``COMPILED`` list.

    Read once per process: the compiled stage asks for every test it collects (tests/
    conftest.py caps their counts), and parsing hatch_build.py each time (~4.5 ms) was
    10 of its 16 s of collection CPU per process.
    """
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
    """Every module ``path`` imports, anywhere in it; ``from m import n`` gives m and m.n.

    hatch_build.py's ``_imports`` walks a file the same way (it says why both exist)."""
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


def is_a_test_of_compiled_code(path: Path) -> bool:
    """True if the test file ``path`` is a test of a compiled module's own code.

    A file in the folder of a package that holds a compiled module (tests/wire/ for
    toolwire.wire), or, at the top of tests/, one named for a compiled module
    (tests/test_turn_classes.py for toolwire.turn). The other files of the ``compiled``
    subset test code that is not compiled (a format parser, a history codec, a backoff)
    and reach the compiled modules through it: in that stage their properties run at
    the ``fast`` profile's count (tests/conftest.py, which keeps a measured few at full
    counts), the files that test the compiled code itself at their full counts.
    """
    if not path.is_relative_to(TESTS):
        return True  # not a file of this suite (a doctest, say): its counts are left alone
    compiled = compiled_modules()
    parts = path.relative_to(TESTS).parts
    if len(parts) > 1:
        return names_compiled([f"toolwire.{parts[0]}"], compiled)
    words = path.stem.removeprefix("test_").split("_")
    return any(f"toolwire.{'_'.join(words[:i])}" in compiled for i in range(1, len(words) + 1))


def uses_version_sensitive(modules: Iterable[str], sensitive: frozenset[str]) -> bool:
    """True if any of ``modules`` is, or is inside, one of the standard modules ``sensitive``."""
    return any(m.split(".")[0] in sensitive for m in modules)


def one_step(modules: Iterable[str]) -> set[str]:
    """``modules`` and the imports of the toolwire modules among them (not ``toolwire``)."""
    found = set(modules)
    for name in modules:
        if name.startswith("toolwire.") and (path := module_path(name)) is not None:
            found |= imports(path)
    return found


def marks_ray(path: Path) -> bool:
    """True if the test file ``path`` applies the ``ray`` marker (``pytest.mark.ray``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.Attribute)
        and node.attr == "ray"
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "mark"
        for node in ast.walk(tree)
    )


def a_page_marks_ray() -> bool:
    """True if a documentation page's ``mark`` directive gives its snippets ``ray``."""
    from tests.docs.snippets import blocks, pages

    return any(
        "ray" in args
        for page in pages()
        for block in blocks(page)
        for args in block.options("mark")
    )


@cache
def in_subset(subset: str, path: Path) -> bool:
    """True if the test file ``path`` belongs to ``subset`` (one of ``SUBSETS``)."""
    if subset == "ray":
        return marks_ray(path) or (path == SNIPPETS and a_page_marks_ray())
    if subset == "compiled":
        return names_compiled(imports(path), compiled_modules())
    if subset == "versions":
        if path.is_relative_to(MAIN_PYTHON_ONLY):
            return False
        modules = set().union(*(imports(p) for p in closure(path)))
        return (
            path == EVERY_MODULE
            or uses_version_sensitive(modules, VERSION_SENSITIVE)
            or uses_version_sensitive(one_step(modules), SENSITIVE_THROUGH)
        )
    raise ValueError(f"unknown test subset {subset!r}: choose one of {', '.join(SUBSETS)}")
