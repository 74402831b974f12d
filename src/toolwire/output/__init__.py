"""Structured output: ``Agent(output_type=T)`` makes ``RunResult.output`` a ``T``.

The type becomes a JSON Schema and a validator (:mod:`.spec`), the schema the
parameters of the ``final_result`` tool (:mod:`.tool`), through which the model gives
its answer on every provider and every open-weight format; a provider's native mode is
used where asked (``output_mode="native"``). The loop reaches all of it through one
object per run (:mod:`.modes`); partial output streams as ``PartialOutput`` events
(:mod:`.partial`).
"""

from __future__ import annotations

from .modes import OUTPUT_MODES, Output, OutputMode, OutputRun, Step
from .partial import PartialOutput, PartialWatch
from .spec import FINAL_RESULT, WRAP_KEY, OutputSpec, constructs
from .tool import ACCEPTED, OutputTool, with_output_tool

__all__ = [
    "ACCEPTED",
    "FINAL_RESULT",
    "OUTPUT_MODES",
    "WRAP_KEY",
    "Output",
    "OutputMode",
    "OutputRun",
    "OutputSpec",
    "OutputTool",
    "PartialOutput",
    "PartialWatch",
    "Step",
    "constructs",
    "with_output_tool",
]
