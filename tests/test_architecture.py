"""Imports point one way (ARCHITECTURE.md): a layer imports only the layers its row of the
package table names, and no module is only a second import path for another's names."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.sources import parsed

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "toolwire"

# The core: every layer may import it (errors.py imports nothing of toolwire; checks.py,
# messages.py (an Image's ImageError) and tooldef.py only errors.py; turn.py only
# messages.py).
CORE = {"errors", "checks", "messages", "turn", "tooldef"}
# For each layer, the toolwire layers it may import: the "may import" column of
# ARCHITECTURE.md's package table, which test_the_package_table_says_the_same reads.
MAY_IMPORT = {
    "errors": set(),
    "checks": {"errors"},
    "messages": {"errors"},
    "turn": {"messages"},
    "tooldef": {"errors"},
    "wire": CORE,
    "formats": CORE | {"wire"},
    "history": CORE | {"wire"},
    "prompts": CORE | {"formats", "history"},
    "tools": CORE,
    # context/ and policies/ are pure, side by side: neither imports the other.
    "context": CORE | {"tools", "history"},
    "policies": CORE | {"tools", "history", "wire"},
    # output/ (structured output) sits beside them, below run/, which calls its hooks.
    "output": CORE | {"wire", "tools"},
    "run": CORE | {"wire", "tools", "history", "context", "policies", "output"},
    "observe": CORE | {"wire", "tools", "history", "context", "policies", "run"},
    "integrations": CORE | {"tools", "history", "run"},
    "safety": CORE | {"tools", "history", "run"},
    "providers": CORE
    | {"wire", "formats", "history", "prompts", "tools", "context", "policies", "run"},
    # serve/ is at the edge like providers/: the proxy drives a provider's transport and
    # decoders, renders raw completions prompts and writes the audit log.
    "serve": CORE
    | {"wire", "formats", "history", "prompts", "tools", "run", "providers", "observe"},
    "testing": CORE | {"wire", "history", "run", "observe"},
    "demo": CORE | {"tools", "policies", "safety"},
}
_LAYERS = {
    p.name.removesuffix(".py")
    for p in PACKAGE.iterdir()
    if not p.name.startswith("_") and (p.is_dir() or p.suffix == ".py")
}
MAY_IMPORT["cli"] = _LAYERS - {"cli"}
# resolve.py is the composition root, above everything (run/_upward.py reaches it).
MAY_IMPORT["resolve"] = _LAYERS - {"resolve"}
FORBIDDEN = {layer: _LAYERS - allowed - {layer} for layer, allowed in MAY_IMPORT.items()}
# The one upward import, done lazily inside a function: run/_upward.py reaches the
# composition root, which turns a model spec string, a log path and instrument=True into
# a provider's model and the observers' hooks.
ALLOWED = {("run/_upward.py", "toolwire.resolve")}
# Third-party modules that must stay out of the sans-I/O layers.
NO_IO = {"socket", "asyncio", "httpx", "anyio", "trio", "threading"}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def toolwire_imports(path: Path) -> set[tuple[str, str]]:
    """(first toolwire-relative component, full name) of every import in ``path``."""
    tree = parsed(path)
    package = ".".join(("toolwire", *path.relative_to(PACKAGE).with_suffix("").parts[:-1]))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
                names = [name] if node.module else [f"{name}.{a.name}" for a in node.names]
            else:
                names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            found.add((parts[1] if parts[0] == "toolwire" and len(parts) > 1 else "", name))
    return found


SOURCES = [p for p in PACKAGE.rglob("*.py") if "demo/project" not in p.as_posix()]


def test_every_layer_has_a_rule() -> None:
    assert set(MAY_IMPORT) == _LAYERS


def _table_rules() -> dict[str, set[str]]:
    """The "may import" column of ARCHITECTURE.md's package table, by layer."""
    text = (PACKAGE.parents[1] / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rules = {}
    for row in re.findall(r"^\| `([a-z_]+)(?:\.py|/)` \|.*\| ([^|]+) \|$", text, re.M):
        layer, column = row
        column = re.sub(r"\([^)]*\)", "", column).strip()  # remarks in parentheses
        names = set() if column == "—" else {n.strip() for n in column.split(",")}
        if "everything" in names:
            names = (names - {"everything"}) | (_LAYERS - {layer})
        if "core" in names:
            names = (names - {"core"}) | CORE
        rules[layer] = names
    return rules


def test_the_package_table_says_the_same() -> None:
    assert _table_rules() == MAY_IMPORT


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_one_way(path: Path) -> None:
    layer = layer_of(path)
    forbidden = FORBIDDEN.get(layer, set())
    rel = path.relative_to(PACKAGE).as_posix()
    bad = sorted(
        name
        for first, name in toolwire_imports(path)
        if first in forbidden and (rel, name) not in ALLOWED
    )
    assert not bad, f"{path.relative_to(PACKAGE)} ({layer}) imports {bad}"


# run/ knows no provider: of history/ and wire/ it reads only the neutral modules (the
# one-result check, the items a turn owes an answer, the event vocabulary and the one
# assembler), never a provider's request or stream shapes.
RUN_MAY_READ = {
    "toolwire.history.check",
    "toolwire.history.owed",
    "toolwire.wire.events",
    "toolwire.wire.assembler",
}


@pytest.mark.parametrize(
    "path", sorted((PACKAGE / "run").glob("*.py")), ids=lambda p: f"run/{p.name}"
)
def test_run_reads_no_provider_shapes(path: Path) -> None:
    shapes = sorted(
        name
        for first, name in toolwire_imports(path)
        if first in ("history", "wire") and name not in RUN_MAY_READ
    )
    assert not shapes, f"run/{path.name} imports provider shapes: {shapes}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "wire").glob("*.py")), ids=lambda p: p.name)
def test_wire_layer_is_sans_io(path: Path) -> None:
    imported = {name.split(".")[0] for _, name in toolwire_imports(path)}
    assert not imported & NO_IO, f"wire/{path.name} imports {imported & NO_IO}"


def _is_pure_reexport(tree: ast.Module) -> bool:
    """Whether a module only imports names and lists them (a docstring aside)."""
    body = tree.body[1:] if ast.get_docstring(tree) is not None else tree.body
    if not any(isinstance(node, ast.ImportFrom) and node.level for node in body):
        return False
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [
            "__all__"
        ]:
            continue
        return False
    return True


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_only_a_second_path(path: Path) -> None:
    # One import path per thing: a module that only re-exports another's names (a shim
    # kept for an old import path) is not wanted; a package's __init__ may gather its
    # modules' names, and loads lazily only where that keeps an import light or an
    # optional extra optional (never to dodge an import cycle).
    tree = parsed(path)
    rel = path.relative_to(PACKAGE).as_posix()
    if path.name != "__init__.py":
        assert not _is_pure_reexport(tree), f"{rel} only re-exports names from elsewhere"
    elif rel not in LAZY_PACKAGES:
        assert "__getattr__" not in _defined(tree), f"{rel} loads names lazily (a second path)"


# The packages whose __init__ loads its names on first use (toolwire/_lazy.py): the
# top level and providers/ keep `import toolwire` and the CLI's start light,
# integrations/ its extras optional, wire/ and history/ keep the agent's import from
# bringing every provider's codec and stream decoder, formats/ a hosted model's from
# bringing the parsers of open-weight formats, and safety/ a file tool's from bringing
# the sandbox.
LAZY_PACKAGES = {
    "__init__.py",
    "providers/__init__.py",
    "integrations/__init__.py",
    "wire/__init__.py",
    "history/__init__.py",
    "formats/__init__.py",
    "safety/__init__.py",
}


def _defined(tree: ast.Module) -> set[str]:
    """The names a module's top level defines by ``def`` or by assignment."""
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names
