"""errors.py is the one place for errors: every class there, one name pattern, the right fault.

The table below is the review of whose fault each error is; a new error class that is
not in it fails ``test_every_error_has_a_reviewed_fault``, so its fault gets decided.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from pathlib import Path

import pytest

import toolwire
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
    "LoopDetectedError": "model",
    "MaxRoundsExceededError": "model",
}

# old name -> (the modules it was importable from, its new name)
ALIASES = {
    "LoopDetected": (("toolwire.run.loops", "toolwire.run"), "LoopDetectedError"),
    "MaxRoundsExceeded": (("toolwire.run.agent", "toolwire.run"), "MaxRoundsExceededError"),
    "UsageLimitExceeded": (("toolwire.run.limits", "toolwire.run"), "UsageLimitExceededError"),
    "BudgetExceeded": (("toolwire.tools.feedback", "toolwire.tools"), "BudgetExceededError"),
    "ToolBudgetExceeded": (
        ("toolwire.tools.feedback", "toolwire.tools"),
        "ToolBudgetExceededError",
    ),
    "ReplayMismatch": (("toolwire.observe.replay",), "ReplayMismatchError"),
    "SchemaExtraMissing": (
        ("toolwire.tools.validate", "toolwire.tools"),
        "SchemaExtraMissingError",
    ),
}

# Errors that kept their name and moved: the modules they were importable from.
MOVED = {
    "ToolMappingError": ("toolwire.history.tools", "toolwire.history"),
    "MissingAPIKeyError": ("toolwire.providers.http", "toolwire.providers"),
    "ProviderConnectionError": ("toolwire.providers.http", "toolwire.providers"),
    "ProviderTimeoutError": ("toolwire.providers.http", "toolwire.providers"),
    "StreamInterruptedError": ("toolwire.providers.http", "toolwire.providers"),
    "UnknownModelSpecError": ("toolwire.providers.spec", "toolwire.providers"),
    "EmbeddedModelHashError": ("toolwire.providers.local",),
    "ReplayedToolError": ("toolwire.observe.replay",),
    "FormatError": ("toolwire.formats.results", "toolwire.formats"),
    "ToolDefinitionError": ("toolwire.tools.schema", "toolwire.tools"),
    "PartialJSONError": ("toolwire.wire.jsonscan", "toolwire.wire"),
    "ResultError": ("toolwire.run.results", "toolwire.run"),
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


@pytest.mark.parametrize("old", sorted(ALIASES))
def test_old_names_are_the_same_class(old: str) -> None:
    modules, new = ALIASES[old]
    cls = getattr(errors, new)
    assert getattr(errors, old) is cls
    assert getattr(toolwire, old) is cls and getattr(toolwire, new) is cls
    for module in modules:
        assert getattr(importlib.import_module(module), old) is cls, module


@pytest.mark.parametrize("name", sorted(MOVED))
def test_moved_errors_are_importable_where_they_were(name: str) -> None:
    for module in MOVED[name]:
        assert getattr(importlib.import_module(module), name) is getattr(errors, name), module


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
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
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
