"""The fenced code blocks of README.md and docs/*.md, with their snippet directives.

A directive is an HTML comment (invisible on the rendered page) on the line or lines
right before a block's opening fence, ``<!-- snippet: WORD ARGS -->``:

* ``skip REASON`` — not run; the reason (several words) says why and what tests the
  same thing instead. Keep these rare: a block that needs a service the suite cannot
  start is the only good reason.
* ``file NAME`` — not run: written to ``NAME`` in the page's working directory before
  the page's blocks run (a server script, a config file the next block uses).
* ``key NAME`` — the block needs the API key ``NAME`` (the page's prose says so); it is
  set to a dummy value, and the network stays unreachable, so nothing leaves the machine.
* ``openai-server URL SCRIPT`` — the block talks to an OpenAI-compatible server at
  ``URL`` (the prose says so): the test starts a loopback server that plays the
  conversation ``SCRIPT`` (``SCRIPTS`` in test_snippets.py), puts its address where
  ``URL`` is written in the block, and checks that the block asked it.
* ``mark NAME ...`` — pytest marks for the page's test (``slow``, ``ray``).
* ``needs sandbox`` — the block runs commands in a ``toolwire.Sandbox``: where bubblewrap
  cannot isolate (not Linux, no bwrap) the page is skipped, saying why — failed instead
  when ``TOOLWIRE_REQUIRE_SANDBOX`` is set, as in CI.

Blocks tagged ``python`` or ``bash`` run unless skipped or written as files; other tags
(and untagged blocks: command lines to copy, output) are text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNNABLE = ("python", "bash")
DIRECTIVES = ("skip", "file", "key", "openai-server", "mark", "needs")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
_DIRECTIVE = re.compile(r"<!-- snippet: (.*?) -->\s*$")


@dataclass
class Block:
    """One fenced block of a page."""

    page: str
    line: int
    language: str
    code: str
    directives: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def where(self) -> str:
        """``page:line`` of the opening fence."""
        return f"{self.page}:{self.line}"

    def options(self, word: str) -> list[list[str]]:
        """The arguments of each directive ``word`` on this block."""
        return [args for name, args in self.directives if name == word]

    @property
    def runs(self) -> bool:
        """Whether the test runs this block (rather than skipping it or writing it)."""
        return self.language in RUNNABLE and not self.options("skip") and not self.options("file")


def pages() -> list[Path]:
    """README.md and every page of the docs site."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path`` in order, each with the directives just above it.

    Raises:
        ValueError: An unknown directive, or one without its arguments.
    """
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    found = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        block = Block(name, line, match.group(1), match.group(2))
        above = text[: match.start()].splitlines()
        while above and (directive := _DIRECTIVE.match(above[-1].strip())):
            word, *args = directive.group(1).split()
            if word not in DIRECTIVES or not args:
                raise ValueError(f"{block.where}: bad snippet directive {directive.group(0)!r}")
            block.directives.insert(0, (word, args))
            above.pop()
        found.append(block)
    return found
