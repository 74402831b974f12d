"""The ``toolwire`` command line.

Each subcommand lives in its own module exposing ``register(subparsers)``; modules
import nothing heavy at import time (``toolwire --help`` must stay as fast as
``import toolwire``), and do their real imports inside the handler. Errors that are
toolwire's typed errors print as one actionable line and exit 2; ``--debug`` (anywhere
on the line) shows the traceback; ``--version`` prints the version. A reader that
closes the output early (``toolwire log --json | head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

# Subcommand modules, in the order --help lists them.
SUBCOMMANDS = (
    "run",
    "resume",
    "models",
    "pipeline",
    "parse",
    "formats",
    "log",
    "inspect",
    "trace",
    "serve",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="toolwire",
        description="LLM tool calling that is correct, fast and observable, with any model.",
    )
    from .. import __version__

    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks for errors (anywhere on the line)"
    )
    parser.add_argument("--version", action="version", version=f"toolwire {__version__}")
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
    words = list(sys.argv[1:] if argv is None else argv)
    # --debug is accepted after the subcommand too: argparse only knows it before.
    debug = "--debug" in words[: _end_of_options(words)]
    if debug:
        words = [w for i, w in enumerate(words) if w != "--debug" or i >= _end_of_options(words)]
    args = parser.parse_args(words)
    args.debug = args.debug or debug
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    _without_httpx_command_line()
    try:
        code = int(handler(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at exit as "Exception ignored"
        return code
    except BrokenPipeError:
        return _reader_went_away()
    except KeyboardInterrupt:
        print("toolwire: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        from ..errors import ToolwireError

        if args.debug or not isinstance(exc, ToolwireError):
            raise
        from .terminal import printable

        print(printable(f"toolwire: error: {exc}"), file=sys.stderr)
        return 2


def _without_httpx_command_line() -> None:
    """Keep ``import httpx`` from importing httpx's own command line into this process.

    httpx's ``__init__`` imports its CLI (click, rich's console, pygments) whenever click
    is installed: ~0.2 G instructions, ~0.1 s of CPU, more than a third of what importing
    httpx costs (bench/README.md, "Footprint"), at the start of every command that talks
    to a hosted model or serves. This process never runs httpx's command line: with its
    module marked absent, httpx defines its stand-in ``main`` instead. Marked once a
    command runs (``--help`` and a bad line end before), and an httpx already imported
    (``main`` called in a process that had imported it) is left as it is.
    """
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def _reader_went_away() -> int:
    """The reader of standard output closed it (``toolwire inspect --json | head``):
    stop quietly, as ``cat`` would, with the status of a process killed by SIGPIPE."""
    import contextlib
    import os

    # Python flushes sys.stdout again at exit; pointing it at /dev/null keeps that
    # flush from printing a second BrokenPipeError.
    with contextlib.suppress(OSError, ValueError):  # not a file descriptor (a test's capture)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 141


def _end_of_options(words: list[str]) -> int:
    """The index of ``--`` (after which every word is an argument), or the length."""
    return words.index("--") if "--" in words else len(words)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
