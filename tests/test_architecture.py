"""Imports point one way (ARCHITECTURE.md): a layer never imports a layer above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "toolwire"

# For each layer, the toolwire modules it must not import.
FORBIDDEN = {
    "errors": {
        "messages",
        "turn",
        "wire",
        "formats",
        "history",
        "tools",
        "run",
        "providers",
        "cli",
        "demo",
    },
    "messages": {"turn", "wire", "formats", "history", "tools", "run", "providers", "cli", "demo"},
    "turn": {"wire", "formats", "history", "tools", "run", "providers", "cli", "demo"},
    "wire": {"formats", "history", "tools", "run", "providers", "cli", "demo"},
    "formats": {"history", "tools", "run", "providers", "cli", "demo"},
    "history": {"tools", "run", "providers", "cli", "demo"},
    "tools": {"wire", "formats", "history", "run", "providers", "cli", "demo"},
    "run": {"providers", "cli", "demo", "safety", "observe", "integrations"},
    "safety": {"providers", "cli", "demo", "observe"},
    "observe": {"providers", "cli", "demo"},
    "integrations": {"providers", "cli", "demo"},
}
# context/ is pure: it reads core, tools, history and wire, and nothing above it.
FORBIDDEN["context"] = {
    "formats",
    "run",
    "providers",
    "cli",
    "demo",
    "observe",
    "safety",
    "integrations",
}
for _lower in ("errors", "messages", "turn", "wire", "formats", "history", "tools"):
    FORBIDDEN[_lower] = FORBIDDEN[_lower] | {"context"}
# checks.py (the shared argument checks) sits on errors.py and under everything else: it
# imports only errors, which imports nothing of toolwire.
_LAYERS = {
    p.name.removesuffix(".py")
    for p in PACKAGE.iterdir()
    if not p.name.startswith("_") and (p.is_dir() or p.suffix == ".py")
}
FORBIDDEN["checks"] = _LAYERS - {"errors", "checks"}
FORBIDDEN["errors"] = FORBIDDEN["errors"] | {"checks"}
# policies/ is pure too, beside context/: the run's rules (retry budgets, diagnostics, loop
# detection, usage limits). run/ imports it; it imports core, tools, history and wire.
FORBIDDEN["policies"] = FORBIDDEN["context"] | {"context"}
for _lower in ("errors", "messages", "turn", "wire", "formats", "history", "tools", "context"):
    FORBIDDEN[_lower] = FORBIDDEN[_lower] | {"policies"}
# tooldef.py (ToolDef, ToolChoice) sits beside messages at the bottom: errors only.
FORBIDDEN["tooldef"] = _LAYERS - {"errors", "tooldef"}
FORBIDDEN["errors"] = FORBIDDEN["errors"] | {"tooldef"}
# resolve.py is the composition root, above everything: nothing imports it but run/'s
# one lazy way up (run/_upward.py), which turns a model spec string, a log path and
# instrument=True into a provider's model and the observers' hooks.
for _layer in _LAYERS - {"resolve"}:
    FORBIDDEN[_layer] = FORBIDDEN.get(_layer, set()) | {"resolve"}
ALLOWED = {("run/_upward.py", "toolwire.resolve")}
# The names that moved from tools/ to policies/ stay importable from their old places;
# tools/ loads them on first use (tools/__init__.py: __getattr__), and names them here
# for type checkers only (under TYPE_CHECKING) and in the old modules' shims.
ALLOWED |= {
    ("tools/__init__.py", "toolwire.policies.budgets"),
    ("tools/__init__.py", "toolwire.policies.diagnostics"),
    ("tools/diagnostics.py", "toolwire.policies.diagnostics"),
    ("tools/feedback.py", "toolwire.policies.budgets"),
}
# Third-party modules that must stay out of the sans-I/O layers.
NO_IO = {"socket", "asyncio", "httpx", "anyio", "trio", "threading"}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def toolwire_imports(path: Path) -> set[tuple[str, str]]:
    """(first toolwire-relative component, full name) of every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
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
