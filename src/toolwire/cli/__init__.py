"""The ``toolwire`` command line.

Each subcommand lives in its own module exposing ``register(subparsers)``; modules
import nothing heavy at import time (``toolwire --help`` must stay as fast as
``import toolwire``), and do their real imports inside the handler. Errors that are
toolwire's typed errors print as one actionable line and exit 2; ``--debug`` shows
the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

# Subcommand modules, in the order --help lists them.
SUBCOMMANDS = ("run", "pipeline", "parse", "formats", "log", "inspect", "trace")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="toolwire",
        description="LLM tool calling that is correct, fast and observable, with any model.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"{__name__}.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}_cmd":
                raise
            continue  # a subcommand whose module is not part of this build
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toolwire`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        print("toolwire: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        from ..errors import ToolwireError

        if args.debug or not isinstance(exc, ToolwireError):
            raise
        print(f"toolwire: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
