"""Every notice kind toolwire emits is one of ``NoticeKind``, and documented on ``Notice``."""

from __future__ import annotations

import ast
import gc
import re
from pathlib import Path
from typing import get_args

import toolwire
from tests.sources import parsed
from toolwire.formats import results
from toolwire.turn import Notice, NoticeKind

PACKAGE = Path(toolwire.__file__).resolve().parent
# The calls that make a notice, by the position of the kind among their arguments (a
# format stream's broken call becomes its notice in FormatStream._failed).
EMITTERS = {"Notice": 0, "notice": 0, "_notice": 0, "_failed": 1}
# Constants a notice kind is written with, where it is not a literal string.
CONSTANTS = {name: getattr(results, name) for name in ("MALFORMED", "TRUNCATED", "REPAIRED")}


def emitted_kinds() -> tuple[set[str], list[str]]:
    """The kinds written at a notice's construction in src/, and the other call sites."""
    kinds: set[str] = set()
    passed_on: list[str] = []
    # Earlier tests' garbage collected now, not during a parse below: a finalizer that
    # formats a traceback (asyncio's "Task exception was never retrieved") parses source
    # for its carets on CPython 3.11, and inside ``ast.parse`` that re-entry makes it
    # raise a spurious SystemError (gh-106905; seen once in the compiled stage).
    gc.collect()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(parsed(path)):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in EMITTERS:
                continue
            kind = node.args[EMITTERS[name]]
            if isinstance(kind, ast.Constant) and isinstance(kind.value, str):
                kinds.add(kind.value)
            elif isinstance(kind, ast.Name) and kind.id in CONSTANTS:
                kinds.add(CONSTANTS[kind.id])
            else:
                passed_on.append(f"{path.relative_to(PACKAGE).as_posix()} {ast.unparse(kind)}")
    return kinds, passed_on


def test_every_kind_emitted_is_a_notice_kind_and_every_notice_kind_is_emitted() -> None:
    kinds, _ = emitted_kinds()
    assert kinds == set(get_args(NoticeKind))


def test_the_other_call_sites_pass_a_kind_on() -> None:
    # A call site that does not write its kind passes on one made elsewhere (a retry's
    # notice with its message scrubbed, a format's notice applied to the assembler, or
    # by ContentCalls reading a served model's answer text, the format stream's own
    # helper, or the embedded model's repetition_stopped through TextTurnDecoder.notice):
    # a new one of these needs a look.
    _, passed_on = emitted_kinds()
    assert sorted(passed_on) == [
        "formats/base.py kind",
        "formats/decode.py kind",  # TextTurnDecoder.notice: a provider's, about its output
        "providers/http.py notice.kind",
        "wire/assembler.py event.kind",
        "wire/assembler.py kind",
        "wire/assembler.py kind",
        "wire/content_calls.py event.kind",
    ]


def _notice_docstring() -> str:
    """``Notice``'s docstring as written in turn.py: the compiled build (hatch_build.py),
    like every compiled class, keeps none at run time."""
    if Notice.__doc__:
        return Notice.__doc__
    tree = ast.parse((PACKAGE / "turn.py").read_text(encoding="utf-8"))
    found = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Notice")
    return ast.get_docstring(found) or ""


def test_the_docstring_describes_every_kind_and_no_other() -> None:
    documented = re.findall(r"^\s*\* ``([a-z_]+)`` —", _notice_docstring(), re.M)
    assert sorted(documented) == sorted(get_args(NoticeKind))
