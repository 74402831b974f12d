"""errors.py is the one place for errors: every class there, one name pattern, the right fault.

The table below is the review of whose fault each error is; a new error class that is
not in it fails ``test_every_error_has_a_reviewed_fault``, so its fault gets decided.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import types
from pathlib import Path

import pytest

import toolwire
from tests.sources import parsed
from toolwire import errors
from toolwire.errors import CallerError, ModelDownloadError, ToolwireError

PACKAGE = Path(toolwire.__file__).resolve().parent

# class -> the fault it reports (see errors.py's docstring for the four faults).
FAULTS = {
    "ToolwireError": "caller",
    "CallerError": "caller",
    "DecoderStateError": "caller",
    "HistoryError": "caller",
    "ProviderError": "provider",
    "ProtocolError": "provider",
    "TurnError": "provider",
    "ProviderAPIError": "provider",
    "ProviderStreamError": "provider",
    "ModelOutputError": "model",
    "RepairError": "model",
    "ToolExecutionError": "tool",
    "SandboxUnavailableError": "caller",  # the host lacks what the caller chose to need
    "PathNotAllowedError": "model",  # the model asked for a path outside the roots
    "AuditLogError": "caller",
    "RunNotFoundError": "caller",
    "RunNotResumableError": "caller",
    "RunClaimedError": "caller",
    "MCPServerError": "tool",
    "MCPToolError": "tool",
    "BackendError": "caller",
    "ToolMappingError": "caller",
    "MissingAPIKeyError": "caller",
    "ProviderConnectionError": "provider",
    "ProviderTimeoutError": "provider",
    "StreamInterruptedError": "provider",
    "UnknownModelSpecError": "caller",
    "EmbeddedModelHashError": "provider",  # the model's packages ship other bytes
    "ModelDownloadError": "provider",  # the network or the model hub failed
    "ReplayMismatchError": "caller",  # the caller's agent changed since the logged run
    "ReplayedToolError": "tool",
    "FormatError": "model",
    "SchemaExtraMissingError": "caller",
    "ToolDefinitionError": "caller",
    "BudgetExceededError": "model",
    "ToolBudgetExceededError": "tool",
    "PartialJSONError": "model",
    "UsageLimitExceededError": "model",  # the caller's guard, used up by the model's run
    "ResultError": "tool",
    "ImageError": "tool",
    "LoopDetectedError": "model",
    "MaxRoundsExceededError": "model",
}

# Private exceptions that are control flow inside one module, never raised to a caller.
CONTROL_FLOW = {
    ("providers/http.py", "_Retry"),
    ("formats/gemma.py", "_Need"),
    ("tools/repair.py", "_Refused"),
}


def error_classes() -> dict[str, type[ToolwireError]]:
    """The classes errors.py defines (aliases are listed under their class's own name)."""
    found = {}
    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type) and issubclass(value, ToolwireError):
            found[value.__name__] = value
    return found


def test_every_error_has_a_reviewed_fault() -> None:
    assert sorted(error_classes()) == sorted(FAULTS)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault(name: str) -> None:
    cls = getattr(errors, name)
    assert cls.fault == FAULTS[name]
    # A class's family says the same as its fault, except where the table says why not:
    # the tool's share of a spent budget is still a BudgetExceededError.
    family = {
        "caller": errors.CallerError,
        "provider": errors.ProviderError,
        "model": errors.ModelOutputError,
        "tool": errors.ToolExecutionError,
    }[cls.fault]
    if name not in {"ToolwireError", "ToolBudgetExceededError"}:
        assert issubclass(cls, family), f"{name} reports {cls.fault} but is no {family.__name__}"


def test_names_follow_one_pattern() -> None:
    for name in error_classes():
        assert name.endswith("Error"), name


def test_every_error_class_has_one_name() -> None:
    # No aliases: each public name in errors.py is the class's own name, defined there.
    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type):
            assert value.__name__ == name, f"{name} is an alias of {value.__name__}"
            assert value.__module__ == "toolwire.errors", name


def _modules() -> list[str]:
    """Every importable module of the package (the optional extras' too)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        if ("demo" in rel.parts and "project" in rel.parts) or rel.name == "__main__":
            continue
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        names.append(".".join(parts))
    return names


def _imports_of(tree: ast.Module) -> set[str]:
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }


def _used_names(tree: ast.Module) -> set[str]:
    """The names a module's code uses (its imports and ``__all__`` strings aside)."""
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return used | {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}


def test_errors_are_importable_from_toolwire_and_errors_only() -> None:
    # One import path per error: no module but errors.py (and the top-level toolwire,
    # which loads from it) lists an error class in __all__ or imports one it never uses.
    classes = set(error_classes())
    stray = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in {"errors.py", "__init__.py"} or "demo/project" in rel:
            continue
        tree = parsed(path)
        exported = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
            ):
                exported = set(ast.literal_eval(node.value))
        stray += [f"{rel} exports {name}" for name in sorted(exported & classes)]
        unused = (_imports_of(tree) & classes) - _used_names(tree)
        stray += [f"{rel} re-exports {name}" for name in sorted(unused)]
    assert not stray, "; ".join(stray)


@pytest.mark.parametrize("module", _modules())
def test_no_module_serves_an_error_it_does_not_define(module: str) -> None:
    # A module may use an error class it imports, but only through errors.py: an
    # exception class in its namespace is one from toolwire.errors (or its own private
    # control-flow class), never a second name of it.
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:  # an optional extra that is not installed here
        if (exc.name or "toolwire").startswith("toolwire"):
            raise
        pytest.skip(f"{module} needs {exc.name}")
    for name, value in vars(mod).items():
        if isinstance(value, type) and issubclass(value, ToolwireError):
            assert value.__name__ == name, f"{module}.{name} is another name of {value.__name__}"
            assert value.__module__ == "toolwire.errors", f"{module}.{name}"


def _tree_if_it_names(path: Path, classes: set[str]) -> ast.Module | None:
    """``path``'s syntax tree, or None if its text names none of ``classes``.

    The package's trees are shared with the other checks of the source; the tests',
    benchmarks' and scripts' are parsed here only, and only when they name a class: a
    file that names none imports none (most do not: their parse was most of this test).
    """
    if path.is_relative_to(PACKAGE):
        return parsed(path)
    text = path.read_text(encoding="utf-8")
    if classes.isdisjoint(re.findall(r"\w+", text)):
        return None
    return ast.parse(text)


def test_imports_of_errors_name_errors_py() -> None:
    # Source, tests, benchmarks and scripts import an error class from toolwire.errors
    # (or toolwire), never from a module that happens to import it.
    classes = set(error_classes())
    root = PACKAGE.parents[1]
    bad = []
    for folder in ("src", "tests", "bench", "scripts"):
        for path in sorted((root / folder).rglob("*.py")):
            tree = _tree_if_it_names(path, classes)
            if tree is None:
                continue
            for node in ast.walk(tree):
                if not isinstance(node, ast.ImportFrom):
                    continue
                source = "." * node.level + (node.module or "")
                if source.endswith("errors") or source == "toolwire":
                    continue
                names = {alias.name for alias in node.names} & classes
                bad += [f"{path.relative_to(root)}:{node.lineno} {source}.{n}" for n in names]
    assert not bad, "import errors from toolwire.errors: " + ", ".join(sorted(bad))


def test_every_error_is_reachable_from_toolwire() -> None:
    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert name in toolwire.__all__, name
            assert getattr(toolwire, name) is value, name


def _raises_kind(node: ast.ClassDef) -> bool:
    """Whether a class derives from an exception (by the names of its bases)."""
    for base in node.bases:
        name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
        if name.endswith(("Error", "Exception")) or name in errors.__all__:
            return True
    return False


def test_no_exception_class_outside_errors_py() -> None:
    stray = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "errors.py" or "demo/project" in rel:
            continue
        for node in ast.walk(parsed(path)):
            if not isinstance(node, ast.ClassDef) or (rel, node.name) in CONTROL_FLOW:
                continue
            if _raises_kind(node):
                stray.append(f"{rel}: {node.name}")
    assert not stray, "define errors in toolwire/errors.py: " + ", ".join(stray)


# -- the local model's download (huggingface-hub is an optional extra, absent here) ----


class RepositoryNotFoundError(OSError):
    """Named as the hub client names it: the repo does not exist or is private."""


def _hub(monkeypatch: pytest.MonkeyPatch, failure: BaseException) -> None:
    """Stand in for huggingface-hub (not installed here, and the network is not reachable
    from tests): its listing call fails the way the real client's does."""

    def list_repo_files(repo: str) -> list[str]:
        raise failure

    hub = types.ModuleType("huggingface_hub")
    hub.list_repo_files = list_repo_files  # type: ignore[attr-defined]
    hub.hf_hub_download = None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "huggingface_hub", hub)


def test_a_network_failure_is_the_providers_with_its_cause(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolwire.providers.local import _download, _source

    failure = ConnectionError("Max retries exceeded with url: /api/models/org/repo")
    _hub(monkeypatch, failure)
    with pytest.raises(ModelDownloadError) as info:
        _download(_source("org/repo"))
    assert info.value.fault == "provider"
    assert info.value.__cause__ is failure
    assert "Max retries exceeded" in str(info.value)


def test_a_missing_repo_is_the_callers_with_its_cause(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolwire.providers.local import _download, _source

    failure = RepositoryNotFoundError("404 Client Error: Repository Not Found for url")
    _hub(monkeypatch, failure)
    with pytest.raises(CallerError) as info:
        _download(_source("org/repo"))
    assert info.value.__cause__ is failure
    assert "repo id" in info.value.hint
