"""The terminal approver of ``toolwire run``: asks before a call that needs approval.

``toolwire run`` gives its agent ``Permissions(side_effects="ask")`` (plus any
``--deny``/``--ask`` patterns): a tool that declares side effects runs only after the
user says yes at the terminal. ``--yes`` allows every call not denied. Without a
terminal to ask (standard input is a pipe), such calls are refused with a reason that
says to use ``--yes``, given to the model and printed on standard error.

The approver is sync: the approval gate runs it in a daemon thread, so a pending
question holds up neither the event loop nor the calls that need no approval, and a
lock keeps two questions from interleaving.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
import threading
from typing import Any, TextIO

from . import screen
from .terminal import printable

__all__ = ["TerminalApprover", "cli_permissions"]

_YES = {"y", "yes"}
_NO = {"", "n", "no"}
_MAX_SHOWN = 400  # characters of arguments shown in the question


class TerminalApprover:
    """Ask at the terminal whether a call may run.

    Args:
        stdin: Where answers are read (default ``sys.stdin``).
        out: Where questions are written (default: ``sys.stderr`` at the time of asking,
            after the live display, which wraps ``sys.stderr`` while it runs, has stood
            aside: :func:`toolwire.cli.screen.question`). A question is wrapped to the
            terminal's width, its control characters shown as escapes.
        interactive: Whether anyone can answer (default: ``stdin`` is a terminal).
    """

    def __init__(
        self,
        stdin: TextIO | None = None,
        out: TextIO | None = None,
        *,
        interactive: bool | None = None,
    ) -> None:
        self.stdin = stdin or sys.stdin
        self._out = out
        self.interactive = self.stdin.isatty() if interactive is None else interactive
        self._lock = threading.Lock()

    def __call__(self, request: Any) -> bool | str:
        """``True`` (yes), ``False`` (no) or the reason the user typed."""
        if not self.interactive:
            reason = (
                f"`{request.name}` needs approval and toolwire run has no terminal to ask "
                "(run it with --yes to allow such calls)"
            )
            # The model gets the reason as the call's result; the user, who can act on
            # the hint, must see it too, not only a "denied" in the table.
            with self._lock:
                self._say(f"toolwire: denied {reason}")
            return reason
        # The validated input the tool will run with (see ToolRequest.repaired).
        arguments = json.dumps(request.input, ensure_ascii=False, default=str)
        if len(arguments) > _MAX_SHOWN:
            arguments = arguments[:_MAX_SHOWN] + "…"
        if getattr(request, "repaired", False):
            arguments += " (repaired from malformed arguments)"
        question = f"toolwire: allow {request.name} {arguments}? [y/N, or type why not]"
        # The live table stands aside while the user reads and types (cli/screen.py).
        with self._lock, screen.question():
            out = self._out or sys.stderr  # the real stream again, once the table paused
            self._say(_wrapped(printable(question), _columns(out)), out)
            line = self.stdin.readline()
        if not line:
            return f"no answer to the approval of `{request.name}` (end of input)"
        answer = line.strip()
        if answer.lower() in _YES:
            return True
        if answer.lower() in _NO:
            return False
        return f"the user refused: {answer}"

    def _say(self, text: str, out: TextIO | None = None) -> None:
        """Write whole lines: a live display passes complete lines through above itself."""
        out = out or self._out or sys.stderr
        out.write(text + "\n")
        out.flush()


def _columns(out: TextIO) -> int:
    """The width of the terminal ``out`` writes to (``COLUMNS`` first, as rich does)."""
    named = os.environ.get("COLUMNS", "")
    if named.isdigit() and int(named) > 0:
        return int(named)
    try:
        return os.get_terminal_size(out.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):  # not a terminal (a pipe, a StringIO)
        return shutil.get_terminal_size().columns


def _wrapped(text: str, columns: int) -> str:
    """``text`` cut into lines that fit ``columns`` (continuations indented), so that
    nothing relies on the terminal's own wrapping (long JSON words are cut too)."""
    return "\n".join(
        textwrap.wrap(text, width=max(columns, 20), subsequent_indent="  ", break_on_hyphens=False)
    )


def cli_permissions(*, yes: bool, deny: list[str] | None, ask: list[str] | None) -> Any:
    """The policy of ``toolwire run``: ask before side effects unless ``--yes``."""
    from ..safety import Permissions

    if yes:
        return Permissions(deny=deny or (), ask=ask or ())
    return Permissions(deny=deny or (), ask=ask or (), side_effects="ask")
