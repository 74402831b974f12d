"""``toolwire trace RUN --html OUT``: one self-contained page with the run's timeline.

    toolwire trace last --html trace.html

Each round is a timeline: the model's stream as one bar and each tool call as a bar,
so that parallel batches overlap and early-started calls begin before the stream
ends; colours give the status; click a bar for its arguments and result. The page
fetches nothing (no network, no CDN).
"""

from __future__ import annotations

import argparse
from typing import Any

from .logdb import add_db_option, db_path

__all__ = ["register"]


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
    from ..observe.store import connect
    from ..observe.trace import render_html

    path = db_path(args)
    conn = connect(path, readonly=True)
    try:
        page = render_html(load_run(conn, args.run_ref, path))
    finally:
        conn.close()
    out = Path(args.html)
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise CallerError(f"cannot write {out}: {exc.strerror}") from None
    print(f"wrote {out}")
    return 0
