"""run/'s one way up: the composition root, imported only when first needed.

A model spec string, a log path and ``instrument=True`` need the providers and the
observers, which sit above ``run/``; :mod:`toolwire.resolve` makes them. This is the
one upward import of ``run/`` (tests/test_architecture.py: ALLOWED), done inside the
function so that importing ``toolwire.run`` loads neither.
"""

from __future__ import annotations

from types import ModuleType


def upward() -> ModuleType:
    """The module :mod:`toolwire.resolve`."""
    from .. import resolve

    return resolve
