"""``toolwire trace RUN --html OUT``: one self-contained page with the run's timeline.

    toolwire trace last --html trace.html

The whole run on one time axis (ticks in human units): each model request a bar, with
its first event marked (time to first token) and its tokens; each tool call a bar in
its status's colour, after any wait to start (permission, approval) and any failed
attempts and backoffs; pauses for approval as their own lane. Parallel batches
overlap, early-started calls begin before the stream ends. A legend explains every
mark, the answer is at the top, and a click on a bar shows its arguments and result.
The page fetches nothing (no network, no CDN).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .logdb import add_db_option, db_path

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["register", "write_private"]


def register(subparsers: Any) -> None:
    """Add the ``trace`` subcommand."""
    parser = subparsers.add_parser(
        "trace",
        help="write a logged run's timeline as one HTML page",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_ref", metavar="RUN", help="run id, unambiguous prefix, or 'last'")
    add_db_option(parser)
    parser.add_argument("--html", required=True, metavar="OUT", help="the page to write")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Write the page."""
    from pathlib import Path

    from ..errors import CallerError
    from ..observe.query import load_run
    from ..observe.store import connect, log_errors
    from ..observe.trace import render_html

    path = db_path(args)
    conn = connect(path, readonly=True)
    try:
        with log_errors(path):  # a damaged log: one line naming the file
            page = render_html(load_run(conn, args.run_ref, path))
    finally:
        conn.close()
    out = Path(args.html)
    try:
        write_private(out, page)
    except OSError as exc:
        raise CallerError(f"cannot write {out}: {exc.strerror}") from None
    print(f"wrote {out}")
    return 0


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by the user alone (0600): the page holds the
    run's prompts and results. An existing file is truncated and made 0600 too."""
    import os

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        os.fchmod(fd, 0o600)
        file.write(text)
