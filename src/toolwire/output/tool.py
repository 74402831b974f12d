"""The ``final_result`` tool: the model gives its structured answer by calling it.

It is a :class:`~toolwire.tools.Tool` like any other, so the one path that makes calls
correct serves it too: the assembler reads its arguments on every provider and every
open-weight format, the executor answers it exactly once, an invalid call goes back to
the model as that call's error result (which field, what was wrong, and the schema),
counted by the run's retry budgets. Only its validation is its own: pydantic's
``TypeAdapter`` of the output type (validators included), and the validated input is
the output value itself, which the run reads from the call's validation.
"""

from __future__ import annotations

from typing import Any

import pydantic

from ..errors import ToolDefinitionError
from ..tools.tool import Tool, Toolset
from ..tools.validate import Validation, pydantic_problems
from .spec import FINAL_RESULT, OutputSpec

__all__ = ["ACCEPTED", "OutputTool", "with_output_tool"]

ACCEPTED = "Final result received."
"""The result text of an accepted ``final_result`` call (the run ends with it)."""


class OutputTool(Tool):
    """The ``final_result`` tool of one output type.

    Harmless to run early or twice (no side effects); its results are never cut.
    """

    def __init__(self, spec: OutputSpec) -> None:
        super().__init__(
            _accept,
            name=FINAL_RESULT,
            description=spec.description,
            parameters=spec.schema,
            signature=None,
            concurrency_safe=True,
            idempotent=True,
            side_effects=False,
            max_result_tokens=False,
        )
        self.spec = spec

    def _check_raw(self, value: dict[str, Any], repaired: bool, original: str | None) -> Validation:
        """Validate with the output type's adapter; the input is the output value."""
        try:
            output = self.spec.validate(value)
        except pydantic.ValidationError as exc:
            return self._schema_failure(pydantic_problems(exc), repaired, original)
        return Validation.success(self.name, output, repaired=repaired, original=original)


def _accept(value: Any) -> str:
    """The tool's function: the value was accepted by validation; the run ends."""
    return ACCEPTED


def with_output_tool(tools: Toolset, spec: OutputSpec) -> Toolset:
    """``tools`` plus ``final_result``.

    Raises:
        ToolDefinitionError: A tool of the caller's is named ``final_result``.
    """
    if FINAL_RESULT in tools:
        raise ToolDefinitionError(
            f"the name {FINAL_RESULT!r} is the structured output tool's "
            "(Agent(output_type=...)); a tool of yours cannot have it",
            function=FINAL_RESULT,
            hint="rename your tool, e.g. @tool(name='submit_result')",
        )
    extended = Toolset(list(tools), repair_policy=tools.repair_policy)
    extended.add(OutputTool(spec))
    return extended
