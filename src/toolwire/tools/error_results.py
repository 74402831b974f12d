"""Error results: what the model reads when one of its calls failed.

An invalid or failed call is never a crash: it becomes that call's error
:class:`~toolwire.messages.ToolResult`, whose content tells the model what went wrong
and, for an invalid call, what the tool expects (the schema), so that the model can
try again. When to stop trying is the retry budget's decision
(:mod:`toolwire.policies.budgets`). Every call outcome is built in
:mod:`toolwire.tools.outcomes`; these are its names for failed calls.
"""

from __future__ import annotations

from .outcomes import FAILURE_ADVICE, error_result, failure_content, failure_result

__all__ = ["FAILURE_ADVICE", "error_result", "failure_content", "failure_result"]
