"""The public names: every one resolves, and ``import toolwire`` stays light."""

from __future__ import annotations

import subprocess
import sys

import toolwire


def test_every_exported_name_resolves() -> None:
    for name in toolwire.__all__:
        assert getattr(toolwire, name) is not None, name


def test_all_matches_the_lazy_table() -> None:
    assert sorted(toolwire.__all__) == sorted([*toolwire._EXPORTS, "__version__"])


def test_import_does_not_load_pydantic_httpx_or_providers() -> None:
    code = "import sys, toolwire; print(sorted(m for m in ('pydantic', 'httpx', 'toolwire.providers') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_fixed_names_exist() -> None:
    from toolwire import formats, testing, wire

    for obj in (
        wire.OpenAIChatStream,
        wire.OpenAIResponsesStream,
        wire.AnthropicStream,
        wire.PartialJSON,
        formats.for_model,
        formats.get,
        formats.to_openai_delta,
        testing.ScriptedModel,
        toolwire.Agent,
        toolwire.tool,
        toolwire.repair_json,
        toolwire.ToolRouter,
        toolwire.ContextPolicy,
        toolwire.count_tokens,
    ):
        assert callable(obj)


def test_safety_names_have_the_fixed_signatures() -> None:
    import inspect

    sandbox = inspect.signature(toolwire.Sandbox)
    fixed = {
        "network": False,
        "cpu_seconds": 10,
        "memory_mb": 512,
        "wall_seconds": 30,
        "max_output_bytes": 1_000_000,
        "env": None,
        "read_only_paths": (),
        "allow_unisolated": False,
    }
    assert next(iter(sandbox.parameters)) == "workspace"
    for name, default in fixed.items():
        assert sandbox.parameters[name].default == default, name
        assert sandbox.parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
    permissions = inspect.signature(toolwire.Permissions)
    assert [permissions.parameters[n].default for n in ("allow", "deny", "ask", "default")] == [
        (),
        (),
        (),
        "allow",
    ]
    agent = inspect.signature(toolwire.Agent)
    assert {"permissions", "approve"} <= set(agent.parameters)
    for function in (toolwire.sandbox_python_tool, toolwire.sandbox_shell_tool):
        assert list(inspect.signature(function).parameters) == ["sandbox"]


def test_observe_names_exist() -> None:
    from toolwire import testing

    assert callable(toolwire.AuditLog)
    assert callable(testing.ReplayModel.from_log)
    assert "run_id" in toolwire.RunResult.__dataclass_fields__


def test_integrations_are_lazy_and_import_neither_mcp_nor_ray() -> None:
    code = (
        "import sys, toolwire; toolwire.MCPToolset; toolwire.RayBackend; toolwire.run_many; "
        "print(sorted(m for m in ('mcp', 'ray', 'httpx2') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
    assert callable(toolwire.MCPToolset.stdio) and callable(toolwire.MCPToolset.http)
    assert callable(toolwire.iter_run_many)


def test_builtin_call_names_exist() -> None:
    import inspect

    assert "builtin_handlers" in inspect.signature(toolwire.Agent).parameters
    assert toolwire.ShellOutput().exit_code == 0
    assert set(toolwire.BuiltinCall.__dataclass_fields__) == {
        "kind",
        "call_id",
        "action",
        "data",
    }
    assert callable(toolwire.sandbox_shell_handler)
