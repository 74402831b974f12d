"""Result truncation at execution time: keep the head and the tail, say what was cut.

A result over its cap keeps about half the cap from its start and half from its end
(where errors, totals and the last lines of a log usually are), cut at line breaks when
one is near, with a marker in the middle that says how much was cut and how to read it.
The full text stays in the run's :class:`ResultStore` for the rest of the run, under a
handle unique in the run (:func:`result_handle`: the call's round and index). Never by
the provider's call id alone: some servers repeat ids across turns, and a second cut
result must not overwrite the first. The model reads it page by page with the
``read_result`` tool (:func:`read_result_tool`), whose ``call_id`` is the handle; the
caller with ``RunResult.context.full_result``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Protocol

from ..errors import CallerError
from ..messages import ContentPart, Image, TextPart, parts_text

__all__ = [
    "CURRENT_STORE",
    "READ_RESULT",
    "ResultStore",
    "page",
    "is_read_result",
    "read_result_tool",
    "result_handle",
    "truncate_middle",
    "truncate_parts",
]

READ_RESULT = "read_result"
"""The name of the tool that reads a truncated result's full text."""

Count = Callable[[str], int]

_LINE_SLACK = 0.1  # move a cut to a line break within 10% of the kept length


def result_handle(round_number: int, index: int) -> str:
    """The handle of a cut result: the round and the call's index in its turn (``r2c0``)."""
    return f"r{round_number}c{index}"


class ResultStore:
    """The full text of every truncated result of one run, by handle.

    The provider's call id of each handle is kept too, so that an id still finds its
    result when it is unique in the run.
    """

    def __init__(self) -> None:
        self._full: dict[str, str] = {}
        self._handles: dict[str, list[str]] = {}  # provider call id -> handles

    def put(self, handle: str, text: str, call_id: str | None = None) -> None:
        """Keep ``text`` as the full output of the call ``handle`` (provider id ``call_id``)."""
        if handle not in self._full and call_id is not None:
            self._handles.setdefault(call_id, []).append(handle)
        self._full[handle] = text

    def get(self, key: str) -> str | None:
        """The full output of a handle, or of a call id unique in the run; ``None`` if
        neither was cut.

        Raises:
            CallerError: ``key`` is a call id that several cut results of the run share.
        """
        handle = self.resolve(key)
        return None if handle is None else self._full[handle]

    def resolve(self, key: str) -> str | None:
        """The handle ``key`` names: itself, or a provider call id's only handle.

        Raises:
            CallerError: ``key`` is a call id that several cut results of the run share.
        """
        if key in self._full:
            return key
        handles = self._handles.get(key)
        if not handles:
            return None
        if len(handles) > 1:
            raise CallerError(
                f"call id {key!r} is not unique in this run: {len(handles)} cut results have it",
                hint=f"ask by handle: {', '.join(handles)}",
            )
        return handles[0]

    def __contains__(self, key: object) -> bool:
        return key in self._full or key in self._handles

    def __len__(self) -> int:
        return len(self._full)


class StoreBinding(Protocol):
    """What a run binds for the ``read_result`` tool (its ``RunContext``)."""

    def store_binding(self) -> tuple[ResultStore, int, Count]:
        """The run's store, page size and counter."""
        ...


CURRENT_STORE: ContextVar[StoreBinding | None] = ContextVar("toolwire_result_store", default=None)
"""The running run's context, asked for its store, page size and counter by the
``read_result`` tool when it runs (not when the run starts: most runs never cut a result,
and make no store)."""


def truncate_middle(text: str, max_tokens: int, handle: str, count: Count) -> str | None:
    """``text`` cut to about ``max_tokens`` tokens, head and tail kept; ``None`` if it fits.

    The marker names the result by ``handle`` (what ``read_result`` takes as ``call_id``).
    """
    cut = _middle_cut(text, max_tokens, handle, count)
    if cut is None:
        return None
    head_end, tail_start, marker = cut
    return f"{text[:head_end]}{marker}{text[tail_start:]}"


def truncate_parts(
    parts: tuple[ContentPart, ...], max_tokens: int, handle: str, count: Count
) -> tuple[ContentPart, ...] | None:
    """Content parts whose text is cut like :func:`truncate_middle`'s; ``None`` if it fits.

    Only text is cut: the text parts are read as one text (their concatenation, which
    is what ``read_result`` pages through), its middle is cut, and each text part keeps
    what is left of it; images stay, in their places. The marker goes where the cut
    begins. ``max_tokens`` is for the text (the caller subtracts what the images count).
    """
    text = parts_text(parts)
    cut = _middle_cut(text, max_tokens, handle, count)
    if cut is None:
        return None
    head_end, tail_start, marker = cut
    out: list[ContentPart] = []
    start = 0  # where the part begins in the concatenated text
    placed = False
    for part in parts:
        if isinstance(part, Image):
            out.append(part)
            continue
        end = start + len(part.text)
        kept = part.text[: max(0, head_end - start)]
        if not placed and head_end <= end:
            kept, placed = kept + marker, True  # the cut begins in this part
        kept += part.text[max(0, tail_start - start) :] if tail_start < end else ""
        if kept:
            out.append(TextPart(kept))
        start = end
    return tuple(out)


def _middle_cut(
    text: str, max_tokens: int, handle: str, count: Count
) -> tuple[int, int, str] | None:
    """Where to cut ``text`` (head end, tail start) and the marker; ``None`` if it fits."""
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
        f'{READ_RESULT}(call_id="{handle}", offset={head_end}) to read the cut part ...]\n\n'
    )
    return head_end, tail_start, marker


def _near_break(text: str, position: int, *, backwards: bool) -> int:
    """``position`` moved to just after a nearby line break, if there is one."""
    slack = max(1, int(min(position, len(text) - position) * _LINE_SLACK))
    if backwards:
        found = text.rfind("\n", position - slack, position)
        return found + 1 if found >= 0 else position
    found = text.find("\n", position, position + slack)
    return found + 1 if found >= 0 else position


def page(store: ResultStore, call_id: str, offset: int, max_tokens: int, count: Count) -> str:
    """A page of a stored result from character ``offset``, about ``max_tokens`` long.

    ``call_id`` is the handle in the cut marker (a call id unique in the run works too).
    """
    try:
        handle = store.resolve(call_id)
    except CallerError as exc:
        return f"{exc.message}; {exc.hint}"
    if handle is None:
        return f"no truncated result has call id {call_id!r} in this run"
    text = store.get(handle)
    assert text is not None  # a resolved handle is stored
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
        f'{READ_RESULT}(call_id="{handle}", offset={end}) for the next part ...]'
    )


async def _read_result(call_id: str, offset: int = 0) -> str:
    """Read the full output of an earlier tool call whose result was cut.

    Args:
        call_id: The handle of the result that was cut (given in the cut marker).
        offset: The character to start from (given in the cut marker).
    """
    current = CURRENT_STORE.get()
    if current is None:
        return "no result store is active (this tool works inside an agent run)"
    store, max_tokens, count = current.store_binding()
    return page(store, call_id, offset, max_tokens, count)


def is_read_result(tool: Any) -> bool:
    """Whether ``tool`` is toolwire's own ``read_result`` (not a user's tool of that name)."""
    return getattr(tool, "fn", None) is _read_result


@functools.cache
def read_result_tool() -> Any:
    """The ``read_result`` tool: pages through a truncated result of the running run.

    One object for every agent (it holds no state: the run's store is found through
    :data:`CURRENT_STORE`), so agents with the same tools share one tool set's view.
    """
    from ..tools.tool import Tool

    return Tool.from_function(
        _read_result, name=READ_RESULT, concurrency_safe=True, idempotent=True, side_effects=False
    )
