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


@toolwire.tool(side_effects=False)
def find_notes(query: str) -> str:
    """Find notes (no side effects, so repaired arguments may run).

    Args:
        query: What to look for.
    """
    WRITES.append(f"searched {query}")
    return "no notes"


TOOLS = [write_note, read_notes, find_notes]
