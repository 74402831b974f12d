"""Result truncation at execution time: keep the head and the tail, say what was cut.

A result over its cap keeps about half the cap from its start and half from its end
(where errors, totals and the last lines of a log usually are), cut at line breaks when
one is near, with a marker in the middle that says how much was cut and how to read it.
The full text stays in the run's :class:`ResultStore`, by call id, for the rest of the
run; the model reads it page by page with the ``read_result`` tool
(:func:`read_result_tool`), the caller with ``RunResult.context.full_result``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

__all__ = [
    "CURRENT_STORE",
    "READ_RESULT",
    "ResultStore",
    "page",
    "is_read_result",
    "read_result_tool",
    "truncate_middle",
]

READ_RESULT = "read_result"
"""The name of the tool that reads a truncated result's full text."""

Count = Callable[[str], int]

_LINE_SLACK = 0.1  # move a cut to a line break within 10% of the kept length


class ResultStore:
    """The full text of every truncated result of one run, by call id."""

    def __init__(self) -> None:
        self._full: dict[str, str] = {}

    def put(self, call_id: str, text: str) -> None:
        """Keep ``text`` as the full output of ``call_id``."""
        self._full[call_id] = text

    def get(self, call_id: str) -> str | None:
        """The full output of ``call_id``, or ``None`` if it was never truncated."""
        return self._full.get(call_id)

    def __contains__(self, call_id: object) -> bool:
        return call_id in self._full

    def __len__(self) -> int:
        return len(self._full)


CURRENT_STORE: ContextVar[tuple[ResultStore, int, Count] | None] = ContextVar(
    "toolwire_result_store", default=None
)
"""The running run's store, page size and counter (read by the ``read_result`` tool)."""


def truncate_middle(text: str, max_tokens: int, call_id: str, count: Count) -> str | None:
    """``text`` cut to about ``max_tokens`` tokens, head and tail kept; ``None`` if it fits."""
    total = count(text)
    if total <= max_tokens:
        return None
    per_token = len(text) / total
    keep = max(1, int(max_tokens * per_token / 2))
    head_end = _near_break(text, keep, backwards=True)
    tail_start = _near_break(text, len(text) - keep, backwards=False)
    cut_tokens = total - count(text[:head_end]) - count(text[tail_start:])
    marker = (
        f"\n\n[... {cut_tokens} tokens ({tail_start - head_end} of {len(text)} characters) cut "
        f"from the middle of this result. The full output is kept for this run: call "
        f'{READ_RESULT}(call_id="{call_id}", offset={head_end}) to read the cut part ...]\n\n'
    )
    return f"{text[:head_end]}{marker}{text[tail_start:]}"


def _near_break(text: str, position: int, *, backwards: bool) -> int:
    """``position`` moved to just after a nearby line break, if there is one."""
    slack = max(1, int(min(position, len(text) - position) * _LINE_SLACK))
    if backwards:
        found = text.rfind("\n", position - slack, position)
        return found + 1 if found >= 0 else position
    found = text.find("\n", position, position + slack)
    return found + 1 if found >= 0 else position


def page(store: ResultStore, call_id: str, offset: int, max_tokens: int, count: Count) -> str:
    """A page of a stored result from character ``offset``, about ``max_tokens`` long."""
    text = store.get(call_id)
    if text is None:
        return f"no truncated result has call id {call_id!r} in this run"
    if offset < 0 or offset >= len(text):
        return f"offset {offset} is outside the result (0 to {len(text) - 1})"
    rest = text[offset:]
    total = count(rest)
    if total <= max_tokens:
        return rest
    end = offset + max(1, int(max_tokens * len(rest) / total))
    end = _near_break(text, end, backwards=True)
    return (
        f"{text[offset:end]}\n\n[... characters {offset} to {end} of {len(text)}; call "
        f'{READ_RESULT}(call_id="{call_id}", offset={end}) for the next part ...]'
    )


async def _read_result(call_id: str, offset: int = 0) -> str:
    """Read the full output of an earlier tool call whose result was cut.

    Args:
        call_id: The id of the call whose result was cut (given in the cut marker).
        offset: The character to start from (given in the cut marker).
    """
    current = CURRENT_STORE.get()
    if current is None:
        return "no result store is active (this tool works inside an agent run)"
    store, max_tokens, count = current
    return page(store, call_id, offset, max_tokens, count)


def is_read_result(tool: Any) -> bool:
    """Whether ``tool`` is toolwire's own ``read_result`` (not a user's tool of that name)."""
    return getattr(tool, "fn", None) is _read_result


def read_result_tool() -> Any:
    """The ``read_result`` tool: pages through a truncated result of the running run."""
    from ..tools.tool import Tool

    return Tool.from_function(
        _read_result, name=READ_RESULT, concurrency_safe=True, idempotent=True, side_effects=False
    )
