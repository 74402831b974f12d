"""The package's source files, each parsed once per test process.

The suite's checks of the source itself (tests/test_errors.py, test_architecture.py,
test_notice_kinds.py) walk the syntax tree of every module of src/toolwire, nine times
over in all: parsing, not the walks, is most of their CPU (~2 s for the package's ~210
files; the trees take ~55 MB). The trees are shared: a test reads them, never changes
them.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path


@cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of the source file ``path`` (parsed on first use)."""
    return ast.parse(path.read_text(encoding="utf-8"))
