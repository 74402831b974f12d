"""Safety: who may run a tool call, and where a command may run.

* :mod:`.permissions` — ``Permissions``: allow / deny / ask per tool (pure).
* :mod:`.approval` — the approval flow: the executor's gate that applies a policy and
  asks an approver (sync or async).
* :mod:`.sandbox` — ``Sandbox``: commands isolated with bubblewrap namespaces and
  resource limits (:mod:`.bwrap` builds the command line, :mod:`.process` runs it).
* :mod:`.tools` — the shipped sandboxed tools ``run_python`` and ``run_shell``.
* :mod:`.paths` — ``PathGuard``: file tools confined to allowed roots.

Each name is imported from its module on first use (``toolwire._lazy``): a file tool
that reads ``PathGuard``, or a run whose calls are approved, does not import the
sandbox and its process runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

# public name -> module of this package that defines it
_EXPORTS = {
    "ApprovalGate": "approval",
    "PathGuard": "paths",
    "Decision": "permissions",
    "Permissions": "permissions",
    "Sandbox": "sandbox",
    "SandboxResult": "sandbox",
    "SandboxWarning": "sandbox",
    "sandbox_python_tool": "tools",
    "sandbox_shell_handler": "tools",
    "sandbox_shell_tool": "tools",
}

__getattr__ = lazy_exports(globals(), _EXPORTS)

if TYPE_CHECKING:
    from .approval import ApprovalGate
    from .paths import PathGuard
    from .permissions import Decision, Permissions
    from .sandbox import Sandbox, SandboxResult, SandboxWarning
    from .tools import sandbox_python_tool, sandbox_shell_handler, sandbox_shell_tool

__all__ = [
    "ApprovalGate",
    "Decision",
    "PathGuard",
    "Permissions",
    "Sandbox",
    "SandboxResult",
    "SandboxWarning",
    "sandbox_python_tool",
    "sandbox_shell_handler",
    "sandbox_shell_tool",
]
