"""What a run does after a round: the loop's one decision, as an explicit state.

The agent loop (:mod:`toolwire.run.agent`) is request → execute → decide → (exit |
next round). This module is the *decide* part: given the round's turn and what the
round produced, :func:`decide` returns one :class:`Next`, and the loop acts on it. It
does no I/O and changes nothing; the order of its rules is the run's semantics, so
every exit is in one place (as h11 keeps its state transitions in one table):

========================  =============================================================
rule (checked in order)   next
========================  =============================================================
calls wait for approval   ``PAUSED``: the run ends, outcome ``paused``
the model refused         ``REFUSED``: the run ends with the refusal (outcome ``ok``)
cut at the token limit    ``LENGTH``: the run ends, outcome ``length``
only owed provider items  ``ANSWER_OWED``: a round of its own carries their answers
a call it could not read  ``FIX_CALL``: feedback, another round
structured output in      ``FINAL``
output missing/invalid    ``RETRY_OUTPUT``: feedback within the retry budget
no calls, finish          ``REPROMPT`` once (the turn said ``tool_calls`` but had none),
                          else ``FINAL``
calls in the forced turn  ``CALLS_WHEN_FORCED``: ``MaxRoundsExceededError``
calls                     ``ROUND``: the next request
========================  =============================================================

The structured output's judgement (``OutputRun.judge``) is asked only when the rules
before it did not decide: it may accept the output, which an earlier exit must not do.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from ..messages import IS_CALL
from ..output import Step
from ..tools.outcomes import RunOutcome
from ..turn import Turn

__all__ = [
    "BROKEN_CALL_NOTICES",
    "ENDING",
    "Decision",
    "Next",
    "broken_call_feedback",
    "decide",
    "has_calls",
]


class Next(enum.Enum):
    """What the run does after a round."""

    ROUND = "round"
    """The turn made calls: their results are in the history; the next request."""
    ANSWER_OWED = "answer_owed"
    """The turn made no call but owed provider items an answer (MCP approval requests,
    client-run built-in calls): the next request carries the answers."""
    FIX_CALL = "fix_call"
    """The model wrote a call its format could not read: tell it, and ask again."""
    RETRY_OUTPUT = "retry_output"
    """The structured output is missing or invalid: tell the model, within its budget."""
    REPROMPT = "reprompt"
    """The turn said ``tool_calls`` but had none: ask once more instead of ending."""
    FINAL = "final"
    """The run ends with the turn's answer."""
    REFUSED = "refused"
    """The model refused: its last word, no feedback, no more rounds."""
    PAUSED = "paused"
    """Calls wait for approval: the run ends paused."""
    LENGTH = "length"
    """The turn was cut at the token limit: the run ends there."""
    CALLS_WHEN_FORCED = "calls_when_forced"
    """The model called tools in the forced final request: the run fails."""

    # A member is a singleton, equal only to itself: hashed by its identity, in C, where
    # Enum's own __hash__ (of its name) is a Python call, twice a round (the table of
    # decisions below and ``ends``).
    __hash__ = object.__hash__

    @property
    def ends(self) -> bool:
        """Whether the run returns its result here (``self in ENDING``)."""
        return self in ENDING

    @property
    def outcome(self) -> RunOutcome | None:
        """The run's outcome when it ends here (``None``: it goes on, or fails)."""
        return _OUTCOMES.get(self)


_OUTCOMES: dict[Next, RunOutcome] = {
    Next.FINAL: "ok",
    Next.REFUSED: "ok",
    Next.PAUSED: "paused",
    Next.LENGTH: "length",
}
ENDING: frozenset[Next] = frozenset(_OUTCOMES)
"""The kinds after which the run returns its result (:attr:`Next.ends`); the loop tests
its decision's kind against this set, in C, not with a property call each round."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One :class:`Next`, with what acting on it needs.

    Attributes:
        next: What the run does.
        feedback: The message for the model (``FIX_CALL``).
        output: The structured output's judgement (``RETRY_OUTPUT``).
    """

    next: Next
    feedback: str | None = None
    output: Step | None = None


_DECIDED = {kind: Decision(kind) for kind in Next}  # the common decisions, made once


def has_calls(turn: Turn) -> bool:
    """Whether the turn made a tool call: ``bool(turn.tool_calls)`` without building
    the list (``Turn.tool_calls`` lists them anew on every read; this scans the parts
    in C and stops at the first call). The run reads it a few times a round."""
    return any(map(IS_CALL, turn.message.parts))


def decide(  # noqa: PLR0911 — one return per rule of the table, in its order
    turn: Turn,
    *,
    forced: bool,
    paused: bool,
    owed: bool,
    reprompted: bool,
    judge: Callable[[Turn, bool], Step],
) -> Decision:
    """What the run does after the round whose turn is ``turn`` (see the module table).

    Args:
        turn: The round's turn (its calls answered, or held, in the history).
        forced: It answered the forced final request (``max_rounds`` was reached).
        paused: Calls of the round wait for approval.
        owed: The turn owed provider items an answer, and they were answered.
        reprompted: The previous round was an empty-turn re-prompt.
        judge: The structured output's judgement of a turn (``OutputRun.judge``).
    """
    if paused:
        return _DECIDED[Next.PAUSED]
    if turn.refused:
        return _DECIDED[Next.REFUSED]
    if turn.finish_reason == "length":
        return _DECIDED[Next.LENGTH]
    calls = has_calls(turn)
    if owed and not calls and not forced:
        return _DECIDED[Next.ANSWER_OWED]
    if not forced and not calls and turn.notices:  # a broken call comes with a notice
        feedback = broken_call_feedback(turn)
        if feedback is not None:
            return Decision(Next.FIX_CALL, feedback=feedback)
    step = judge(turn, forced)
    if step.done:
        return _DECIDED[Next.FINAL]
    if step.retry:
        return Decision(Next.RETRY_OUTPUT, output=step)
    if not calls:
        if not forced and not reprompted and turn.finish_reason == "tool_calls":
            return _DECIDED[Next.REPROMPT]
        return _DECIDED[Next.FINAL]
    if forced:
        return _DECIDED[Next.CALLS_WHEN_FORCED]
    return _DECIDED[Next.ROUND]


#: Notice kinds of a tool call the model's text format could not read.
BROKEN_CALL_NOTICES = frozenset({"malformed_call", "truncated_call"})


def broken_call_feedback(turn: Turn) -> str | None:
    """The message that tells the model its tool call could not be read, if it wrote one.

    A text format passes a malformed or cut-off call through as content with a notice
    (``toolwire.formats``); the loop reads the notice, not an exception.
    """
    problems = [n.message for n in turn.notices if n.kind in BROKEN_CALL_NOTICES]
    if not problems:
        return None
    listed = "\n".join(f"- {p}" for p in problems)
    return (
        "Your last tool call could not be read, so no tool ran:\n"
        f"{listed}\n"
        "Write the call again, complete and in the tool-call format."
    )
