"""Tools: a plain function plus its schema and its execution policy.

API in one paragraph (for the executor and the agent loop): ``@tool`` (bare, or
``@tool(name=, description=, concurrency_safe=, timeout=, retries=, idempotent=,
side_effects=, strict=, freeform=)``) turns a sync or async function into a :class:`Tool`, still
callable like the function. A tool has ``.name``, ``.description``, ``.parameters``
(JSON Schema), ``.fn``, ``.is_async`` and the policy attributes;
``.is_concurrency_safe(input)`` evaluates the bool-or-callable policy on the validated
input; ``.definition()`` is its neutral :class:`~toolwire.tooldef.ToolDef`.
``.validate(raw_arguments)`` (or ``.validate(parsed=value)`` when the arguments were already parsed) is pure and
synchronous and returns a :class:`~toolwire.tools.validate.Validation`: ``.ok`` with
``.input`` (for a typed tool, the kwargs dict), or not ok with ``.kind`` and a
``.message`` to send back to the model as the call's error result; ``.repaired`` and
``.original`` say whether JSON repair was used. ``tool.invoke(input)`` calls the
function with a validated input (``fn(**input)`` for typed tools, ``fn(input)`` for
raw-schema ones) and returns its result — a coroutine for async tools.
``Tool.from_schema(name, description, parameters, fn, **policy)`` wraps a raw JSON
Schema tool (MCP). :class:`Toolset` is the name → tool registry:
``.get(name)``, ``.definitions()``, ``.validate(request)`` (unknown names get an
``unknown_tool`` result listing the closest names), iteration and ``len``.

Two kinds of tool take more than their input, both decided here at definition time
(``.plain`` is ``True`` for every other tool, whose calls take the executor's
shortest path): a tool with a parameter annotated :class:`~toolwire.tools.context.ToolContext`
(``.context_param`` names it; it is not in the schema, and ``invoke(input, context)``
fills it in), and a generator tool (``.generator``: ``"sync"`` or ``"async"``), whose
yielded values are progress and whose last value is the result
(:mod:`toolwire.run.progress` drives it).

Typed tools validate with a pydantic model built once, at definition time (see
:mod:`toolwire.tools.schema`); raw-schema tools with a ``jsonschema`` validator, also
built once. A definition the library cannot turn into a schema fails immediately
with :class:`~toolwire.tools.schema.ToolDefinitionError`.

A free-form tool (``freeform=True`` or a grammar format, see
:mod:`toolwire.tools.freeform`) takes the model's raw text: its function has exactly
one parameter, which gets the text of a custom tool call unparsed.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, overload

import pydantic

from ..checks import check_int, check_number
from ..errors import CallerError, RepairError, SchemaExtraMissingError, ToolDefinitionError
from ..tooldef import ToolDef
from .context import ToolContext
from .docstrings import parse_docstring
from .freeform import FreeformSpec, freeform_spec, kind_mismatch
from .patterns import check_patterns, linear_validator
from .repair import loads_lenient
from .schema import (
    KwargsValidator,
    SignatureModel,
    build_signature_model,
    kwargs_validator,
    strict_schema,
)
from .validate import (
    MISSING,
    Problem,
    RepairPolicy,
    Validation,
    echo,
    headline_for,
    jsonschema_problems,
    overall_kind,
    pydantic_problems,
    render_message,
    short_value,
    valid,
)

if TYPE_CHECKING:
    from ..turn import ToolRequest

__all__ = ["ConcurrencyPolicy", "Tool", "Toolset", "tool"]

ConcurrencyPolicy: TypeAlias = bool | Callable[[Any], bool]

# The attributes Tool._work_out_call_facts reads: setting one works them out again.
_CALL_FACT_SOURCES = frozenset(
    {"concurrency_safe", "side_effects", "idempotent", "plain", "is_async", "timeout", "retries"}
)

# OpenAI and Anthropic both accept tool names matching this pattern.
_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_REPAIR_POLICIES = ("no_side_effects", "always", "never")


class Tool:
    """A function the model can call, with its schema and its execution policy.

    Build one with :func:`tool` or :meth:`Tool.from_schema`; calling the tool calls
    the function unchanged.

    Attributes:
        name: The name the model calls it by.
        description: What the tool does, for the model.
        parameters: The JSON Schema of the arguments object (strict form if ``strict``).
        fn: The wrapped function.
        is_async: Whether ``fn`` returns a coroutine.
        concurrency_safe: A bool, or a function of the validated input returning one.
        timeout: Seconds before the executor gives up on a call (``None``: no limit).
        retries: How many times the executor re-runs a call that raised.
        idempotent: Whether running the same call twice is harmless.
        side_effects: Whether the tool changes anything outside itself. Repaired
            arguments run automatically only when this is ``False``.
        strict: Whether the definition asks for OpenAI strict mode.
        max_result_tokens: This tool's result cap in tokens (``None``: the run's
            ``ContextPolicy.max_result_tokens``; ``False``: never cut).
        freeform: Whether the tool takes free-form text (a custom tool) instead of
            JSON arguments.
        input_format: The custom tool's ``format`` object (``None`` unless ``freeform``).
        context_param: The parameter annotated ``ToolContext`` (``None``: none).
        generator: ``"sync"`` or ``"async"`` for a generator function (its yielded
            values report progress, the last one is the result); ``None`` otherwise.
        plain: Neither takes a ``ToolContext`` nor is a generator.
    """

    # Worked out from the policy by _work_out_call_facts, for the executor's reads. The
    # class's values serve a tool whose state has none (one pickled by an older toolwire
    # and unpickled here, in a Ray worker): no shortest path, not harmless to discard,
    # the concurrency policy asked per call; each the cautious answer.
    _harmless: bool = False
    _safe: bool | None = None
    _direct: bool | None = None

    def __init__(  # noqa: PLR0913 — a tool's keyword-only policy options, each documented
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        description: str,
        parameters: dict[str, Any],
        signature: SignatureModel | None,
        validator: Any = None,
        concurrency_safe: ConcurrencyPolicy = False,
        timeout: float | None = None,
        retries: int = 0,
        idempotent: bool = False,
        side_effects: bool = True,
        strict: bool = False,
        max_result_tokens: int | Literal[False] | None = None,
        freeform: bool | dict[str, Any] = False,
    ) -> None:
        _check_policy(name, concurrency_safe, timeout, retries)
        self._freeform: FreeformSpec | None = freeform_spec(name, freeform)
        self.freeform = self._freeform is not None
        self.input_format = self._freeform.format if self._freeform is not None else None
        _check_result_cap(name, max_result_tokens)
        self.max_result_tokens = max_result_tokens
        self.fn = fn
        self.name = name
        self.description = description
        self.parameters = parameters
        self.is_async = _is_async(fn)
        self.generator = _generator_kind(fn)
        self.context_param = signature.context_param if signature is not None else None
        self.plain = self.context_param is None and self.generator is None
        self.concurrency_safe = concurrency_safe
        self.timeout = timeout
        self.retries = retries
        self.idempotent = idempotent
        self.side_effects = side_effects
        self.strict = strict
        self._signature = signature
        self._validator = validator
        # A typed, non-strict tool's sent arguments validated straight into keyword
        # arguments (None: the model and SignatureModel.kwargs, as every other call).
        self._validate_kwargs: KwargsValidator | None = (
            kwargs_validator(signature)
            if signature is not None and not strict and not self.freeform
            else None
        )
        self._required = _required_names(signature, parameters)
        self._field_names = (
            {p.field: p.name for p in signature.params} if signature is not None else {}
        )
        if self.freeform and signature is not None and len(signature.params) != 1:
            raise ToolDefinitionError(
                f"a free-form tool takes exactly one parameter (the input text), not "
                f"{len(signature.params)}",
                function=name,
            )
        self._work_out_call_facts()

    def __setattr__(self, name: str, value: Any) -> None:
        """Set an attribute; a policy attribute set after construction (``tool.timeout
        = 5``) works out the call facts again, so the executor never reads stale ones."""
        object.__setattr__(self, name, value)
        # After __init__ only (it works them out once, at its end; until then _direct is
        # the class's None). Not asked of self.__dict__: reading it would make the
        # instance's dict an object of its own, and every attribute read of the tool
        # ~3x slower (3.11's inline values).
        if name in _CALL_FACT_SOURCES and self._direct is not None:
            self._work_out_call_facts()

    def _work_out_call_facts(self) -> None:
        """What every call of this tool asks of its policy, worked out once per tool.

        The executor reads these per call (:class:`~toolwire.run.calls.TurnCall`,
        :meth:`~toolwire.run.execute.TurnRun._guarded`): one attribute each, where
        working them out read up to five policy attributes and tested each, for every
        call.

        ``_harmless``: running a call and then discarding it is harmless (no side
        effects, or idempotent). ``_safe``: the concurrency policy when it is a bool,
        ``None`` when a function of the call's input decides. ``_direct``: a call may
        take the executor's shortest path (a plain async tool without a timeout, and
        without retries to make: a tool retries only when idempotent).
        """
        policy = self.concurrency_safe
        object.__setattr__(self, "_harmless", not self.side_effects or self.idempotent)
        object.__setattr__(self, "_safe", policy if policy.__class__ is bool else None)
        direct = (
            self.plain
            and self.is_async
            and self.timeout is None
            and (not self.retries or not self.idempotent)
        )
        object.__setattr__(self, "_direct", direct)

    # --- construction -----------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool = False,
        **policy: Any,
    ) -> Tool:
        """Build a typed tool from a function's signature and docstring.

        Args:
            fn: A sync or async function with annotated parameters.
            name: Overrides ``fn.__name__``.
            description: Overrides the docstring's description.
            strict: Emit an OpenAI strict-mode schema.
            **policy: ``concurrency_safe``, ``timeout``, ``retries``, ``idempotent``, ``freeform``,
                ``side_effects``.

        Returns:
            The tool.

        Raises:
            ToolDefinitionError: The name is invalid or an annotation is unsupported.
        """
        qualname = getattr(fn, "__qualname__", None) or type(fn).__name__
        tool_name: str = name or str(getattr(fn, "__name__", ""))
        _check_name(tool_name, qualname)
        doc = parse_docstring(inspect.getdoc(fn))
        signature = build_signature_model(fn, qualname, doc.params)
        parameters = strict_schema(signature.schema) if strict else signature.schema
        text = description if description is not None else doc.description
        return cls(
            fn,
            name=tool_name,
            description=text,
            parameters=parameters,
            signature=signature,
            strict=strict,
            **policy,
        )

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters: dict[str, Any],
        fn: Callable[[dict[str, Any]], Any],
        **policy: Any,
    ) -> Tool:
        """Wrap an external tool described by a raw JSON Schema (MCP and the like).

        Validation uses ``jsonschema`` (the optional ``toolwire[schema]`` extra), with
        format checking. ``fn`` is called with the arguments object as one dict.

        Args:
            name: The tool name.
            description: What the tool does.
            parameters: The JSON Schema of the arguments object.
            fn: Called as ``fn(arguments)``; sync or async.
            **policy: ``concurrency_safe``, ``timeout``, ``retries``, ``idempotent``, ``freeform``,
                ``side_effects``, ``strict``.

        Returns:
            The tool.

        Raises:
            SchemaExtraMissingError: ``jsonschema`` is not installed.
            ToolDefinitionError: The name or the schema is invalid.
        """
        _check_name(name, name)
        validator = _jsonschema_validator(name, parameters)
        return cls(
            fn,
            name=name,
            description=description,
            parameters=parameters,
            signature=None,
            validator=validator,
            **policy,
        )

    # --- use --------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped function directly, bypassing validation."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, is_async={self.is_async})"

    def invoke(self, value: Any, context: ToolContext | None = None) -> Any:
        """Call the function with a validated input (``Validation.input``).

        Args:
            value: The validated input.
            context: Given to the parameter annotated ``ToolContext`` (ignored by a
                tool without one).

        Returns:
            The function's result; a coroutine for async tools, a generator for
            generator tools.
        """
        if self._signature is None:
            return self.fn(value)
        if self.context_param is not None:
            return self.fn(**value, **{self.context_param: context})
        return self.fn(**value)

    def is_concurrency_safe(self, value: Any) -> bool:
        """Whether this call may run alongside others, given its validated input."""
        policy = self.concurrency_safe
        return bool(policy(value)) if callable(policy) else bool(policy)

    def definition(self) -> ToolDef:
        """The neutral tool definition a request offers (free-form if ``input_format``)."""
        if self.input_format is not None:
            return ToolDef(
                self.name, self.description, freeform=True, format=dict(self.input_format)
            )
        return ToolDef(self.name, self.description, self.parameters, True if self.strict else None)

    def validate(
        self,
        raw_arguments: str | None = None,
        *,
        parsed: Any = MISSING,
        repair_policy: RepairPolicy = "no_side_effects",
        recovered: bool = False,
    ) -> Validation:
        """Check a call's arguments; pure and synchronous, never executes anything.

        Args:
            raw_arguments: The arguments text as the model sent it. ``None`` or blank
                is an empty call (valid only when nothing is required).
            parsed: The arguments already parsed as JSON (skips parsing).
            repair_policy: Whether repaired arguments may run (see ``RepairPolicy``).
            recovered: The arguments were recovered from broken tool-call markup (a
                text format's ``ToolRequest.repaired``): repaired, for the policy.

        Returns:
            The validation outcome.
        """
        if self._freeform is not None:
            return self._check_freeform(raw_arguments, parsed)
        if parsed is not MISSING:
            return self._validate_parsed(parsed, raw_arguments, recovered, repair_policy)
        if raw_arguments is not None and not isinstance(raw_arguments, str):
            raise CallerError(
                f"Tool.validate() takes the arguments as JSON text, not a "
                f"{type(raw_arguments).__name__}",
                hint="pass parsed arguments as validate(parsed=...)",
            )
        if raw_arguments is None or not raw_arguments.strip():
            return self._check({}, repaired=False, original=None, empty=True)
        try:
            value, repaired = loads_lenient(raw_arguments)
        except RepairError as exc:
            return self._invalid_json(raw_arguments, exc.message)
        result = self._check(value, repaired=repaired, original=raw_arguments)
        if result.ok and repaired and not _repair_allowed(self, repair_policy):
            return self._repaired_rejected(raw_arguments, value)
        return result

    # --- validation steps -------------------------------------------------------

    def _validate_parsed(
        self, parsed: Any, raw: str | None, recovered: bool, repair_policy: RepairPolicy
    ) -> Validation:
        """Arguments the caller parsed already (a recovered call is repaired, for the policy)."""
        result = self._check(parsed, repaired=recovered, original=raw)
        if result.ok and recovered and not _repair_allowed(self, repair_policy):
            return self._recovered_rejected(raw or "", parsed)
        return result

    def _check_freeform(self, raw: str | None, parsed: Any) -> Validation:
        """A free-form tool's input: the raw text itself, checked against its grammar."""
        text = raw if parsed is MISSING else parsed
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise CallerError(
                f"the free-form tool {self.name!r} takes its input as text, not a "
                f"{type(text).__name__}"
            )
        assert self._freeform is not None
        failure = self._freeform.check(self.name, text)
        if failure is not None:
            return failure
        if self._signature is not None:  # typed: the one parameter gets the text
            return Validation.success(self.name, {self._signature.params[0].name: text})
        return Validation.success(self.name, text)

    def _check(
        self, value: Any, *, repaired: bool, original: str | None, empty: bool = False
    ) -> Validation:
        """Semantic validation of parsed arguments."""
        if (empty or value == {}) and self._required:
            return self._empty_call(repaired, original)
        if not isinstance(value, dict):
            problem = Problem(
                "schema_violation",
                "",
                f"expected a JSON object of arguments; got {short_value(value)}",
            )
            return self._schema_failure([problem], repaired, original)
        if self._signature is not None:
            return self._check_typed(value, repaired, original)
        return self._check_raw(value, repaired, original)

    def _check_sent(self, value: dict[str, Any], original: str) -> Validation:
        """``_check`` of a non-empty dict of arguments that were not repaired.

        A typed, non-strict tool's call is validated here by its model without the three
        calls of the general path (the common call, when the tool has a keyword-arguments
        validator, does not come here: :meth:`Toolset.check` validates it); the rest
        takes the general path.
        """
        signature = self._signature
        if signature is None or self.strict:
            return self._check(value, repaired=False, original=original)
        try:  # the validator itself: model_validate is a Python wrapper around it
            instance = signature.model.__pydantic_validator__.validate_python(value)
        except pydantic.ValidationError as exc:
            return self._schema_failure(pydantic_problems(exc, self._field_names), False, original)
        # Validation.success(name, kwargs) written out: no original kept when not repaired.
        return valid(self.name, signature.kwargs(instance))

    def _check_typed(
        self, value: dict[str, Any], repaired: bool, original: str | None
    ) -> Validation:
        """Validate with the prebuilt pydantic model."""
        assert self._signature is not None
        if self.strict:
            value = self._drop_strict_nulls(value)
        try:  # the validator itself: model_validate is a Python wrapper around it
            instance = self._signature.model.__pydantic_validator__.validate_python(value)
        except pydantic.ValidationError as exc:
            return self._schema_failure(
                pydantic_problems(exc, self._field_names), repaired, original
            )
        kwargs = self._signature.kwargs(instance)
        return Validation.success(self.name, kwargs, repaired=repaired, original=original)

    def _drop_strict_nulls(self, value: dict[str, Any]) -> dict[str, Any]:
        """In strict mode the model sends ``null`` for an omitted optional parameter."""
        assert self._signature is not None
        dropped = {
            p.name
            for p in self._signature.params
            if not p.required and not p.accepts_none and value.get(p.name, 0) is None
        }
        return {k: v for k, v in value.items() if k not in dropped} if dropped else value

    def _check_raw(self, value: dict[str, Any], repaired: bool, original: str | None) -> Validation:
        """Validate with the prebuilt ``jsonschema`` validator."""
        errors = sorted(self._validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        if errors:
            return self._schema_failure(jsonschema_problems(errors), repaired, original)
        return Validation.success(self.name, value, repaired=repaired, original=original)

    # --- failures ---------------------------------------------------------------

    def _schema_failure(
        self, problems: list[Problem], repaired: bool, original: str | None
    ) -> Validation:
        kind = overall_kind(problems)
        message = render_message(
            self.name,
            headline_for(kind, problems),
            [p.render() for p in problems],
            self.parameters,
        )
        return Validation.failure(
            self.name, kind, message, problems=problems, repaired=repaired, original=original
        )

    def _empty_call(self, repaired: bool, original: str | None) -> Validation:
        names = ", ".join(self._required)
        message = render_message(
            self.name,
            f"it was called with no arguments, but it requires: {names}.",
            [],
            self.parameters,
        )
        return Validation.failure(
            self.name, "empty_call", message, repaired=repaired, original=original
        )

    def _invalid_json(self, raw: str, reason: str) -> Validation:
        message = render_message(
            self.name,
            "the arguments are not valid JSON and could not be recovered.",
            [f"- problem: {reason}", f"- you sent: {echo(raw)}"],
            self.parameters,
        )
        return Validation.failure(self.name, "invalid_json", message)

    def _recovered_rejected(self, raw: str, value: Any) -> Validation:
        message = render_message(
            self.name,
            "the tool-call markup was incomplete (a closing tag was missing). The "
            f"arguments could be read as {short_value(value)}, but this tool has side "
            "effects, so it is not run on a guess.",
            [f"- you sent: {echo(raw)}"],
            self.parameters,
        )
        return Validation.failure(self.name, "invalid_json", message, repaired=True, original=raw)

    def _repaired_rejected(self, raw: str, value: Any) -> Validation:
        message = render_message(
            self.name,
            "the arguments are not valid JSON. They could be read as "
            f"{short_value(value)}, but this tool has side effects, so it is not run on a "
            "guess.",
            [f"- you sent: {echo(raw)}"],
            self.parameters,
        )
        return Validation.failure(self.name, "invalid_json", message, repaired=True, original=raw)


class Toolset:
    """The tools offered to a model, by name.

    Args:
        tools: Tools, or plain functions (wrapped with :func:`tool`'s defaults).
        repair_policy: Which repaired calls run without going back to the model.

    Raises:
        CallerError: Two tools share a name, or an entry is not callable.
    """

    def __init__(
        self,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        *,
        repair_policy: RepairPolicy = "no_side_effects",
    ) -> None:
        if repair_policy not in _REPAIR_POLICIES:
            raise CallerError(
                f"unknown repair_policy {repair_policy!r}",
                hint=f"use one of {', '.join(_REPAIR_POLICIES)}",
            )
        self.repair_policy: RepairPolicy = repair_policy
        self._tools: dict[str, Tool] = {}
        for entry in tools:
            self.add(entry)

    def add(self, entry: Tool | Callable[..., Any]) -> Tool:
        """Register a tool (or a function, wrapped with defaults) and return it."""
        if not isinstance(entry, Tool):
            if not callable(entry):
                raise CallerError(f"{entry!r} is neither a Tool nor a function")
            entry = Tool.from_function(entry)
        if entry.name in self._tools:
            raise CallerError(
                f"two tools are named {entry.name!r}", hint="pass name= to one of them"
            )
        self._tools[entry.name] = entry
        return entry

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise CallerError(f"no tool named {name!r}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        """The tool names, in registration order."""
        return list(self._tools)

    def definitions(self) -> list[ToolDef]:
        """The neutral tool definition of every tool."""
        return [t.definition() for t in self._tools.values()]

    def closest(self, name: str, n: int = 3) -> list[str]:
        """The registered names most similar to ``name`` (case-insensitive)."""
        lowered = {k.lower(): k for k in self._tools}
        matches = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.5)
        return [lowered[m] for m in matches]

    def validate(self, request: ToolRequest) -> Validation:
        """Validate an assembled request against the tool it names.

        Arguments the assembler parsed are used as they are; arguments it could not
        parse go through repair. An unknown name gets an ``unknown_tool`` result that
        lists the closest names.
        """
        return self.check(request)[1]

    def check(self, request: ToolRequest) -> tuple[Tool | None, Validation]:
        """The tool ``request`` names (``None``: no such tool) and :meth:`validate`'s
        verdict, with one lookup (the executor needs both for every call)."""
        found, value, verdict = self.admit(request)
        if verdict is None:
            assert found is not None  # admitted: a call of a known tool
            return found, valid(found.name, value)
        return found, verdict

    def admit(self, request: ToolRequest) -> tuple[Tool | None, Any, Validation | None]:
        """:meth:`check` without making the common call's verdict: the tool, the call's
        input, and its :class:`Validation`, or ``None`` for the common call.

        The common call (sent whole and well-formed, for a typed, non-strict JSON tool,
        and valid) is admitted with its coerced input and no verdict: its verdict would be
        ``valid(tool.name, input)``, an object of eight fields that the executor needs
        only when something reads it (a call record, the round's validations), not to
        run the call. Any other call has its verdict made here (its input is the
        verdict's).
        """
        found = self._tools.get(request.name)
        if found is None:
            return None, None, self.unknown(request.name)
        value = request.input
        validate = found._validate_kwargs  # None unless a typed, non-strict JSON tool
        if (
            validate is not None
            and value.__class__ is dict
            and request.error is None
            and not request.repaired
            and not request.freeform
        ):
            # The common call, without _check_sent's call. An empty one it passes has
            # nothing required: _check's empty_call is for a tool with required
            # parameters, which it rejects.
            try:
                return found, validate(value), None
            except pydantic.ValidationError:
                pass  # the model validates it again and words what is wrong
        verdict = self._verdict(found, request)
        return found, verdict.input, verdict

    def _verdict(self, found: Tool, request: ToolRequest) -> Validation:
        """:meth:`check`'s verdict on a call of ``found`` that is not the common one."""
        if request.freeform != found.freeform:  # a custom call for a JSON tool, or back
            return kind_mismatch(
                found.name, called_freeform=request.freeform, schema=found.parameters
            )
        raw = request.raw_arguments
        if request.freeform:
            return found.validate(raw)
        value = request.input
        if request.error is None and isinstance(value, dict):
            if value and not request.repaired:
                # Sent whole and well-formed, not empty: the checks of _check with
                # nothing to repair or reject, in one call.
                return found._check_sent(value, raw)
            # Tool.validate(raw, parsed=...) without its keyword call and tests: a JSON
            # call of a JSON tool (tested above) with parsed arguments goes straight here.
            return found._validate_parsed(value, raw, request.repaired, self.repair_policy)
        return found.validate(raw, repair_policy=self.repair_policy)

    def unknown(self, name: str) -> Validation:
        """The result for a call to a tool that does not exist."""
        close = self.closest(name)
        details = []
        if close:
            details.append(f"- did you mean: {', '.join(f'`{c}`' for c in close)}?")
        details.append(f"- available tools: {', '.join(f'`{n}`' for n in self._tools) or 'none'}")
        message = render_message(name, f"there is no tool named `{name}`.", details, None)
        return Validation.failure(name, "unknown_tool", message)


# --- the decorator --------------------------------------------------------------------


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    concurrency_safe: ConcurrencyPolicy = False,
    timeout: float | None = None,
    retries: int = 0,
    idempotent: bool = False,
    side_effects: bool = True,
    strict: bool = False,
    max_result_tokens: int | Literal[False] | None = None,
    freeform: bool | dict[str, Any] = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(  # noqa: PLR0913 — the @tool options (Tool's), keyword-only
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    concurrency_safe: ConcurrencyPolicy = False,
    timeout: float | None = None,
    retries: int = 0,
    idempotent: bool = False,
    side_effects: bool = True,
    strict: bool = False,
    max_result_tokens: int | Literal[False] | None = None,
    freeform: bool | dict[str, Any] = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a function into a :class:`Tool`; use bare (``@tool``) or with options.

    Args:
        fn: The function (when used bare).
        name: The tool name; defaults to ``fn.__name__``.
        description: Defaults to the docstring's description.
        concurrency_safe: ``True`` if calls may run in parallel with others, or a
            function of the validated input deciding per call.
        timeout: Seconds per call; ``None`` for no limit.
        retries: Re-runs of a call that raised (the executor's business).
        idempotent: Running the same call twice is harmless.
        side_effects: ``False`` for pure reads: their repaired arguments run directly.
        strict: Emit an OpenAI strict-mode schema.
        max_result_tokens: Cut this tool's results at this many tokens instead of the
            run's ``ContextPolicy.max_result_tokens``; ``False``: never cut them.
        freeform: ``True`` for a custom tool taking free-form text (any text), or its
            ``format``: ``{"type": "text"}`` or ``{"type": "grammar", "syntax": "lark" |
            "regex", "definition": ...}``. The function then has exactly one parameter,
            which gets the model's raw input text.

    Returns:
        The tool, or a decorator producing it.

    Raises:
        ToolDefinitionError: The function cannot become a tool.
    """

    def build(func: Callable[..., Any]) -> Tool:
        return Tool.from_function(
            func,
            name=name,
            description=description,
            strict=strict,
            concurrency_safe=concurrency_safe,
            timeout=timeout,
            retries=retries,
            idempotent=idempotent,
            side_effects=side_effects,
            max_result_tokens=max_result_tokens,
            freeform=freeform,
        )

    if fn is not None:
        return build(fn)
    return build


# --- helpers ----------------------------------------------------------------------------


def _is_async(fn: Callable[..., Any]) -> bool:
    """Coroutine functions, including callable objects with an async ``__call__``."""
    if inspect.iscoroutinefunction(fn):
        return True
    # A callable object: look at its class's __call__ (callable() says nothing of async).
    call = getattr(type(fn), "__call__", None)  # noqa: B004
    return call is not None and inspect.iscoroutinefunction(call)


def _generator_kind(fn: Callable[..., Any]) -> Literal["sync", "async"] | None:
    """``"async"`` for an async generator function, ``"sync"`` for a generator function
    (a callable object's ``__call__`` counts), else ``None``."""
    for target in (fn, getattr(type(fn), "__call__", None)):  # noqa: B004
        if inspect.isasyncgenfunction(target):
            return "async"
        if inspect.isgeneratorfunction(target):
            return "sync"
    return None


def _check_name(name: str, qualname: str) -> None:
    """Providers accept ``[A-Za-z0-9_-]{1,64}``; anything else fails at definition."""
    if not _NAME_PATTERN.match(name):
        raise ToolDefinitionError(
            f"tool name {name!r} is not valid for providers",
            function=qualname,
            hint="use 1-64 letters, digits, '_' or '-'; pass name= to choose one",
        )


def _check_policy(name: str, concurrency_safe: object, timeout: object, retries: object) -> None:
    """Reject nonsensical policy values at definition time."""
    if not isinstance(concurrency_safe, bool) and not callable(concurrency_safe):
        raise ToolDefinitionError(
            "concurrency_safe must be a bool or a function of the input", function=name
        )
    error = functools.partial(ToolDefinitionError, function=name)
    if timeout is not None:
        check_number("timeout", timeout, error=error)
    check_int("retries", retries, error=error)


def _check_result_cap(name: str, cap: object) -> None:
    """``max_result_tokens``: ``None``, ``False`` or a positive int."""
    if cap is None or cap is False:
        return
    error = functools.partial(
        ToolDefinitionError, function=name, hint="or pass False (never cut) or None (the default)"
    )
    check_int("max_result_tokens", cap, minimum=1, error=error)


def _required_names(signature: SignatureModel | None, parameters: dict[str, Any]) -> list[str]:
    """Names the call cannot do without (an empty call then is ``empty_call``)."""
    if signature is not None:
        return [p.name for p in signature.params if p.required]
    required = parameters.get("required", [])
    return [str(r) for r in required] if isinstance(required, list) else []


def _repair_allowed(found: Tool, policy: RepairPolicy) -> bool:
    """Whether repaired arguments may run for this tool under the policy."""
    if policy == "always":
        return True
    if policy == "never":
        return False
    return not found.side_effects


def _jsonschema_validator(name: str, parameters: dict[str, Any]) -> Any:
    """Build (once) a ``jsonschema`` validator with format checking."""
    try:
        # Imported here: jsonschema is the optional toolwire[schema] extra (untyped).
        jsonschema: Any = importlib.import_module("jsonschema")
    except ImportError as exc:
        raise SchemaExtraMissingError(
            f"tool {name!r} has a raw JSON Schema, which needs the jsonschema package"
        ) from exc
    if not isinstance(parameters, dict):
        raise ToolDefinitionError("parameters must be a JSON Schema object", function=name)
    cls = jsonschema.validators.validator_for(parameters)
    try:
        cls.check_schema(parameters)
    except jsonschema.exceptions.SchemaError as exc:
        raise ToolDefinitionError(f"invalid JSON Schema ({exc.message})", function=name) from exc
    # Its patterns run in linear time: a raw schema comes from elsewhere (patterns.py).
    problem = check_patterns(parameters)
    if problem is not None:
        raise ToolDefinitionError(f"unsupported JSON Schema ({problem})", function=name)
    cls = linear_validator(cls)
    return cls(parameters, format_checker=cls.FORMAT_CHECKER)
