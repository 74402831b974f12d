"""The permission policy: which tool calls may run. Pure: no I/O, no clock.

A :class:`Permissions` maps a tool to one of three decisions — ``"allow"``, ``"deny"``
or ``"ask"`` — by name patterns (``fnmatch`` syntax, case-sensitive) and by whether the
tool declares side effects. Precedence, first match wins:

1. ``deny`` patterns,
2. ``ask`` patterns,
3. ``allow`` patterns,
4. ``side_effects`` — the policy for tools declared with ``side_effects=True`` that no
   pattern named (``None``: no special rule),
5. ``default``.

The policy is frozen: nothing a tool returns can change it during a run.
:meth:`Permissions.gate` combines it with an approval callback into the executor's gate
(:mod:`toolwire.safety.approval`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args

from ..errors import CallerError

if TYPE_CHECKING:
    from ..run.gate import Approver, CallGate
    from ..tools.tool import Tool

__all__ = ["Decision", "Permissions"]

Decision = Literal["allow", "deny", "ask"]
DECISIONS: tuple[Decision, ...] = get_args(Decision)


@dataclass(frozen=True, init=False)
class Permissions:
    """Which tool calls may run: allow, deny, or ask an approver.

    Args:
        allow: Tool name patterns to allow (``"read_*"``).
        deny: Tool name patterns to deny; they win over everything.
        ask: Tool name patterns that need approval (``Agent(approve=...)``); without
            an approver such calls are denied, with a reason saying approval was needed.
        default: The decision for a tool no pattern names.
        side_effects: The decision for a tool that declares side effects
            (``@tool(side_effects=True)``, the default for tools) and that no pattern
            names; ``None`` leaves such tools to ``default``. ``Permissions(side_effects=
            "ask")`` asks before anything that may change the world runs.

    A single string is taken as one pattern.

    Raises:
        CallerError: A pattern is not a string, or a decision is not allow/deny/ask.
    """

    allow: tuple[str, ...]
    deny: tuple[str, ...]
    ask: tuple[str, ...]
    default: Decision
    side_effects: Decision | None
    _compiled: dict[Decision, re.Pattern[str] | None] = field(repr=False, compare=False)

    def __init__(
        self,
        allow: Iterable[str] | str = (),
        deny: Iterable[str] | str = (),
        ask: Iterable[str] | str = (),
        default: Decision = "allow",
        *,
        side_effects: Decision | None = None,
    ) -> None:
        patterns = {
            "allow": _patterns("allow", allow),
            "deny": _patterns("deny", deny),
            "ask": _patterns("ask", ask),
        }
        object.__setattr__(self, "allow", patterns["allow"])
        object.__setattr__(self, "deny", patterns["deny"])
        object.__setattr__(self, "ask", patterns["ask"])
        object.__setattr__(self, "default", _decision("default", default))
        if side_effects is not None:
            side_effects = _decision("side_effects", side_effects)
        object.__setattr__(self, "side_effects", side_effects)
        compiled = {kind: _compile(found) for kind, found in patterns.items()}
        object.__setattr__(self, "_compiled", compiled)

    def decide(self, name: str, *, side_effects: bool = True) -> Decision:
        """The decision for a tool called ``name`` (see the module docstring).

        Args:
            name: The tool name.
            side_effects: Whether the tool declares side effects.
        """
        for kind in ("deny", "ask", "allow"):
            pattern = self._compiled[kind]
            if pattern is not None and pattern.match(name):
                return kind
        if side_effects and self.side_effects is not None:
            return self.side_effects
        return self.default

    def decide_tool(self, tool: Tool) -> Decision:
        """The decision for ``tool``, by its name and declared side effects."""
        return self.decide(tool.name, side_effects=bool(tool.side_effects))

    def gate(self, approve: Approver | None) -> CallGate:
        """The executor's gate for this policy, asking ``approve`` where it says ask."""
        from .approval import ApprovalGate

        return ApprovalGate(self, approve)


def _patterns(name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (bytes, bytearray)) or not isinstance(value, Iterable):
        raise CallerError(f"Permissions({name}=...) must be a list of name patterns, not {value!r}")
    found = tuple(value)
    for item in found:
        if not isinstance(item, str) or not item:
            raise CallerError(
                f"Permissions({name}=...): each pattern must be a non-empty str, got {item!r}",
                hint="patterns use fnmatch syntax: 'delete_*', 'fs.*', 'run_shell'",
            )
    return found


def _decision(name: str, value: object) -> Decision:
    if value not in DECISIONS:
        raise CallerError(f"Permissions({name}={value!r}): use 'allow', 'deny' or 'ask'")
    return value


def _compile(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One anchored regular expression for a group of fnmatch patterns."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))
