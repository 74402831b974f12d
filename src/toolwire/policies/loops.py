"""Loop detection: a model that repeats itself is warned once, then stopped.

Two signals, counted over a whole run:

* **repeated call** — the same *call signature* (tool name + canonical arguments:
  JSON with sorted keys and no spaces, so ``{"a":1,"b":2}`` and ``{"b": 2, "a": 1}``
  are one signature) in several rounds. A round that repeats a signature counts it
  once.
* **no progress** — consecutive rounds that produced nothing new: no call signature
  the run had not seen, and no successful result text it had not seen. (A poll
  whose answer changes is progress; the same read returning the same text is not.)

At ``*_warn`` the model is told so, in the text of the offending call's result (for
no progress: the round's last result) — a warning inside a tool result is valid in
every provider's history, where an extra user message is not. At ``*_stop`` the run
stops with :class:`LoopDetectedError`. Each warning and stop is recorded in the run's
:class:`~toolwire.policies.RunDiagnostics` as a ``loop`` failure. A threshold of 0 turns
that check off.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, Literal

from ..checks import check_int
from ..errors import CallerError, LoopDetectedError
from ..messages import ToolResult, ToolStatus
from ..turn import ToolRequest
from .diagnostics import new_counter

__all__ = [
    "LoopDetector",
    "LoopPolicy",
    "LoopVerdict",
    "LoopWarningNote",
    "call_signature",
    "request_signature",
    "round_signatures",
]

LoopKind = Literal["repeated_call", "no_progress"]


@dataclass(frozen=True)
class LoopPolicy:
    """Thresholds of loop detection (0 disables a check).

    Attributes:
        repeat_warn: Rounds containing the same call signature before a warning.
        repeat_stop: Rounds containing it before the run stops.
        stall_warn: Consecutive rounds without progress before a warning.
        stall_stop: Consecutive rounds without progress before the run stops.
    """

    repeat_warn: int = 3
    repeat_stop: int = 5
    stall_warn: int = 3
    stall_stop: int = 5

    def __post_init__(self) -> None:
        for name in ("repeat_warn", "repeat_stop", "stall_warn", "stall_stop"):
            check_int(f"LoopPolicy.{name}", getattr(self, name))
        for warn, stop in (("repeat_warn", "repeat_stop"), ("stall_warn", "stall_stop")):
            if (
                getattr(self, warn)
                and getattr(self, stop)
                and getattr(self, warn) >= getattr(self, stop)
            ):
                raise CallerError(
                    f"LoopPolicy.{warn} must be below {stop}, so the model is warned first"
                )


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""One encoder for every signature: ``json.dumps`` with options builds a new one per call."""

_canonical_object: Callable[[Any, int], Any] | None = (
    None
    if c_make_encoder is None
    else c_make_encoder(
        None,  # no markers: a value parsed from JSON has no cycle (RecursionError if)
        _CANONICAL.default,
        encode_basestring,  # ensure_ascii=False
        None,  # indent
        ":",
        ",",
        True,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
)
"""``_CANONICAL``'s C encoder, made once: ``JSONEncoder.encode`` makes one per value
(two Python calls and an encoder object, for every call of every round)."""


def call_signature(name: str, arguments: Any) -> str:
    """``name(canonical JSON arguments)``; arguments that are not JSON count as text."""
    try:
        if arguments.__class__ is dict and _canonical_object is not None:
            canonical = "".join(_canonical_object(arguments, 0))
        else:
            canonical = _CANONICAL.encode(arguments)
    except (TypeError, ValueError, RecursionError):
        canonical = repr(arguments)
    return f"{name}({canonical})"


def request_signature(request: ToolRequest) -> str:
    """The signature of an assembled call (its raw text when it did not parse)."""
    value = request.input if request.error is None else request.raw_arguments
    return call_signature(request.name, value)


def round_signatures(requests: Sequence[ToolRequest]) -> list[str]:
    """:func:`request_signature` of each request, in order.

    In the common round every call's arguments parsed: each signature is then made by
    the C encoder inside one comprehension, without a call of :func:`call_signature`
    per call (its frame and tests were a fifth of a signature's cost). The encoder
    gives any JSON value the text ``JSONEncoder.encode`` gives it; a value it cannot
    encode sends the round through :func:`request_signature`, call by call, whose
    ``repr`` fallback then applies to that call alone.
    """
    if _canonical_object is not None and not [r for r in requests if r.error is not None]:
        encode, join = _canonical_object, "".join
        try:
            return [f"{r.name}({join(encode(r.input, 0))})" for r in requests]
        except (TypeError, ValueError, RecursionError):
            pass  # something JSON cannot encode: each call on its own, below
    return [request_signature(r) for r in requests]


@dataclass(frozen=True, slots=True)
class LoopWarningNote:
    """A warning to add to one result of the round.

    Attributes:
        position: Which result (in call order).
        kind: What was detected.
        text: The text to append.
        count: Repetitions or rounds so far.
    """

    position: int
    kind: LoopKind
    text: str
    count: int


@dataclass(slots=True)
class LoopVerdict:
    """What one round amounts to: warnings to add, and whether to stop."""

    warnings: list[LoopWarningNote] = field(default_factory=list)
    stop: LoopDetectedError | None = None


class LoopDetector:
    """Counts signatures and stalled rounds over one run."""

    def __init__(self, policy: LoopPolicy | None = None) -> None:
        self.policy = policy or LoopPolicy()
        self._rounds_with = new_counter()  # Counter(), made in C
        self._seen_outputs: set[tuple[str, str]] = set()
        self.stalled = 0
        self._names: set[str] = set()  # every tool name a counted round called
        # Rounds counted without their signatures, and which of them called each name
        # (see _defer): a name's call is signed when the name comes back, or never.
        self._unsigned: list[_Unsigned] = []
        self._unsigned_by_name: dict[str, int] = {}

    def observe(
        self, requests: Sequence[ToolRequest], results: Sequence[ToolResult]
    ) -> LoopVerdict:
        """Count one round (its requests and results, in call order); judge it."""
        if self._defer(requests, results):
            return LoopVerdict()
        if self._unsigned_by_name:
            self._sign_earlier(requests)
        signatures = round_signatures(requests)
        first = _first_positions(signatures)
        verdict = LoopVerdict()
        progress = self._count(first, signatures, results)
        self.stalled = 0 if progress else self.stalled + 1
        self._judge_repeats(first, results, verdict)
        if verdict.stop is None and results:
            self._judge_stall(results, verdict)
        return verdict

    def _defer(self, requests: Sequence[ToolRequest], results: Sequence[ToolResult]) -> bool:
        """Count a round whose calls all name tools no earlier round called, each once,
        without making its signatures (``False``: it is not such a round).

        Its verdict is known without them: a signature holds its tool's name, so each
        is new (the round is progress) and in one round so far (under any repeat
        threshold above 1: nothing to judge). The counts need them only once a later
        round calls one of those tools again (:meth:`_sign_earlier`); a tool called in
        one round only (every tool of the common single-round run) never costs the
        canonical JSON of its arguments.
        """
        names = [request.name for request in requests]
        distinct = set(names)
        policy = self.policy
        deferred = (
            len(distinct) == len(names) == len(results) != 0
            and distinct.isdisjoint(self._names)
            and "(" not in "".join(names)  # a name ends at its signature's first "("
            and 1 not in (policy.repeat_warn, policy.repeat_stop)  # else judged at once
        )
        self._names |= distinct
        if not deferred:
            return False
        self._unsigned_by_name.update(zip(names, repeat(len(self._unsigned))))
        self._unsigned.append(_Unsigned(requests, results))
        self.stalled = 0
        return True

    def _sign_earlier(self, requests: Sequence[ToolRequest]) -> None:
        """Count the unsigned calls of the tools this round calls again, as their rounds
        would have counted them (each of those rounds called each tool once)."""
        unsigned, by_name = self._unsigned, self._unsigned_by_name
        for name in by_name.keys() & {request.name for request in requests}:
            request, result = unsigned[by_name.pop(name)].call(name)
            signature = request_signature(request)
            self._rounds_with[signature] += 1
            if result.status is ToolStatus.OK:
                self._seen_outputs.add((signature, result.content))

    def _count(
        self, first: dict[str, int], signatures: list[str], results: Sequence[ToolResult]
    ) -> bool:
        """Add the round to the counts (``first``: its distinct signatures); report
        whether it brought anything new."""
        rounds_with = self._rounds_with
        # Both halves in C (dict views, Counter's element count, sets): once per call
        # of every round. A signature is new if no earlier round had it (each counts
        # once a round: ``first`` holds each distinct one once).
        new = not first.keys() <= rounds_with.keys()
        rounds_with.update(first.keys())  # a view, not a mapping: counted in C
        ok = ToolStatus.OK  # read once: an enum member is a lookup on its class each time
        if not [r for r in results if r.status is not ok]:  # every call ran: the common round
            outputs = set(zip(signatures, [r.content for r in results], strict=False))
            new = new or not outputs <= self._seen_outputs
            self._seen_outputs |= outputs
            return new
        for signature, result in zip(signatures, results, strict=False):
            if result.status is ToolStatus.OK:
                key = (signature, result.content)
                new = new or key not in self._seen_outputs
                self._seen_outputs.add(key)
        return new

    def _judge_repeats(
        self, first: dict[str, int], results: Sequence[ToolResult], verdict: LoopVerdict
    ) -> None:
        warn, stop = self.policy.repeat_warn, self.policy.repeat_stop
        rounds_with = self._rounds_with
        lowest = min(warn or stop, stop or warn)  # the first count that warns or stops
        # No signature of the round reached it (the common round): nothing to judge.
        if not lowest or max(map(rounds_with.__getitem__, first), default=0) < lowest:
            return
        for signature, position in first.items():
            count = self._rounds_with[signature]
            tool = results[position].name if position < len(results) else signature
            if stop and count >= stop:
                verdict.stop = LoopDetectedError(
                    kind="repeated_call", tool=tool, signature=signature, count=count, limit=stop
                )
                return
            if warn and count >= warn:
                text = (
                    f"Warning from toolwire: you have made this exact call ({signature}) in "
                    f"{count} rounds; repeating it gives the same result. Use the results you "
                    "have, try a different approach, or give your final answer."
                )
                verdict.warnings.append(LoopWarningNote(position, "repeated_call", text, count))

    def _judge_stall(self, results: Sequence[ToolResult], verdict: LoopVerdict) -> None:
        warn, stop = self.policy.stall_warn, self.policy.stall_stop
        count = self.stalled
        last = len(results) - 1
        if stop and count >= stop:
            verdict.stop = LoopDetectedError(
                kind="no_progress", tool=results[last].name, signature="", count=count, limit=stop
            )
        elif warn and count >= warn:
            text = (
                f"Warning from toolwire: the last {count} rounds produced nothing new. Stop "
                "calling tools that return what you already have; give your final answer or "
                "change your approach."
            )
            verdict.warnings.append(LoopWarningNote(last, "no_progress", text, count))


class _Unsigned:
    """A round counted without its signatures (:meth:`LoopDetector._defer`): its calls
    (each to a different tool), found by name when a later round calls that tool."""

    __slots__ = ("_positions", "requests", "results")

    def __init__(self, requests: Sequence[ToolRequest], results: Sequence[ToolResult]) -> None:
        self.requests = requests
        self.results = results
        self._positions: dict[str, int] | None = None  # by name, made at the first look-up

    def call(self, name: str) -> tuple[ToolRequest, ToolResult]:
        """The round's call of tool ``name``, and its result."""
        if self._positions is None:
            names = [request.name for request in self.requests]
            self._positions = dict(zip(names, range(len(names)), strict=True))
        position = self._positions[name]
        return self.requests[position], self.results[position]


def _first_positions(signatures: list[str]) -> dict[str, int]:
    """Each distinct signature's first position, in the order they first appear."""
    positions = dict(zip(signatures, range(len(signatures)), strict=True))
    if len(positions) == len(signatures):  # none repeats (the common round): built in C
        return positions
    positions = {}
    for position, signature in enumerate(signatures):
        positions.setdefault(signature, position)
    return positions
