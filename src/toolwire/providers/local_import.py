"""Importing llama-cpp-python, and closing the two files its import opens.

``llama_cpp._utils`` opens ``os.devnull`` twice when it is imported (its
``suppress_stdout_stderr`` points standard output and error there while a model
loads) and never closes them, so every process that used the local model, or only
built a tool-call grammar, ended with two "ResourceWarning: unclosed file
/dev/null" lines. Every import of llama_cpp in toolwire goes through
:func:`import_llama_cpp`, which closes the two files at exit. By then no model is
loading: the files are used only while one loads, never by a ``close()`` or
``__del__``.
"""

from __future__ import annotations

import atexit
import importlib
import sys
import threading
from typing import Any

__all__ = ["import_llama_cpp"]

_NULL_FILES = ("outnull_file", "errnull_file")  # llama_cpp._utils' module globals
_registered = threading.Event()


def import_llama_cpp(name: str = "llama_cpp") -> Any:
    """Import ``name`` (``llama_cpp`` or one of its modules) and make sure the
    ``/dev/null`` files its import opened are closed at exit.

    Raises:
        ImportError: llama-cpp-python is not installed.
    """
    module = importlib.import_module(name)
    if not _registered.is_set():
        _registered.set()
        atexit.register(close_null_files)
    return module


def close_null_files() -> None:
    """Close ``llama_cpp._utils``' two ``/dev/null`` files (if it was imported)."""
    utils = sys.modules.get("llama_cpp._utils")
    for attribute in _NULL_FILES:
        file = getattr(utils, attribute, None)
        if file is not None:
            file.close()
