"""A package's public names, each imported from its module on first use (PEP 562).

A package whose ``__init__`` imported every module it names made importing any one of
its modules import them all: ``toolwire.history.check`` used to bring every provider's
codec and, through ``toolwire.wire``, every stream decoder, into a process that reads
none of them. A package that names its exports here imports a module only when one of
its names is first read; the value is then stored on the package, so later reads are
ordinary attribute lookups that never reach this function.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(namespace: dict[str, Any], exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` that loads ``exports`` (name -> module in the package).

    ``namespace`` is the package's ``globals()``. A name not in ``exports`` raises
    ``AttributeError``, as any missing attribute does, so ``from package import module``
    still finds a submodule by importing it.
    """
    package = namespace["__name__"]

    def load(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value  # later lookups skip this function
        return value

    return load
