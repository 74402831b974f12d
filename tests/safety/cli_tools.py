"""Tools for the ``toolwire run`` approval tests (imported with ``--tools``)."""

from __future__ import annotations

import toolwire

WRITES: list[str] = []


@toolwire.tool
def write_note(text: str) -> str:
    """Write a note.

    Args:
        text: The note.
    """
    WRITES.append(text)
    return "written"


@toolwire.tool(side_effects=False)
def read_notes() -> str:
    """Read the notes."""
    return ", ".join(WRITES) or "no notes"


TOOLS = [write_note, read_notes]
