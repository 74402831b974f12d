"""Answers to the Responses API's client-executed built-in calls: shell and apply_patch.

Three Responses tools are declared by the request (``{"type": "local_shell"}``,
``{"type": "shell"}``, ``{"type": "apply_patch"}``) but run by the *client*: the model
returns a ``local_shell_call`` (``action``: ``command`` argv, ``env``,
``working_directory``, ``timeout_ms``, ``user``), a ``shell_call`` (``action``:
``commands``, ``timeout_ms``, ``max_output_length``) or an ``apply_patch_call``
(``operation``: ``create_file`` / ``update_file`` with a ``diff``, ``delete_file``),
and the next request must carry its output, by ``call_id``:

* ``{"type": "local_shell_call_output", "call_id", "output": str}``
* ``{"type": "shell_call_output", "call_id", "output": [{"stdout", "stderr",
  "outcome": {"type": "exit", "exit_code"} | {"type": "timeout"}}, ...]}``
* ``{"type": "apply_patch_call_output", "call_id", "status": "completed" | "failed",
  "output"?: str}``

The turn keeps each call as a :class:`~toolwire.messages.ProviderPart`. This module is
pure: it finds the calls still unanswered and writes their outputs. The agent reaches
it only through :mod:`toolwire.history.owed` (the items a turn owes an answer): it hands
each call to the handler the caller registered for its kind (``Agent(builtin_handlers=
{"shell": fn, "local_shell": fn, "apply_patch": fn})``, sync or async; a sync one runs
in a thread) and appends the output to the same assistant message as another
``ProviderPart``, so the Responses encoder sends call and output in order. Every call
gets exactly one output: without a handler for its kind, when the handler raises or
returns something it should not, the output says the call was **not executed**
(:data:`NOT_EXECUTED`; apply_patch: status ``failed``; shell: exit code 126, "cannot
execute", per command). A history that reaches the encoder with a call still
unanswered gets the same answer there (``toolwire.history.openai_responses_owed``).

Safety: a handler runs what the model wrote on the caller's machine. toolwire does not
pass it through ``permissions=`` (those judge toolwire tools); a shell handler should
run the commands in a :class:`toolwire.safety.Sandbox` (or check them against an
allow-list) itself.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ..messages import AssistantMessage, Message, ProviderPart
from ..turn import Turn
from ..wire.openai_responses import PROVIDER
from .openai_responses_owed import NOT_EXECUTED, not_executed_item
from .responses_mcp import responses_items

__all__ = [
    "BUILTIN_KINDS",
    "NOT_EXECUTED",
    "BuiltinCall",
    "BuiltinHandler",
    "ShellOutput",
    "builtin_answer",
    "builtin_calls",
    "builtin_output",
    "builtin_refusal",
    "not_executed_output",
]

BuiltinKind: TypeAlias = Literal["local_shell", "shell", "apply_patch"]

BUILTIN_KINDS: dict[str, str] = {
    "local_shell_call": "local_shell",
    "shell_call": "shell",
    "apply_patch_call": "apply_patch",
}
"""Output item type -> the handler kind (the tool's ``type`` in the request)."""

NO_HANDLER = "no handler is registered for this kind of call (Agent(builtin_handlers=...))"


@dataclass(frozen=True, slots=True)
class ShellOutput:
    """What one shell command printed, for a ``shell`` or ``local_shell`` handler.

    Attributes:
        stdout: Its standard output.
        stderr: Its standard error.
        exit_code: Its exit status; ``None`` when it ran out of time.
    """

    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = 0


@dataclass(frozen=True, slots=True)
class BuiltinCall:
    """One client-executed built-in call of a Responses turn.

    Attributes:
        kind: ``local_shell``, ``shell`` or ``apply_patch``.
        call_id: The call's ``call_id`` (its output's ``call_id``).
        action: ``local_shell`` / ``shell``: the item's ``action``; ``apply_patch``:
            its ``operation`` (``type``, ``path``, ``diff``).
        data: The item exactly as received.
    """

    kind: BuiltinKind
    call_id: str
    action: dict[str, Any]
    data: dict[str, Any] = field(repr=False, compare=False)

    @property
    def commands(self) -> list[str]:
        """The commands to run: ``shell``'s ``commands``; ``local_shell``'s argv
        (``action["command"]``, meant to be executed as is) quoted for a shell as one
        command; empty for ``apply_patch``."""
        if self.kind == "shell":
            return [str(c) for c in _list(self.action.get("commands"))]
        if self.kind == "local_shell":
            return [shlex.join(str(a) for a in _list(self.action.get("command")))]
        return []


BuiltinHandler: TypeAlias = Callable[[BuiltinCall], Any]
"""A handler: ``shell`` / ``local_shell`` return a :class:`ShellOutput` (or a list,
one per command, or a string: the output); ``apply_patch`` returns a string (or
``None``) for a patch applied. Raising answers the call as failed. May be async."""


def builtin_calls(
    source: Turn | AssistantMessage | Sequence[Message], *, pending: bool = False
) -> list[BuiltinCall]:
    """The client-executed built-in calls of a turn, a message or a history, in order.

    Args:
        source: Where to look.
        pending: Only those that no output part in ``source`` answers yet.
    """
    parts = responses_items(source)
    answered = {_answered_call_id(p) for p in parts if p.type.endswith("_call_output")}
    found = [_call(p.data) for p in parts if p.type in BUILTIN_KINDS]
    return [c for c in found if not (pending and c.call_id in answered)]


def _answered_call_id(output: ProviderPart) -> str:
    """The call an output item answers: ``call_id``, or ``id`` on a local shell output.

    openai-python's ``LocalShellCallOutput`` type names the call ``id`` (the encoder sends
    it as ``call_id``, see ``history.openai_responses_owed``); such an output still answers
    its call, so the agent must not answer it a second time.
    """
    data = output.data
    if "call_id" not in data and output.type == "local_shell_call_output":
        return str(data.get("id"))
    return str(data.get("call_id"))


def builtin_answer(call: BuiltinCall, value: Any) -> ProviderPart:
    """The output part for a handler's return ``value`` (a wrong value: not executed)."""
    try:
        return _part(builtin_output(call, value))
    except TypeError as exc:
        return builtin_refusal(call, exc)


def builtin_refusal(call: BuiltinCall, error: BaseException | None) -> ProviderPart:
    """The output part answering ``call`` as not executed: no handler (``None``), or the
    handler failed with ``error``."""
    why = NO_HANDLER if error is None else f"the {call.kind} handler failed: {_describe(error)}"
    return _part(not_executed_output(call, why))


def _part(item: dict[str, Any]) -> ProviderPart:
    return ProviderPart(PROVIDER, str(item["type"]), item)


def not_executed_output(call: BuiltinCall, why: str) -> dict[str, Any]:
    """The output item answering ``call`` as not executed, saying why."""
    return not_executed_item(call.data, why)


def builtin_output(call: BuiltinCall, value: Any) -> dict[str, Any]:
    """The output item for a handler's return ``value``.

    Raises:
        TypeError: ``value`` is not what a handler of ``call.kind`` returns.
    """
    if call.kind == "apply_patch":
        if value is not None and not isinstance(value, str):
            raise TypeError(f"an apply_patch handler returns a str or None, not {value!r}")
        return _item(call, status="completed", **({"output": value} if value else {}))
    runs = value if isinstance(value, list) else [value]
    if not runs or not all(isinstance(r, (ShellOutput, str)) for r in runs):
        raise TypeError(f"a {call.kind} handler returns a ShellOutput or a str, not {value!r}")
    outputs = [r if isinstance(r, ShellOutput) else ShellOutput(stdout=r) for r in runs]
    if call.kind == "local_shell":
        return _item(call, output="".join(o.stdout + o.stderr for o in outputs))
    return _item(call, output=[_shell_run(o) for o in outputs])


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _shell_run(output: ShellOutput) -> dict[str, Any]:
    outcome: dict[str, Any] = (
        {"type": "timeout"}
        if output.exit_code is None
        else {"type": "exit", "exit_code": output.exit_code}
    )
    return {"stdout": output.stdout, "stderr": output.stderr, "outcome": outcome}


def _item(call: BuiltinCall, **fields: Any) -> dict[str, Any]:
    return {"type": f"{call.data.get('type')}_output", "call_id": call.call_id, **fields}


def _call(data: Mapping[str, Any]) -> BuiltinCall:
    """The call of a built-in call item (missing fields read as empty)."""
    item_type = str(data.get("type"))
    kind: Any = BUILTIN_KINDS[item_type]
    action = data.get("operation" if kind == "apply_patch" else "action")
    return BuiltinCall(
        kind,
        str(data.get("call_id") or ""),
        dict(action) if isinstance(action, Mapping) else {},
        dict(data),
    )


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []
