"""Permissions: the pure policy, its precedence and its bad input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolwire
from toolwire import CallerError, Permissions


def test_precedence_deny_then_ask_then_allow_then_default() -> None:
    policy = Permissions(allow=["*"], deny=["delete_*"], ask=["write_*", "delete_all"])
    assert policy.decide("delete_all") == "deny"  # deny wins over ask and allow
    assert policy.decide("write_file") == "ask"  # ask wins over allow
    assert policy.decide("read_file") == "allow"
    assert Permissions(default="deny").decide("anything") == "deny"
    assert Permissions().decide("anything") == "allow"


def test_patterns_are_fnmatch_and_case_sensitive() -> None:
    policy = Permissions(deny=["fs.rm?", "net[12]"], default="allow")
    assert policy.decide("fs.rmx") == "deny"
    assert policy.decide("fs.rmxx") == "allow"
    assert policy.decide("net2") == "deny"
    assert policy.decide("NET2") == "allow"


def test_side_effects_policy_applies_after_the_patterns() -> None:
    policy = Permissions(allow=["write_notes"], side_effects="ask")
    assert policy.decide("delete_db", side_effects=True) == "ask"
    assert policy.decide("read_db", side_effects=False) == "allow"
    assert policy.decide("write_notes", side_effects=True) == "allow"  # named: pattern wins


def test_decide_tool_uses_the_declared_side_effects() -> None:
    @toolwire.tool(side_effects=False)
    def look(x: int) -> int:
        return x

    @toolwire.tool
    def change(x: int) -> int:
        return x

    policy = Permissions(side_effects="deny")
    assert policy.decide_tool(look) == "allow"
    assert policy.decide_tool(change) == "deny"


def test_a_single_string_is_one_pattern() -> None:
    assert Permissions(deny="delete_*").deny == ("delete_*",)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"default": "maybe"},
        {"side_effects": "yes"},
        {"deny": [1]},
        {"allow": [""]},
        {"ask": None},
        {"deny": b"x"},
    ],
)
def test_bad_input_is_a_caller_error(kwargs: dict[str, object]) -> None:
    with pytest.raises(CallerError):
        Permissions(**kwargs)  # type: ignore[arg-type]


def test_the_policy_is_frozen() -> None:
    policy = Permissions(deny=["x"])
    with pytest.raises(AttributeError):
        policy.deny = ()  # type: ignore[misc]


names = st.text(alphabet="abcd_*?", min_size=1, max_size=6)


@given(
    allow=st.lists(names, max_size=3),
    deny=st.lists(names, max_size=3),
    ask=st.lists(names, max_size=3),
    name=st.text(alphabet="abcd_", min_size=1, max_size=6),
)
def test_precedence_holds_for_any_patterns(
    allow: list[str], deny: list[str], ask: list[str], name: str
) -> None:
    import fnmatch

    decision = Permissions(allow=allow, deny=deny, ask=ask, default="ask").decide(name)
    if any(fnmatch.fnmatchcase(name, p) for p in deny):
        assert decision == "deny"
    elif any(fnmatch.fnmatchcase(name, p) for p in ask):
        assert decision == "ask"
    elif any(fnmatch.fnmatchcase(name, p) for p in allow):
        assert decision == "allow"
    else:
        assert decision == "ask"
