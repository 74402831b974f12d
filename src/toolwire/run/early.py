"""Early starts: which calls may begin while the turn still streams. Pure and synchronous.

The calls of a turn appear in the stream one by one (their indices order them). A call
that is valid, concurrency-safe and *harmless to discard* (no side effects, or
idempotent) starts at once when every earlier call of the turn is known, and is
valid-and-safe or invalid (an invalid call never runs, so it orders nothing). The
first unsafe call, or a call that would pass the turn's call limit, *closes* early
starts for the rest of the stream: it and every call after it wait for the end of the
stream and for the calls before them. So does a call that appears before one already
passed (its place in the order was taken).

This decides only *which* calls start; the turn (:class:`~toolwire.run.execute.TurnRun`)
starts them. (Whether a call may run at all is the permission gate's question, asked
when it runs: :mod:`toolwire.run.gate`.)
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping

from .calls import TurnCall

__all__ = ["EarlyStarts"]


class EarlyStarts:
    """The stream order of a turn's calls and how far early starts have reached.

    Args:
        enabled: Whether early starts are on at all.
    """

    __slots__ = ("_frontier", "_known", "open")

    def __init__(self, enabled: bool) -> None:
        self._known: list[int] = []  # indices seen while streaming, ascending
        self._frontier = 0  # how many of _known have been passed
        self.open = enabled  # closed for good by the first call that must wait (or a
        # tool's KeyboardInterrupt: the turn closes it, TurnRun._guarded)

    def know(self, index: int, ready: Mapping[int, TurnCall]) -> None:
        """A call with ``index`` appeared in the stream (started, or ready)."""
        known = self._known
        # Calls stream in index order, each seen twice (started, then ready): the last
        # index known, or a new one past it, is the common case and takes no search.
        if not known or index > known[-1]:
            known.append(index)  # past every known index: nothing it could reorder
            return
        if index == known[-1]:
            return
        if index in ready or _contains(known, index):
            return
        self._insert(index)

    def _insert(self, index: int) -> None:
        """Place a new index that comes before the last known one."""
        position = bisect.bisect(self._known, index)
        if position < self._frontier:  # a call appeared before one already passed
            self.open = False
        self._known.insert(position, index)

    def ready(self, call: TurnCall, may_launch: Callable[[], bool] | None) -> bool | None:
        """``call`` closed for the first time (it is in the ready calls now): :meth:`know`
        its index and, in the stream's common order, decide it.

        In the common order every earlier call has passed and this one is the last known
        (its start was told) or new past them all (it was not: the run loop tells a
        start with its call's first close): it alone is decided, with no search and no
        loop. The caller starts it: a ``launch`` callback, as :meth:`advance` takes,
        would be a bound method made for every call.

        Returns:
            ``True``: start the call now (the frontier has passed it: :attr:`position`
            is its place); ``False``: it does not start now; ``None``: not the common
            order, so nothing was decided: :meth:`advance` decides it and any call
            it was holding up.
        """
        index, known, frontier = call.index, self._known, self._frontier
        count = len(known)
        if frontier == count and (not count or index > known[-1]):
            known.append(index)  # the next call, past every known one
        elif frontier != count - 1 or known[frontier] != index:
            if not known or index > known[-1]:
                known.append(index)
            elif index != known[-1] and not _contains(known, index):
                self._insert(index)
            return None
        if not self.open:
            return False
        # _pass(call, ...), written out: once per call.
        if call.runnable and (not call.safe or (may_launch is not None and not may_launch())):
            self.open = False
            return False
        self._frontier += 1
        return call.runnable and call.harmless  # else it starts with its batch

    @property
    def position(self) -> int:
        """The place, in stream order, of the call last passed: the one being launched."""
        return self._frontier - 1

    def advance(
        self,
        ready: Mapping[int, TurnCall],
        may_launch: Callable[[], bool] | None,
        launch: Callable[[TurnCall], None],
    ) -> None:
        """Move over the ready calls in stream order, starting the ones that may start.

        Args:
            ready: The calls whose arguments closed, by index.
            may_launch: Whether one more call may start (the turn's call limit); asked
                before each valid, safe call (``None``: no limit).
            launch: Starts a call (at once, before the next one is considered). An
                eager start may run the call to its result before ``launch`` returns;
                it reads :attr:`position`, so the frontier moves past the call first.
        """
        while self.open and self._frontier < len(self._known):
            call = ready.get(self._known[self._frontier])
            if call is None:
                return  # an earlier call is still streaming
            self._pass(call, may_launch, launch)

    def _pass(
        self,
        call: TurnCall,
        may_launch: Callable[[], bool] | None,
        launch: Callable[[TurnCall], None],
    ) -> None:
        """Decide the ready call at the frontier: start it, let it wait for its batch,
        or close early starts at it (an unsafe call, or one past the call limit)."""
        if call.runnable and (not call.safe or (may_launch is not None and not may_launch())):
            self.open = False
            return
        self._frontier += 1
        if call.runnable and call.harmless:  # else it starts with its batch, once final
            launch(call)


def _contains(sorted_list: list[int], value: int) -> bool:
    position = bisect.bisect_left(sorted_list, value)
    return position < len(sorted_list) and sorted_list[position] == value
