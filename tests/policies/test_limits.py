"""Usage limits: requests, tool calls, tokens."""

from __future__ import annotations

import dataclasses

import pytest

from toolwire.errors import CallerError, UsageLimitExceededError
from toolwire.messages import Usage
from toolwire.policies.limits import UsageLimits


def test_requests() -> None:
    limits = UsageLimits(max_requests=2)
    limits.check_request(0)
    limits.check_request(1)
    with pytest.raises(UsageLimitExceededError) as info:
        limits.check_request(2)
    assert info.value.limit == "max_requests" and info.value.used == 3


def test_tool_calls() -> None:
    assert UsageLimits().tool_calls_left(100) is None
    limits = UsageLimits(max_tool_calls=3)
    assert limits.tool_calls_left(1) == 2
    assert limits.tool_calls_left(5) == 0
    limits.check_tool_calls(3)
    with pytest.raises(UsageLimitExceededError):
        limits.check_tool_calls(4)


@pytest.mark.parametrize(
    ("limits", "name"),
    [
        (UsageLimits(max_input_tokens=10), "max_input_tokens"),
        (UsageLimits(max_output_tokens=4), "max_output_tokens"),
        (UsageLimits(max_total_tokens=15), "max_total_tokens"),
    ],
)
def test_tokens(limits: UsageLimits, name: str) -> None:
    limits.check_tokens(Usage(input_tokens=5, output_tokens=3))
    with pytest.raises(UsageLimitExceededError) as info:
        limits.check_tokens(Usage(input_tokens=11, output_tokens=5))
    assert info.value.limit == name
    assert "raise the limit" in str(info.value)


@pytest.mark.parametrize("value", [-1, 1.5, True, "3"])
def test_bad_values(value: object) -> None:
    with pytest.raises(CallerError):
        UsageLimits(max_requests=value)  # type: ignore[arg-type]


def test_capped_says_whether_any_cap_is_set() -> None:
    # The agent checks nothing for limits that are not capped: each cap must count,
    # a cap added later too (every field the constructor takes is a cap).
    assert not UsageLimits().capped
    caps = [f.name for f in dataclasses.fields(UsageLimits) if f.init]
    assert len(caps) == 5
    for name in caps:
        assert UsageLimits(**{name: 0}).capped, name
    assert UsageLimits(max_requests=1) == UsageLimits(max_requests=1)
    assert "capped" not in repr(UsageLimits(max_requests=1))
