"""The loop's one decision (run/step.py): each rule, and the order between them."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.messages import AssistantMessage, TextPart, ToolCall
from toolwire.output import Step
from toolwire.run.step import ENDING, Next, decide
from toolwire.turn import Notice, Turn

GO_ON = Step()


def _turn(
    *, calls: int = 0, finish: str = "stop", refused: bool = False, broken: bool = False
) -> Turn:
    parts: list[Any] = [TextPart("text")]
    parts += [ToolCall(f"call_{n}", "t", "{}") for n in range(calls)]
    turn = Turn(AssistantMessage(parts), [], finish)
    turn.refused = refused
    if broken:
        turn.notices.append(Notice("malformed_call", "the call's JSON is cut"))
    return turn


def _decide(turn: Turn, step: Step = GO_ON, **facts: bool) -> tuple[Next, list[bool]]:
    asked: list[bool] = []

    def judge(_: Turn, forced: bool) -> Step:
        asked.append(forced)
        return step

    options = {"forced": False, "paused": False, "owed": False, "reprompted": False} | facts
    return decide(turn, judge=judge, **options).next, asked


def test_a_turn_with_calls_goes_on_and_one_without_ends() -> None:
    assert _decide(_turn(calls=2))[0] is Next.ROUND
    assert _decide(_turn())[0] is Next.FINAL
    assert Next.FINAL.ends and Next.FINAL.outcome == "ok"
    assert not Next.ROUND.ends and Next.ROUND.outcome is None


@pytest.mark.parametrize(
    ("turn", "facts", "expected"),
    [
        # a pause comes first: the held calls have no result yet, whatever else holds
        (_turn(calls=1, refused=True, finish="length"), {"paused": True}, Next.PAUSED),
        (_turn(refused=True, finish="length"), {"owed": True}, Next.REFUSED),
        (_turn(finish="length", broken=True), {"owed": True}, Next.LENGTH),
        (_turn(calls=1, finish="length"), {}, Next.LENGTH),
        (_turn(broken=True), {"owed": True}, Next.ANSWER_OWED),
        (_turn(broken=True), {}, Next.FIX_CALL),
        # calls were made: owed items ride along with the calls' round
        (_turn(calls=1), {"owed": True}, Next.ROUND),
        # the forced final turn: no feedback, no owed round
        (_turn(broken=True), {"forced": True, "owed": True}, Next.FINAL),
        (_turn(calls=1), {"forced": True}, Next.CALLS_WHEN_FORCED),
        (_turn(finish="tool_calls"), {}, Next.REPROMPT),
        (_turn(finish="tool_calls"), {"reprompted": True}, Next.FINAL),
        (_turn(finish="tool_calls"), {"forced": True}, Next.FINAL),
    ],
)
def test_the_rules_in_their_order(turn: Turn, facts: dict[str, bool], expected: Next) -> None:
    assert _decide(turn, **facts)[0] is expected


def test_the_output_is_judged_only_when_no_earlier_rule_decided() -> None:
    accept = Step(done=True)
    for turn, facts in (
        (_turn(), {"paused": True}),
        (_turn(refused=True), {}),
        (_turn(finish="length"), {}),
        (_turn(), {"owed": True}),
        (_turn(broken=True), {}),
    ):
        decided, asked = _decide(turn, accept, **facts)
        assert decided is not Next.FINAL and asked == [], (turn, facts)
    decided, asked = _decide(_turn(calls=1), accept, forced=True)
    assert decided is Next.FINAL and asked == [True]  # a valid final_result in the forced turn


def test_a_missing_output_is_asked_again_with_its_feedback() -> None:
    retry = Step(retry=True, feedback="answer with JSON", kind="invalid_json")
    decision = decide(
        _turn(), forced=False, paused=False, owed=False, reprompted=False,
        judge=lambda turn, forced: retry,
    )  # fmt: skip
    assert decision.next is Next.RETRY_OUTPUT and decision.output is retry
    fix = decide(
        _turn(broken=True), forced=False, paused=False, owed=False, reprompted=False,
        judge=lambda turn, forced: GO_ON,
    )  # fmt: skip
    assert fix.next is Next.FIX_CALL and fix.feedback is not None
    assert "the call's JSON is cut" in fix.feedback


def test_every_exit_has_an_outcome() -> None:
    assert {n for n in Next if n.ends} == {Next.FINAL, Next.REFUSED, Next.PAUSED, Next.LENGTH}
    assert Next.PAUSED.outcome == "paused" and Next.LENGTH.outcome == "length"


def test_a_notice_that_is_no_broken_call_asks_for_no_fix() -> None:
    turn = _turn()
    turn.notices.append(Notice("tool_choice_ignored", "answered without a call"))
    assert _decide(turn)[0] is Next.FINAL


def test_a_member_is_found_by_itself_in_a_table_and_after_a_pickle() -> None:
    import pickle

    table = {kind: kind.value for kind in Next}
    assert all(table[kind] == kind.value for kind in Next)
    assert pickle.loads(pickle.dumps(Next.ROUND)) in table
    assert len({*Next, *Next}) == len(Next)


def test_the_run_ends_exactly_at_the_kinds_with_an_outcome() -> None:
    # The loop tests ENDING; the events and the log read Next.outcome.
    assert {kind for kind in Next if kind.outcome is not None} == ENDING
    assert {kind for kind in Next if kind.ends} == ENDING
    assert Next.ROUND not in ENDING and Next.FINAL in ENDING
