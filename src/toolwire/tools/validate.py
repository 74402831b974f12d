"""Validation results and the messages the model reads when a call is rejected.

Validation has two layers: syntax (is it JSON? — see :mod:`toolwire.tools.repair`)
and semantics (does it match the tool's schema?). Both are pure and synchronous and
run before execution; an invalid call is never executed. The outcome is a
:class:`Validation`: ``ok`` with the coerced ``input``, or not ``ok`` with a ``kind``
and a ``message`` written for the model — the path that failed, what was expected
and what came, and the tool's schema — so that the retry prompt says everything
needed to fix the call.

Semantic checks come from pydantic (typed tools, see :mod:`toolwire.tools.schema`) or
``jsonschema`` (raw-schema tools). Both report a list of errors; each becomes a
:class:`Problem` and the call's kind is the most specific one present, in the order
``missing_required``, ``unexpected_parameter``, ``schema_violation``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pydantic

from ..messages import TOOL_ERROR_PREFIX

__all__ = [
    "KIND_ORDER",
    "MISSING",
    "Problem",
    "RepairPolicy",
    "Validation",
    "ValidationKind",
    "pydantic_problems",
    "render_message",
    "schema_text",
]

ValidationKind = Literal[
    "invalid_json",
    "schema_violation",
    "missing_required",
    "unexpected_parameter",
    "unknown_tool",
    "empty_call",
]

RepairPolicy = Literal["no_side_effects", "always", "never"]
"""Which repaired calls run without going back to the model.

``"no_side_effects"`` (the default) runs repaired arguments only for tools declared
``side_effects=False``: a guess about a read is cheap, a guess about a write is not.
``"always"`` runs every repaired call; ``"never"`` sends every one back.
"""

KIND_ORDER: tuple[ValidationKind, ...] = (
    "missing_required",
    "unexpected_parameter",
    "schema_violation",
)

_SCHEMA_LIMIT = 4000  # characters of schema quoted back to the model
_ECHO_LIMIT = 300  # characters of the model's own arguments quoted back


class _Missing:
    """Sentinel type: "no value given" where ``None`` is a real value (JSON null)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""Default of ``Tool.validate(parsed=...)``: the arguments have not been parsed yet."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason a call's arguments do not match the schema.

    Attributes:
        kind: ``missing_required``, ``unexpected_parameter`` or ``schema_violation``.
        path: Where it failed, as ``a.b[2].c``; ``""`` for the arguments object itself.
        message: What was expected and what came, in plain words.
    """

    kind: ValidationKind
    path: str
    message: str

    def render(self) -> str:
        """One bullet line for the model."""
        where = f"`{self.path}`" if self.path else "(arguments)"
        return f"- {where}: {self.message}"


@dataclass(frozen=True, slots=True)
class Validation:
    """The outcome of validating one call: valid with its input, or invalid with a reason.

    Attributes:
        ok: Whether the call may be executed.
        tool: The tool name the model used.
        input: The validated, coerced input (``None`` when not ``ok``). For a typed tool
            it is the keyword-argument dict to call the function with; for a raw-schema
            tool, the arguments object itself.
        kind: Why the call is invalid (``None`` when ``ok``).
        message: The text the model reads as the call's error result (``""`` when ok).
        problems: The individual schema problems, for logs and diagnostics.
        repaired: Whether the arguments were malformed JSON that repair recovered.
        original: The arguments text as the model sent it, kept when ``repaired``.
    """

    ok: bool
    tool: str
    input: Any = None
    kind: ValidationKind | None = None
    message: str = ""
    problems: tuple[Problem, ...] = ()
    repaired: bool = False
    original: str | None = None

    @classmethod
    def success(
        cls, tool: str, value: Any, *, repaired: bool = False, original: str | None = None
    ) -> Validation:
        """A valid call, ready to execute with ``value``."""
        return cls(True, tool, value, repaired=repaired, original=original if repaired else None)

    @classmethod
    def failure(
        cls,
        tool: str,
        kind: ValidationKind,
        message: str,
        *,
        problems: Sequence[Problem] = (),
        repaired: bool = False,
        original: str | None = None,
    ) -> Validation:
        """An invalid call: ``message`` goes back to the model."""
        return cls(
            False,
            tool,
            None,
            kind,
            message,
            tuple(problems),
            repaired,
            original if repaired else None,
        )

    def __bool__(self) -> bool:
        return self.ok


class _ValidationSlots:
    """:class:`Validation`'s slots without its frozen ``__setattr__``: what
    :func:`valid` fills before it makes the object a ``Validation``."""

    __slots__ = Validation.__slots__  # the same layout, so __class__ may be assigned
    ok: bool
    tool: str
    input: Any
    kind: ValidationKind | None
    message: str
    problems: tuple[Problem, ...]
    repaired: bool
    original: str | None


def valid(tool: str, value: Any) -> Validation:
    """``Validation(True, tool, value)``, the verdict of every call that runs, made
    for the executor's hot path.

    A frozen dataclass's ``__init__`` sets each of its eight fields through
    ``object.__setattr__`` (about four times the instructions of the rest of a call's
    validation); here they are stored into an object of the same slots, which then
    becomes a ``Validation`` by assignment to ``__class__`` (Python allows it between
    classes of one layout). The result is equal to, and indistinguishable from, the
    constructor's (tests/tools/test_sent_validation.py). The object is made by calling
    the slots class, which has no ``__init__`` of its own: C from end to end, about 300
    instructions fewer than ``object.__new__(_ValidationSlots)``, whose wrapper packs
    and checks its arguments (bench/README.md, "thirteenth pass").
    """
    made = _ValidationSlots()
    made.ok = True
    made.tool = tool
    made.input = value
    made.kind = None
    made.message = ""
    made.problems = ()
    made.repaired = False
    made.original = None
    made.__class__ = Validation  # type: ignore[assignment]
    return made  # type: ignore[return-value]


def schema_text(schema: dict[str, Any]) -> str:
    """The schema as compact JSON, cut to a length the model's context can afford."""
    text = json.dumps(schema, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    if len(text) > _SCHEMA_LIMIT:
        return text[:_SCHEMA_LIMIT] + " …(schema truncated)"
    return text


def echo(text: str) -> str:
    """The model's own text, cut short, to quote back to it."""
    return text if len(text) <= _ECHO_LIMIT else text[:_ECHO_LIMIT] + "…"


def render_message(
    tool: str, headline: str, details: Iterable[str], schema: dict[str, Any] | None
) -> str:
    """Assemble the retry prompt: what went wrong, where, and the expected schema.

    Args:
        tool: The tool name.
        headline: One sentence saying why the call was not run.
        details: Bullet lines (already formatted).
        schema: The tool's argument schema, or ``None`` when there is no such tool.

    Returns:
        The error result content for the model.
    """
    lines = [f"{TOOL_ERROR_PREFIX}the call to `{tool}` was not run: {headline}", *details]
    if schema is not None:
        lines.append(f"Expected arguments (JSON Schema): {schema_text(schema)}")
        lines.append(f"Call `{tool}` again with arguments that match this schema.")
    return "\n".join(lines)


def headline_for(kind: ValidationKind, problems: Sequence[Problem]) -> str:
    """The one-sentence reason for a schema failure."""
    if kind == "missing_required":
        names = [p.path for p in problems if p.kind == "missing_required"]
        return f"required parameter(s) missing: {', '.join(names)}."
    if kind == "unexpected_parameter":
        names = [p.path for p in problems if p.kind == "unexpected_parameter"]
        return f"parameter(s) the tool does not define: {', '.join(names)}."
    return "the arguments do not match the tool's schema."


def overall_kind(problems: Sequence[Problem]) -> ValidationKind:
    """The most specific kind present among the problems."""
    present = {p.kind for p in problems}
    return next((k for k in KIND_ORDER if k in present), "schema_violation")


def format_path(loc: Iterable[Any]) -> str:
    """``("items", 2, "name")`` → ``items[2].name``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def short_value(value: Any) -> str:
    """A value as JSON, cut short (what the model sent)."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):  # circular structures: fall back to repr
        text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


def pydantic_problems(
    error: pydantic.ValidationError, names: dict[str, str] | None = None
) -> list[Problem]:
    """Translate pydantic's errors into problems with JSON paths.

    Args:
        error: The validation error.
        names: Internal field name → parameter name, for locations pydantic reports
            by field name rather than alias.

    Returns:
        One problem per pydantic error.
    """
    names = names or {}
    problems = []
    for item in error.errors(include_url=False):
        loc = [names.get(p, p) if isinstance(p, str) else p for p in item["loc"]]
        path = format_path(loc)
        kind = item["type"]
        if kind == "missing":
            problems.append(Problem("missing_required", path, "missing required parameter"))
        elif kind == "extra_forbidden":
            problems.append(
                Problem("unexpected_parameter", path, "not a parameter of this tool; remove it")
            )
        else:
            got = short_value(item.get("input"))
            problems.append(Problem("schema_violation", path, f"{item['msg']}; got {got}"))
    return problems


def jsonschema_problems(errors: Iterable[Any]) -> list[Problem]:
    """Translate ``jsonschema`` errors into problems with JSON paths."""
    problems = []
    for error in errors:
        path = format_path(error.absolute_path)
        if error.validator == "required":
            # The path is the parent object; name the missing key itself.
            missing = _quoted_name(error.message)
            full = f"{path}.{missing}" if path and missing else (missing or path)
            problems.append(Problem("missing_required", full, "missing required parameter"))
        elif error.validator in ("additionalProperties", "unevaluatedProperties"):
            for name in _extra_keys(error):
                full = f"{path}.{name}" if path else name
                problems.append(
                    Problem("unexpected_parameter", full, "not a parameter of this tool; remove it")
                )
        else:
            problems.append(Problem("schema_violation", path, error.message))
    return problems


def _extra_keys(error: Any) -> list[str]:
    """The keys an ``additionalProperties`` error is about (the schema does not say)."""
    instance = error.instance if isinstance(error.instance, dict) else {}
    schema = error.schema if isinstance(error.schema, dict) else {}
    known = set(schema.get("properties", {}))
    extras = [str(k) for k in instance if k not in known]
    return extras or [""]


def _quoted_name(message: str) -> str:
    """The key in jsonschema's ``'name' is a required property``."""
    if message.startswith("'") and "'" in message[1:]:
        return message[1 : message.index("'", 1)]
    return ""
