"""Modules that moved keep their old import paths, serving the very same objects."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

# old module -> the modules its names now live in
MOVED = {
    "toolwire.run.loops": ["toolwire.policies.loops"],
    "toolwire.run.limits": ["toolwire.policies.limits"],
    "toolwire.tools.diagnostics": ["toolwire.policies.diagnostics"],
    "toolwire.tools.feedback": ["toolwire.policies.budgets", "toolwire.tools.error_results"],
    "toolwire.history.tools": ["toolwire.history.tool_defs"],
    "toolwire.providers.base": ["toolwire.providers.hosted"],
}

# package-level names that moved, and where they live now
PACKAGE_NAMES = {
    "toolwire.tools": {
        "toolwire.policies.budgets": [
            "DEFAULT_BREAKER",
            "DEFAULT_BUDGETS",
            "BudgetExceeded",
            "FailureBudget",
            "RetryPolicy",
            "ToolBudgetExceeded",
        ],
        "toolwire.policies.diagnostics": [
            "FAILURE_KINDS",
            "FAILURE_LABELS",
            "Failure",
            "FailureKind",
            "RunDiagnostics",
            "classify",
        ],
    },
    "toolwire.run": {
        "toolwire.policies.loops": ["LoopDetected", "LoopDetector", "LoopPolicy", "call_signature"],
        "toolwire.policies.limits": ["UsageLimitExceeded", "UsageLimits"],
    },
    "toolwire": {
        "toolwire.policies": [
            "BudgetExceeded",
            "FailureBudget",
            "LoopDetected",
            "LoopPolicy",
            "RetryPolicy",
            "RunDiagnostics",
            "UsageLimitExceeded",
            "UsageLimits",
        ],
    },
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_module_serves_the_same_objects(old: str) -> None:
    shim = importlib.import_module(old)
    homes = [importlib.import_module(name) for name in MOVED[old]]
    # Every public name of the new homes is reachable from the old path...
    for home in homes:
        for name in home.__all__:
            assert getattr(shim, name) is getattr(home, name), f"{old}.{name}"
    # ...and the old path serves nothing of its own.
    for name in shim.__all__:
        value = getattr(shim, name)
        assert any(getattr(home, name, None) is value for home in homes), f"{old}.{name}"


@pytest.mark.parametrize("package", sorted(PACKAGE_NAMES))
def test_package_exports_are_the_moved_objects(package: str) -> None:
    module = importlib.import_module(package)
    for home_name, names in PACKAGE_NAMES[package].items():
        home = importlib.import_module(home_name)
        for name in names:
            assert getattr(module, name) is getattr(home, name), f"{package}.{name}"


def test_unknown_name_in_tools_is_an_attribute_error() -> None:
    tools = importlib.import_module("toolwire.tools")
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = tools.no_such_name


FIRST_IMPORTS = [
    "toolwire.policies",
    "toolwire.policies.diagnostics",
    "toolwire.policies.budgets",
    "toolwire.tools",
    "toolwire.tools.feedback",
    "toolwire.tools.diagnostics",
    "toolwire.run",
    "toolwire.run.loops",
    "toolwire.history.tools",
    "toolwire.providers.base",
]


@pytest.mark.parametrize("module", FIRST_IMPORTS)
def test_any_module_imports_first(module: str) -> None:
    # tools/ and policies/ refer to each other (the old names); whichever a fresh
    # interpreter imports first must not meet a half-initialised module.
    code = f"import {module}; import toolwire.tools as t, toolwire.policies as p\n"
    code += "assert t.RetryPolicy is p.RetryPolicy and t.classify is p.classify\n"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_tools_does_not_load_policies_until_asked() -> None:
    code = (
        "import sys, toolwire.tools\n"
        "assert 'toolwire.policies' not in sys.modules\n"
        "toolwire.tools.FailureBudget\n"
        "assert 'toolwire.policies' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
