"""Who has the terminal: a display redrawn in place, or a question waiting for an answer.

``toolwire run``'s live table is redrawn in place: each redraw moves the cursor up by
the table's height and draws it again. A question asked meanwhile breaks it — the
question's lines and the echo of the typed answer push the table down, and the next
redraw starts in the wrong place, leaving a half-erased copy. So a live display
registers how to stand aside (:func:`hold`), and whoever asks a question does it inside
:func:`question`: every registered display clears itself first and comes back, redrawn
below the answer, after.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

__all__ = ["hold", "question"]

Pause = Callable[[], AbstractContextManager[None]]

_displays: list[Pause] = []
_lock = threading.Lock()  # the approver asks from its own thread


def hold(pause: Pause) -> Callable[[], None]:
    """Register a live display's ``pause`` (a context manager factory: cleared on entry,
    redrawn on exit); returns the function that unregisters it."""
    with _lock:
        _displays.append(pause)

    def release() -> None:
        with _lock:
            if pause in _displays:
                _displays.remove(pause)

    return release


@contextlib.contextmanager
def question() -> Iterator[None]:
    """The terminal to oneself, to ask and read an answer: live displays stand aside."""
    with _lock:
        pauses = list(_displays)
    with contextlib.ExitStack() as stack:
        for pause in pauses:
            stack.enter_context(pause())
        yield
