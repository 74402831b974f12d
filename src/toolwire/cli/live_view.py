"""The live view of ``toolwire run``: a rich table of rounds and calls, redrawn in
place on a terminal, that stands aside while the terminal approver asks a question
(:mod:`toolwire.cli.screen`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..wire.events import Notice
from . import screen
from .plain_view import PlainView, latency_text, one_line
from .run_state import CallState, RunState
from .terminal import printable

__all__ = ["LiveView"]


class LiveView(PlainView):
    """A rich table of rounds and calls, redrawn as events arrive.

    Only the view's own labels are rich markup: every value from the run (the prompt,
    the model's text and answer, tool names, arguments, notices) goes through
    :func:`_literal`, so ``[/INST]`` is shown, not parsed (it once ended the run with a
    ``MarkupError``), and ``[link=...]`` from a model is never a link.
    """

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        from rich.console import Console

        self.console = Console(file=out)
        self.live = self._new_live()
        self._lock = threading.Lock()  # the approver pauses the display from its thread
        self._drawing = False  # between start() and finish()
        self._release: Callable[[], None] | None = None

    def _new_live(self) -> Any:
        """A fresh display (one that was stopped keeps the old table's height, and would
        erase that many lines above it when started again). Transient: stopping it
        clears the table; :meth:`finish` prints the last one for good."""
        from rich.live import Live

        return Live(self, console=self.console, refresh_per_second=12, transient=True)

    def start(self, prompt: str) -> None:
        """Start the live display."""
        self.console.print(f"[bold]>[/bold] {_literal(prompt)}")
        self.state = RunState()
        with self._lock:
            self._drawing = True
            self.live.start()
        self._release = screen.hold(self.paused)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The table cleared while a question is asked and answered (``screen.question``),
        then drawn again below the answer — unless the run finished meanwhile."""
        with self._lock:
            self.live.stop()
        try:
            yield
        finally:
            with self._lock:
                if self._drawing:
                    self.live = self._new_live()
                    self.live.start(refresh=True)

    def event(self, event: Any) -> None:
        """Update the table; a provider's retry is also printed above it, to stay."""
        self.state.apply(event, time.monotonic())
        if isinstance(event, Notice) and event.kind == "retry":
            self.live.console.print(
                f"retry: {printable(event.message)}", markup=False, highlight=False
            )

    def __rich__(self) -> Any:
        """Redrawn on every refresh, so the wait for a silent model counts up live."""
        return self._render()

    def _render(self) -> Any:
        from rich.table import Table

        table = Table(expand=False)
        for column in ("round", "#", "tool", "arguments", "state", "queued", "ran"):
            table.add_column(column)
        for round_ in self.state.rounds:
            for call in round_.calls.values():
                table.add_row(
                    str(round_.number),
                    str(call.index),
                    _literal(call.name),
                    _literal(one_line(call.arguments, 50)),
                    _styled(call.state) + _progress(call),
                    latency_text(call.queued),
                    latency_text(call.ran),
                )
        text = self.state.current.text if self.state.rounds else ""
        if text.strip():
            table.caption = _literal(one_line(text, 120))
        waited = self.state.waiting_since
        if waited is not None:
            table.caption = f"waiting for the model: {time.monotonic() - waited:.0f} s"
            if self.state.retry is not None:
                table.caption += f" · {_literal(self.state.retry)}"
        return table

    def finish(self) -> None:
        """Stop the display, print the last table and the answer."""
        if self._release is not None:
            self._release()
            self._release = None
        with self._lock:
            self._drawing = False
            self.live.stop()
        self.console.print(self._render())
        for notice in self.state.notices:
            self.console.print(f"[yellow]notice:[/yellow] {_literal(notice)}", markup=True)
        if self.state.answer is not None:
            answer = self.state.answer.strip() or "(empty answer)"
            self.console.print(f"[bold]answer:[/bold] {_literal(answer)}")


def _literal(text: str) -> str:
    """A value from the run as rich markup that shows it as it is (controls escaped)."""
    from rich.markup import escape

    return escape(printable(text))


def _progress(call: CallState) -> str:
    """A running call's last progress, after its state."""
    if call.state != "running" or not call.progress:
        return ""
    return f" {_literal(one_line(call.progress, 40))}"


def _styled(state: str) -> str:
    colour = {"ok": "green", "ready": "cyan", "running": "blue", "streaming": "yellow"}.get(
        state, "red"
    )
    return f"[{colour}]{state}[/{colour}]"
