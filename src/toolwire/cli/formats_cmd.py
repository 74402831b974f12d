"""``toolwire formats``: the open-weight tool-call format families and their models."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``formats`` subcommand."""
    parser = subparsers.add_parser(
        "formats", help="list the text tool-call format families and their model patterns"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print one block per family."""
    from .. import formats

    for family in formats.families():
        print(f"{family.name}: {family.description}")
        print(f"  variants: {', '.join(family.variants)}")
        print(f"  models:   {', '.join(family.model_patterns)}")
    return 0
