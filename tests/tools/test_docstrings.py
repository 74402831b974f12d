"""Docstring parsing: Google, NumPy and Sphinx styles."""

from __future__ import annotations

from toolwire.tools.docstrings import parse_docstring


def test_none_and_blank():
    assert parse_docstring(None).description == ""
    assert parse_docstring("   ").params == {}


def test_plain_docstring_is_all_description():
    info = parse_docstring("Say hello.\n\n    More detail here.\n")
    assert info.description == "Say hello.\n\nMore detail here."
    assert info.params == {}


def test_google_style():
    doc = """Search the web.

    Looks things up.

    Args:
        query (str): What to look for,
            continued on a second line.
        limit: How many results.

    Returns:
        A list of hits.
    """
    info = parse_docstring(doc)
    assert info.description == "Search the web.\n\nLooks things up."
    assert info.params == {
        "query": "What to look for, continued on a second line.",
        "limit": "How many results.",
    }


def test_google_returns_section_is_not_a_parameter():
    info = parse_docstring("Do it.\n\nReturns:\n    result: the thing\n")
    assert info.params == {}


def test_numpy_style():
    doc = """Convert a temperature.

    Parameters
    ----------
    value : float
        The temperature
        to convert.
    x, y : int
        Coordinates.
    unit : {'c', 'f'}, optional
        Target unit.

    Returns
    -------
    float
        Converted.
    """
    info = parse_docstring(doc)
    assert info.description == "Convert a temperature."
    assert info.params == {
        "value": "The temperature to convert.",
        "x": "Coordinates.",
        "y": "Coordinates.",
        "unit": "Target unit.",
    }


def test_sphinx_style():
    doc = """Read a file.

    :param path: Where the file is,
        relative to the root.
    :param int size: Bytes to read.
    :returns: The contents.
    :raises OSError: When missing.
    """
    info = parse_docstring(doc)
    assert info.description == "Read a file."
    assert info.params == {
        "path": "Where the file is, relative to the root.",
        "size": "Bytes to read.",
    }
