"""Usage limits: caps on model requests, executed tool calls and tokens for one run.

Checked at the three points where each can be known: the request count before every
request, the tool-call count before a turn's calls execute (a turn that would pass it
executes none of its calls — each is answered ``not_executed`` — and the run stops),
and the token counts after every turn (the provider reports usage at the end). An
agent without caps (``UsageLimits.capped`` is ``False``) checks none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..checks import check_int
from ..errors import UsageLimitExceededError
from ..messages import Usage

__all__ = ["UsageLimits"]


@dataclass(frozen=True)
class UsageLimits:
    """Caps for one run (``None``: no cap).

    Attributes:
        max_requests: Model requests.
        max_tool_calls: Tool calls executed.
        max_input_tokens: Input tokens, summed over requests.
        max_output_tokens: Output tokens, summed over requests.
        max_total_tokens: Input plus output tokens.
    """

    max_requests: int | None = None
    max_tool_calls: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    capped: bool = field(init=False, repr=False, compare=False)
    """Whether any cap is set (decided when made). A run of an agent without caps, the
    default, asks none of the checks below (a function each, every round)."""

    def __post_init__(self) -> None:
        capped = False
        for name in (
            "max_requests",
            "max_tool_calls",
            "max_input_tokens",
            "max_output_tokens",
            "max_total_tokens",
        ):
            value = getattr(self, name)
            if value is not None:
                check_int(f"UsageLimits.{name}", value)
                capped = True
        object.__setattr__(self, "capped", capped)  # frozen: set once, here

    def check_request(self, made: int) -> None:
        """Raise if one more request would pass ``max_requests``."""
        if self.max_requests is not None and made + 1 > self.max_requests:
            raise UsageLimitExceededError("max_requests", self.max_requests, made + 1)

    def tool_calls_left(self, executed: int) -> int | None:
        """How many more calls may execute (``None``: no cap)."""
        if self.max_tool_calls is None:
            return None
        return max(0, self.max_tool_calls - executed)

    def check_tool_calls(self, executed: int) -> None:
        """Raise if ``executed`` calls pass ``max_tool_calls``."""
        if self.max_tool_calls is not None and executed > self.max_tool_calls:
            raise UsageLimitExceededError("max_tool_calls", self.max_tool_calls, executed)

    def check_tokens(self, usage: Usage) -> None:
        """Raise if the usage so far passes a token cap."""
        if self.max_input_tokens is self.max_output_tokens is self.max_total_tokens is None:
            return  # no token cap (the default): nothing to add up
        for name, used in (
            ("max_input_tokens", usage.input_tokens),
            ("max_output_tokens", usage.output_tokens),
            ("max_total_tokens", usage.total_tokens),
        ):
            value = getattr(self, name)
            if value is not None and used > value:
                raise UsageLimitExceededError(name, value, used)
