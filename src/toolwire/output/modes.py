"""How a run gets its output: text (the default), the ``final_result`` tool, or native.

The agent loop knows one object per run, an :class:`OutputRun`, and asks it at fixed
points: which ``tool_choice`` and tools a request carries (``choice``, ``offer``,
``format``), which calls a forced final request still runs (``keep``), what a round's
validations say (``observe``), whether a turn ends the run or needs feedback
(``judge``), and what ``RunResult.output`` is (``value``). Text output answers every
question as the loop did before, so the loop has no branch of its own for it.

* ``tool`` (the default for a structured type): ``final_result`` is offered with the
  other tools and never routed out; the run ends when a call of it validates; a text
  answer goes back as feedback (failure class ``no_output``); the forced last request
  offers only ``final_result`` and names it in ``tool_choice``.
* ``native``, on a model whose ``native_output`` is ``"response_format"`` (OpenAI Chat
  and Responses): the request carries the schema (``ModelRequest.output``), the answer
  is JSON text, validated when the turn ends; on ``"tool_forcing"`` (Anthropic): tool
  mode with ``tool_choice`` forcing a call every request (``final_result`` alone when
  there are no other tools, else ``required``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pydantic

from ..errors import CallerError
from ..messages import ToolResult, ToolStatus
from ..tooldef import OutputFormat, ToolChoice, ToolDef
from ..tools.tool import Tool, Toolset
from ..tools.validate import Validation, pydantic_problems, schema_text
from ..turn import Turn
from .partial import PartialWatch
from .spec import FINAL_RESULT, OutputSpec, constructs
from .tool import OutputTool, with_output_tool

__all__ = ["OUTPUT_MODES", "Output", "OutputMode", "OutputRun", "Step"]

OutputMode = Literal["tool", "native"]
OUTPUT_MODES: tuple[OutputMode, ...] = ("tool", "native")

#: The constructs each native mode refuses, and why (checked when the agent is built).
_REFUSED: dict[str, dict[str, str]] = {
    # OpenAI's strict JSON schema mode takes anyOf but not oneOf (which pydantic writes
    # for a discriminated union) or allOf.
    "response_format": {
        "oneOf": "oneOf (a discriminated union): use a plain union (X | Y) without a "
        "discriminator, or output_mode='tool'",
        "allOf": "allOf: flatten the type, or use output_mode='tool'",
    },
    # Anthropic's schema support lists recursive schemas as unsupported.
    "tool_forcing": {
        "recursive": "a recursive type (a $ref that reaches itself): use output_mode='tool' "
        "or a type without recursion",
    },
}

_TEXT_FEEDBACK = (
    "Your reply was text, but this run's answer must be given by calling the "
    f"`{FINAL_RESULT}` tool with the answer as its arguments. Call `{FINAL_RESULT}` now."
)


@dataclass(frozen=True, slots=True)
class Step:
    """What a turn means for the run's output.

    Attributes:
        done: The output is in: the run ends with this turn.
        retry: Ask again (another round): the output is missing or invalid.
        feedback: A message for the model (``None``: the turn's results say it).
        kind: The failure class the retry counts under (``None``: the results'
            own classes were counted already).
    """

    done: bool = False
    retry: bool = False
    feedback: str | None = None
    kind: Literal["no_output", "invalid_json", "schema_violation"] | None = None


GO_ON = Step()
DONE = Step(done=True)


class OutputRun:
    """One run's output: plain text. The structured modes override what they change."""

    text = True
    observes = False
    """Whether the mode has an :meth:`observe` of its own (the agent makes the round's
    validations only for one that does): set for each subclass from that, not by hand."""
    format: OutputFormat | None = None
    """The native output format each request carries (``None``: text). An attribute
    set once per run, not a method: asking it starts no function (bench/README.md,
    issue 30's twelfth pass)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.observes = cls.observe is not OutputRun.observe

    def choice(self, choice: ToolChoice, forced: bool) -> ToolChoice:
        """The request's ``tool_choice`` (``"none"`` when forced)."""
        return "none" if forced else choice

    def offer(self, tools: list[ToolDef], forced: bool) -> list[ToolDef]:
        """The tools the request offers (the context policy chose ``tools``)."""
        return tools

    def keep(self, forced: bool) -> frozenset[str]:
        """Tools whose calls still run in a forced final request."""
        return frozenset()

    def observe(self, validations: Sequence[Validation], results: Sequence[ToolResult]) -> None:
        """A round's calls were answered."""

    def judge(self, turn: Turn, forced: bool) -> Step:
        """What ``turn`` means for the output."""
        return GO_ON

    def value(self, turn: Turn) -> Any:
        """``RunResult.output`` for a run that ends with ``turn``."""
        return turn.text

    def watch(self, emit: Callable[[Any], None]) -> Callable[[Any], None]:
        """The run's emitter, with ``PartialOutput`` events added where they apply."""
        return emit


TEXT = OutputRun()  # no state: every text run shares it


class _ToolRun(OutputRun):
    """Tool mode: the output is the first valid ``final_result`` call."""

    text = False

    def __init__(self, spec: OutputSpec, definition: ToolDef, force: ToolChoice | None) -> None:
        self.spec = spec
        self.definition = definition
        self.force = force  # native tool forcing: the choice of every request
        self.output: Any = None
        self.accepted = False
        self.watcher: PartialWatch | None = None

    def choice(self, choice: ToolChoice, forced: bool) -> ToolChoice:
        if self.watcher is not None:
            self.watcher.reset()
        if forced:
            return FINAL_RESULT
        return self.force or choice

    def offer(self, tools: list[ToolDef], forced: bool) -> list[ToolDef]:
        if forced:
            return [self.definition]
        if any(t.name == FINAL_RESULT for t in tools):
            return tools
        return [*tools, self.definition]  # routing left it out: it is never routed out

    def keep(self, forced: bool) -> frozenset[str]:
        return frozenset({FINAL_RESULT})

    def observe(self, validations: Sequence[Validation], results: Sequence[ToolResult]) -> None:
        for validation, result in zip(validations, results, strict=True):
            if self.accepted or result.name != FINAL_RESULT:
                continue
            if validation.ok and result.status is ToolStatus.OK:
                self.output, self.accepted = validation.input, True

    def judge(self, turn: Turn, forced: bool) -> Step:
        if self.accepted:
            return DONE
        if any(call.name == FINAL_RESULT for call in turn.tool_calls):
            return Step(retry=True)  # its error result says what was wrong
        if turn.tool_calls:
            return GO_ON
        return Step(retry=True, feedback=_TEXT_FEEDBACK, kind="no_output")

    def value(self, turn: Turn) -> Any:
        return self.output

    def watch(self, emit: Callable[[Any], None]) -> Callable[[Any], None]:
        self.watcher = PartialWatch(self.spec, text=False, emit=emit)
        return self.watcher


class _NativeRun(OutputRun):
    """Native JSON mode: the answer text is the output, validated when the turn ends."""

    text = False

    def __init__(self, spec: OutputSpec, output_format: OutputFormat) -> None:
        self.spec = spec
        self.format = output_format
        self.output: Any = None
        self.watcher: PartialWatch | None = None

    def choice(self, choice: ToolChoice, forced: bool) -> ToolChoice:
        if self.watcher is not None:
            self.watcher.reset()
        return "none" if forced else choice

    def judge(self, turn: Turn, forced: bool) -> Step:
        if turn.tool_calls:
            return GO_ON
        text = turn.text.strip()
        try:
            arguments = json.loads(text)
        except ValueError as exc:
            feedback = self._problem(f"it is not JSON ({exc})")
            return Step(retry=True, feedback=feedback, kind="invalid_json")
        try:
            self.output = self.spec.validate(self.spec.drop_strict_nulls(arguments))
        except pydantic.ValidationError as exc:
            lines = [p.render() for p in pydantic_problems(exc)]
            return Step(retry=True, feedback=self._problem(None, lines), kind="schema_violation")
        return DONE

    def _problem(self, headline: str | None, lines: Sequence[str] = ()) -> str:
        head = headline or "it does not match the required schema"
        return "\n".join(
            [
                f"Your answer could not be used: {head}.",
                *lines,
                f"Answer again with JSON only, matching this schema: {schema_text(self.spec.schema)}",
            ]
        )

    def value(self, turn: Turn) -> Any:
        return self.output

    def watch(self, emit: Callable[[Any], None]) -> Callable[[Any], None]:
        self.watcher = PartialWatch(self.spec, text=True, emit=emit)
        return self.watcher


class Output:
    """An agent's output settings: ``Agent(output_type=..., output_mode=...)``, checked.

    Args:
        output_type: ``None`` or ``str``: text output; else a structured type.
        mode: ``"tool"`` or ``"native"``.
        model: The agent's model (for ``native``: its ``native_output`` and name).

    Raises:
        CallerError: The mode is unknown, the model has no native mode, the type has
            no JSON Schema, or the schema uses a construct the native mode refuses.
    """

    def __init__(self, output_type: Any, mode: object, model: object) -> None:
        if mode not in OUTPUT_MODES:
            raise CallerError(
                f"output_mode={mode!r}; use one of {', '.join(map(repr, OUTPUT_MODES))}"
            )
        self.spec = None if output_type in (None, str) else OutputSpec.of(output_type)
        self.native: str | None = None
        if self.spec is not None and mode == "native":
            self.native = _native_kind(model, self.spec)

    @property
    def text(self) -> bool:
        """Whether the run's output is its answer text."""
        return self.spec is None

    def check_choice(self, choice: ToolChoice) -> ToolChoice:
        """The agent's ``tool_choice``, if the output can be given under it.

        Raises:
            CallerError: ``"none"`` with a ``final_result`` output (the model could
                never call it before the forced last request).
        """
        if choice == "none" and self.spec is not None and self.native != "response_format":
            raise CallerError(
                "tool_choice='none' forbids the final_result call that gives the output_type",
                hint="leave tool_choice='auto', or use output_mode='native' on a model "
                "with response_format",
            )
        return choice

    def tools(self, tools: Toolset) -> Toolset:
        """The agent's tools, plus ``final_result`` where the mode calls it.

        Raises:
            ToolDefinitionError: A tool of the caller's is named ``final_result``.
        """
        if self.spec is None or self.native == "response_format":
            return tools
        return with_output_tool(tools, self.spec)

    def gate(self, gate: Callable[[Any, Tool], Awaitable[Any]] | None) -> Any:
        """The permission gate, with ``final_result`` never put to approval (the gate's
        answer passes through: ``None``, a reason, or a paused run's ``HOLD``)."""
        if gate is None or self.text:
            return gate

        async def gated(request: Any, tool: Tool) -> Any:
            return None if isinstance(tool, OutputTool) else await gate(request, tool)

        return gated

    def start(self, toolset: Toolset) -> OutputRun:
        """The output of one run (over the run's tools)."""
        spec = self.spec
        if spec is None:
            return TEXT
        if self.native == "response_format":
            strict = spec.strict_schema()
            return _NativeRun(spec, OutputFormat(FINAL_RESULT, strict))
        force: ToolChoice | None = None
        if self.native == "tool_forcing":
            others = [t for t in toolset if t.name not in (FINAL_RESULT, "read_result")]
            force = "required" if others else FINAL_RESULT
        return _ToolRun(spec, toolset[FINAL_RESULT].definition(), force)

    def settings(self) -> dict[str, Any]:
        """What the audit log records of the output settings."""
        if self.spec is None:
            return {}
        mode = "tool" if self.native is None else f"native:{self.native}"
        return {"output_type": _type_name(self.spec.type), "output_mode": mode}


def _native_kind(model: object, spec: OutputSpec) -> str:
    """The model's native mode, checked against what the schema uses."""
    name = getattr(model, "name", repr(model))
    kind = getattr(model, "native_output", None)
    if kind not in _REFUSED:
        raise CallerError(
            f"output_mode='native': the model {name!r} has no native structured output mode",
            hint="use output_mode='tool' (the default), which works with every model",
        )
    refused = _REFUSED[kind]
    for construct in sorted(constructs(spec.schema)):
        if construct in refused:
            raise CallerError(
                f"output_type={_type_name(spec.type)}: the native mode of {name!r} ({kind}) "
                f"cannot take {refused[construct].split(':')[0]}",
                hint=refused[construct].split(": ", 1)[-1],
            )
    return str(kind)


def _type_name(output_type: Any) -> str:
    return getattr(output_type, "__name__", None) or repr(output_type)
